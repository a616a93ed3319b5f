/* SPDX-License-Identifier: Apache-2.0 */
// The tracker: a default state, a table of named states, and a stack of open
// forks.  The TransformerEngine / Megatron-LM CudaRNGStatesTracker semantics,
// with their defects fixed (a failed add burns nothing; reset and load cannot
// run inside a fork, nor a set_states that drops an open fork's state;
// restore names the fork it closes).  A name may be on the fork stack more
// than once: forked states advance in place, so a nested fork of an open
// name continues its one stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "checkpoint.h"
#include "ledger.h"
#include "philox_state.h"
#include "state_table.h"

namespace rngtrk {

class Tracker {
public:
    void add(std::string_view name, uint64_t seed);
    void fork(std::string_view name);
    void restore(std::string_view name);

    PhiloxState state(std::string_view name) const;
    void set_state(std::string_view name, const PhiloxState &state);
    void set_states(std::vector<NamedState> entries);
    const StateTable &table() const { return table_; }

    void reset();
    void manual_seed(uint64_t seed) { default_ = PhiloxState{seed, 0}; }
    const PhiloxState &default_state() const { return default_; }
    void set_default_state(const PhiloxState &state);

    PhiloxState active_state() const;
    // Returns the active state, then moves its offset past `increment`
    // outputs rounded up to a whole block.
    PhiloxState advance(uint64_t increment);

    size_t fork_depth() const { return forks_.size(); }

    // Checkpoint bytes (version 2 when the tracker has an origin).
    size_t saved_size() const { return checkpoint_size(table_.entries(), origin_); }
    void save_to(uint8_t *dst) const { encode_checkpoint(default_, table_.entries(), dst, origin_); }
    // Refuses (Status::wrong_rank) a checkpoint whose origin's streams
    // differ from this tracker's origin, unless any_rank.
    void load(const uint8_t *src, size_t len, bool any_rank = false);

    // Who the states belong to (set by a seeding policy; kept by add,
    // set_state(s) and manual_seed; cleared by reset; taken from a load).
    const Origin &origin() const { return origin_; }
    void set_origin(const Origin &origin) { origin_ = origin; }

    // The reservation ledger (ledger.h): every advance goes through it.
    Ledger &ledger() { return ledger_; }
    const Ledger &ledger() const { return ledger_; }

private:
    void refuse_inside_fork(const char *operation) const;

    PhiloxState default_;
    StateTable table_;
    std::vector<size_t> forks_;  // table indexes, innermost last; a name may repeat
    Origin origin_;
    Ledger ledger_;
};

}  // namespace rngtrk
