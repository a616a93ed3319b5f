/* SPDX-License-Identifier: Apache-2.0 */
// The core's status codes, apart from the public header (as zstd keeps
// zstd_errors.h apart from zstd.h): the core builds without the C API.  The
// values are rngtrk.h's rngtrk_status; c_api/api_errors.cpp asserts that
// each pair is equal, so the C layer converts by a cast.
#pragma once

namespace rngtrk {

enum class Status : int {
    ok = 0,
    invalid_argument = -1,
    duplicate_name = -2,
    duplicate_seed = -3,
    unknown_name = -4,
    fork_order = -5,
    buffer_too_small = -6,
    corrupt = -7,
    unsupported_version = -8,
    overflow = -9,
    out_of_memory = -10,
    unavailable = -11,
    internal = -12,
    wrong_rank = -13,
    io = -14,
    stream_reuse = -15,
    replay_mismatch = -16,
};

}  // namespace rngtrk
