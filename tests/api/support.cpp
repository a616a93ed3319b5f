// SPDX-License-Identifier: Apache-2.0
#include "support.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace rngtrk_test {

TrackerPtr new_tracker() {
    rngtrk_tracker *t = nullptr;
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_new(&t));
    return TrackerPtr(t);
}

std::vector<uint8_t> save(const rngtrk_tracker *t) {
    size_t len = 0;
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_save(t, nullptr, 0, &len));
    std::vector<uint8_t> bytes(len);
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_save(t, bytes.data(), bytes.size(), &len));
    EXPECT_EQ(bytes.size(), len);
    return bytes;
}

Snapshot snapshot(const rngtrk_tracker *t) {
    Snapshot s{save(t), {}, 0};
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_active_state(t, &s.active));
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_fork_depth(t, &s.fork_depth));
    return s;
}

std::string vector_path(const std::string &relative) {
    return std::string(RNGTRK_VECTORS_DIR) + "/" + relative;
}

std::vector<uint8_t> read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in.good()) << "cannot open " << path;
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::string read_text(const std::string &path) {
    const std::vector<uint8_t> bytes = read_file(path);
    return std::string(bytes.begin(), bytes.end());
}


std::string canonical_json(const rngtrk_tracker *t) {
    const std::vector<uint8_t> bytes = save(t);
    size_t len = 0;
    EXPECT_EQ(RNGTRK_OK, rngtrk_checkpoint_json(bytes.data(), bytes.size(), nullptr, 0, &len)) << rngtrk_last_error();
    std::string json(len + 1, '\0');
    EXPECT_EQ(RNGTRK_OK, rngtrk_checkpoint_json(bytes.data(), bytes.size(), &json[0], json.size(), &len));
    json.resize(len);
    return json + "\n";
}

rngtrk_parallel_rank make_rank(uint32_t tp, uint32_t pp, uint32_t dp, uint32_t ep, uint32_t etp) {
    rngtrk_parallel_rank r;
    EXPECT_EQ(RNGTRK_OK, RNGTRK_PARALLEL_RANK_INIT(&r));
    r.tp = tp, r.pp = pp, r.dp = dp, r.ep = ep, r.etp = etp;
    return r;
}

rngtrk_status status_from_name(const std::string &name) {
    static const struct {
        const char *name;
        rngtrk_status code;
    } table[] = {
        {"RNGTRK_OK", RNGTRK_OK},
        {"RNGTRK_E_INVALID_ARGUMENT", RNGTRK_E_INVALID_ARGUMENT},
        {"RNGTRK_E_DUPLICATE_NAME", RNGTRK_E_DUPLICATE_NAME},
        {"RNGTRK_E_DUPLICATE_SEED", RNGTRK_E_DUPLICATE_SEED},
        {"RNGTRK_E_UNKNOWN_NAME", RNGTRK_E_UNKNOWN_NAME},
        {"RNGTRK_E_FORK_ORDER", RNGTRK_E_FORK_ORDER},
        {"RNGTRK_E_BUFFER_TOO_SMALL", RNGTRK_E_BUFFER_TOO_SMALL},
        {"RNGTRK_E_CORRUPT", RNGTRK_E_CORRUPT},
        {"RNGTRK_E_UNSUPPORTED_VERSION", RNGTRK_E_UNSUPPORTED_VERSION},
        {"RNGTRK_E_OVERFLOW", RNGTRK_E_OVERFLOW},
        {"RNGTRK_E_OUT_OF_MEMORY", RNGTRK_E_OUT_OF_MEMORY},
        {"RNGTRK_E_UNAVAILABLE", RNGTRK_E_UNAVAILABLE},
        {"RNGTRK_E_INTERNAL", RNGTRK_E_INTERNAL},
        {"RNGTRK_E_WRONG_RANK", RNGTRK_E_WRONG_RANK},
        {"RNGTRK_E_IO", RNGTRK_E_IO},
        {"RNGTRK_E_STREAM_REUSE", RNGTRK_E_STREAM_REUSE},
        {"RNGTRK_E_REPLAY_MISMATCH", RNGTRK_E_REPLAY_MISMATCH},
    };
    for (const auto &row : table)
        if (name == row.name) return row.code;
    ADD_FAILURE() << "unknown status name " << name;
    return RNGTRK_E_INTERNAL;
}

