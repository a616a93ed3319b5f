// SPDX-License-Identifier: Apache-2.0
#include "tracker.h"

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "error.h"
#include "seed_policy.h"
#include "stream.h"

namespace rngtrk {

void Tracker::refuse_inside_fork(const char *operation) const {
    if (!forks_.empty())
        fail(Status::fork_order, std::string(operation) + " is not allowed while fork \"" +
                                      table_.at(forks_.back()).name + "\" is open");
}

void Tracker::add(std::string_view name, uint64_t seed) {
    // Allowed inside a fork, as Megatron-LM allows it: the new entry is
    // appended, so the open forks' indexes stay valid.
    table_.add(name, seed);
}

void Tracker::fork(std::string_view name) {
    // A name already open may be forked again (Megatron-LM's double fork):
    // the forked state advances in place, so the inner fork simply goes on
    // with that name's one stream and no number is handed out twice.
    forks_.push_back(table_.index_of(name));
}

void Tracker::restore(std::string_view name) {
    const size_t index = table_.index_of(name);
    if (forks_.empty())
        fail(Status::fork_order, "restore(\"" + std::string(name) + "\") but no fork is open");
    if (forks_.back() != index)
        fail(Status::fork_order, "restore(\"" + std::string(name) +
                                      "\") but the innermost open fork is \"" +
                                      table_.at(forks_.back()).name + "\"");
    // The forked state was advanced in place, so closing the fork is only
    // re-activating what was active before it.
    forks_.pop_back();
}

PhiloxState Tracker::state(std::string_view name) const {
    return table_.at(table_.index_of(name)).state;
}

void Tracker::set_state(std::string_view name, const PhiloxState &state) {
    table_.set(table_.index_of(name), state);
}

void Tracker::set_states(std::vector<NamedState> entries) {
    StateTable replacement = StateTable::from_entries(std::move(entries), StateTable::Source::caller);
    // Allowed inside forks, as Megatron-LM allows it, as long as every open
    // fork's state stays: the fork then holds the state of that name in
    // the new table (its value is the new one).
    std::vector<size_t> forks = forks_;
    for (size_t &index : forks) {
        const size_t moved = replacement.find(table_.at(index).name);
        if (moved == StateTable::npos)
            fail(Status::fork_order, "set_states would drop \"" + table_.at(index).name +
                                          "\", which an open fork holds; restore it first");
        index = moved;
    }
    table_.swap(replacement);
    forks_.swap(forks);
}

void Tracker::reset() {
    refuse_inside_fork("reset");
    StateTable empty;
    table_.swap(empty);
    default_ = PhiloxState{};
    origin_ = Origin{};
}

void Tracker::set_default_state(const PhiloxState &state) {
    if (!offset_is_aligned(state.offset))
        fail(Status::invalid_argument,
             "offset " + std::to_string(state.offset) + " is not a multiple of 4");
    default_ = state;
}

PhiloxState Tracker::active_state() const {
    return forks_.empty() ? default_ : table_.at(forks_.back()).state;
}

PhiloxState Tracker::advance(uint64_t increment) {
    const PhiloxState before = active_state();
    const PhiloxState after = advanced(before, increment);  // may refuse: nothing changed yet
    if (ledger_.mode() != LedgerMode::off) {
        const std::string_view name = forks_.empty() ? std::string_view() : table_.at(forks_.back()).name;
        ledger_.reserve(name, before.seed, before.offset, after.offset);  // may refuse
    }
    uint64_t &offset = forks_.empty() ? default_.offset : table_.offset_at(forks_.back());
    offset = after.offset;
    return before;
}

void Tracker::load(const uint8_t *src, size_t len, bool any_rank) {
    refuse_inside_fork("load");
    CheckpointContents contents = decode_checkpoint(src, len);
    if (!any_rank && origin_.present && contents.origin.present) {
        const std::vector<std::string> differences = stream_differences(contents.origin, origin_);
        if (!differences.empty()) {
            std::string list;
            for (const std::string &d : differences) list += (list.empty() ? "" : ", ") + d;
            fail(Status::wrong_rank, "checkpoint written by " + describe_origin(contents.origin) +
                                          ", but this tracker is " + describe_origin(origin_) + ": they differ in " +
                                          list + "; load with RNGTRK_LOAD_ANY_RANK to take it anyway");
        }
    }
    StateTable replacement =
        StateTable::from_entries(std::move(contents.states), StateTable::Source::checkpoint);
    // Everything that can fail has run: commit with non-throwing operations.
    table_.swap(replacement);
    default_ = contents.default_state;
    origin_ = contents.origin;
}

}  // namespace rngtrk
