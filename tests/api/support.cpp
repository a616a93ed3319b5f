#include "support.h"

#include <cstdio>
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

namespace {
void append_json_string(std::string &out, const char *s) {
    out += '"';
    for (const unsigned char *p = reinterpret_cast<const unsigned char *>(s); *p; ++p) {
        switch (*p) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (*p < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", *p);
                    out += buf;
                } else {
                    out += static_cast<char>(*p);
                }
        }
    }
    out += '"';
}
}  // namespace

std::string canonical_json(const rngtrk_tracker *t) {
    rngtrk_philox_state d{};
    size_t count = 0;
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_get_default(t, &d));
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_count(t, &count));
    std::ostringstream head;
    head << "{\"format_version\": 1, \"default\": {\"seed\": " << d.seed
         << ", \"offset\": " << d.offset << "}, \"states\": [";
    std::string out = head.str();
    for (size_t i = 0; i < count; ++i) {
        const char *name = nullptr;
        rngtrk_philox_state s{};
        EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_name_at(t, i, &name));
        EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_get_state(t, name, &s));
        out += i ? ", {\"name\": " : "{\"name\": ";
        append_json_string(out, name);
        out += ", \"seed\": " + std::to_string(s.seed) + ", \"offset\": " + std::to_string(s.offset) + "}";
    }
    return out + "]}\n";
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
    };
    for (const auto &row : table)
        if (name == row.name) return row.code;
    ADD_FAILURE() << "unknown status name " << name;
    return RNGTRK_E_INTERNAL;
}

}  // namespace rngtrk_test
