// The seeding policies and their flags, as the core names them (values of
// rngtrk.h's rngtrk_seed_policy and RNGTRK_SEED_*).
#pragma once

#include <cstdint>

namespace rngtrk {

enum class SeedPolicy : uint32_t { megatron = 0, slapo = 1, derived = 2 };

// A policy from its stored or passed value; false for an unknown one.
inline bool seed_policy_from(uint32_t value, SeedPolicy *out) {
    if (value > static_cast<uint32_t>(SeedPolicy::derived)) return false;
    *out = static_cast<SeedPolicy>(value);
    return true;
}

constexpr uint32_t kSeedDataParallelRandomInit = 1;  // megatron/derived: default differs per dp rank
constexpr uint32_t kSeedAlwaysEnableTpSeed = 2;      // slapo: default = tp seed
constexpr uint32_t kSeedKnownFlags = kSeedDataParallelRandomInit | kSeedAlwaysEnableTpSeed;

}  // namespace rngtrk
