// SPDX-License-Identifier: Apache-2.0
// The growable structs of the ABI (docs/abi.md): callers compiled against
// an older header (a shorter struct) or a newer one (a longer struct) are
// served, and nothing outside the caller's struct is touched.  Each struct
// is built by hand in a buffer with guard bytes on both sides; the guards
// must survive every call.  Run under ASan too (make test-asan).
#include <cstring>
#include <string>
#include <vector>

#include "support.h"

using namespace rngtrk_test;

namespace {

constexpr unsigned char kGuard = 0xEE;
constexpr size_t kPad = 32;

// A caller's struct of `size` bytes at an 8-aligned address, with `kPad`
// guard bytes before and after it.
struct CallerStruct {
    std::vector<uint64_t> storage;
    size_t size;
    explicit CallerStruct(size_t n) : storage((n + 2 * kPad) / 8 + 2), size(n) {
        std::memset(storage.data(), kGuard, storage.size() * 8);
    }
    unsigned char *bytes() { return reinterpret_cast<unsigned char *>(storage.data()) + kPad; }
    template <class T>
    T *as() {
        return reinterpret_cast<T *>(bytes());
    }
    uint32_t struct_size() {
        uint32_t v;
        std::memcpy(&v, bytes(), 4);
        return v;
    }
    ::testing::AssertionResult guards_intact() {
        const unsigned char *all = reinterpret_cast<const unsigned char *>(storage.data());
        for (size_t i = 0; i < kPad; ++i)
            if (all[i] != kGuard) return ::testing::AssertionFailure() << "byte " << i << " before the struct changed";
        for (size_t i = kPad + size; i < storage.size() * 8; ++i)
            if (all[i] != kGuard) return ::testing::AssertionFailure() << "byte " << i - kPad << " past the struct changed";
        return ::testing::AssertionSuccess();
    }
};

std::vector<float> draw(const rngtrk_sample_spec *spec) {
    const rngtrk_philox_state st{42, 8};
    std::vector<float> out(64);
    EXPECT_EQ(RNGTRK_OK, rngtrk_sample(&st, spec, 3, out.size(), out.data(), out.size() * 4)) << rngtrk_last_error();
    return out;
}

}  // namespace

TEST(AbiStructs, SampleSpecInitWritesExactlyTheCallersBytes) {
    for (size_t size : {size_t{RNGTRK_SAMPLE_SPEC_MIN_SIZE}, sizeof(rngtrk_sample_spec), sizeof(rngtrk_sample_spec) + 24}) {
        CallerStruct c(size);
        ASSERT_OK(rngtrk_sample_spec_init(c.as<rngtrk_sample_spec>(), size, RNGTRK_LAYOUT_STATELESS,
                                          RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32));
        EXPECT_TRUE(c.guards_intact()) << "size " << size;
        EXPECT_EQ(size, c.struct_size());
        // Past the fields this library knows: zero.
        for (size_t i = sizeof(rngtrk_sample_spec); i < size; ++i) EXPECT_EQ(0, c.bytes()[i]) << i;
    }
}

TEST(AbiStructs, AnOldShorterSpecIsReadWithDefaultsForWhatItLacks) {
    rngtrk_sample_spec full;
    ASSERT_OK(RNGTRK_SAMPLE_SPEC_INIT(&full, RNGTRK_LAYOUT_NVFUSER, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32));
    full.param_a = 1.5, full.param_b = 0.25;
    // The 0.1 layout ended at numel: no threads, no reserved.
    CallerStruct old(RNGTRK_SAMPLE_SPEC_MIN_SIZE);
    ASSERT_OK(rngtrk_sample_spec_init(old.as<rngtrk_sample_spec>(), old.size, RNGTRK_LAYOUT_NVFUSER,
                                      RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32));
    std::memcpy(old.bytes() + offsetof(rngtrk_sample_spec, param_a), &full.param_a, 16);
    EXPECT_EQ(draw(&full), draw(old.as<rngtrk_sample_spec>()));
    EXPECT_TRUE(old.guards_intact());
    uint64_t inc = 0;
    ASSERT_OK(rngtrk_sample_offset_increment(old.as<rngtrk_sample_spec>(), 1000, &inc));
    EXPECT_EQ(4u, inc);
}

