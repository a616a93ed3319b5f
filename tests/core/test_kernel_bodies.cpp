// SPDX-License-Identifier: Apache-2.0
// The CUDA kernels' bodies (cuda/kernel_bodies.h) run on the host over every
// block and thread of the grids the backend launches (cuda/launch_geometry.h),
// and give the CPU engines' bits: every layout, distribution and dtype, odd
// counts, unaligned firsts, ranges that start inside a Philox block or a CUDA
// block, grid-stride loops (small SM counts), the torch-eager-cuda wave rule
// for several SM counts, misaligned outputs, slices, dropout (f32, f16 and
// bf16 data; ranges and slices; in place) and the graph-safe state.  No GPU
// is needed: this is the index arithmetic the GPU runs, executed here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "host_launch.h"
#include "kernel_bodies.h"
#include "launch_geometry.h"
#include "rngtrk.h"
#include "sample.h"
#include "api_sample_spec.h"

using namespace rngtrk;
using namespace rngtrk::kernels;

namespace {

// Which call a case is: a sample, rngtrk_dropout_f32 (f32 data, dropped
// elements +0) or rngtrk_dropout (the dtype is the data's).
enum class Drop { none, f32_only, data };
struct KindCase {
    rngtrk_distribution dist;
    rngtrk_dtype dtype;
    Drop dropout;
};
const KindCase kKinds[] = {
    {RNGTRK_DIST_BITS, RNGTRK_DTYPE_U32, Drop::none},       {RNGTRK_DIST_BITS, RNGTRK_DTYPE_U64, Drop::none},
    {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32, Drop::none},    {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F64, Drop::none},
    {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F16, Drop::none},    {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_BF16, Drop::none},
    {RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32, Drop::none},     {RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F64, Drop::none},
    {RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F16, Drop::none},     {RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_BF16, Drop::none},
    {RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8, Drop::none},   {RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_F32, Drop::f32_only},
    {RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_F32, Drop::data},  {RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_F16, Drop::data},
    {RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_BF16, Drop::data}};

SpecUse use_of(const KindCase &k) {
    return k.dropout == Drop::none   ? SpecUse::sample
           : k.dropout == Drop::data ? SpecUse::dropout
                                     : SpecUse::dropout_f32;
}
const rngtrk_layout kLayouts[] = {RNGTRK_LAYOUT_STATELESS, RNGTRK_LAYOUT_NVFUSER, RNGTRK_LAYOUT_TORCH_EAGER_CUDA,
                                   RNGTRK_LAYOUT_TRITON};

// Bytes of an element of dtype t (the C enum and DType share their values).
size_t width(rngtrk_dtype t) { return element_bytes(static_cast<DType>(t)); }

rngtrk_sample_spec c_spec(rngtrk_layout layout, const KindCase &k) {
    rngtrk_sample_spec s;
    const rngtrk_dtype made = k.dropout != Drop::none ? RNGTRK_DTYPE_U8 : k.dtype;  // dropout: its mask's
    EXPECT_EQ(RNGTRK_OK, RNGTRK_SAMPLE_SPEC_INIT(&s, layout, k.dist, made));
    s.dtype = k.dtype;
    if (k.dist == RNGTRK_DIST_UNIFORM) s.param_a = -1.5, s.param_b = 2.25;
    if (k.dist == RNGTRK_DIST_NORMAL) s.param_a = 0.5, s.param_b = 2.0;
    if (k.dist == RNGTRK_DIST_BERNOULLI) s.param_a = 0.7;
    return s;
}

std::string describe(rngtrk_layout layout, const KindCase &k, uint64_t first, uint64_t count) {
    return "layout " + std::to_string(layout) + " dist " + std::to_string(k.dist) + " dtype " +
           std::to_string(k.dtype) +
           (k.dropout == Drop::f32_only ? " dropout_f32" : k.dropout == Drop::data ? " dropout" : "") + " first " +
           std::to_string(first) + " count " +
           std::to_string(count);
}

// Output buffers with guard bytes on both sides, poisoned, placed `shift`
// elements past an address aligned to 64 bytes.
struct Guarded {
    static constexpr size_t kGuard = 64;
    std::vector<unsigned char> bytes;
    size_t lead;
    Guarded(size_t n, size_t shift) : bytes(n + shift + 4 * kGuard, 0xA5) {
        const uintptr_t at = reinterpret_cast<uintptr_t>(bytes.data()) + kGuard;
        lead = kGuard + (64 - at % 64) % 64 + shift;
    }
    unsigned char *data() { return bytes.data() + lead; }
    bool guards_intact(size_t n) const {
        for (size_t i = 0; i < lead; ++i)
            if (bytes[i] != 0xA5) return false;
        for (size_t i = lead + n; i < bytes.size(); ++i)
            if (bytes[i] != 0xA5) return false;
        return true;
    }
};

struct Geometry {
    uint32_t sms, per_sm;
};
// One SM with one block forces long grid-stride loops; an H100's full wave
// runs one item per thread.
const Geometry kGeometries[] = {{1, 1}, {3, 2}, {132, 8}};

// (out's, in's) offset in elements from an aligned address.
const std::pair<size_t, size_t> kShifts[] = {{0, 0}, {1, 1}, {0, 1}, {1, 0}};

// Dropout's input: `count` elements of the data dtype, with NaNs, infinities,
// zeros of both signs, negatives, subnormals and ordinary values (f16 and
// bf16: random bit patterns, which are all of those).
std::vector<unsigned char> dropout_input(rngtrk_dtype dtype, uint64_t count, std::mt19937_64 &rng) {
    std::vector<unsigned char> in(count * width(dtype));
    if (dtype == RNGTRK_DTYPE_F32) {
        const float special[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f, -3e-39f};
        for (uint64_t i = 0; i < count; ++i) {
            const float ordinary = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) * 0.37f;
            const float v = i % 13 == 5 ? special[rng() % 8] : ordinary;
            std::memcpy(in.data() + 4 * i, &v, 4);
        }
    } else {
        for (uint64_t i = 0; i < count; ++i) {
            const uint16_t bits = static_cast<uint16_t>(rng());
            std::memcpy(in.data() + 2 * i, &bits, 2);
        }
    }
    return in;
}