// bf16 bits of a float, round to nearest even, written here from the
// definition (the nearer of the two bf16 neighbours, ties to the even one),
// apart from the library's det::to_bf16_bits.
uint16_t bf16_nearest(float v) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    if (std::isnan(v)) return static_cast<uint16_t>((b >> 16) | 0x0040u);
    if (std::isinf(v)) return static_cast<uint16_t>(b >> 16);
    const uint32_t down = b & 0xFFFF0000u, up = down + 0x10000u;
    float lo, hi;
    std::memcpy(&lo, &down, 4);
    std::memcpy(&hi, &up, 4);
    // Past the largest bfloat16 the next step up is infinity, which stands
    // here as 2^128 (as IEEE 754 rounds an overflow).
    const double hi_value = std::isinf(hi) ? std::copysign(0x1p128, double(v)) : double(hi);
    const double dl = std::fabs(double(v) - lo), dh = std::fabs(hi_value - v);  // exact in double
    if (dl != dh) return static_cast<uint16_t>((dl < dh ? down : up) >> 16);
    return static_cast<uint16_t>(((down >> 16) & 1) == 0 ? down >> 16 : up >> 16);
}

// The positive halves 0 .. 0x7C00 decoded to doubles (exact), infinity
// standing as 2^16, one step past the largest half.
static const std::vector<double> &half_table() {
    static const std::vector<double> halves = [] {
        std::vector<double> t;
        for (uint32_t bits = 0; bits <= 0x7C00u; ++bits) {
            const uint32_t exp = bits >> 10, man = bits & 0x3FFu;
            t.push_back(exp == 0 ? std::ldexp(double(man), -24) : std::ldexp(double(1024 + man), int(exp) - 25));
        }
        return t;
    }();
    return halves;
}

// f16 bits of a float, round to nearest even, from the definition: every
// positive half decoded to a double (exact), the nearer of the two
// neighbours taken, ties to the even pattern.  Infinity stands in the table
// as 2^16, so 65520 and above round to it as IEEE 754 says.  A table rather
// than the compiler's _Float16, which C++ has only from g++ 13 (the aarch64
// cross compiler is g++ 12).
uint16_t f16_nearest(float v) {
    const std::vector<double> &halves = half_table();
    const uint16_t sign = std::signbit(v) ? 0x8000u : 0u;
    if (std::isnan(v)) return static_cast<uint16_t>(sign | 0x7E00u);
    const double a = std::fabs(double(v));
    if (a >= 65536.0) return static_cast<uint16_t>(sign | 0x7C00u);
    const size_t hi = static_cast<size_t>(std::lower_bound(halves.begin(), halves.end(), a) - halves.begin());
    if (halves[hi] == a) return static_cast<uint16_t>(sign | hi);
    const size_t lo = hi - 1;  // a > 0 here, and halves[0] == 0
    const double dl = a - halves[lo], dh = halves[hi] - a;
    const size_t pick = dl != dh ? (dl < dh ? lo : hi) : (lo % 2 == 0 ? lo : hi);
    return static_cast<uint16_t>(sign | pick);
}

float f16_value(uint16_t bits) {
    const float sign = bits & 0x8000u ? -1.0f : 1.0f;
    const uint16_t magnitude = bits & 0x7FFFu;
    if (magnitude > 0x7C00u) return std::copysign(NAN, sign);
    if (magnitude == 0x7C00u) return sign * INFINITY;
    return sign * static_cast<float>(half_table()[magnitude]);
}

float bf16_value(uint16_t bits) {
    const uint32_t b = uint32_t{bits} << 16;
    float v;
    std::memcpy(&v, &b, 4);
    return v;
}

}  // namespace rngtrk_test
