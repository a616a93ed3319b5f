# `make demo`: build and run the simulated training loop (tools/demo_training_loop.c).
DEMO := $(BUILD)/demo_training_loop

$(DEMO): tools/demo_training_loop.c c_api/rngtrk.h $(SHARED_LIB) $(BUILD)/librngtrk.so
	$(CC) -std=c99 -O2 -Wall -Wextra -pedantic -Ic_api -o $@ $< -L$(BUILD) -lrngtrk -Wl,-rpath,'$$ORIGIN'

.PHONY: demo
demo: $(DEMO)
	$(DEMO)
