// SPDX-License-Identifier: Apache-2.0
// cuRAND's host Philox generator (runs on the CPU, no GPU needed) as an
// independent oracle.  In CURAND_ORDERING_PSEUDO_LEGACY order, output
// 4*65536*j + 4*s + i is word i of block j of subsequence s, and the host
// generator's offset skips outputs of that interleaved sequence.  So our
// stream at offset O is subsequence 0 with a cuRAND offset of 65536*O, and
// every other output checks rngtrk_philox4x32_10 with counter (j, 0, s, 0).
// libcurand is opened with dlopen: if it is absent the tests skip and say so.
#include <dlfcn.h>

#include <random>

#include "support.h"

using namespace rngtrk_test;

namespace {

// The few declarations needed, with cuRAND's documented enum values.
using curandGenerator_t = void *;
constexpr int kPhilox4x32_10 = 161;  // CURAND_RNG_PSEUDO_PHILOX4_32_10
constexpr int kOrderingLegacy = 103;  // CURAND_ORDERING_PSEUDO_LEGACY
constexpr size_t kSubsequences = 65536;

struct Curand {
    void *handle = nullptr;
    int (*create_host)(curandGenerator_t *, int) = nullptr;
    int (*set_seed)(curandGenerator_t, unsigned long long) = nullptr;
    int (*set_offset)(curandGenerator_t, unsigned long long) = nullptr;
    int (*set_ordering)(curandGenerator_t, int) = nullptr;
    int (*generate)(curandGenerator_t, unsigned int *, size_t) = nullptr;
    int (*generate_uniform)(curandGenerator_t, float *, size_t) = nullptr;
    int (*destroy)(curandGenerator_t) = nullptr;
    std::string why_missing;

