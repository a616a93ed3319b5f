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

}  // namespace rngtrk_test