TEST(AbiStructs, AFutureLongerSpecIsAcceptedOnlyWhenTheUnknownBytesAreZero) {
    rngtrk_sample_spec full;
    ASSERT_OK(RNGTRK_SAMPLE_SPEC_INIT(&full, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32));
    CallerStruct future(sizeof(rngtrk_sample_spec) + 16);
    ASSERT_OK(rngtrk_sample_spec_init(future.as<rngtrk_sample_spec>(), future.size, RNGTRK_LAYOUT_STATELESS,
                                      RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32));
    EXPECT_EQ(draw(&full), draw(future.as<rngtrk_sample_spec>()));
    // A field of the newer header is set: refused, naming the byte.
    future.bytes()[sizeof(rngtrk_sample_spec) + 5] = 1;
    const rngtrk_philox_state st{42, 8};
    float out[4];
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample(&st, future.as<rngtrk_sample_spec>(), 0, 4, out, sizeof out));
    EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), std::to_string(sizeof(rngtrk_sample_spec) + 5).c_str()))
        << rngtrk_last_error();
    EXPECT_TRUE(future.guards_intact());
}

TEST(AbiStructs, TooSmallSizesAndReservedFieldsAreRefused) {
    CallerStruct small(RNGTRK_SAMPLE_SPEC_MIN_SIZE - 8);
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample_spec_init(small.as<rngtrk_sample_spec>(), small.size,
                                                                     RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_BITS,
                                                                     RNGTRK_DTYPE_U32));
    EXPECT_TRUE(small.guards_intact());
    for (size_t i = 0; i < small.size; ++i) EXPECT_EQ(kGuard, small.bytes()[i]) << "a refused init wrote byte " << i;
    rngtrk_sample_spec spec;
    ASSERT_OK(RNGTRK_SAMPLE_SPEC_INIT(&spec, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_BITS, RNGTRK_DTYPE_U32));
    const rngtrk_philox_state st{1, 0};
    uint32_t out[4];
    spec.struct_size = 20;  // a spec never initialised, or a header older than any release
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample(&st, &spec, 0, 4, out, sizeof out));
    spec.struct_size = sizeof spec, spec.reserved = 7;
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample(&st, &spec, 0, 4, out, sizeof out));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample_spec_init(&spec, size_t{1} << 33, RNGTRK_LAYOUT_STATELESS,
                                                                     RNGTRK_DIST_BITS, RNGTRK_DTYPE_U32));
}

TEST(AbiStructs, ParallelRankOldAndFutureLayouts) {
    // The same coordinates in a struct of today's size and in a future one.
    const rngtrk_parallel_rank today = make_rank(3, 1, 2, 1, 0);
    TrackerPtr a = new_tracker(), b = new_tracker();
    ASSERT_OK(rngtrk_tracker_seed_rank(a.get(), RNGTRK_POLICY_MEGATRON, 1234, &today, 0));
    CallerStruct future(sizeof(rngtrk_parallel_rank) + 12);
    ASSERT_OK(rngtrk_parallel_rank_init(future.as<rngtrk_parallel_rank>(), future.size));
    EXPECT_TRUE(future.guards_intact());
    std::memcpy(future.bytes() + 4, reinterpret_cast<const unsigned char *>(&today) + 4, 20);
    ASSERT_OK(rngtrk_tracker_seed_rank(b.get(), RNGTRK_POLICY_MEGATRON, 1234, future.as<rngtrk_parallel_rank>(), 0));
    EXPECT_EQ(save(a.get()), save(b.get()));
    future.bytes()[sizeof(rngtrk_parallel_rank) + 2] = 9;
    const Snapshot before = snapshot(b.get());
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT,
                  rngtrk_tracker_seed_rank(b.get(), RNGTRK_POLICY_MEGATRON, 99, future.as<rngtrk_parallel_rank>(), 0));
    EXPECT_TRUE(before == snapshot(b.get()));
    EXPECT_TRUE(future.guards_intact());
    rngtrk_parallel_rank uninitialised{};
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_seed_rank(b.get(), RNGTRK_POLICY_MEGATRON, 1, &uninitialised, 0));
    CallerStruct small(RNGTRK_PARALLEL_RANK_MIN_SIZE - 4);
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_parallel_rank_init(small.as<rngtrk_parallel_rank>(), small.size));
    EXPECT_TRUE(small.guards_intact());
}

