// SPDX-License-Identifier: Apache-2.0
#include "checkpoint_json.h"

#include <string>

#include "checkpoint.h"
#include "seed_policy.h"
#include "state_table.h"

namespace rngtrk {

namespace {

// `s` as a JSON string the way json.dumps(ensure_ascii=False) writes it:
// the two-character escapes, \u00XX for other control characters, and
// every other byte (UTF-8 included, DEL included) as it is.
void append_json_string(std::string &out, const std::string &s) {
    static const char hex[] = "0123456789abcdef";
    out += '"';
    for (const unsigned char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (c < 0x20) {
                    out += "\\u00";
                    out += hex[c >> 4];
                    out += hex[c & 15];
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    out += '"';
}

void append_state(std::string &out, const PhiloxState &s) {
    out += "\"seed\": " + std::to_string(s.seed) + ", \"offset\": " + std::to_string(s.offset);
}

void append_origin(std::string &out, const Origin &o, uint32_t version) {
    out += ", \"origin\": {\"policy\": \"";
    out += seed_policy_name(static_cast<uint32_t>(o.policy));
    out += "\", \"seed\": " + std::to_string(o.seed) + ", \"flags\": [";
    // Every flag by name (a decoded origin has known flags only).
    const char *sep = "";
    for (uint32_t bit = 1; bit != 0; bit <<= 1)
        if (o.flags & bit) out += std::string(sep) + "\"" + seed_flag_name(bit) + "\"", sep = ", ";
    const ParallelRank &r = o.rank;
    out += "], \"rank\": {\"tp\": " + std::to_string(r.tp) + ", \"pp\": " + std::to_string(r.pp) +
           ", \"dp\": " + std::to_string(r.dp) + ", \"ep\": " + std::to_string(r.ep) +
           ", \"etp\": " + std::to_string(r.etp);
    // The remat coordinates, which only version 3 records.
    if (version == kCheckpointRematVersion)
        out += ", \"gtp_remat\": " + std::to_string(r.gtp_remat) + ", \"gtp_remat_size\": " +
               std::to_string(r.gtp_remat_size) + ", \"egtp_remat\": " + std::to_string(r.egtp_remat) +
               ", \"egtp_remat_size\": " + std::to_string(r.egtp_remat_size);
    out += "}}";
}

}  // namespace

std::string checkpoint_json(const uint8_t *src, size_t len) {
    CheckpointContents contents = decode_checkpoint(src, len);
    // The rules a load applies to the entries, so that what this describes
    // is exactly what a load accepts.
    const StateTable table = StateTable::from_entries(std::move(contents.states), StateTable::Source::checkpoint);
    std::string out = "{\"format_version\": " + std::to_string(contents.version) + ", \"default\": {";
    append_state(out, contents.default_state);
    out += "}, \"states\": [";
    for (size_t i = 0; i < table.size(); ++i) {
        out += i ? ", {\"name\": " : "{\"name\": ";
        append_json_string(out, table.at(i).name);
        out += ", ";
        append_state(out, table.at(i).state);
        out += '}';
    }
    out += ']';
    if (contents.origin.present) append_origin(out, contents.origin, contents.version);
    out += '}';
    return out;
}

}  // namespace rngtrk