// The library's result of a dropout request on the CPU.
rngtrk_status cpu_dropout(const KindCase &k, const rngtrk_philox_state &st, const rngtrk_sample_spec &cs,
                          uint64_t first, uint64_t count, const std::vector<unsigned char> &in,
                          std::vector<unsigned char> &want) {
    if (k.dropout == Drop::f32_only)
        return rngtrk_dropout_f32(&st, &cs, first, count, reinterpret_cast<const float *>(in.data()),
                                  reinterpret_cast<float *>(want.data()));
    return rngtrk_dropout(&st, &cs, first, count, in.data(), want.data(), want.size());
}

}  // namespace

TEST(KernelBodies, GridForGivesOneItemPerThreadUpToAWave) {
    EXPECT_EQ(1u, grid_for(0, 132, 8));
    EXPECT_EQ(1u, grid_for(1, 132, 8));
    EXPECT_EQ(1u, grid_for(256, 132, 8));
    EXPECT_EQ(2u, grid_for(257, 132, 8));
    EXPECT_EQ(1056u, grid_for(1056 * 256, 132, 8));
    EXPECT_EQ(1056u, grid_for(1056 * 256 + 1, 132, 8));  // beyond a wave: grid-stride
    EXPECT_EQ(1056u, grid_for(uint64_t{1} << 40, 132, 8));
    EXPECT_EQ(1u, grid_for(1000, 0, 0));  // nonsense occupancy still launches
}

