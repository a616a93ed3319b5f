# Test binaries (included by the top-level Makefile).  `make test` builds
# them, then tests/run_all.sh runs every suite.
TEST_BUILD := $(BUILD)/tests
GTEST_LIBS := -lgtest -lgtest_main -pthread
TEST_CXXFLAGS := -std=c++17 -O2 -g -Wall -Wextra -DRNGTRK_VECTORS_DIR=\"$(CURDIR)/tests/vectors\" $(CXXFLAGS)

API_TEST_SOURCES  := $(wildcard tests/api/*.cpp)
CORE_TEST_SOURCES := $(wildcard tests/core/*.cpp)

# The C API tests see only the public header and link the shared object.
$(TEST_BUILD)/api_tests: $(API_TEST_SOURCES) tests/api/support.h c_api/rngtrk.h $(SHARED_LIB) $(BUILD)/librngtrk.so
	@mkdir -p $(dir $@)
	$(CXX) $(TEST_CXXFLAGS) -Ic_api -o $@ $(API_TEST_SOURCES) -L$(BUILD) -lrngtrk \
	    -Wl,-rpath,'$$ORIGIN/..' $(GTEST_LIBS) -ldl

# The core tests reach C++ internals, so they link the static archive.
$(TEST_BUILD)/core_tests: $(CORE_TEST_SOURCES) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(TEST_CXXFLAGS) -Ic_api -Icore -o $@ $(CORE_TEST_SOURCES) $(STATIC_LIB) $(GTEST_LIBS)

# No -pedantic: ISO C forbids casting dlsym's void * to a function pointer,
# which POSIX requires to work.
$(TEST_BUILD)/dlopen_consumer: tests/c/dlopen_consumer.c c_api/rngtrk.h
	@mkdir -p $(dir $@)
	$(CC) -std=c99 -Wall -Wextra -Ic_api -o $@ $< -ldl

TEST_PROGRAMS := $(TEST_BUILD)/api_tests $(TEST_BUILD)/core_tests $(TEST_BUILD)/dlopen_consumer

.PHONY: test test-programs
test-programs: all $(TEST_PROGRAMS) $(DEMO)
test: test-programs
	tests/run_all.sh
