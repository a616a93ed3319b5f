// SPDX-License-Identifier: Apache-2.0
// CRC-32 check values and the UTF-8 name rules.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "crc32.h"
#include "name_rules.h"
#include "utf8.h"

namespace {

// A reference decoder written from RFC 3629's table, independently of
// is_valid_utf8: decode greedily, then reject what the RFC forbids.
bool reference_utf8(const std::string &s) {
    size_t i = 0;
    while (i < s.size()) {
        const unsigned char b = static_cast<unsigned char>(s[i]);
        int len;
        uint32_t cp;
        if (b < 0x80) { len = 1; cp = b; }
        else if ((b & 0xE0) == 0xC0) { len = 2; cp = b & 0x1F; }
        else if ((b & 0xF0) == 0xE0) { len = 3; cp = b & 0x0F; }
        else if ((b & 0xF8) == 0xF0) { len = 4; cp = b & 0x07; }
        else return false;
        if (i + static_cast<size_t>(len) > s.size()) return false;
        for (int j = 1; j < len; ++j) {
            const unsigned char c = static_cast<unsigned char>(s[i + static_cast<size_t>(j)]);
            if ((c & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (c & 0x3F);
        }
        const uint32_t min_for_len[] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min_for_len[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += static_cast<size_t>(len);
    }
    return true;
}

}  // namespace

TEST(Crc32, CheckValues) {
    const char *check = "123456789";  // the CRC catalogue's check input
    EXPECT_EQ(0xCBF43926u, rngtrk::crc32(reinterpret_cast<const uint8_t *>(check), 9));
    EXPECT_EQ(0u, rngtrk::crc32(nullptr, 0));
    const uint8_t zero = 0;
    EXPECT_EQ(0xD202EF8Du, rngtrk::crc32(&zero, 1));
}

TEST(NameRules, Utf8AgreesWithAReferenceDecoderOnEveryShortSequence) {
    // Every 1- and 2-byte string, and every 3-byte string with a lead byte
    // of E0..F4 (where the tricky ranges are), plus 4-byte leads.
    std::string s;
    for (int a = 0; a < 256; ++a) {
        s.assign(1, static_cast<char>(a));
        ASSERT_EQ(reference_utf8(s), rngtrk::is_valid_utf8(s)) << a;
        for (int b = 0; b < 256; ++b) {
            s.assign({static_cast<char>(a), static_cast<char>(b)});
            ASSERT_EQ(reference_utf8(s), rngtrk::is_valid_utf8(s)) << a << " " << b;
        }
    }
    for (int a = 0xE0; a <= 0xF4; ++a)
        for (int b = 0; b < 256; ++b)
            for (int c = 0x70; c < 0xD0; ++c) {
                s.assign({static_cast<char>(a), static_cast<char>(b), static_cast<char>(c)});
                ASSERT_EQ(reference_utf8(s), rngtrk::is_valid_utf8(s)) << a << " " << b << " " << c;
                s.push_back('\x80');
                ASSERT_EQ(reference_utf8(s), rngtrk::is_valid_utf8(s)) << a << " " << b << " " << c;
            }
}

TEST(NameRules, Problems) {
    EXPECT_EQ("", rngtrk::name_problem("model-parallel-rng"));
    EXPECT_EQ("is empty", rngtrk::name_problem(""));
    EXPECT_EQ("", rngtrk::name_problem(std::string(255, 'a')));
    EXPECT_NE("", rngtrk::name_problem(std::string(256, 'a')));
    EXPECT_EQ("contains a NUL byte", rngtrk::name_problem(std::string("a\0b", 3)));
    EXPECT_EQ("is not valid UTF-8", rngtrk::name_problem("\xFF"));
}
