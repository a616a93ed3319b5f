// Status strings, the thread-local last-error message, and the version.
#include <cstring>
#include <string>

#include "api_guard.h"

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