TEST(KernelBodies, WholeBlocksAreAlignedOnlyWhereTheFirstWholeBlockLands) {
    alignas(16) unsigned char buf[64];
    EXPECT_TRUE(whole_blocks_aligned(buf, 0, 4, 4));
    EXPECT_FALSE(whole_blocks_aligned(buf + 4, 0, 4, 4));
    // first = 1: the first whole block starts 3 elements in.
    EXPECT_TRUE(whole_blocks_aligned(buf + 4, 1, 4, 4));
    EXPECT_FALSE(whole_blocks_aligned(buf + 2, 7, 2, 8));
    EXPECT_TRUE(whole_blocks_aligned(buf + 8, 7, 2, 8));
    EXPECT_FALSE(whole_blocks_aligned(buf + 1, 3, 4, 1));
    EXPECT_TRUE(whole_blocks_aligned(buf + 3, 3, 4, 1));
    EXPECT_TRUE(whole_blocks_aligned(nullptr, 3, 4, 1));
    EXPECT_EQ(8u, graphsafe_increment(5));
    EXPECT_EQ(8u, graphsafe_increment(8));
    EXPECT_EQ(0u, graphsafe_increment(0));
}

TEST(KernelBodies, RangesOverTheWholeLaunchGridEqualTheCpu) {
    std::mt19937_64 rng(2024);
    for (rngtrk_layout layout : kLayouts) {
        for (const KindCase &k : kKinds) {
            const size_t w = width(k.dtype);
            for (int trial = 0; trial < 10; ++trial) {
                rngtrk_sample_spec cs = c_spec(layout, k);
                // Odd counts, firsts inside a Philox block and inside a CUDA
                // block, single elements, and a range past several waves.
                uint64_t first = rng() % 3000, count = 1 + rng() % 9000;
                if (trial == 0) first = 0, count = 1;
                if (trial == 1) first = 3, count = 2;        // within one block
                if (trial == 2) first = 255, count = 514;    // straddles CUDA blocks
                if (trial == 3) count = 60001 + 2 * (rng() % 1000);
                const uint64_t numel = first + count + rng() % 700;
                cs.numel = numel;
                // Eager: T = 256 * min(blocks, sm_count * max_threads / 256) for several SM counts.
                const uint32_t eager_sms[] = {1, 2, 5, 132};
                cs.sm_count = eager_sms[trial % 4];
                cs.max_threads_per_sm = trial % 2 ? 256 : 2048;
                if (k.dropout == Drop::data && trial == 4) cs.param_a = 0;  // keeps nothing: every element in * 0
                if (k.dropout == Drop::data && trial == 5) cs.param_a = 1;  // keeps everything, scale 1
                const SampleSpec s = checked_spec(&cs, use_of(k));
                const rngtrk_philox_state cst{rng(), 4 * (rng() % 100000)};
                const PhiloxState st{cst.seed, cst.offset};
                const size_t n = count * w;
                std::vector<unsigned char> in;
                std::vector<unsigned char> want(n);
                if (k.dropout != Drop::none) {
                    in = dropout_input(k.dtype, count, rng);
                    ASSERT_EQ(RNGTRK_OK, cpu_dropout(k, cst, cs, first, count, in, want)) << rngtrk_last_error();
                } else {
                    ASSERT_EQ(RNGTRK_OK, rngtrk_sample(&cst, &cs, first, count, want.data(), n));
                }
                for (const Geometry &g : kGeometries) {
                    if (trial == 3 && g.sms == 132) continue;  // the big range: small grids only
                    // Dropout's input shifted too: in and out aligned alike, and each
                    // one element off while the other is not (the vector path needs both).
                    for (const auto &shifts : kShifts) {
                        const size_t shift = shifts.first, in_shift = shifts.second;
                        if (in.empty() && in_shift != shift) continue;
                        Guarded out(n, shift * w);
                        Guarded in_copy(in.size(), in_shift * w);
                        const void *in_at = in.empty() ? nullptr : in_copy.data();
                        if (in_at != nullptr) std::memcpy(in_copy.data(), in.data(), in.size());
                        host_misaligned_vector_accesses = 0;
                        const bool narrow =
                            device_range(s, st, nullptr, numel, first, count, out.data(), in_at, g.sms, g.per_sm);
                        EXPECT_EQ(layout == RNGTRK_LAYOUT_TORCH_EAGER_CUDA, narrow);
                        ASSERT_EQ(0, std::memcmp(want.data(), out.data(), n))
                            << describe(layout, k, first, count) << " grid " << g.sms << "x" << g.per_sm
                            << " shift " << shift << " in shift " << in_shift;
                        ASSERT_TRUE(out.guards_intact(n)) << describe(layout, k, first, count);
                        ASSERT_EQ(0u, host_misaligned_vector_accesses) << describe(layout, k, first, count);
                        if (in.empty() || in_shift != shift) continue;
                        // In place: the input in the output buffer.
                        Guarded inout(n, shift * w);
                        std::memcpy(inout.data(), in.data(), n);
                        device_range(s, st, nullptr, numel, first, count, inout.data(), inout.data(), g.sms,
                                     g.per_sm, true);
                        ASSERT_EQ(0, std::memcmp(want.data(), inout.data(), n))
                            << describe(layout, k, first, count) << " in place, grid " << g.sms << "x" << g.per_sm
                            << " shift " << shift;
                        ASSERT_TRUE(inout.guards_intact(n));
                        ASSERT_EQ(0u, host_misaligned_vector_accesses) << describe(layout, k, first, count);
                    }
                }
            }
        }
    }
}

