#include "seed_policy.h"

#include <cstdio>

#include "distributed.h"
#include "error.h"

namespace rngtrk {

namespace {

// The rank coordinates, as bits of a policy's dependency set.
enum Coordinate : uint32_t { kTp = 1, kPp = 2, kDp = 4, kEp = 8, kEtp = 16 };

struct CoordinateRule {
    Coordinate bit;
    const char *name;
    uint32_t ParallelRank::*value;
};

constexpr CoordinateRule kCoordinates[] = {
    {kTp, "tp", &ParallelRank::tp}, {kPp, "pp", &ParallelRank::pp},    {kDp, "dp", &ParallelRank::dp},
    {kEp, "ep", &ParallelRank::ep}, {kEtp, "etp", &ParallelRank::etp},
};

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
    {SeedPolicy::megatron, "megatron", kSeedDataParallelRandomInit, kTp | kPp | kEp | kEtp},
    {SeedPolicy::slapo, "slapo", kSeedAlwaysEnableTpSeed, kTp | kPp | kDp},
    {SeedPolicy::derived, "derived", kSeedDataParallelRandomInit, kTp | kPp | kEp | kEtp},
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
std::string request_problem(SeedPolicy policy, const ParallelRank &, uint32_t flags) {
    const PolicyRule &p = rule_of(policy);
    if (const uint32_t unknown = flags & ~known_flags())
        return "unknown seed flag bits " + seed_flag_names(unknown) + " (the flags are " +
               seed_flag_names(known_flags()) + ")";
    if (const uint32_t unread = flags & ~p.flags)
        return "policy " + std::string(p.name) + " does not read flag " + seed_flag_names(unread) +
               (p.flags ? " (it reads " + seed_flag_names(p.flags) + ")" : " (it reads none)");
    return "";
}

// Tags of the derived policy: one per mesh axis and one per named state.
enum Tag : uint64_t {
    kAxisTp = 1,
    kAxisPp = 2,
    kAxisDp = 3,
    kAxisEp = 4,
    kAxisEtp = 5,
    kRoleTp = 0x101,
    kRoleEp = 0x102,
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

bool seed_policy_from_name(std::string_view name, SeedPolicy *out) {
    for (const PolicyRule &p : kPolicies)
        if (name == p.name) {
            *out = p.policy;
            return true;
        }
    return false;
}

std::string seed_policy_list() {
    std::string out;
    const size_t n = sizeof kPolicies / sizeof kPolicies[0];
    for (size_t i = 0; i < n; ++i) out += (i == 0 ? "" : i + 1 == n ? " or " : ", ") + std::string(kPolicies[i].name);
    return out;
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
        fail(RNGTRK_E_INVALID_ARGUMENT,
             "unknown seeding policy " + std::to_string(value) + " (the policies are " + seed_policy_list() + ")");
    return p;
}

void check_seed_request(SeedPolicy policy, const ParallelRank &rank, uint32_t flags) {
    const std::string problem = request_problem(policy, rank, flags);
    if (!problem.empty()) fail(RNGTRK_E_INVALID_ARGUMENT, problem);
}

PolicySeeds policy_seeds(SeedPolicy policy, uint64_t seed, const ParallelRank &r, uint32_t flags) {
    PolicySeeds out;
    switch (policy) {
        case SeedPolicy::megatron: {
            // Megatron-LM: training's _set_random_seed (seed + 100 pp, + 10 dp
            // with data-parallel random init), then model_parallel_cuda_manual_seed.
            uint64_t s = seed + 100ull * r.pp;
            if (flags & kSeedDataParallelRandomInit) s += 10ull * r.dp;
            out.default_seed = s;
            out.named = {{"data-parallel-rng", s},
                         {"model-parallel-rng", s + 2718 + r.tp},
                         {"expert-parallel-rng", s + 1024 + 100ull * r.ep + r.etp}};
            break;
        }
        case SeedPolicy::slapo: {
            // slapo's set_random_seed(seed, dp_rank, pp_rank, tp_rank, always_enable_tp_seed).
            const uint64_t s = seed + 100ull * r.pp + 10ull * r.dp;
            const uint64_t tp_seed = s + 2718 + r.tp;
            out.default_seed = (flags & kSeedAlwaysEnableTpSeed) ? tp_seed : s;
            out.named = {{"model-parallel-rng", tp_seed}};
            break;
        }
        case SeedPolicy::derived: {
            // Ours: keys derived per mesh axis, in the roles Megatron gives them.
            uint64_t s = derive(seed, kAxisPp, r.pp);
            if (flags & kSeedDataParallelRandomInit) s = derive(s, kAxisDp, r.dp);
            out.default_seed = s;
            out.named = {{"data-parallel-rng", s},
                         {"model-parallel-rng", derive(derive(s, kRoleTp, 0), kAxisTp, r.tp)},
                         {"expert-parallel-rng", derive(derive(derive(s, kRoleEp, 0), kAxisEp, r.ep), kAxisEtp, r.etp)}};
            break;
        }
    }
    return out;
}

Origin request_origin(SeedPolicy policy, uint64_t seed, const ParallelRank &rank, uint32_t flags) {
    Origin o;
    o.present = true, o.policy = policy, o.flags = flags, o.seed = seed, o.rank = rank;
    return o;
}

std::string origin_problem(const Origin &o) { return request_problem(o.policy, o.rank, o.flags); }

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
        if (!(matter & c.bit) || a.rank.*c.value == b.rank.*c.value) continue;
        out.push_back(std::string(c.name) + " " + std::to_string(a.rank.*c.value) + " vs " +
                      std::to_string(b.rank.*c.value));
    }
    return out;
}

std::string describe_origin(const Origin &o) {
    const std::string flags = seed_flag_names(o.flags);
    std::string out = std::string(rule_of(o.policy).name) + " seed " + std::to_string(o.seed) +
                      (flags.empty() ? "" : " with " + flags) + " (";
    for (const CoordinateRule &c : kCoordinates)
        out += (c.bit == kTp ? "" : ", ") + std::string(c.name) + " " + std::to_string(o.rank.*c.value);
    return out + ")";
}

}  // namespace rngtrk
