// SPDX-License-Identifier: Apache-2.0
// The names of layouts, distributions and dtypes come from the library
// (core/layouts.h, core/sample_kinds.h) through the C API: every tool and
// binding lists and parses them with these functions.
#include <cstring>
#include <string>
#include <vector>

#include "support.h"

using namespace rngtrk_test;

namespace {

// A kind's name function and from_name function, over its int values.
struct KindNames {
    const char *(*name)(int);
    rngtrk_status (*from_name)(const char *, int *);
    std::vector<std::string> expected;
    std::string message_list;  // how a refusal lists them
};

const KindNames kKinds[] = {
    {[](int v) { return rngtrk_layout_name(static_cast<rngtrk_layout>(v)); },
     [](const char *n, int *out) {
         rngtrk_layout l = static_cast<rngtrk_layout>(*out);
         const rngtrk_status st = rngtrk_layout_from_name(n, &l);
         *out = l;
         return st;
     },
     {"stateless", "nvfuser", "torch-eager-cuda", "triton"},
     "the layouts are stateless, nvfuser, torch-eager-cuda or triton"},
    {[](int v) { return rngtrk_distribution_name(static_cast<rngtrk_distribution>(v)); },
     [](const char *n, int *out) {
         rngtrk_distribution d = static_cast<rngtrk_distribution>(*out);
         const rngtrk_status st = rngtrk_distribution_from_name(n, &d);
         *out = d;
         return st;
     },
     {"bits", "uniform", "normal", "bernoulli"},
     "the distributions are bits, uniform, normal or bernoulli"},
    {[](int v) { return rngtrk_dtype_name(static_cast<rngtrk_dtype>(v)); },
     [](const char *n, int *out) {
         rngtrk_dtype d = static_cast<rngtrk_dtype>(*out);
         const rngtrk_status st = rngtrk_dtype_from_name(n, &d);
         *out = d;
         return st;
     },
     {"u8", "u32", "u64", "f16", "bf16", "f32", "f64"},
     "the dtypes are u8, u32, u64, f16, bf16, f32 or f64"},
};

TEST(KindNames, NumberedFromZeroWithoutGapsAndRoundTrip) {
    for (const KindNames &k : kKinds) {
        std::vector<std::string> listed;
        for (int v = 0; k.name(v) != nullptr; ++v) listed.push_back(k.name(v));
        EXPECT_EQ(k.expected, listed);
        for (size_t v = 0; v < listed.size(); ++v) {
            int back = -7;
            ASSERT_OK(k.from_name(listed[v].c_str(), &back));
            EXPECT_EQ(static_cast<int>(v), back);
        }
        EXPECT_EQ(nullptr, k.name(-1));
        EXPECT_EQ(nullptr, k.name(0x7FFFFFFF));
    }
}

TEST(KindNames, UnknownNamesAreRefusedAndListTheNames) {
    const std::string long_name(5000, 'u');
    for (const KindNames &k : kKinds) {
        for (const char *bad : {"", "Stateless", "uniform ", "f32x", "torch_eager_cuda", long_name.c_str()}) {
            bool is_name = false;
            for (const std::string &n : k.expected) is_name |= n == bad;
            if (is_name) continue;
            int out = 1;
            EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, k.from_name(bad, &out));
            EXPECT_NE(std::string::npos, std::string(rngtrk_last_error()).find(k.message_list)) << rngtrk_last_error();
            EXPECT_LT(std::strlen(rngtrk_last_error()), 300u);
            EXPECT_EQ(1, out) << "a refused name leaves *out";
        }
        int out = 1;
        EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, k.from_name(nullptr, &out));
        EXPECT_EQ(1, out);
    }
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_layout_from_name("triton", nullptr));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_distribution_from_name("bits", nullptr));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_dtype_from_name("u8", nullptr));
}

TEST(KindNames, DtypeSizesMatchTheCTypes) {
    const std::pair<const char *, size_t> sizes[] = {{"u8", sizeof(uint8_t)},   {"u32", sizeof(uint32_t)},
                                                     {"u64", sizeof(uint64_t)}, {"f16", sizeof(uint16_t)},
                                                     {"bf16", sizeof(uint16_t)}, {"f32", sizeof(float)},
                                                     {"f64", sizeof(double)}};
    for (const auto &s : sizes) {
        rngtrk_dtype d;
        ASSERT_OK(rngtrk_dtype_from_name(s.first, &d));
        EXPECT_EQ(s.second, rngtrk_dtype_size(d)) << s.first;
    }
    EXPECT_EQ(0u, rngtrk_dtype_size(static_cast<rngtrk_dtype>(7)));
    EXPECT_EQ(0u, rngtrk_dtype_size(static_cast<rngtrk_dtype>(-1)));
}

}  // namespace