TEST(KernelBodies, GraphSafeBodiesReadTheStateAtRunTimeAndTheAdvanceMovesIt) {
    std::mt19937_64 rng(7);
    for (rngtrk_layout layout : kLayouts) {
        for (const KindCase &k : kKinds) {
            if (k.dropout != Drop::none) continue;  // graph-safe sampling has no dropout entry point
            rngtrk_sample_spec cs = c_spec(layout, k);
            const uint64_t first = rng() % 100, count = 1 + rng() % 5000;
            cs.numel = first + count;
            const SampleSpec s = checked_spec(&cs, SpecUse::sample);
            uint64_t device_state[2] = {rng(), 4 * (rng() % 1000)};
            const uint64_t start = device_state[1];
            uint64_t inc = 0;
            ASSERT_EQ(RNGTRK_OK, rngtrk_sample_offset_increment(&cs, cs.numel, &inc));
            const size_t n = count * width(k.dtype);
            for (int replay = 0; replay < 3; ++replay) {
                // The arguments carry a wrong state: the body must use device_state.
                Guarded out(n, 0);
                device_range(s, PhiloxState{1, 4}, device_state, cs.numel, first, count, out.data(), nullptr, 3, 2);
                const rngtrk_philox_state st{device_state[0], start + replay * graphsafe_increment(inc)};
                std::vector<unsigned char> want(n);
                ASSERT_EQ(RNGTRK_OK, rngtrk_sample(&st, &cs, first, count, want.data(), n));
                ASSERT_EQ(0, std::memcmp(want.data(), out.data(), n)) << describe(layout, k, first, count);
                run_grid(1, 1, 1, [&](ThreadPos p) { advance_body(p, device_state, graphsafe_increment(inc)); });
                ASSERT_EQ(start + (replay + 1) * graphsafe_increment(inc), device_state[1]);
            }
        }
    }
}

