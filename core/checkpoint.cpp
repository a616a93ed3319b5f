// SPDX-License-Identifier: Apache-2.0
#include "checkpoint.h"

#include <cstring>
#include <limits>
#include <string>

#include "counted.h"
#include "crc32.h"
#include "error.h"
#include "state_codec.h"

namespace rngtrk {

namespace {

// Per entry: 1 length byte, the name, then the 16-byte state.
constexpr size_t kEntryFixedBytes = 1 + kStateBytes;

[[noreturn]] void corrupt(const std::string &what) {
    fail(Status::corrupt, "corrupt checkpoint: " + what);
}

// The version an origin is written with, and its block's size.
uint32_t version_for(const Origin &origin) {
    return !origin.present ? kCheckpointFormatVersion
                           : origin_has_remat(origin) ? kCheckpointRematVersion : kCheckpointOriginVersion;
}

size_t origin_bytes(uint32_t version) {
    return version == kCheckpointRematVersion ? kCheckpointRematOriginBytes
           : version == kCheckpointOriginVersion ? kCheckpointOriginBytes
                                                 : 0;
}

}  // namespace

CheckpointHead check_checkpoint_head(const uint8_t *head, size_t have, const std::string &where) {
    if (have < sizeof kCheckpointMagic || std::memcmp(head, kCheckpointMagic, sizeof kCheckpointMagic) != 0)
        fail(Status::corrupt, where + "corrupt checkpoint: not an rngtrk checkpoint (bad magic" +
                                  (have < sizeof kCheckpointMagic ? ", only " + counted(have, "byte") : "") +
                                  ")");
    // The version right after the magic, before anything else is read:
    // another version may lay the rest out differently.
    const auto truncated = [&] {
        fail(Status::corrupt,
             where + "corrupt checkpoint: truncated inside the header (" + counted(have, "byte") + ")");
    };
    if (have < 12) truncated();
    const uint32_t version = load_le32(head + 8);
    static constexpr uint32_t kReadable[] = {kCheckpointFormatVersion, kCheckpointOriginVersion,
                                             kCheckpointRematVersion};
    std::string list;
    const size_t n = sizeof kReadable / sizeof kReadable[0];
    for (size_t i = 0; i < n; ++i) {
        if (version == kReadable[i]) {
            if (have < kCheckpointHeadBytes) truncated();
            return CheckpointHead{version, load_le64(head + 12)};
        }
        list += (i == 0 ? "" : i + 1 == n ? " and " : ", ") + std::to_string(kReadable[i]);
    }
    fail(Status::unsupported_version, where + "checkpoint format version " + std::to_string(version) +
                                           " is not supported (this library reads versions " + list + ")");
}

size_t checkpoint_size(const std::vector<NamedState> &states, const Origin &origin) {
    if (states.size() > std::numeric_limits<uint32_t>::max())
        fail(Status::overflow, "too many named states for one checkpoint");
    size_t total = kCheckpointHeaderBytes + kCheckpointTrailerBytes + origin_bytes(version_for(origin));
    // Each entry is at most 272 bytes and there are fewer than 2^32 of them,
    // so on a 64-bit size_t this cannot overflow; on 32-bit it can.
    for (const NamedState &entry : states) {
        const size_t entry_bytes = kEntryFixedBytes + entry.name.size();
        if (total > std::numeric_limits<size_t>::max() - entry_bytes)
            fail(Status::overflow, "checkpoint size does not fit in size_t");
        total += entry_bytes;
    }
    return total;
}

void encode_checkpoint(const PhiloxState &default_state, const std::vector<NamedState> &states, uint8_t *dst,
                       const Origin &origin) {
    const size_t total = checkpoint_size(states, origin);
    uint8_t *p = dst;
    std::memcpy(p, kCheckpointMagic, sizeof kCheckpointMagic);
    const uint32_t version = version_for(origin);
    store_le32(p + 8, version);
    store_le64(p + 12, static_cast<uint64_t>(total));
    state_to_bytes(default_state, p + 20);
    store_le32(p + 36, static_cast<uint32_t>(states.size()));
    p += kCheckpointHeaderBytes;
    for (const NamedState &entry : states) {
        *p++ = static_cast<uint8_t>(entry.name.size());
        std::memcpy(p, entry.name.data(), entry.name.size());
        p += entry.name.size();
        state_to_bytes(entry.state, p);
        p += kStateBytes;
    }
    if (origin.present) {
        store_le32(p, static_cast<uint32_t>(origin.policy));
        store_le32(p + 4, origin.flags);
        store_le64(p + 8, origin.seed);
        const ParallelRank &r = origin.rank;
        const uint32_t coords[9] = {r.tp,        r.pp,           r.dp,        r.ep,           r.etp,
                                    r.gtp_remat, r.gtp_remat_size, r.egtp_remat, r.egtp_remat_size};
        const size_t count = version == kCheckpointRematVersion ? 9 : 5;
        for (size_t i = 0; i < count; ++i) store_le32(p + 16 + 4 * i, coords[i]);
        p += origin_bytes(version);
    }
    store_le32(p, crc32(dst, total - kCheckpointTrailerBytes));
}

CheckpointContents decode_checkpoint(const uint8_t *src, size_t len) {
    // Framing first, in the order a reader of an unknown file needs it: is it
    // ours, can we read this version, is it whole, is it intact.
    const CheckpointHead head = check_checkpoint_head(src, len);
    const uint32_t version = head.version;
    if (len < kCheckpointHeaderBytes + kCheckpointTrailerBytes)
        corrupt("truncated inside the header (" + counted(len, "byte") + ")");
    const uint64_t declared = head.declared;
    if (declared > len)
        corrupt("truncated: the header says " + counted(declared, "byte") + ", got " + std::to_string(len));
    if (declared < len)
        corrupt(counted(len - declared, "trailing byte") + " after the " + std::to_string(declared) +
                "-byte checkpoint");
    const size_t trailer = kCheckpointTrailerBytes + origin_bytes(version);
    if (len < kCheckpointHeaderBytes + trailer) corrupt("truncated (" + counted(len, "byte") + ")");
    const size_t body = len - trailer;
    const size_t crc_at = len - kCheckpointTrailerBytes;
    const uint32_t stored_crc = load_le32(src + crc_at);
    const uint32_t actual_crc = crc32(src, crc_at);
    if (stored_crc != actual_crc) corrupt("checksum mismatch");

    CheckpointContents contents;
    contents.default_state = state_from_bytes(src + 20);
    if (!offset_is_aligned(contents.default_state.offset))
        corrupt("default state offset is not a multiple of 4");
    const uint32_t count = load_le32(src + 36);
    // Every entry takes at least 18 bytes: a count the body cannot hold is
    // rejected before anything is allocated for it.
    if (count > (body - kCheckpointHeaderBytes) / (kEntryFixedBytes + 1))
        corrupt("state count " + std::to_string(count) + " does not fit the checkpoint's size");
    contents.states.reserve(count);
    size_t pos = kCheckpointHeaderBytes;
    for (uint32_t i = 0; i < count; ++i) {
        const std::string where = "entry " + std::to_string(i) + ": ";
        if (body - pos < 1) corrupt(where + "truncated");
        const size_t name_len = src[pos++];
        if (body - pos < name_len + kStateBytes) corrupt(where + "truncated");
        NamedState entry;
        entry.name.assign(reinterpret_cast<const char *>(src + pos), name_len);
        pos += name_len;
        entry.state = state_from_bytes(src + pos);
        pos += kStateBytes;
        contents.states.push_back(std::move(entry));
    }
    if (pos != body)
        corrupt(counted(body - pos, "unused byte") + " after the last entry");
    contents.version = version;
    if (version != kCheckpointFormatVersion) {
        const uint8_t *o = src + body;
        Origin &origin = contents.origin;
        origin.present = true;
        const uint32_t policy = load_le32(o);
        origin.flags = load_le32(o + 4);
        origin.seed = load_le64(o + 8);
        ParallelRank &r = origin.rank;
        r.tp = load_le32(o + 16), r.pp = load_le32(o + 20), r.dp = load_le32(o + 24);
        r.ep = load_le32(o + 28), r.etp = load_le32(o + 32);
        if (version == kCheckpointRematVersion) {
            r.gtp_remat = load_le32(o + 36), r.gtp_remat_size = load_le32(o + 40);
            r.egtp_remat = load_le32(o + 44), r.egtp_remat_size = load_le32(o + 48);
        }
        if (!seed_policy_from_value(policy, &origin.policy))
            corrupt("origin: unknown seeding policy " + std::to_string(policy));
        // Canonical: an origin without remat coordinates is written as version 2.
        if (version_for(origin) != version)
            corrupt("origin: version 3 with every remat coordinate 0 (such an origin is written as version 2)");
        // Only what rngtrk_tracker_seed_rank can record.
        const std::string problem = origin_problem(origin);
        if (!problem.empty()) corrupt("origin: " + problem);
    }
    return contents;
}

}  // namespace rngtrk
