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
    // Element indices run to 2^64 - 1, so first + count may equal 2^64.
    if (first != 0 && count > std::numeric_limits<uint64_t>::max() - first + 1)
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
    // Counts what is left rather than comparing with first + count, which
    // is 2^64 (0 in uint64_t) for a request that ends at the last index.
    const uint64_t base = state.offset / kWordsPerBlock;
    uint64_t block = base + first / 4;
    unsigned word = static_cast<unsigned>(first % 4);
    uint64_t k = 0;
    // Leading partial block.
    if (word != 0 && count != 0) {
        const PhiloxBlock b = philox_stream_block(state.seed, block++);
        for (; word < 4 && k < count; ++word) put(k++, b.w[word]);
    }
    // Whole blocks.
    for (; count - k >= 4; k += 4) {
        const PhiloxBlock b = philox_stream_block(state.seed, block++);
        put(k, b.w[0]);
        put(k + 1, b.w[1]);
        put(k + 2, b.w[2]);
        put(k + 3, b.w[3]);
    }
    // Trailing partial block.
    if (k < count) {
        const PhiloxBlock b = philox_stream_block(state.seed, block);
        for (unsigned i = 0; k < count; ++i) put(k++, b.w[i]);
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
