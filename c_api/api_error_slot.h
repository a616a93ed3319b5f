/* SPDX-License-Identifier: Apache-2.0 */
// A tracker's copy of the message of the last failed call given it, which
// rngtrk_tracker_last_error reads from any thread: the thread-local
// message is out of reach of callers whose calls run on pooled threads
// (koffi's async calls, Go's goroutines).  Fixed size and a spin lock, so
// recording never allocates or throws; const calls may fail on several
// threads at once, hence the lock.
#pragma once

#include <atomic>
#include <cstring>
#include <thread>

#include "rngtrk.h"

namespace rngtrk {

class ErrorSlot {
public:
    // `text` is already well-formed and shorter than the capacity.
    void set(const char *text) noexcept {
        Lock lock(busy_);
        std::memcpy(text_, text, std::strlen(text) + 1);
    }

    // Copies the message with its NUL into dst when capacity holds it;
    // returns its length without the NUL either way.
    size_t copy_to(char *dst, size_t capacity) const noexcept {
        Lock lock(busy_);
        const size_t len = std::strlen(text_);
        if (dst != nullptr && capacity > len) std::memcpy(dst, text_, len + 1);
        return len;
    }

private:
    struct Lock {
        explicit Lock(std::atomic<bool> &busy) noexcept : busy_(busy) {
            while (busy_.exchange(true, std::memory_order_acquire)) std::this_thread::yield();
        }
        ~Lock() { busy_.store(false, std::memory_order_release); }
        Lock(const Lock &) = delete;
        Lock &operator=(const Lock &) = delete;
        std::atomic<bool> &busy_;
    };

    mutable std::atomic<bool> busy_{false};
    char text_[RNGTRK_ERROR_MESSAGE_CAPACITY] = "";
};

}  // namespace rngtrk
