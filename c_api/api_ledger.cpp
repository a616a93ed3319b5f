// SPDX-License-Identifier: Apache-2.0
// The reservation ledger's entry points of the C ABI (docs/ledger.md).
#include <algorithm>
#include <cstring>
#include <string>

#include "../core/ledger.h"
#include "api_guard.h"
#include "api_tracker_handle.h"

namespace {

using rngtrk::guarded;
using rngtrk::require_pointer;

}  // namespace

extern "C" {

RNGTRK_API rngtrk_status rngtrk_tracker_set_ledger(rngtrk_tracker *t, rngtrk_ledger_mode mode, uint64_t capacity) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        if (mode < RNGTRK_LEDGER_OFF || mode > RNGTRK_LEDGER_RECORD)
            rngtrk::fail(RNGTRK_E_INVALID_ARGUMENT, "unknown ledger mode " + std::to_string(mode));
        if (capacity > SIZE_MAX) rngtrk::fail(RNGTRK_E_INVALID_ARGUMENT, "capacity does not fit in size_t");
        t->impl.ledger().set_mode(static_cast<rngtrk::LedgerMode>(mode), static_cast<size_t>(capacity));
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_ledger_mark(rngtrk_tracker *t, uint64_t *out) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        require_pointer(out, "out");
        *out = t->impl.ledger().mark();
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_replay_begin(rngtrk_tracker *t, uint64_t mark) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        t->impl.ledger().replay_begin(mark);
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_ledger_position(const rngtrk_tracker *t, uint64_t *out) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        require_pointer(out, "out");
        *out = t->impl.ledger().position();
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_replay_prefix_begin(rngtrk_tracker *t, uint64_t position) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        t->impl.ledger().replay_prefix_begin(position);
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_replay_end(rngtrk_tracker *t) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        t->impl.ledger().replay_end();
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_ledger_overlaps(const rngtrk_tracker *t, rngtrk_overlap *out, size_t capacity,
                                                        size_t *count) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        require_pointer(count, "count");
        const auto &overlaps = t->impl.ledger().overlaps();
        *count = overlaps.size();
        if (capacity < overlaps.size())
            rngtrk::fail(RNGTRK_E_BUFFER_TOO_SMALL, "the ledger holds " + std::to_string(overlaps.size()) +
                                                        " overlaps; capacity is " + std::to_string(capacity));
        if (!overlaps.empty()) require_pointer(out, "out");
        for (size_t i = 0; i < overlaps.size(); ++i) {
            const rngtrk::Overlap &o = overlaps[i];
            rngtrk_overlap c{};
            c.seed = o.later.seed;
            c.earlier_begin = o.earlier.begin, c.earlier_end = o.earlier.end, c.earlier_sequence = o.earlier.sequence;
            c.later_begin = o.later.begin, c.later_end = o.later.end, c.later_sequence = o.later.sequence;
            c.earlier_known = o.earlier_known ? 1 : 0;
            std::memcpy(c.name, o.later.name.data(), std::min(o.later.name.size(), sizeof c.name - 1));
            out[i] = c;
        }
    });
}

}  // extern "C"