TEST(KernelBodies, SlicesOverTheWholeLaunchGridEqualTheCpu) {
    std::mt19937_64 rng(11);
    for (rngtrk_layout layout : kLayouts) {
        for (const KindCase &k : kKinds) {
            if (k.dropout == Drop::f32_only) continue;  // rngtrk_dropout_f32 has no slice
            for (int trial = 0; trial < 3; ++trial) {
                rngtrk_sample_spec cs = c_spec(layout, k);
                cs.sm_count = trial + 1, cs.max_threads_per_sm = 512;
                const uint64_t global[3] = {5 + rng() % 20, 3 + rng() % 30, 7 + rng() % 40};
                uint64_t start[3], local[3];
                for (int d = 0; d < 3; ++d) {
                    start[d] = rng() % global[d];
                    local[d] = 1 + rng() % (global[d] - start[d]);
                }
                const uint64_t box = local[0] * local[1] * local[2];
                const size_t n = box * width(k.dtype);
                const rngtrk_philox_state cst{rng(), 4 * (rng() % 1000)};
                std::vector<unsigned char> want(n), in;
                if (k.dropout == Drop::data) {
                    in = dropout_input(k.dtype, box, rng);
                    ASSERT_EQ(RNGTRK_OK, rngtrk_dropout_slice(&cst, &cs, 3, global, start, local, in.data(),
                                                              want.data(), n))
                        << rngtrk_last_error();
                } else {
                    ASSERT_EQ(RNGTRK_OK, rngtrk_sample_slice(&cst, &cs, 3, global, start, local, want.data(), n));
                }
                const SampleSpec s = checked_spec(&cs, use_of(k));
                for (const Geometry &g : kGeometries) {
                    for (bool in_place : {false, true}) {
                        if (in_place && in.empty()) continue;
                        Guarded out(n, width(k.dtype));  // one element off: never a vector store
                        if (in_place) std::memcpy(out.data(), in.data(), n);
                        const void *in_at = in.empty() ? nullptr : in_place ? out.data() : in.data();
                        const SliceRequest r = check_slice(s, 3, global, start, local, out.data(), n, in_at);
                        const SliceArgs a = plan_slice(r, PhiloxState{cst.seed, cst.offset});
                        with_kind(s, [&](auto l, auto d, auto t) {
                            constexpr Layout L = decltype(l)::value;
                            constexpr Dist D = decltype(d)::value;
                            constexpr DType T = decltype(t)::value;
                            run_grid(items(a), g.sms, g.per_sm, [&](ThreadPos p) { slice_body<L, D, T>(p, a); });
                        });
                        ASSERT_EQ(0, std::memcmp(want.data(), out.data(), n))
                            << describe(layout, k, 0, n) << (in_place ? " in place" : "");
                        ASSERT_TRUE(out.guards_intact(n));
                    }
                }
            }
        }
    }
}

// Far into a tensor of more than 2^30 elements the backend takes the 64-bit
// eager body; it must still give the CPU's bits (and so must the in-order
// bodies, whose indices are always 64-bit).
TEST(KernelBodies, RangesFarIntoAHugeTensorUseTheWideEagerBodyAndEqualTheCpu) {
    std::mt19937_64 rng(99);
    for (rngtrk_layout layout : kLayouts) {
        for (const KindCase &k : kKinds) {
            rngtrk_sample_spec cs = c_spec(layout, k);
            const uint64_t first = (uint64_t{1} << 33) + 3 + rng() % 1000, count = 1 + rng() % 4000;
            cs.numel = first + count + 17;
            cs.sm_count = 2, cs.max_threads_per_sm = 256;  // T = 512: small slabs, many of them before first
            const SampleSpec s = checked_spec(&cs, use_of(k));
            const rngtrk_philox_state cst{rng(), 4 * (rng() % 1000)};
            const size_t n = count * width(k.dtype);
            std::vector<unsigned char> in, want(n);
            if (k.dropout != Drop::none) {
                in = dropout_input(k.dtype, count, rng);
                ASSERT_EQ(RNGTRK_OK, cpu_dropout(k, cst, cs, first, count, in, want)) << rngtrk_last_error();
            } else {
                ASSERT_EQ(RNGTRK_OK, rngtrk_sample(&cst, &cs, first, count, want.data(), n));
            }
            for (const Geometry &g : kGeometries) {
                Guarded out(n, 0);
                EXPECT_FALSE(device_range(s, PhiloxState{cst.seed, cst.offset}, nullptr, cs.numel, first, count,
                                          out.data(), in.empty() ? nullptr : in.data(), g.sms, g.per_sm));
                ASSERT_EQ(0, std::memcmp(want.data(), out.data(), n)) << describe(layout, k, first, count);
                ASSERT_TRUE(out.guards_intact(n));
            }
        }
    }
}