TEST(AbiStructs, GetOriginWritesOnlyTheCallersStruct) {
    TrackerPtr t = new_tracker();
    const rngtrk_parallel_rank r = make_rank(3, 1, 2, 1, 0);
    ASSERT_OK(rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_SLAPO, 77, &r, RNGTRK_SEED_ALWAYS_ENABLE_TP_SEED));
    for (size_t size : {sizeof(rngtrk_origin), sizeof(rngtrk_origin) + 20}) {
        CallerStruct c(size);
        ASSERT_OK(rngtrk_origin_init(c.as<rngtrk_origin>(), size));
        std::memset(c.bytes() + 4, 0xAB, size - 4);  // stale data the call must overwrite
        ASSERT_OK(rngtrk_tracker_get_origin(t.get(), c.as<rngtrk_origin>()));
        EXPECT_TRUE(c.guards_intact()) << size;
        rngtrk_origin o;
        std::memcpy(&o, c.bytes(), sizeof o);
        EXPECT_EQ(size, o.struct_size);
        EXPECT_EQ(1u, o.present);
        EXPECT_EQ(uint32_t{RNGTRK_POLICY_SLAPO}, o.policy);
        EXPECT_EQ(uint32_t{RNGTRK_SEED_ALWAYS_ENABLE_TP_SEED}, o.flags);
        EXPECT_EQ(77u, o.seed);
        EXPECT_EQ(3u, o.tp);
        EXPECT_EQ(1u, o.pp);
        EXPECT_EQ(2u, o.dp);
        EXPECT_EQ(1u, o.ep);
        EXPECT_EQ(0u, o.etp);
        EXPECT_EQ(0u, o.reserved);
        for (size_t i = sizeof(rngtrk_origin); i < size; ++i) EXPECT_EQ(0, c.bytes()[i]) << i;
    }
    rngtrk_origin unset;
    std::memset(&unset, 0, sizeof unset);
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_get_origin(t.get(), &unset));
}

TEST(AbiStructs, RematFieldsReachOnlyCallersThatHaveThem) {
    // A 24-byte rank (the first published layout) cannot switch a remat axis
    // on: its seeds are the current struct's with both axes off.
    TrackerPtr old_caller = new_tracker(), current = new_tracker();
    CallerStruct small(RNGTRK_PARALLEL_RANK_MIN_SIZE);
    ASSERT_OK(rngtrk_parallel_rank_init(small.as<rngtrk_parallel_rank>(), small.size));
    const rngtrk_parallel_rank r = make_rank(3, 1, 2, 1, 0);
    std::memcpy(small.bytes() + 4, reinterpret_cast<const unsigned char *>(&r) + 4, 20);
    ASSERT_OK(rngtrk_tracker_seed_rank(old_caller.get(), RNGTRK_POLICY_MEGATRON, 9, small.as<rngtrk_parallel_rank>(), 0));
    EXPECT_TRUE(small.guards_intact());
    ASSERT_OK(rngtrk_tracker_seed_rank(current.get(), RNGTRK_POLICY_MEGATRON, 9, &r, 0));
    EXPECT_EQ(save(current.get()), save(old_caller.get()));
    // An origin of the first published size (48 bytes) gets no remat fields,
    // and nothing past them is written.
    rngtrk_parallel_rank on = r;
    on.gtp_remat = 1, on.gtp_remat_size = 2;
    ASSERT_OK(rngtrk_tracker_seed_rank(current.get(), RNGTRK_POLICY_MEGATRON, 9, &on, 0));
    CallerStruct first(RNGTRK_ORIGIN_MIN_SIZE);
    ASSERT_OK(rngtrk_origin_init(first.as<rngtrk_origin>(), first.size));
    ASSERT_OK(rngtrk_tracker_get_origin(current.get(), first.as<rngtrk_origin>()));
    EXPECT_TRUE(first.guards_intact());
    rngtrk_origin full;
    ASSERT_OK(RNGTRK_ORIGIN_INIT(&full));
    ASSERT_OK(rngtrk_tracker_get_origin(current.get(), &full));
    EXPECT_EQ(0, std::memcmp(first.bytes() + 4, reinterpret_cast<const unsigned char *>(&full) + 4,
                             RNGTRK_ORIGIN_MIN_SIZE - 4));
    EXPECT_EQ(1u, full.gtp_remat);
    EXPECT_EQ(2u, full.gtp_remat_size);
    EXPECT_EQ(64u, sizeof full);
    EXPECT_EQ(40u, sizeof on);
}

TEST(AbiStructs, DtypeSizes) {
    EXPECT_EQ(1u, rngtrk_dtype_size(RNGTRK_DTYPE_U8));
    EXPECT_EQ(4u, rngtrk_dtype_size(RNGTRK_DTYPE_U32));
    EXPECT_EQ(8u, rngtrk_dtype_size(RNGTRK_DTYPE_U64));
    EXPECT_EQ(2u, rngtrk_dtype_size(RNGTRK_DTYPE_F16));
    EXPECT_EQ(2u, rngtrk_dtype_size(RNGTRK_DTYPE_BF16));
    EXPECT_EQ(4u, rngtrk_dtype_size(RNGTRK_DTYPE_F32));
    EXPECT_EQ(8u, rngtrk_dtype_size(RNGTRK_DTYPE_F64));
    EXPECT_EQ(0u, rngtrk_dtype_size(static_cast<rngtrk_dtype>(7)));
    EXPECT_EQ(0u, rngtrk_dtype_size(static_cast<rngtrk_dtype>(-1)));
}
