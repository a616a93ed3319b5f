/* SPDX-License-Identifier: Apache-2.0 */
// Checkpoint bytes: a versioned, self-describing little-endian encoding of a
// tracker's default and named states.  docs/checkpoint-format.md is the
// byte-by-byte description; this file is its reference implementation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "philox_state.h"
#include "seed_policy.h"

namespace rngtrk {

struct NamedState {
    std::string name;
    PhiloxState state;
};

// What a checkpoint holds.  In a valid checkpoint names are valid and
// pairwise distinct, seeds of named states pairwise distinct, offsets
// multiples of 4.
struct CheckpointContents {
    PhiloxState default_state;
    std::vector<NamedState> states;  // insertion order
    Origin origin;                   // versions 2 and 3 (seed_policy.h)
    uint32_t version = 1;
};

constexpr char kCheckpointMagic[8] = {'R', 'N', 'G', 'T', 'R', 'K', 'C', 'K'};
// Version 1: states only.  Version 2: states plus an origin block; written
// only for trackers that have an origin, so others stay readable by v1
// readers.  Version 3: the origin block adds the remat coordinates; written
// only when one of them is not 0, so other origins stay version 2.
constexpr uint32_t kCheckpointFormatVersion = 1;
constexpr uint32_t kCheckpointOriginVersion = 2;
constexpr uint32_t kCheckpointRematVersion = 3;
constexpr size_t kCheckpointOriginBytes = 36;       // policy, flags, seed, tp, pp, dp, ep, etp
constexpr size_t kCheckpointRematOriginBytes = 52;  // those, then gtp_remat(_size), egtp_remat(_size)
constexpr size_t kCheckpointHeaderBytes = 40;  // magic, version, length, default state, count
constexpr size_t kCheckpointTrailerBytes = 4;  // CRC-32

// What the first kCheckpointHeadBytes of a checkpoint say.
constexpr size_t kCheckpointHeadBytes = 20;  // magic, version, total length
struct CheckpointHead {
    uint32_t version;
    uint64_t declared;  // total length in bytes
};

// The one header check, for bytes and for files: the magic, then a version
// this library reads (the one place that knows which), from the `have`
// bytes at `head` (a file reader has read only the head).  Throws
// Error(Status::corrupt) or Error(Status::unsupported_version) naming the
// problem, with `where` ("PATH: ") in front of the message.
CheckpointHead check_checkpoint_head(const uint8_t *head, size_t have, const std::string &where = "");

// Exact encoded size of (default_state, states); throws
// Error(Status::overflow) if it does not fit the format or size_t.
// With an origin present the encoding is version 2 (36 bytes more), or 3
// (52) when the origin has a remat coordinate.
size_t checkpoint_size(const std::vector<NamedState> &states, const Origin &origin = Origin());

// Writes exactly checkpoint_size(states, origin) bytes to dst.  The states
// must obey the rules of CheckpointContents (the tracker guarantees it).
void encode_checkpoint(const PhiloxState &default_state, const std::vector<NamedState> &states, uint8_t *dst,
                       const Origin &origin = Origin());

// Validates the framing (magic, version, length, checksum, entry bounds)
// and decodes; throws Error (Status::corrupt or
// Status::unsupported_version) saying what is wrong and where.  The rules on
// the entries themselves (valid, distinct names; distinct seeds; aligned
// offsets) are checked by StateTable::from_entries.
CheckpointContents decode_checkpoint(const uint8_t *src, size_t len);

}  // namespace rngtrk
