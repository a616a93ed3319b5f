/* SPDX-License-Identifier: Apache-2.0 */
// The named states of a tracker, in insertion order, with the indexes that
// keep their invariants cheap to check: names are valid and distinct, seeds
// are distinct, offsets are multiples of 4.  Every change either completes or
// leaves the table as it was.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "checkpoint.h"
#include "philox_state.h"

namespace rngtrk {

class StateTable {
public:
    // Whose data a whole-table replacement validates: a caller's arguments
    // (errors name the argument: INVALID_ARGUMENT, DUPLICATE_NAME,
    // DUPLICATE_SEED) or a checkpoint (every error is CORRUPT).
    enum class Source { caller, checkpoint };

    // Validates `entries` and builds a table from them; throws Error.
    static StateTable from_entries(std::vector<NamedState> entries, Source source);

    size_t size() const { return entries_.size(); }
    const std::vector<NamedState> &entries() const { return entries_; }
    const NamedState &at(size_t index) const { return entries_[index]; }

    // Index of `name`, or npos.
    static constexpr size_t npos = static_cast<size_t>(-1);
    size_t find(std::string_view name) const;
    // Index of `name`; throws Error(Status::unknown_name).
    size_t index_of(std::string_view name) const;

    // Appends (name, (seed, 0)); `name` must already be a valid name.
    // Throws DUPLICATE_NAME / DUPLICATE_SEED and changes nothing then.
    void add(std::string_view name, uint64_t seed);

    // Replaces the state at `index`; throws INVALID_ARGUMENT (offset) or
    // DUPLICATE_SEED and changes nothing then.
    void set(size_t index, const PhiloxState &state);

    // Mutable access to a state's offset, for Tracker::advance on the forked
    // state; the seed must not be changed through it (the seed index would
    // go stale).
    uint64_t &offset_at(size_t index) { return entries_[index].state.offset; }

    void swap(StateTable &other) noexcept;

private:
    std::vector<NamedState> entries_;
    std::map<std::string, size_t, std::less<>> by_name_;  // transparent: find by string_view
    std::unordered_map<uint64_t, size_t> by_seed_;
};

}  // namespace rngtrk