    Curand() {
        const char *candidates[] = {"libcurand.so", "libcurand.so.10", "/usr/local/cuda/lib64/libcurand.so",
                                    "/usr/local/cuda/lib64/libcurand.so.10"};
        for (const char *path : candidates)
            if ((handle = dlopen(path, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
        if (handle == nullptr) {
            why_missing = "libcurand not found (looked for libcurand.so[.10] on the loader path and in "
                          "/usr/local/cuda/lib64)";
            return;
        }
        bind(create_host, "curandCreateGeneratorHost");
        bind(set_seed, "curandSetPseudoRandomGeneratorSeed");
        bind(set_offset, "curandSetGeneratorOffset");
        bind(set_ordering, "curandSetGeneratorOrdering");
        bind(generate, "curandGenerate");
        bind(generate_uniform, "curandGenerateUniform");
        bind(destroy, "curandDestroyGenerator");
    }
    template <class F>
    void bind(F &f, const char *name) {
        f = reinterpret_cast<F>(dlsym(handle, name));
        if (f == nullptr) why_missing += std::string(" missing symbol ") + name;
    }
    bool usable() const { return why_missing.empty(); }

    // `blocks` rows of 65536 subsequences x 4 words, starting at block offset/4.
    std::vector<uint32_t> legacy(uint64_t seed, uint64_t offset, size_t blocks) const {
        curandGenerator_t g = nullptr;
        EXPECT_EQ(0, create_host(&g, kPhilox4x32_10));
        EXPECT_EQ(0, set_seed(g, seed));
        EXPECT_EQ(0, set_ordering(g, kOrderingLegacy));
        EXPECT_EQ(0, set_offset(g, kSubsequences * offset));
        std::vector<uint32_t> out(blocks * kSubsequences * 4);
        EXPECT_EQ(0, generate(g, out.data(), out.size()));
        destroy(g);
        return out;
    }
};

// curandGenerateUniform's host output, legacy ordering, like legacy().
std::vector<float> legacy_uniform(uint64_t seed, uint64_t offset, size_t blocks);

const Curand &curand() {
    static const Curand c;
    return c;
}

#define REQUIRE_CURAND()                                                        \
    if (!curand().usable()) GTEST_SKIP() << "cuRAND oracle skipped: " << curand().why_missing

}  // namespace

TEST(CurandOracle, StreamIsSubsequenceZero) {
    REQUIRE_CURAND();
    std::mt19937_64 rng(123);
    const uint64_t offsets[] = {0, 4, 40, uint64_t{1} << 40, (uint64_t{1} << 46) + 8};
    for (uint64_t offset : offsets) {
        const uint64_t seed = rng();
        constexpr size_t kBlocks = 8;
        const std::vector<uint32_t> ref = curand().legacy(seed, offset, kBlocks);
        const rngtrk_philox_state s{seed, offset};
        std::vector<uint32_t> ours(kBlocks * 4);
        ASSERT_OK(rngtrk_random_u32(&s, 0, ours.size(), ours.data()));
        for (size_t j = 0; j < kBlocks; ++j)
            for (size_t i = 0; i < 4; ++i)
                ASSERT_EQ(ref[j * kSubsequences * 4 + i], ours[j * 4 + i])
                    << "seed " << seed << " offset " << offset << " block " << j << " word " << i;
    }
}

TEST(CurandOracle, PhiloxAgreesOnEverySubsequence) {
    REQUIRE_CURAND();
    // 3 seeds x 2 block rows x 65536 subsequences = 393216 Philox blocks.
    std::mt19937_64 rng(456);
    for (int trial = 0; trial < 3; ++trial) {
        const uint64_t seed = trial == 0 ? ~uint64_t{0} : rng();
        const uint64_t offset = trial == 2 ? (uint64_t{1} << 44) : 0;
        constexpr size_t kBlocks = 2;
        const std::vector<uint32_t> ref = curand().legacy(seed, offset, kBlocks);
        const uint32_t key[2] = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
        for (size_t j = 0; j < kBlocks; ++j) {
            const uint64_t b = offset / 4 + j;
            for (size_t sub = 0; sub < kSubsequences; ++sub) {
                const uint32_t ctr[4] = {static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32),
                                         static_cast<uint32_t>(sub), 0};
                uint32_t w[4];
                rngtrk_philox4x32_10(ctr, key, w);
                const uint32_t *r = &ref[(j * kSubsequences + sub) * 4];
                ASSERT_TRUE(w[0] == r[0] && w[1] == r[1] && w[2] == r[2] && w[3] == r[3])
                    << "seed " << seed << " block " << b << " subsequence " << sub;
            }
        }
    }
}

namespace {

std::vector<float> legacy_uniform(uint64_t seed, uint64_t offset, size_t blocks) {
    const Curand &c = curand();
    curandGenerator_t g = nullptr;
    EXPECT_EQ(0, c.create_host(&g, kPhilox4x32_10));
    EXPECT_EQ(0, c.set_seed(g, seed));
    EXPECT_EQ(0, c.set_ordering(g, kOrderingLegacy));
    EXPECT_EQ(0, c.set_offset(g, kSubsequences * offset));
    std::vector<float> out(blocks * kSubsequences * 4);
    EXPECT_EQ(0, c.generate_uniform(g, out.data(), out.size()));
    c.destroy(g);
    return out;
}

}  // namespace

TEST(CurandOracle, SampleLayoutsAgreeWithTheHostGenerator) {
    REQUIRE_CURAND();
    // cuRAND's legacy order puts word i of Philox(counter = (offset/4 + k, t))
    // at (k * 65536 + t) * 4 + i: the stateless layout is t = 0, and the
    // torch-eager-cuda layout with T = 65536 threads (sm_count 32 x 2048) is
    // element k*T*4 + i*T + t.
    const uint64_t seed = 0x0123456789ABCDEFull, offset = 4096;
    constexpr size_t kBlocks = 3;
    const std::vector<uint32_t> words = curand().legacy(seed, offset, kBlocks);
    const std::vector<float> uniforms = legacy_uniform(seed, offset, kBlocks);
    const rngtrk_philox_state st{seed, offset};

    rngtrk_sample_spec s;
    ASSERT_OK(RNGTRK_SAMPLE_SPEC_INIT(&s, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_BITS, RNGTRK_DTYPE_U32));
    std::vector<uint32_t> stateless(kBlocks * 4);
    ASSERT_OK(rngtrk_sample(&st, &s, 0, stateless.size(), stateless.data(), stateless.size() * 4));
    for (size_t k = 0; k < kBlocks; ++k)
        for (size_t i = 0; i < 4; ++i) ASSERT_EQ(words[k * kSubsequences * 4 + i], stateless[k * 4 + i]);

    constexpr uint64_t T = kSubsequences, n = T * 4 * kBlocks;
    std::vector<uint32_t> eager(n);
    ASSERT_OK(RNGTRK_SAMPLE_SPEC_INIT(&s, RNGTRK_LAYOUT_TORCH_EAGER_CUDA, RNGTRK_DIST_BITS, RNGTRK_DTYPE_U32));
    s.sm_count = 32, s.max_threads_per_sm = 2048;
    ASSERT_OK(rngtrk_sample(&st, &s, 0, n, eager.data(), n * 4));
    std::vector<float> eager_uniform(n);
    ASSERT_OK(RNGTRK_SAMPLE_SPEC_INIT(&s, RNGTRK_LAYOUT_TORCH_EAGER_CUDA, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32));
    s.sm_count = 32, s.max_threads_per_sm = 2048;
    ASSERT_OK(rngtrk_sample(&st, &s, 0, n, eager_uniform.data(), n * 4));
    for (uint64_t e = 0; e < n; ++e) {
        const uint64_t t = e % T, k = e / (T * 4), i = (e % (T * 4)) / T;
        const size_t at = (k * kSubsequences + t) * 4 + i;
        ASSERT_EQ(words[at], eager[e]) << "element " << e;
        // curand_uniform is in (0, 1]; PyTorch maps 1.0 to 0.0.
        const float expected = uniforms[at] == 1.0f ? 0.0f : uniforms[at];
        ASSERT_EQ(expected, eager_uniform[e]) << "element " << e;
    }
}
