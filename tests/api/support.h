/* SPDX-License-Identifier: Apache-2.0 */
// Helpers shared by the C API tests: RAII for trackers, snapshots that
// capture everything observable about a tracker (to prove a failed call
// changed nothing), the shared vector files, and canonical JSON.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rngtrk.h"

namespace rngtrk_test {

struct TrackerDeleter {
    void operator()(rngtrk_tracker *t) const { rngtrk_tracker_free(t); }
};
using TrackerPtr = std::unique_ptr<rngtrk_tracker, TrackerDeleter>;

TrackerPtr new_tracker();

// Everything a caller can observe: checkpoint bytes (default and named
// states in order), the active state and the fork depth.
struct Snapshot {
    std::vector<uint8_t> checkpoint;
    rngtrk_philox_state active;
    size_t fork_depth;
    bool operator==(const Snapshot &o) const {
        return checkpoint == o.checkpoint && active.seed == o.active.seed &&
               active.offset == o.active.offset && fork_depth == o.fork_depth;
    }
};
Snapshot snapshot(const rngtrk_tracker *t);
std::vector<uint8_t> save(const rngtrk_tracker *t);

// Path of a file under tests/vectors/.
std::string vector_path(const std::string &relative);
std::vector<uint8_t> read_file(const std::string &path);
std::string read_text(const std::string &path);

// The canonical JSON of the tracker's checkpoint, as the library writes it
// (rngtrk_checkpoint_json), with a newline: the golden .json files' form.
std::string canonical_json(const rngtrk_tracker *t);

// A rank struct, initialised as callers must (rngtrk_parallel_rank_init).
rngtrk_parallel_rank make_rank(uint32_t tp, uint32_t pp, uint32_t dp, uint32_t ep, uint32_t etp);

// Status value of a name such as "RNGTRK_E_CORRUPT"; fails the test if unknown.
rngtrk_status status_from_name(const std::string &name);

// Rounding oracles written in the tests from the definitions, apart from
// the library's det::to_f16_bits and det::to_bf16_bits: the f16 or bf16 bits
// nearest to a float, ties to the even pattern, overflowing to infinity.  A
// NaN gives the library's documented quiet NaN: f16 sign | 0x7E00, bf16 the
// float's top 16 bits with the quiet bit (0x0040) set.
uint16_t f16_nearest(float v);
uint16_t bf16_nearest(float v);
// The value of f16 or bf16 bits (exact; a NaN as a quiet float NaN of the
// same sign: the payload does not survive the rounding back, f16's rule).
float f16_value(uint16_t bits);
float bf16_value(uint16_t bits);

}  // namespace rngtrk_test

// Asserts a status and that rngtrk_last_error() says something.
#define EXPECT_STATUS(expected, call)                                        \
    do {                                                                     \
        const rngtrk_status status_ = (call);                                \
        EXPECT_EQ((expected), status_) << rngtrk_last_error();               \
        if (status_ != RNGTRK_OK) { EXPECT_STRNE("", rngtrk_last_error()); } \
    } while (0)
#define ASSERT_OK(call) ASSERT_EQ(RNGTRK_OK, (call)) << rngtrk_last_error()
