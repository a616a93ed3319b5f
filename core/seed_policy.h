/* SPDX-License-Identifier: Apache-2.0 */
// The seeding policies (docs/distributed.md), every rule about them in one
// place: their names, their flags and which policy reads which, the rank
// coordinates their seeds depend on, what a valid request is, the formulas,
// and how two origins compare.  The C layer, the tracker's rank check and the
// checkpoint codec and describer ask this file; none keeps a rule of its own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rngtrk {

// Values of rngtrk.h's rngtrk_seed_policy.
enum class SeedPolicy : uint32_t { megatron = 0, slapo = 1, derived = 2 };

// Values of rngtrk.h's RNGTRK_SEED_* flags.
constexpr uint32_t kSeedDataParallelRandomInit = 1;  // megatron, derived: the seeds depend on dp
constexpr uint32_t kSeedAlwaysEnableTpSeed = 2;      // slapo: the default state takes the tp seed

// A rank's coordinates.
struct ParallelRank {
    uint32_t tp = 0, pp = 0, dp = 0, ep = 0, etp = 0;
    // Megatron-LM's weight-rematerialisation groups (GTP_remat for dense
    // weights, EGTP_remat for expert weights): the rank in the group and the
    // group's size.  A size of 0 or 1 means the axis is off: no state, rank 0.
    uint32_t gtp_remat = 0, gtp_remat_size = 0, egtp_remat = 0, egtp_remat_size = 0;
};

// Who a tracker's states belong to: what seed_rank was asked, as
// checkpoints record it.  A remat axis that is off has size 0 here (a
// request's size 1 is recorded as 0).
struct Origin {
    bool present = false;
    SeedPolicy policy = SeedPolicy::megatron;
    uint32_t flags = 0;
    uint64_t seed = 0;
    ParallelRank rank;
};

// Whether the origin has a remat axis on (format version 3 records it).
bool origin_has_remat(const Origin &origin);

// -- names ------------------------------------------------------------------------

// The policy's name ("megatron", "slapo", "derived"), or nullptr for a value
// that is not a policy.  Policies are numbered from 0 without gaps.
const char *seed_policy_name(uint32_t value);

// The policy of a stored or passed value; false for an unknown one.
bool seed_policy_from_value(uint32_t value, SeedPolicy *out);

// The name of exactly one known flag bit ("dp-random-init",
// "always-enable-tp-seed"), or nullptr.
const char *seed_flag_name(uint32_t flag);

// The names of the bits of `flags`, comma-separated ("" for none).  Unknown
// bits are written in hex.
std::string seed_flag_names(uint32_t flags);

// -- requests ---------------------------------------------------------------------

// The policy of `value`; throws Error(Status::invalid_argument) naming the
// value and the known policies.
SeedPolicy checked_seed_policy(uint32_t value);

// Checks that `policy` can seed `rank` with `flags`: every flag is known and
// read by this policy; a remat axis that is on belongs to a policy with
// remat states and its rank is below its size; an axis that is off has rank
// 0.  Throws Error(Status::invalid_argument) naming the problem and the
// values.
void check_seed_request(SeedPolicy policy, const ParallelRank &rank, uint32_t flags);

struct NamedSeed {
    std::string name;
    uint64_t seed;
};

// What a policy gives one rank: the default seed and the named states, in
// the order the upstream code adds them.
struct PolicySeeds {
    uint64_t default_seed = 0;
    std::vector<NamedSeed> named;
};

// The formulas, for a request check_seed_request accepts.  A seed past
// 2^64 - 1 is refused (Status::invalid_argument, thrown), never wrapped.
PolicySeeds policy_seeds(SeedPolicy policy, uint64_t seed, const ParallelRank &rank, uint32_t flags);

// The origin an accepted request records.
Origin request_origin(SeedPolicy policy, uint64_t seed, const ParallelRank &rank, uint32_t flags);

// Empty when `origin` is one that an accepted request records (remat sizes
// of 1 included: they are recorded as 0), else why it is not (for
// checkpoints: such an origin is corrupt).
std::string origin_problem(const Origin &origin);

// -- the rank check ---------------------------------------------------------------

// What two origins differ in, among what decides their streams: the policy,
// the base seed, the flags, and every rank coordinate the policy's seeds
// depend on, each named with both values ("tp 1 vs 0", `a`'s first; for a
// remat axis whether it is on, then its rank).  Empty when both give the
// same streams (data-parallel replicas, for example).
std::vector<std::string> stream_differences(const Origin &a, const Origin &b);

// "megatron seed 1234 with dp-random-init (tp 3, pp 1, dp 2, ep 1, etp 0,
// gtp_remat 1 of 4)": the remat axes only when on.
std::string describe_origin(const Origin &origin);

}  // namespace rngtrk
