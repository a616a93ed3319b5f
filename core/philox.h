/* SPDX-License-Identifier: Apache-2.0 */
// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy
// as 1, 2, 3", SC'11).  This is the only definition of the round in the
// library; the stream code and any SIMD or CUDA path call it.
#pragma once

#include <cstdint>

#include "hd.h"

namespace rngtrk {

struct PhiloxBlock {
    uint32_t w[4];
};

namespace philox_detail {
constexpr uint32_t kMul0 = 0xD2511F53u;
constexpr uint32_t kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u;  // golden ratio
constexpr uint32_t kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1
constexpr int kRounds = 10;
}  // namespace philox_detail

// Internal linkage on purpose: files compiled for AVX2 and AVX-512 include
// this too, and an out-of-line copy from one of them must never be what a
// baseline file calls.
namespace {

// out = Philox4x32-10(counter c0..c3, key k0, k1).
RNGTRK_HD inline PhiloxBlock philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0,
                                 uint32_t k1) {
    using namespace philox_detail;
    // Fully unrolled: the rounds form one dependency chain, and unrolling
    // lets the compiler fold the key schedule into constants.
#if defined(__CUDACC__) || defined(__clang__)
#pragma unroll
#elif defined(__GNUC__)
#pragma GCC unroll 10
#endif
    for (int round = 0; round < kRounds; ++round) {
#if defined(__CUDA_ARCH__)
        // The GPU's 32-bit multiply halves (mul.hi/mul.lo: one wide multiply
        // in SASS), not 64-bit arithmetic on zero-extended words.
        const uint32_t hi0 = __umulhi(kMul0, c0), lo0 = kMul0 * c0;
        const uint32_t hi1 = __umulhi(kMul1, c2), lo1 = kMul1 * c2;
#else
        const uint64_t p0 = uint64_t{kMul0} * c0;
        const uint64_t p1 = uint64_t{kMul1} * c2;
        const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
        const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
#endif
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
        // The key schedule bumps between rounds; the bump after the last round
        // would be unused, and the compiler drops it.
        k0 += kWeyl0;
        k1 += kWeyl1;
    }
    return PhiloxBlock{{c0, c1, c2, c3}};
}

// The block of the stream of (seed, *) at 64-bit block index b:
// key = (lo32(seed), hi32(seed)), counter = (lo32(b), hi32(b), 0, 0).
RNGTRK_HD inline PhiloxBlock philox_stream_block(uint64_t seed, uint64_t block) {
    return philox4x32_10(static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0, 0,
                         static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

}  // namespace
}  // namespace rngtrk
