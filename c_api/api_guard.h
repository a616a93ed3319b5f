/* SPDX-License-Identifier: Apache-2.0 */
// The boundary between the C ABI and the C++ core: every exported function
// runs its body through guarded(), which turns any exception into a status
// code plus a thread-local message (and, for a call given a tracker, the
// tracker's copy of it: guarded(tracker, body)).  No exception crosses into C.
#pragma once

#include <new>
#include <stdexcept>

#include "../core/error.h"
#include "rngtrk.h"

namespace rngtrk {

// Records `message` as this thread's last error, and as `tracker`'s when it
// is not NULL: well-formed UTF-8 (bytes that are not become "\xNN"), cut at
// a character to fit RNGTRK_ERROR_MESSAGE_CAPACITY.  Never throws or allocates.
void set_last_error(const char *message, const rngtrk_tracker *tracker = nullptr) noexcept;

// The core's Error with a C status (the values are equal: api_errors.cpp).
[[noreturn]] inline void fail(rngtrk_status status, const std::string &message) {
    throw Error(static_cast<Status>(status), message);
}

// Throws Error(RNGTRK_E_INVALID_ARGUMENT) naming `param` when `p` is NULL.
inline void require_pointer(const void *p, const char *param) {
    if (p == nullptr) fail(RNGTRK_E_INVALID_ARGUMENT, std::string(param) + " is NULL");
}

template <class Body>
rngtrk_status guarded(const rngtrk_tracker *tracker, Body &&body) noexcept {
    try {
        body();
        return RNGTRK_OK;
    } catch (const Error &e) {
        set_last_error(e.what(), tracker);
        return static_cast<rngtrk_status>(e.status());
    } catch (const std::bad_alloc &) {
        set_last_error("out of memory", tracker);
        return RNGTRK_E_OUT_OF_MEMORY;
    } catch (const std::exception &e) {
        set_last_error(e.what(), tracker);
        return RNGTRK_E_INTERNAL;
    } catch (...) {
        set_last_error("unknown C++ exception", tracker);
        return RNGTRK_E_INTERNAL;
    }
}

template <class Body>
rngtrk_status guarded(Body &&body) noexcept {
    return guarded(nullptr, static_cast<Body &&>(body));
}

}  // namespace rngtrk
