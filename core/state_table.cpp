// SPDX-License-Identifier: Apache-2.0
#include "state_table.h"

#include <utility>

#include "error.h"
#include "name_rules.h"

namespace rngtrk {

namespace {

std::string quoted(std::string_view name) { return "\"" + std::string(name) + "\""; }

}  // namespace

StateTable StateTable::from_entries(std::vector<NamedState> entries, Source source) {
    const bool from_checkpoint = source == Source::checkpoint;
    auto reject = [from_checkpoint](Status caller_code, const std::string &what) {
        if (from_checkpoint) fail(Status::corrupt, "corrupt checkpoint: " + what);
        fail(caller_code, what);
    };
    StateTable table;
    for (size_t i = 0; i < entries.size(); ++i) {
        const NamedState &entry = entries[i];
        const std::string where = "entry " + std::to_string(i) + ": ";
        const std::string problem = name_problem(entry.name);
        if (!problem.empty()) reject(Status::invalid_argument, where + "name " + problem);
        if (!offset_is_aligned(entry.state.offset))
            reject(Status::invalid_argument,
                   where + "offset of " + quoted(entry.name) + " is not a multiple of 4");
        if (!table.by_name_.emplace(entry.name, i).second)
            reject(Status::duplicate_name, where + "duplicate name " + quoted(entry.name));
        const auto seed_slot = table.by_seed_.emplace(entry.state.seed, i);
        if (!seed_slot.second)
            reject(Status::duplicate_seed,
                   where + "seed " + std::to_string(entry.state.seed) + " of " +
                       quoted(entry.name) + " is already used by " +
                       quoted(entries[seed_slot.first->second].name));
    }
    table.entries_ = std::move(entries);
    return table;
}

size_t StateTable::find(std::string_view name) const {
    const auto it = by_name_.find(name);
    return it == by_name_.end() ? npos : it->second;
}

size_t StateTable::index_of(std::string_view name) const {
    const size_t index = find(name);
    if (index == npos) {
        // Only now is it worth knowing whether the name could exist at all.
        const std::string problem = name_problem(name);
        if (!problem.empty()) fail(Status::invalid_argument, "name " + problem);
        fail(Status::unknown_name, "no state named " + quoted(name));
    }
    return index;
}

void StateTable::add(std::string_view name, uint64_t seed) {
    if (find(name) != npos) fail(Status::duplicate_name, "a state named " + quoted(name) + " exists");
    const auto owner = by_seed_.find(seed);
    if (owner != by_seed_.end())
        fail(Status::duplicate_seed, "seed " + std::to_string(seed) + " is already used by " +
                                          quoted(entries_[owner->second].name));
    // Three containers grow; if any allocation throws, undo the others so a
    // failed add leaves the table (and the seed) exactly as before.
    const size_t index = entries_.size();
    entries_.push_back(NamedState{std::string(name), PhiloxState{seed, 0}});
    try {
        by_name_.emplace(entries_.back().name, index);
        try {
            by_seed_.emplace(seed, index);
        } catch (...) {
            by_name_.erase(entries_.back().name);
            throw;
        }
    } catch (...) {
        entries_.pop_back();
        throw;
    }
}

void StateTable::set(size_t index, const PhiloxState &state) {
    NamedState &entry = entries_[index];
    if (!offset_is_aligned(state.offset))
        fail(Status::invalid_argument, "offset " + std::to_string(state.offset) +
                                            " is not a multiple of 4");
    if (state.seed != entry.state.seed) {
        const auto owner = by_seed_.find(state.seed);
        if (owner != by_seed_.end())
            fail(Status::duplicate_seed, "seed " + std::to_string(state.seed) +
                                              " is already used by " +
                                              quoted(entries_[owner->second].name));
        by_seed_.emplace(state.seed, index);  // may throw: nothing changed yet
        by_seed_.erase(entry.state.seed);
    }
    entry.state = state;
}

void StateTable::swap(StateTable &other) noexcept {
    entries_.swap(other.entries_);
    by_name_.swap(other.by_name_);
    by_seed_.swap(other.by_seed_);
}

}  // namespace rngtrk
