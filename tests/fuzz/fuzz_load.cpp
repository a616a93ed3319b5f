// SPDX-License-Identifier: Apache-2.0
// libFuzzer: rngtrk_tracker_load on arbitrary bytes.  A failed load must
// leave the tracker byte-identical; a successful one must save canonical
// bytes that load again to the same states.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "rngtrk.h"

namespace {

std::vector<uint8_t> save(const rngtrk_tracker *t) {
    size_t len = 0;
    if (rngtrk_tracker_save(t, nullptr, 0, &len) != RNGTRK_OK) std::abort();
    std::vector<uint8_t> b(len);
    if (rngtrk_tracker_save(t, b.data(), b.size(), &len) != RNGTRK_OK) std::abort();
    return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    rngtrk_tracker *t = nullptr;
    if (rngtrk_tracker_new(&t) != RNGTRK_OK) std::abort();
    rngtrk_tracker_manual_seed(t, 5);
    rngtrk_tracker_add(t, "keep", 9);
    const std::vector<uint8_t> before = save(t);
    const rngtrk_status st = rngtrk_tracker_load(t, data, size);
    if (st != RNGTRK_OK) {
        if (save(t) != before) std::abort();  // a failed load changed the tracker
        if (rngtrk_last_error()[0] == '\0') std::abort();
    } else {
        const std::vector<uint8_t> once = save(t);
        rngtrk_tracker *u = nullptr;
        rngtrk_tracker_new(&u);
        if (rngtrk_tracker_load(u, once.data(), once.size()) != RNGTRK_OK) std::abort();
        if (save(u) != once) std::abort();  // not canonical
        uint64_t a = 0, b = 0;
        rngtrk_tracker_digest(t, &a), rngtrk_tracker_digest(u, &b);
        if (a != b) std::abort();
        rngtrk_tracker_free(u);
    }
    rngtrk_tracker_free(t);
    return 0;
}
