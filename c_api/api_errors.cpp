// SPDX-License-Identifier: Apache-2.0
// Status strings, the thread-local last-error message, and the version.
#include <cstring>
#include <string>
#include <string_view>

#include "../core/utf8.h"
#include "api_give_text.h"
#include "api_guard.h"
#include "api_tracker_handle.h"

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

constexpr size_t kMessageCapacity = RNGTRK_ERROR_MESSAGE_CAPACITY;

// How many bytes `in`'s next unit takes in the message: a well-formed
// character as it is, any other byte as "\xNN".
size_t unit_bytes(std::string_view in) noexcept {
    const size_t len = utf8_char_length(in);
    return len != 0 ? len : 4;
}

// `message` as well-formed UTF-8 in `out`, NUL-terminated: file paths and
// names that are not UTF-8 (and could not otherwise be decoded by a strict
// caller) show their stray bytes as "\xNN"; a message longer than the
// buffer is cut before a character or an escape, never inside one, and
// ends with "...".  A fixed buffer rather than std::string: recording an
// error must not allocate (it also reports out-of-memory) and must not throw.
void write_well_formed(std::string_view message, char (&out)[kMessageCapacity]) noexcept {
    size_t whole = 0;
    for (std::string_view rest = message; !rest.empty();) {
        const size_t n = unit_bytes(rest);
        whole += n;
        rest.remove_prefix(utf8_char_length(rest) != 0 ? n : 1);
    }
    static const char kEllipsis[] = "...";
    const bool cut = whole > kMessageCapacity - 1;
    const size_t limit = cut ? kMessageCapacity - sizeof kEllipsis : kMessageCapacity - 1;
    size_t used = 0;
    while (!message.empty()) {
        const size_t len = utf8_char_length(message);
        const size_t n = len != 0 ? len : 4;
        if (used + n > limit) break;
        if (len != 0) {
            std::memcpy(out + used, message.data(), len);
            message.remove_prefix(len);
        } else {
            static const char kHex[] = "0123456789abcdef";
            const auto b = static_cast<unsigned char>(message[0]);
            const char escape[4] = {'\\', 'x', kHex[b >> 4], kHex[b & 0xF]};
            std::memcpy(out + used, escape, 4);
            message.remove_prefix(1);
        }
        used += n;
    }
    if (cut) {
        std::memcpy(out + used, kEllipsis, sizeof kEllipsis);
    } else {
        out[used] = '\0';
    }
}

}  // namespace

thread_local char last_error_message[kMessageCapacity] = "";

void set_last_error(const char *message, const rngtrk_tracker *tracker) noexcept {
    write_well_formed(message, last_error_message);
    if (tracker != nullptr) tracker->last_error.set(last_error_message);
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

RNGTRK_API rngtrk_status rngtrk_tracker_last_error(const rngtrk_tracker *tracker, char *dst, size_t capacity,
                                                   size_t *out_len) {
    // Reading the tracker's message is no failure of a call given it: a
    // refusal here is this thread's message only.
    return rngtrk::guarded([&] {
        rngtrk::require_pointer(tracker, "tracker");
        rngtrk::require_pointer(out_len, "out_len");
        char copy[RNGTRK_ERROR_MESSAGE_CAPACITY];
        const size_t len = tracker->last_error.copy_to(copy, sizeof copy);
        rngtrk::give_text(std::string_view(copy, len), dst, capacity, out_len, "the message");
    });
}

RNGTRK_API uint32_t rngtrk_version_number(void) { return RNGTRK_VERSION_NUMBER; }

RNGTRK_API const char *rngtrk_version_string(void) {
    return RNGTRK_STRINGIFY(RNGTRK_VERSION_MAJOR) "." RNGTRK_STRINGIFY(
        RNGTRK_VERSION_MINOR) "." RNGTRK_STRINGIFY(RNGTRK_VERSION_PATCH);
}

}  // extern "C"
