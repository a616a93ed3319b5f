/* SPDX-License-Identifier: Apache-2.0 */
// The ledger: an opt-in record of every reservation a tracker hands out
// (which state, seed, offset range [begin, end), sequence number), which
// catches the two silent RNG bugs of training (docs/ledger.md):
//
//  * reuse: a reservation whose range overlaps an earlier one on the same
//    seed (a state restored from the wrong snapshot) is refused
//    (Status::stream_reuse) or only recorded, by the mode;
//  * divergent recomputation: between replay_begin(mark) and replay_end()
//    the reservations must equal, in order, those recorded in the region
//    that starts at `mark` and ends at the next mark taken
//    (Status::replay_mismatch otherwise).
//
// Ranges per seed are merged interval sets (a check and an insert are
// O(log n)); the log of reservations that replays compare against keeps at
// most `capacity` entries, oldest dropped first.  The ledger lives beside
// the states: set_states and load do not touch it, and checkpoints do not
// carry it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rngtrk {

enum class LedgerMode : uint32_t { off = 0, raise = 1, record = 2 };

struct Reservation {
    std::string name;  // the state's name, "" for the default state
    uint64_t seed = 0, begin = 0, end = 0;
    uint64_t sequence = 0;
};

struct Overlap {
    Reservation earlier, later;  // earlier.sequence is 0 when the log no longer holds it
    bool earlier_known = true;
};

class Ledger {
public:
    static constexpr size_t kDefaultCapacity = size_t{1} << 20;

    LedgerMode mode() const { return mode_; }
    // Switching the mode starts an empty ledger (off frees it).
    void set_mode(LedgerMode mode, size_t capacity);

    // A reservation about to be handed out.  Checks it and records it, or
    // throws (Status::stream_reuse, Status::replay_mismatch) leaving the
    // ledger unchanged.  The caller moves the state only after it returns.
    void reserve(std::string_view name, uint64_t seed, uint64_t begin, uint64_t end);

    // The position of the next reservation; a region runs from a mark to
    // the next mark taken.
    uint64_t mark();
    void replay_begin(uint64_t mark);
    // The position of the next reservation (during a replay, of the
    // reservation the replay is at: its draws stand for those), marking
    // nothing (no region ends there); and a replay of everything reserved
    // from a position on that may stop early: replay_end then accepts
    // fewer reservations.
    // (Activation recomputation hooked into torch's RNG state, which
    // cannot tell where a checkpointed region ends: rngtrk.torch.)
    uint64_t position() const;
    void replay_prefix_begin(uint64_t position);
    void replay_end();
    bool replaying() const { return replaying_; }

    const std::vector<Overlap> &overlaps() const { return overlaps_; }
    uint64_t reservations() const { return next_sequence_; }

private:
    // A logged reservation: the state's name as an index into names_ (a
    // tracker has a handful of names; copying one per draw would cost more
    // than the check), its sequence implied by its place in the log.
    struct Entry {
        uint32_t name;
        uint64_t seed, begin, end;
    };
    using IntervalSet = std::map<uint64_t, uint64_t>;  // begin -> end; disjoint, merged

    uint32_t name_id(std::string_view name);
    Reservation expand(const Entry &e, uint64_t sequence) const;
    const Entry *logged(uint64_t sequence) const;
    bool earlier_on(uint64_t seed, uint64_t begin, uint64_t end, Reservation *out) const;
    void check_replay(std::string_view name, uint64_t seed, uint64_t begin, uint64_t end);
    void open_replay(uint64_t begin, uint64_t end, bool prefix);
    void insert(IntervalSet &set, uint64_t begin, uint64_t end);

    LedgerMode mode_ = LedgerMode::off;
    size_t capacity_ = kDefaultCapacity;
    std::unordered_map<uint64_t, IntervalSet> intervals_;  // seed -> what was handed out
    size_t interval_count_ = 0;
    std::vector<std::string> names_;
    std::deque<Entry> log_;  // the last `capacity_` reservations, in order
    uint64_t log_first_ = 0;  // the sequence of log_.front()
    uint64_t next_sequence_ = 0;
    std::set<uint64_t> marks_;
    std::vector<Overlap> overlaps_;  // record mode
    bool replaying_ = false;
    bool prefix_ = false;  // the open replay may stop early
    uint64_t cursor_ = 0, region_end_ = 0, region_begin_ = 0;
};

}  // namespace rngtrk
