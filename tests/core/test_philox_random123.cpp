// SPDX-License-Identifier: Apache-2.0
// Philox4x32-10 and the stream against Random123, the reference
// implementation by the algorithm's authors (Debian librandom123-dev, and
// its known-answer file from librandom123-doc).
#include <Random123/philox.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <sstream>
#include <string>

#include "philox.h"
#include "rngtrk.h"
#include "stream.h"

namespace {

const char *const kKatFile = "/usr/share/doc/librandom123-dev/tests/kat_vectors.gz";

r123array4x32 random123(const uint32_t c[4], const uint32_t k[2]) {
    philox4x32_ctr_t ctr = {{c[0], c[1], c[2], c[3]}};
    philox4x32_key_t key = {{k[0], k[1]}};
    return philox4x32_R(10, ctr, key);
}

}  // namespace

TEST(Random123, EveryPhilox4x32_10KnownAnswerLine) {
    FILE *f = std::fopen(kKatFile, "rb");
    ASSERT_NE(nullptr, f) << kKatFile << " is missing: install Debian's librandom123-doc";
    std::fclose(f);
    FILE *pipe = popen((std::string("gzip -dc ") + kKatFile).c_str(), "r");
    ASSERT_NE(nullptr, pipe);
    char line[512];
    int checked = 0;
    while (std::fgets(line, sizeof line, pipe)) {
        std::istringstream in(line);
        std::string name;
        int rounds = 0;
        in >> name >> rounds;
        if (name != "philox4x32" || rounds != 10) continue;
        uint32_t v[10];
        for (uint32_t &x : v) in >> std::hex >> x;
        ASSERT_FALSE(in.fail()) << line;
        uint32_t out[4];
        rngtrk_philox4x32_10(v, v + 4, out);
        for (int i = 0; i < 4; ++i) EXPECT_EQ(v[6 + i], out[i]) << line;
        ++checked;
    }
    pclose(pipe);
    EXPECT_GE(checked, 3) << "no philox4x32 10 lines found in " << kKatFile;
}

TEST(Random123, PhiloxAgreesOnAMillionRandomInputs) {
    std::mt19937_64 rng(20261121);
    for (int i = 0; i < 1000000; ++i) {
        const uint64_t a = rng(), b = rng(), c = rng();
        const uint32_t ctr[4] = {uint32_t(a), uint32_t(a >> 32), uint32_t(b), uint32_t(b >> 32)};
        const uint32_t key[2] = {uint32_t(c), uint32_t(c >> 32)};
        const r123array4x32 ref = random123(ctr, key);
        const rngtrk::PhiloxBlock ours = rngtrk::philox4x32_10(ctr[0], ctr[1], ctr[2], ctr[3], key[0], key[1]);
        ASSERT_TRUE(ref.v[0] == ours.w[0] && ref.v[1] == ours.w[1] && ref.v[2] == ours.w[2] &&
                    ref.v[3] == ours.w[3])
            << "input " << i;
    }
}

TEST(Random123, StreamIsRandom123WithTheDocumentedCounter) {
    std::mt19937_64 rng(99);
    for (int trial = 0; trial < 500; ++trial) {
        const uint64_t seed = rng();
        const uint64_t offset = (rng() >> 2) << 2;  // any aligned offset, up to 2^64 - 4
        const uint64_t first = trial % 2 ? rng() >> 3 : rng() % 64;
        const uint64_t count = rng() % 70;
        std::vector<uint32_t> out(count);
        rngtrk::stream_u32(rngtrk::PhiloxState{seed, offset}, first, count, out.data());
        const uint32_t key[2] = {uint32_t(seed), uint32_t(seed >> 32)};
        for (uint64_t k = 0; k < count; ++k) {
            const uint64_t g = first + k;
            const uint64_t b = offset / 4 + g / 4;
            const uint32_t ctr[4] = {uint32_t(b), uint32_t(b >> 32), 0, 0};
            ASSERT_EQ(random123(ctr, key).v[g % 4], out[k]) << "trial " << trial << " g " << g;
        }
    }
}
