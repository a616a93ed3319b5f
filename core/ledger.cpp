// SPDX-License-Identifier: Apache-2.0
#include "ledger.h"

#include <iterator>

#include "error.h"

namespace rngtrk {

namespace {

std::string describe(const Reservation &r) {
    return "state '" + (r.name.empty() ? std::string("(default)") : r.name) + "' seed " + std::to_string(r.seed) +
           " offsets [" + std::to_string(r.begin) + ", " + std::to_string(r.end) + ")";
}

}  // namespace

void Ledger::set_mode(LedgerMode mode, size_t capacity) {
    if (replaying_) fail(Status::invalid_argument, "the ledger cannot change while a replay is open");
    Ledger fresh;
    fresh.mode_ = mode;
    fresh.capacity_ = capacity == 0 ? kDefaultCapacity : capacity;
    *this = std::move(fresh);
}

uint32_t Ledger::name_id(std::string_view name) {
    for (size_t i = 0; i < names_.size(); ++i)
        if (names_[i] == name) return static_cast<uint32_t>(i);
    names_.emplace_back(name);
    return static_cast<uint32_t>(names_.size() - 1);
}

Reservation Ledger::expand(const Entry &e, uint64_t sequence) const {
    return Reservation{names_[e.name], e.seed, e.begin, e.end, sequence};
}

const Ledger::Entry *Ledger::logged(uint64_t sequence) const {
    if (sequence < log_first_ || sequence - log_first_ >= log_.size()) return nullptr;
    return &log_[static_cast<size_t>(sequence - log_first_)];
}

bool Ledger::earlier_on(uint64_t seed, uint64_t begin, uint64_t end, Reservation *out) const {
    // Only on the error path: the newest logged reservation it overlaps.
    for (size_t i = log_.size(); i-- > 0;) {
        const Entry &e = log_[i];
        if (e.seed == seed && e.begin < end && begin < e.end) {
            *out = expand(e, log_first_ + i);
            return true;
        }
    }
    return false;
}

void Ledger::insert(IntervalSet &set, uint64_t begin, uint64_t end) {
    // Merge with the interval before (touching or overlapping) and every
    // interval it reaches after; allocate at most one node, before erasing.
    auto next = set.upper_bound(begin);
    IntervalSet::iterator at;
    if (next != set.begin() && std::prev(next)->second >= begin) {
        at = std::prev(next);
        if (end > at->second) at->second = end;
    } else {
        // Full: new ranges are no longer recorded (rngtrk.h says so);
        // checks go on against the kept ones.
        if (interval_count_ >= capacity_) return;
        at = set.emplace_hint(next, begin, end);
        ++interval_count_;
    }
    for (auto it = std::next(at); it != set.end() && it->first <= at->second;) {
        if (it->second > at->second) at->second = it->second;
        it = set.erase(it);
        --interval_count_;
    }
}

void Ledger::check_replay(std::string_view name, uint64_t seed, uint64_t begin, uint64_t end) {
    const Reservation r{std::string(name), seed, begin, end, next_sequence_};
    if (cursor_ >= region_end_)
        fail(Status::replay_mismatch, "the replay draws more than the forward did: " + describe(r) +
                                           " has no counterpart in the region [" + std::to_string(region_begin_) +
                                           ", " + std::to_string(region_end_) + ")");
    const Entry *want = logged(cursor_);
    if (want == nullptr) fail(Status::internal, "the ledger lost a reservation of an open replay");
    if (names_[want->name] != name || want->seed != seed || want->begin != begin || want->end != end)
        fail(Status::replay_mismatch, "replay reservation " + std::to_string(cursor_ - region_begin_ + 1) +
                                           " of the region: expected " + describe(expand(*want, cursor_)) +
                                           " (reservation #" + std::to_string(cursor_) + "), got " + describe(r));
}

void Ledger::reserve(std::string_view name, uint64_t seed, uint64_t begin, uint64_t end) {
    if (mode_ == LedgerMode::off) return;
    if (replaying_) {
        check_replay(name, seed, begin, end);
        ++cursor_;
        return;
    }
    IntervalSet *set = nullptr;
    if (auto found = intervals_.find(seed); found != intervals_.end()) set = &found->second;
    bool overlap = false;
    if (set != nullptr && begin < end) {
        auto next = set->upper_bound(begin);
        overlap = (next != set->begin() && std::prev(next)->second > begin) ||
                  (next != set->end() && next->first < end);
    }
    const uint32_t id = name_id(name);  // may grow names_: harmless if what follows throws
    if (overlap) {
        const Reservation later{names_[id], seed, begin, end, next_sequence_};
        Reservation earlier;
        const bool known = earlier_on(seed, begin, end, &earlier);
        if (mode_ == LedgerMode::raise)
            fail(Status::stream_reuse,
                 describe(later) + " overlaps " +
                     (known ? describe(earlier) + ", reservation #" + std::to_string(earlier.sequence)
                            : std::string("an earlier reservation no longer in the log")) +
                     ": these random numbers were handed out already");
        overlaps_.push_back(Overlap{known ? earlier : Reservation{later.name, seed, 0, 0, 0}, later, known});
    }
    // Everything that can throw happens before anything changes, or is undone.
    try {
        log_.push_back(Entry{id, seed, begin, end});
        try {
            if (begin < end) insert(set != nullptr ? *set : intervals_[seed], begin, end);
        } catch (...) {
            log_.pop_back();
            throw;
        }
    } catch (...) {
        if (overlap) overlaps_.pop_back();
        throw;
    }
    if (log_.size() > capacity_) log_.pop_front(), ++log_first_;
    ++next_sequence_;
}

uint64_t Ledger::mark() {
    if (mode_ == LedgerMode::off) fail(Status::invalid_argument, "the ledger is off: turn it on before taking marks");
    if (replaying_) fail(Status::invalid_argument, "no mark can be taken while a replay is open");
    marks_.insert(next_sequence_);
    return next_sequence_;
}

void Ledger::replay_begin(uint64_t mark) {
    if (mode_ == LedgerMode::off) fail(Status::invalid_argument, "the ledger is off: there is nothing to replay");
    if (replaying_) fail(Status::invalid_argument, "a replay is already open: end it first");
    if (marks_.count(mark) == 0) fail(Status::invalid_argument, std::to_string(mark) + " is not a mark of this ledger");
    const auto later = marks_.upper_bound(mark);
    open_replay(mark, later != marks_.end() ? *later : next_sequence_, false);
}

uint64_t Ledger::position() const {
    if (mode_ == LedgerMode::off) fail(Status::invalid_argument, "the ledger is off: it has no position");
    return replaying_ ? cursor_ : next_sequence_;  // a replay's draws stand for the ones it replays
}

void Ledger::replay_prefix_begin(uint64_t position) {
    if (mode_ == LedgerMode::off) fail(Status::invalid_argument, "the ledger is off: there is nothing to replay");
    if (replaying_) fail(Status::invalid_argument, "a replay is already open: end it first");
    if (position > next_sequence_)
        fail(Status::invalid_argument, std::to_string(position) + " is past the ledger's position " +
                                           std::to_string(next_sequence_));
    open_replay(position, next_sequence_, true);
}

void Ledger::open_replay(uint64_t begin, uint64_t end, bool prefix) {
    if (end > begin && logged(begin) == nullptr)
        fail(Status::replay_mismatch, "the ledger no longer holds the reservations from " + std::to_string(begin) +
                                           " (it keeps the last " + std::to_string(capacity_) + ")");
    replaying_ = true;
    prefix_ = prefix;
    region_begin_ = cursor_ = begin;
    region_end_ = end;
}

void Ledger::replay_end() {
    if (!replaying_) fail(Status::invalid_argument, "no replay is open");
    replaying_ = false;
    if (cursor_ != region_end_ && !prefix_)
        fail(Status::replay_mismatch, "the replay made " + std::to_string(cursor_ - region_begin_) +
                                           " reservations, the forward made " +
                                           std::to_string(region_end_ - region_begin_) + " (region [" +
                                           std::to_string(region_begin_) + ", " + std::to_string(region_end_) + "))");
}

}  // namespace rngtrk
