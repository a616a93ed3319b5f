// Status strings, the thread-local last-error message, and the version.
#include <cstring>
#include <string>

#include "api_guard.h"

// The core's Status (core/status.h) and rngtrk_status are the same values:
// the C layer converts by a cast (api_guard.h).
#define RNGTRK_SAME_STATUS(c, core) \
    static_assert(static_cast<int>(RNGTRK_##c) == static_cast<int>(rngtrk::Status::core), #c)
RNGTRK_SAME_STATUS(OK, ok);
RNGTRK_SAME_STATUS(E_INVALID_ARGUMENT, invalid_argument);
RNGTRK_SAME_STATUS(E_DUPLICATE_NAME, duplicate_name);
RNGTRK_SAME_STATUS(E_DUPLICATE_SEED, duplicate_seed);
RNGTRK_SAME_STATUS(E_UNKNOWN_NAME, unknown_name);
RNGTRK_SAME_STATUS(E_FORK_ORDER, fork_order);
RNGTRK_SAME_STATUS(E_BUFFER_TOO_SMALL, buffer_too_small);
RNGTRK_SAME_STATUS(E_CORRUPT, corrupt);
RNGTRK_SAME_STATUS(E_UNSUPPORTED_VERSION, unsupported_version);
RNGTRK_SAME_STATUS(E_OVERFLOW, overflow);
RNGTRK_SAME_STATUS(E_OUT_OF_MEMORY, out_of_memory);
RNGTRK_SAME_STATUS(E_UNAVAILABLE, unavailable);
RNGTRK_SAME_STATUS(E_INTERNAL, internal);
RNGTRK_SAME_STATUS(E_WRONG_RANK, wrong_rank);
RNGTRK_SAME_STATUS(E_IO, io);
RNGTRK_SAME_STATUS(E_STREAM_REUSE, stream_reuse);
RNGTRK_SAME_STATUS(E_REPLAY_MISMATCH, replay_mismatch);
#undef RNGTRK_SAME_STATUS


namespace rngtrk {

namespace {
// A fixed buffer rather than std::string: recording an error must not
// allocate (it also reports out-of-memory) and must not throw.
constexpr size_t kMessageCapacity = 512;
}  // namespace

thread_local char last_error_message[kMessageCapacity] = "";

void set_last_error(const char *message) noexcept {
    std::strncpy(last_error_message, message, kMessageCapacity - 1);
    last_error_message[kMessageCapacity - 1] = '\0';
}

}  // namespace rngtrk

#define RNGTRK_STRINGIFY2(x) #x
#define RNGTRK_STRINGIFY(x) RNGTRK_STRINGIFY2(x)

extern "C" {

RNGTRK_API const char *rngtrk_status_string(rngtrk_status code) {
    switch (code) {
        case RNGTRK_OK: return "success";
        case RNGTRK_E_INVALID_ARGUMENT: return "invalid argument";
        case RNGTRK_E_DUPLICATE_NAME: return "duplicate state name";
        case RNGTRK_E_DUPLICATE_SEED: return "duplicate seed";
        case RNGTRK_E_UNKNOWN_NAME: return "unknown state name";
        case RNGTRK_E_FORK_ORDER: return "fork order violated";
        case RNGTRK_E_BUFFER_TOO_SMALL: return "buffer too small";
        case RNGTRK_E_CORRUPT: return "corrupt checkpoint";
        case RNGTRK_E_UNSUPPORTED_VERSION: return "unsupported checkpoint format version";
        case RNGTRK_E_OVERFLOW: return "overflow";
        case RNGTRK_E_OUT_OF_MEMORY: return "out of memory";
        case RNGTRK_E_UNAVAILABLE: return "unavailable";
        case RNGTRK_E_INTERNAL: return "internal error";
        case RNGTRK_E_WRONG_RANK: return "checkpoint of another rank";
        case RNGTRK_E_IO: return "input/output error";
        case RNGTRK_E_STREAM_REUSE: return "random numbers reused";
        case RNGTRK_E_REPLAY_MISMATCH: return "replay mismatch";
        case RNGTRK_STATUS_RANGE_: break;
    }
    return "unknown status code";
}

RNGTRK_API const char *rngtrk_last_error(void) { return rngtrk::last_error_message; }

RNGTRK_API uint32_t rngtrk_version_number(void) { return RNGTRK_VERSION_NUMBER; }

RNGTRK_API const char *rngtrk_version_string(void) {
    return RNGTRK_STRINGIFY(RNGTRK_VERSION_MAJOR) "." RNGTRK_STRINGIFY(
        RNGTRK_VERSION_MINOR) "." RNGTRK_STRINGIFY(RNGTRK_VERSION_PATCH);
}

}  // extern "C"
