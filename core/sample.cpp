// SPDX-License-Identifier: Apache-2.0
#include "sample.h"

#include <limits>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "counted.h"
#include "elements.h"
#include "error.h"
#include "layouts.h"
#include "sample_engines.h"

namespace rngtrk {

namespace {

// Bytes of an element of out (and of dropout's in: the data dtype's).
size_t out_element_bytes(const SampleSpec &spec) { return element_bytes(spec.dtype); }

// Dropout's input, when the request has elements to read.
void check_input(const SampleSpec &spec, bool any, const void *in, const char *in_name) {
    if (spec.dist != Dist::dropout || !any) return;
    if (in == nullptr) fail(Status::invalid_argument, std::string(in_name) + " is NULL");
    check_aligned(in, out_element_bytes(spec), in_name);
}

// Dropout's input of `count` elements (its capacity checked) is `out` (in
// place) or apart from it: one that partly overlaps the output would read
// elements already written.
void check_apart(const SampleSpec &spec, uint64_t count, const void *in, const char *in_name, const void *out) {
    if (spec.dist != Dist::dropout || count == 0) return;
    const uintptr_t a = reinterpret_cast<uintptr_t>(in), b = reinterpret_cast<uintptr_t>(out);
    const uintptr_t bytes = static_cast<uintptr_t>(count) * out_element_bytes(spec);
    if (a != b && a < b + bytes && b < a + bytes)
        fail(Status::invalid_argument, std::string(in_name) + " and out overlap without being the same array");
}

// Dropout of elements [first, first + count) of the tensor, whose data are
// `in` and `out` (count elements each; the same array or apart): the keep
// flags of a chunk from the engine, then the data.
template <DType T>
void dropout_span(const SampleSpec &s, const PhiloxState &state, uint64_t numel, uint64_t first, uint64_t count,
                  const void *in, void *out) {
    using Storage = typename DropoutData<T>::Storage;
    const Storage *x = static_cast<const Storage *>(in);
    Storage *y = static_cast<Storage *>(out);
    constexpr uint64_t kChunk = 16384;
    unsigned char mask[kChunk];
    const float scale = s.scale32;
    const bool zero_dropped = s.zero_dropped;
    for (uint64_t done = 0; done < count; done += kChunk) {
        const uint64_t n = count - done < kChunk ? count - done : kChunk;
        generate_elements(s, state, numel, first + done, n, mask);
        for (uint64_t i = 0; i < n; ++i) y[done + i] = dropout_element<T>(x[done + i], mask[i], scale, zero_dropped);
    }
}

// Elements [first, first + count) of a request to `out` (and from `in`,
// for dropout), `count` elements each.
void generate_span(const SampleSpec &s, const PhiloxState &state, uint64_t numel, uint64_t first, uint64_t count,
                   const void *in, void *out) {
    if (s.dist != Dist::dropout) return generate_elements(s, state, numel, first, count, out);
    switch (s.dtype) {
        case DType::f16: return dropout_span<DType::f16>(s, state, numel, first, count, in, out);
        case DType::bf16: return dropout_span<DType::bf16>(s, state, numel, first, count, in, out);
        default: return dropout_span<DType::f32>(s, state, numel, first, count, in, out);
    }
}

void check_capacity(uint64_t count, size_t element, const void *out, size_t capacity) {
    if (count > std::numeric_limits<size_t>::max() / element)
        fail(Status::overflow, "count * element size does not fit in size_t");
    if (count != 0 && out == nullptr) fail(Status::invalid_argument, "out is NULL");
    if (count != 0) check_aligned(out, element, "out");
    if (count * element > capacity)
        fail(Status::buffer_too_small, "out holds " + counted(capacity, "byte") + "; the request needs " +
                                            std::to_string(count * element));
}

// Calls below this many elements stay on the caller's thread: starting a
// thread costs tens of microseconds.
constexpr uint64_t kParallelMinimum = uint64_t{1} << 20;

// Runs part(i) for i in [0, parts): part 0 on this thread, the others on
// new threads.  A thread that cannot start runs its part here instead, so
// the work is always done (the tracker calls rely on it: they have
// advanced already).
template <class Part>
void run_parts(unsigned parts, const Part &part) {
    std::vector<std::thread> threads;
    std::vector<unsigned> inline_parts;
    for (unsigned i = 1; i < parts; ++i) {
        try {
            threads.emplace_back(part, i);
        } catch (const std::system_error &) {
            inline_parts.push_back(i);
        } catch (const std::bad_alloc &) {
            inline_parts.push_back(i);
        }
    }
    part(0u);
    for (unsigned i : inline_parts) part(i);
    for (std::thread &t : threads) t.join();
}

// [first, first + count) cut into `parts` pieces, each starting on a block
// boundary (a multiple of 4 elements), so no Philox block is split.
template <class Piece>
void split_range(uint64_t first, uint64_t count, unsigned parts, const Piece &piece) {
    run_parts(parts, [&](unsigned i) {
        const uint64_t step = blocks_for(count / parts) * kWordsPerBlock;  // 4 elements at most per block
        const uint64_t begin = step * i < count ? step * i : count;
        const uint64_t end = i + 1 == parts || step * (i + 1) > count ? count : step * (i + 1);
        if (begin < end) piece(first + begin, end - begin, begin);
    });
}

unsigned parts_for(const SampleSpec &spec, uint64_t count) {
    return count >= kParallelMinimum && spec.threads > 1 ? spec.threads : 1;
}

}  // namespace

void check_state(const PhiloxState &state) {
    if (!offset_is_aligned(state.offset))
        fail(Status::invalid_argument, "state.offset " + std::to_string(state.offset) + " is not a multiple of 4");
}

void check_counters(const SampleSpec &spec, const PhiloxState &state, uint64_t first, uint64_t count) {
    const LayoutRow &row = layout_row(spec.layout);
    if (row.counter_limit == 0 || count == 0) return;
    // The last element, not first + count: that may be 2^64, which wraps to 0.
    const uint64_t last = first + (count - 1);
    // The layouts with a limit count counters from the offset itself; the
    // limits are powers of 2 (static_assert in layouts.h).
    const uint64_t limit = row.counter_limit;
    if (state.offset >= limit || last >= limit - state.offset)
        fail(Status::overflow, std::string(row.name) + " layout: the counter offset + g reaches 2^" +
                                    std::to_string(__builtin_ctzll(limit)) + " (offset " + std::to_string(state.offset) +
                                    ", element " + std::to_string(last) + "), " + row.limit_why);
}

void check_aligned(const void *p, size_t element, const char *what) {
    // A misaligned element store is undefined on the CPU and faults on a
    // GPU (poisoning the CUDA context): refuse it with a clear message.
    if (reinterpret_cast<uintptr_t>(p) % element != 0)
        fail(Status::invalid_argument, std::string(what) + " is not aligned to its element size (" +
                                            std::to_string(element) + " bytes)");
}

void check_elements(uint64_t first, uint64_t count, size_t element_bytes, const void *out, size_t out_capacity) {
    // Element indices run to 2^64 - 1, so first + count may equal 2^64.
    if (first != 0 && count > std::numeric_limits<uint64_t>::max() - first + 1)
        fail(Status::overflow, "first + count passes 2^64 elements");
    check_capacity(count, element_bytes, out, out_capacity);
}

RangeRequest check_range(const SampleSpec &spec, uint64_t numel, uint64_t first, uint64_t count, void *out,
                         size_t out_capacity, const void *in, const char *in_name) {
    check_input(spec, count != 0, in, in_name);
    check_elements(first, count, out_element_bytes(spec), out, out_capacity);
    check_apart(spec, count, in, in_name, out);
    if (spec.layout == Layout::eager_cuda) {
        if (first + count < first) fail(Status::overflow, "first + count passes 2^64 - 1 for torch-eager-cuda");
        if (numel == 0) numel = first + count;
        if (numel < first + count)
            fail(Status::invalid_argument, "numel " + std::to_string(numel) + " is less than first + count");
    }
    return RangeRequest{spec, numel, first, count, out, spec.dist == Dist::dropout ? in : nullptr};
}

void run_range(const RangeRequest &r, const PhiloxState &state) {
    const size_t eb = out_element_bytes(r.spec);
    unsigned char *out = static_cast<unsigned char *>(r.out);
    const unsigned char *in = static_cast<const unsigned char *>(r.in);
    split_range(r.first, r.count, parts_for(r.spec, r.count), [&](uint64_t first, uint64_t count, uint64_t at) {
        generate_span(r.spec, state, r.numel, first, count, in == nullptr ? nullptr : in + at * eb, out + at * eb);
    });
}

SliceRequest check_slice(const SampleSpec &spec, size_t ndim, const uint64_t *global, const uint64_t *start,
                         const uint64_t *local, void *out, size_t out_capacity, const void *in,
                         const char *in_name) {
    if (ndim == 0 || ndim > kMaxSliceDims)
        fail(Status::invalid_argument, "ndim must be 1 to " + std::to_string(kMaxSliceDims));
    if (global == nullptr || start == nullptr || local == nullptr)
        fail(Status::invalid_argument, "global_shape, start and local_shape must not be NULL");
    SliceRequest r{spec, ndim, {}, {}, {}, 1, out, spec.dist == Dist::dropout ? in : nullptr};
    uint64_t box = 1;
    for (size_t d = 0; d < ndim; ++d) {
        r.global[d] = global[d], r.start[d] = start[d], r.local[d] = local[d];
        if (start[d] > global[d] || local[d] > global[d] - start[d])
            fail(Status::invalid_argument, "dimension " + std::to_string(d) + ": box [" + std::to_string(start[d]) +
                                                ", +" + std::to_string(local[d]) + ") is outside 0.." +
                                                std::to_string(global[d]));
        if (global[d] != 0 && r.numel > (std::numeric_limits<uint64_t>::max() - 1) / global[d])
            fail(Status::overflow, "the tensor has 2^64 elements or more");
        r.numel *= global[d];
        box = local[d] == 0 || box == 0 ? 0 : box * local[d];  // <= numel: no overflow
    }
    check_input(spec, box != 0, in, in_name);
    check_capacity(box, out_element_bytes(spec), out, out_capacity);
    check_apart(spec, box, in, in_name, out);
    return r;
}

void run_slice(const SliceRequest &r, const PhiloxState &state) {
    const size_t last = r.ndim - 1;
    uint64_t rows = 1;
    for (size_t d = 0; d < last; ++d) rows *= r.local[d];
    if (rows == 0 || r.local[last] == 0) return;
    const size_t eb = out_element_bytes(r.spec);
    unsigned char *out = static_cast<unsigned char *>(r.out);
    const unsigned char *in = static_cast<const unsigned char *>(r.in);
    // Rows [row0, row1) of the box, each a 1-D range of the whole tensor.
    const auto rows_part = [&](uint64_t row0, uint64_t row1) {
        uint64_t index[kMaxSliceDims] = {};  // position of row0 within the box, last dim excluded
        for (uint64_t rem = row0, d = last; d-- > 0;) index[d] = rem % r.local[d], rem /= r.local[d];
        for (uint64_t row = row0; row < row1; ++row) {
            uint64_t g = 0;  // global row-major index of the row's first element
            for (size_t d = 0; d < r.ndim; ++d) g = g * r.global[d] + r.start[d] + (d < last ? index[d] : 0);
            const uint64_t at = row * r.local[last] * eb;
            generate_span(r.spec, state, r.numel, g, r.local[last], in == nullptr ? nullptr : in + at, out + at);
            for (size_t d = last; d-- > 0;) {  // next row: odometer over the leading dims
                if (++index[d] < r.local[d]) break;
                index[d] = 0;
            }
        }
    };
    const unsigned parts = rows > 1 ? parts_for(r.spec, rows * r.local[last]) : 1;
    run_parts(parts, [&](unsigned i) { rows_part(rows * i / parts, rows * (i + 1) / parts); });
}

}  // namespace rngtrk
