// SPDX-License-Identifier: Apache-2.0
#include "seed_policy.h"

#include <cstdio>
#include <initializer_list>

#include "distributed.h"
#include "error.h"
#include "name_list.h"

namespace rngtrk {

namespace {

// The rank coordinates, as bits of a policy's dependency set.
enum Coordinate : uint32_t { kTp = 1, kPp = 2, kDp = 4, kEp = 8, kEtp = 16, kGtpRemat = 32, kEgtpRemat = 64 };

struct CoordinateRule {
    Coordinate bit;
    const char *name;
    uint32_t ParallelRank::*value;
    uint32_t ParallelRank::*size;  // a remat axis's group size; nullptr for the others
    const char *state;             // the state a remat axis adds
};

constexpr CoordinateRule kCoordinates[] = {
    {kTp, "tp", &ParallelRank::tp, nullptr, nullptr},
    {kPp, "pp", &ParallelRank::pp, nullptr, nullptr},
    {kDp, "dp", &ParallelRank::dp, nullptr, nullptr},
    {kEp, "ep", &ParallelRank::ep, nullptr, nullptr},
    {kEtp, "etp", &ParallelRank::etp, nullptr, nullptr},
    {kGtpRemat, "gtp_remat", &ParallelRank::gtp_remat, &ParallelRank::gtp_remat_size, "gtp-remat-rng"},
    {kEgtpRemat, "egtp_remat", &ParallelRank::egtp_remat, &ParallelRank::egtp_remat_size, "egtp-remat-rng"},
};

// A remat axis is on when its group has at least 2 ranks (Megatron-LM adds
// the state only when the world size is above 1).
bool axis_on(const ParallelRank &r, const CoordinateRule &c) { return r.*c.size > 1; }

struct FlagRule {
    uint32_t bit;
    const char *name;
    uint32_t adds;  // coordinates the seeds then depend on as well
};

constexpr FlagRule kFlags[] = {
    {kSeedDataParallelRandomInit, "dp-random-init", kDp},
    {kSeedAlwaysEnableTpSeed, "always-enable-tp-seed", 0},
};

struct PolicyRule {
    SeedPolicy policy;
    const char *name;
    uint32_t flags;        // the flags it reads
    uint32_t coordinates;  // what its seeds depend on without flags
};

// Indexed by the policy's value.
constexpr PolicyRule kPolicies[] = {
    {SeedPolicy::megatron, "megatron", kSeedDataParallelRandomInit, kTp | kPp | kEp | kEtp | kGtpRemat | kEgtpRemat},
    {SeedPolicy::slapo, "slapo", kSeedAlwaysEnableTpSeed, kTp | kPp | kDp},
    {SeedPolicy::derived, "derived", kSeedDataParallelRandomInit, kTp | kPp | kEp | kEtp | kGtpRemat | kEgtpRemat},
};

static_assert(kPolicies[0].policy == SeedPolicy::megatron && kPolicies[1].policy == SeedPolicy::slapo &&
                  kPolicies[2].policy == SeedPolicy::derived,
              "kPolicies is indexed by the policy's value");

const PolicyRule &rule_of(SeedPolicy policy) { return kPolicies[static_cast<uint32_t>(policy)]; }

uint32_t known_flags() {
    uint32_t all = 0;
    for (const FlagRule &f : kFlags) all |= f.bit;
    return all;
}

// The coordinates the seeds of `policy` with `flags` depend on.
uint32_t dependencies(SeedPolicy policy, uint32_t flags) {
    uint32_t out = rule_of(policy).coordinates;
    for (const FlagRule &f : kFlags)
        if (flags & f.bit) out |= f.adds;
    return out;
}

// Empty when the request is valid, else the first problem.
std::string request_problem(SeedPolicy policy, const ParallelRank &rank, uint32_t flags) {
    const PolicyRule &p = rule_of(policy);
    if (const uint32_t unknown = flags & ~known_flags())
        return "unknown seed flag bits " + seed_flag_names(unknown) + " (the flags are " +
               seed_flag_names(known_flags()) + ")";
    if (const uint32_t unread = flags & ~p.flags)
        return "policy " + std::string(p.name) + " does not read flag " + seed_flag_names(unread) +
               (p.flags ? " (it reads " + seed_flag_names(p.flags) + ")" : " (it reads none)");
    for (const CoordinateRule &c : kCoordinates) {
        if (c.size == nullptr) continue;
        const std::string value = std::to_string(rank.*c.value), size = std::to_string(rank.*c.size);
        const std::string size_name = std::string(c.name) + "_size";
        if (!axis_on(rank, c)) {
            if (rank.*c.value != 0)
                return std::string(c.name) + " " + value + " with " + size_name + " " + size +
                       ": a group of size 0 or 1 is off, and its rank must be 0";
            continue;
        }
        if (!(p.coordinates & c.bit))
            return "policy " + std::string(p.name) + " has no " + c.state + " state: " + size_name + " " + size +
                   " must be 0 or 1";
        if (rank.*c.value >= rank.*c.size)
            return std::string(c.name) + " " + value + " is outside its group of " + size_name + " " + size +
                   " (ranks 0 to " + std::to_string(rank.*c.size - 1) + ")";
    }
    return "";
}

// Tags of the derived policy: one per mesh axis and one per named state.
enum Tag : uint64_t {
    kAxisTp = 1,
    kAxisPp = 2,
    kAxisDp = 3,
    kAxisEp = 4,
    kAxisEtp = 5,
    kAxisGtpRemat = 6,
    kAxisEgtpRemat = 7,
    kRoleTp = 0x101,
    kRoleEp = 0x102,
    kRoleGtpRemat = 0x103,
    kRoleEgtpRemat = 0x104,
};

// The seed reached from `seed` by folding in `tag`, then `coordinate`.
uint64_t derive(uint64_t seed, uint64_t tag, uint64_t coordinate) {
    return fold_in(fold_in(PhiloxState{seed, 0}, tag), coordinate).seed;
}

}  // namespace

const char *seed_policy_name(uint32_t value) {
    return value < sizeof kPolicies / sizeof kPolicies[0] ? kPolicies[value].name : nullptr;
}

bool seed_policy_from_value(uint32_t value, SeedPolicy *out) {
    if (seed_policy_name(value) == nullptr) return false;
    *out = static_cast<SeedPolicy>(value);
    return true;
}

const char *seed_flag_name(uint32_t flag) {
    for (const FlagRule &f : kFlags)
        if (flag == f.bit) return f.name;
    return nullptr;
}

std::string seed_flag_names(uint32_t flags) {
    std::string out;
    for (uint32_t bit = 1; bit != 0; bit <<= 1) {
        if (!(flags & bit)) continue;
        const char *name = seed_flag_name(bit);
        char hex[16];
        std::snprintf(hex, sizeof hex, "0x%x", bit);
        out += (out.empty() ? "" : ", ") + std::string(name ? name : hex);
    }
    return out;
}

SeedPolicy checked_seed_policy(uint32_t value) {
    SeedPolicy p;
    if (!seed_policy_from_value(value, &p))
        fail(Status::invalid_argument,
             "unknown seeding policy " + std::to_string(value) + " (the policies are " + known_names(seed_policy_name) + ")");
    return p;
}

void check_seed_request(SeedPolicy policy, const ParallelRank &rank, uint32_t flags) {
    const std::string problem = request_problem(policy, rank, flags);
    if (!problem.empty()) fail(Status::invalid_argument, problem);
}

// A sum of a policy's formula.  Past 2^64 - 1 it is refused, never wrapped:
// a wrapped seed is another rank's stream (upstream's Python integers do not
// wrap, and torch refuses such a seed).  The terms' products cannot overflow:
// the coordinates are 32-bit.
static uint64_t sum(uint64_t seed, std::initializer_list<uint64_t> terms) {
    uint64_t total = 0;
    for (uint64_t term : terms)
        if (__builtin_add_overflow(total, term, &total))
            fail(Status::invalid_argument,
                 "seed " + std::to_string(seed) + " gives this rank a seed past 2^64 - 1 (the policy adds to it)");
    return total;
}

PolicySeeds policy_seeds(SeedPolicy policy, uint64_t seed, const ParallelRank &r, uint32_t flags) {
    PolicySeeds out;
    const bool gtp_remat = r.gtp_remat_size > 1, egtp_remat = r.egtp_remat_size > 1;
    switch (policy) {
        case SeedPolicy::megatron: {
            // Megatron-LM main (d98e8a6): training's _set_random_seed (seed +
            // 100 pp, + 10 dp with data-parallel random init), then
            // model_parallel_cuda_manual_seed, whose states are added in this
            // order, the remat ones only when their group has 2 ranks or more.
            const uint64_t s = sum(seed, {seed, 100ull * r.pp, (flags & kSeedDataParallelRandomInit) ? 10ull * r.dp : 0});
            const uint64_t model = sum(seed, {s, 2718, r.tp}), expert = sum(seed, {s, 1024, 100ull * r.ep, r.etp});
            out.default_seed = s;
            out.named = {{"data-parallel-rng", s}, {"model-parallel-rng", model}, {"expert-parallel-rng", expert}};
            if (gtp_remat) out.named.push_back({"gtp-remat-rng", sum(seed, {model, 65536ull * (1ull + r.gtp_remat)})});
            if (egtp_remat)
                out.named.push_back({"egtp-remat-rng", sum(seed, {expert, 32768, 65536ull * (1ull + r.egtp_remat)})});
            break;
        }
        case SeedPolicy::slapo: {
            // slapo's set_random_seed(seed, dp_rank, pp_rank, tp_rank, always_enable_tp_seed).
            const uint64_t s = sum(seed, {seed, 100ull * r.pp, 10ull * r.dp});
            const uint64_t tp_seed = sum(seed, {s, 2718, r.tp});
            out.default_seed = (flags & kSeedAlwaysEnableTpSeed) ? tp_seed : s;
            out.named = {{"model-parallel-rng", tp_seed}};
            break;
        }
        case SeedPolicy::derived: {
            // Ours: keys derived per mesh axis, in the roles Megatron gives them.
            uint64_t s = derive(seed, kAxisPp, r.pp);
            if (flags & kSeedDataParallelRandomInit) s = derive(s, kAxisDp, r.dp);
            // The remat states come from the model- and expert-parallel keys,
            // as Megatron's come from their seeds.
            const uint64_t model = derive(derive(s, kRoleTp, 0), kAxisTp, r.tp);
            const uint64_t expert = derive(derive(derive(s, kRoleEp, 0), kAxisEp, r.ep), kAxisEtp, r.etp);
            out.default_seed = s;
            out.named = {{"data-parallel-rng", s}, {"model-parallel-rng", model}, {"expert-parallel-rng", expert}};
            if (gtp_remat)
                out.named.push_back(
                    {"gtp-remat-rng", derive(derive(model, kRoleGtpRemat, 0), kAxisGtpRemat, r.gtp_remat)});
            if (egtp_remat)
                out.named.push_back(
                    {"egtp-remat-rng", derive(derive(expert, kRoleEgtpRemat, 0), kAxisEgtpRemat, r.egtp_remat)});
            break;
        }
    }
    return out;
}

Origin request_origin(SeedPolicy policy, uint64_t seed, const ParallelRank &rank, uint32_t flags) {
    Origin o;
    o.present = true, o.policy = policy, o.flags = flags, o.seed = seed, o.rank = rank;
    for (const CoordinateRule &c : kCoordinates)
        if (c.size != nullptr && !axis_on(rank, c)) o.rank.*c.size = 0;  // off: recorded as 0
    return o;
}

bool origin_has_remat(const Origin &o) {
    for (const CoordinateRule &c : kCoordinates)
        if (c.size != nullptr && (o.rank.*c.value != 0 || o.rank.*c.size != 0)) return true;
    return false;
}

std::string origin_problem(const Origin &o) {
    const std::string problem = request_problem(o.policy, o.rank, o.flags);
    if (!problem.empty()) return problem;
    for (const CoordinateRule &c : kCoordinates)
        if (c.size != nullptr && o.rank.*c.size == 1)
            return std::string(c.name) + "_size 1 (an axis that is off is recorded as 0)";
    return "";
}

std::vector<std::string> stream_differences(const Origin &a, const Origin &b) {
    std::vector<std::string> out;
    if (a.policy != b.policy)
        out.push_back("policy " + std::string(rule_of(a.policy).name) + " vs " + rule_of(b.policy).name);
    if (a.seed != b.seed) out.push_back("base seed " + std::to_string(a.seed) + " vs " + std::to_string(b.seed));
    if (a.flags != b.flags) {
        const std::string fa = seed_flag_names(a.flags), fb = seed_flag_names(b.flags);
        out.push_back("flags " + (fa.empty() ? "none" : fa) + " vs " + (fb.empty() ? "none" : fb));
    }
    // Coordinates that either side's seeds depend on.
    const uint32_t matter = dependencies(a.policy, a.flags) | dependencies(b.policy, b.flags);
    for (const CoordinateRule &c : kCoordinates) {
        if (!(matter & c.bit)) continue;
        if (c.size != nullptr && axis_on(a.rank, c) != axis_on(b.rank, c)) {
            // One side has the state, the other not.
            const auto on_or_off = [&](const ParallelRank &r) {
                return axis_on(r, c) ? "on (" + std::to_string(r.*c.value) + " of " + std::to_string(r.*c.size) + ")"
                                     : std::string("off");
            };
            out.push_back(std::string(c.name) + " " + on_or_off(a.rank) + " vs " + on_or_off(b.rank));
            continue;
        }
        if (a.rank.*c.value == b.rank.*c.value) continue;
        out.push_back(std::string(c.name) + " " + std::to_string(a.rank.*c.value) + " vs " +
                      std::to_string(b.rank.*c.value));
    }
    return out;
}

std::string describe_origin(const Origin &o) {
    const std::string flags = seed_flag_names(o.flags);
    std::string out = std::string(rule_of(o.policy).name) + " seed " + std::to_string(o.seed) +
                      (flags.empty() ? "" : " with " + flags) + " (";
    for (const CoordinateRule &c : kCoordinates) {
        if (c.size != nullptr && !axis_on(o.rank, c)) continue;
        out += (c.bit == kTp ? "" : ", ") + std::string(c.name) + " " + std::to_string(o.rank.*c.value);
        if (c.size != nullptr) out += " of " + std::to_string(o.rank.*c.size);
    }
    return out + ")";
}

}  // namespace rngtrk
