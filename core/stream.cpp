#include "stream.h"

#include <cstddef>
#include <limits>
#include <string>

#include "error.h"
#include "philox.h"

namespace rngtrk {

void check_stream_request(const PhiloxState &state, uint64_t first, uint64_t count,
                          const void *out, uint64_t element_bytes) {
    if (!offset_is_aligned(state.offset))
        fail(RNGTRK_E_INVALID_ARGUMENT,
             "state.offset " + std::to_string(state.offset) + " is not a multiple of 4");
    if (count > std::numeric_limits<uint64_t>::max() - first)
        fail(RNGTRK_E_OVERFLOW, "first + count passes 2^64 elements");
    if (count > std::numeric_limits<size_t>::max() / element_bytes)
        fail(RNGTRK_E_OVERFLOW, "count * element size does not fit in size_t");
    if (out == nullptr && count != 0) fail(RNGTRK_E_INVALID_ARGUMENT, "out is NULL");
}

namespace {

// Walks the blocks covering [first, first + count) and hands each word to
// `put(index_in_out, word)`.  Whole blocks go through the unrolled middle
// loop; only the first and last block can be partial.
template <class Put>
void for_each_word(const PhiloxState &state, uint64_t first, uint64_t count, Put put) {
    if (count == 0) return;
    const uint64_t base = state.offset / kWordsPerBlock;
    uint64_t g = first;
    const uint64_t end = first + count;  // no overflow: checked by check_stream_request
    uint64_t k = 0;
    // Leading partial block.
    if (g % 4 != 0) {
        const PhiloxBlock b = philox_stream_block(state.seed, base + g / 4);
        for (; g % 4 != 0 && g < end; ++g) put(k++, b.w[g % 4]);
    }
    // Whole blocks.
    for (; end - g >= 4; g += 4) {
        const PhiloxBlock b = philox_stream_block(state.seed, base + g / 4);
        put(k, b.w[0]);
        put(k + 1, b.w[1]);
        put(k + 2, b.w[2]);
        put(k + 3, b.w[3]);
        k += 4;
    }
    // Trailing partial block.
    if (g < end) {
        const PhiloxBlock b = philox_stream_block(state.seed, base + g / 4);
        for (unsigned i = 0; g < end; ++g, ++i) put(k++, b.w[i]);
    }
}

}  // namespace

void stream_u32(const PhiloxState &state, uint64_t first, uint64_t count, uint32_t *out) {
    for_each_word(state, first, count, [out](uint64_t k, uint32_t w) { out[k] = w; });
}

void stream_uniform_f32(const PhiloxState &state, uint64_t first, uint64_t count, float *out) {
    for_each_word(state, first, count,
                  [out](uint64_t k, uint32_t w) { out[k] = uniform_f32_from_word(w); });
}

}  // namespace rngtrk
