// SPDX-License-Identifier: Apache-2.0
// The tracker functions of the C ABI: argument checks, then the core.
#include <new>
#include <cstring>
#include <string>
#include <vector>

#include "../core/checkpoint_file.h"
#include "../core/checkpoint_json.h"
#include "../core/name_rules.h"
#include "../core/tracker.h"
#include "api_convert.h"
#include "../core/counted.h"
#include "api_give_text.h"
#include "api_guard.h"
#include "api_tracker_handle.h"

namespace {

using rngtrk::checked_name;
using rngtrk::guarded;
using rngtrk::lookup_name;
using rngtrk::require_pointer;

using rngtrk::to_c;
using rngtrk::to_core;

}  // namespace

extern "C" {

RNGTRK_API rngtrk_status rngtrk_tracker_new(rngtrk_tracker **out) {
    return guarded([&] {
        require_pointer(out, "out");
        *out = new rngtrk_tracker();
    });
}

RNGTRK_API void rngtrk_tracker_free(rngtrk_tracker *tracker) { delete tracker; }

RNGTRK_API rngtrk_status rngtrk_tracker_add(rngtrk_tracker *t, const char *name, uint64_t seed) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        t->impl.add(checked_name(name), seed);
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_fork(rngtrk_tracker *t, const char *name) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        t->impl.fork(lookup_name(name));
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_restore(rngtrk_tracker *t, const char *name) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        t->impl.restore(lookup_name(name));
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_get_state(const rngtrk_tracker *t, const char *name,
                                                  rngtrk_philox_state *out) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        require_pointer(out, "out");
        *out = to_c(t->impl.state(lookup_name(name)));
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_set_state(rngtrk_tracker *t, const char *name,
                                                  const rngtrk_philox_state *state) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        require_pointer(state, "state");
        t->impl.set_state(lookup_name(name), to_core(*state));
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_set_states(rngtrk_tracker *t, const char *const *names,
                                                   const rngtrk_philox_state *states,
                                                   size_t count) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        if (count != 0) {
            require_pointer(names, "names");
            require_pointer(states, "states");
        }
        std::vector<rngtrk::NamedState> entries;
        entries.reserve(count);
        for (size_t i = 0; i < count; ++i) {
            const std::string param = "names[" + std::to_string(i) + "]";
            entries.push_back({std::string(checked_name(names[i], param.c_str())),
                               to_core(states[i])});
        }
        t->impl.set_states(std::move(entries));
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_count(const rngtrk_tracker *t, size_t *out) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        require_pointer(out, "out");
        *out = t->impl.table().size();
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_name_at(const rngtrk_tracker *t, size_t index,
                                                const char **out) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        require_pointer(out, "out");
        const size_t count = t->impl.table().size();
        if (index >= count)
            rngtrk::fail(RNGTRK_E_INVALID_ARGUMENT, "index " + std::to_string(index) +
                                                        " is out of range (count " +
                                                        std::to_string(count) + ")");
        *out = t->impl.table().at(index).name.c_str();
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_fork_depth(const rngtrk_tracker *t, size_t *out) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        require_pointer(out, "out");
        *out = t->impl.fork_depth();
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_reset(rngtrk_tracker *t) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        t->impl.reset();
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_manual_seed(rngtrk_tracker *t, uint64_t seed) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        t->impl.manual_seed(seed);
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_get_default(const rngtrk_tracker *t,
                                                    rngtrk_philox_state *out) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        require_pointer(out, "out");
        *out = to_c(t->impl.default_state());
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_set_default(rngtrk_tracker *t,
                                                    const rngtrk_philox_state *state) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        require_pointer(state, "state");
        t->impl.set_default_state(to_core(*state));
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_active_state(const rngtrk_tracker *t,
                                                     rngtrk_philox_state *out) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        require_pointer(out, "out");
        *out = to_c(t->impl.active_state());
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_advance(rngtrk_tracker *t, uint64_t increment,
                                                rngtrk_philox_state *out_before) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        const rngtrk::PhiloxState before = t->impl.advance(increment);
        if (out_before != nullptr) *out_before = to_c(before);
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_save(const rngtrk_tracker *t, uint8_t *dst,
                                             size_t capacity, size_t *out_len) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        require_pointer(out_len, "out_len");
        if (dst == nullptr && capacity != 0)
            rngtrk::fail(RNGTRK_E_INVALID_ARGUMENT, "dst is NULL but capacity is not 0");
        const size_t needed = t->impl.saved_size();
        *out_len = needed;
        if (dst == nullptr) return;  // the size query
        if (capacity < needed)
            rngtrk::fail(RNGTRK_E_BUFFER_TOO_SMALL, "the checkpoint needs " + rngtrk::counted(needed, "byte") +
                                                        "; the capacity is " + std::to_string(capacity));
        t->impl.save_to(dst);
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_load_flags(rngtrk_tracker *t, const uint8_t *src, size_t len,
                                                   uint32_t flags) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        if (len != 0) require_pointer(src, "src");
        if (flags & ~uint32_t{RNGTRK_LOAD_ANY_RANK}) rngtrk::fail(RNGTRK_E_INVALID_ARGUMENT, "unknown load flags");
        static const uint8_t empty = 0;
        t->impl.load(src != nullptr ? src : &empty, len, (flags & RNGTRK_LOAD_ANY_RANK) != 0);
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_save_file(const rngtrk_tracker *t, const char *path) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        require_pointer(path, "path");
        std::vector<uint8_t> bytes(t->impl.saved_size());
        t->impl.save_to(bytes.data());
        rngtrk::write_file_atomically(path, bytes);
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_load_file(rngtrk_tracker *t, const char *path, uint32_t flags) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        require_pointer(path, "path");
        if (flags & ~uint32_t{RNGTRK_LOAD_ANY_RANK}) rngtrk::fail(RNGTRK_E_INVALID_ARGUMENT, "unknown load flags");
        rngtrk::use_checkpoint_file(path, [&](const std::vector<uint8_t> &bytes) {
            t->impl.load(bytes.data(), bytes.size(), (flags & RNGTRK_LOAD_ANY_RANK) != 0);
        });
    });
}

RNGTRK_API rngtrk_status rngtrk_checkpoint_json(const uint8_t *src, size_t len, char *dst, size_t capacity,
                                                size_t *out_len) {
    return guarded([&] {
        if (len != 0) require_pointer(src, "src");
        require_pointer(out_len, "out_len");
        static const uint8_t empty = 0;
        rngtrk::give_text(rngtrk::checkpoint_json(src != nullptr ? src : &empty, len), dst, capacity, out_len,
                          "the JSON");
    });
}

RNGTRK_API rngtrk_status rngtrk_checkpoint_file_json(const char *path, char *dst, size_t capacity,
                                                     size_t *out_len) {
    return guarded([&] {
        require_pointer(path, "path");
        require_pointer(out_len, "out_len");
        rngtrk::use_checkpoint_file(path, [&](const std::vector<uint8_t> &bytes) {
            rngtrk::give_text(rngtrk::checkpoint_json(bytes.data(), bytes.size()), dst, capacity, out_len,
                              "the JSON");
        });
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_load(rngtrk_tracker *t, const uint8_t *src, size_t len) {
    return rngtrk_tracker_load_flags(t, src, len, 0);
}

}  // extern "C"
