// SPDX-License-Identifier: Apache-2.0
// rngtrk benchmarks.  Each figure is reported beside a reference measured in
// the same run (bench/ratios.py prints the ratios):
//   fork + advance + restore   vs  a dictionary tracker in the style of
//                                  TransformerEngine's CudaRNGStatesTracker,
//                                  written in C++ (std::unordered_map of states,
//                                  copy in on fork, copy back on restore)
//   rngtrk_random_u32 /        vs  Random123's philox4x32 in a plain loop (the
//   rngtrk_uniform_f32             reference implementation), and memset of the
//                                  same bytes (the memory-speed ceiling)
#include <Random123/philox.h>
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "rngtrk.h"

namespace {

// ---- fork / restore --------------------------------------------------------

// One dropout site's bookkeeping: fork, advance by 4096, restore; with the
// reservation ledger in `mode` (off, or RAISE: every advance is checked
// against and merged into its seed's handed-out ranges, and logged).
void fork_advance_restore(benchmark::State &st, rngtrk_ledger_mode mode) {
    rngtrk_tracker *t = nullptr;
    rngtrk_tracker_new(&t);
    rngtrk_tracker_add(t, "data-parallel-rng", 1234);
    rngtrk_tracker_add(t, "model-parallel-rng", 3955);
    rngtrk_tracker_add(t, "expert-parallel-rng", 2358);
    rngtrk_tracker_set_ledger(t, mode, 0);
    rngtrk_philox_state s;
    for (auto _ : st) {
        rngtrk_tracker_fork(t, "model-parallel-rng");
        rngtrk_tracker_advance(t, 4096, &s);
        rngtrk_tracker_restore(t, "model-parallel-rng");
        benchmark::DoNotOptimize(s);
    }
    rngtrk_tracker_free(t);
}

void BM_rngtrk_fork_advance_restore(benchmark::State &st) { fork_advance_restore(st, RNGTRK_LEDGER_OFF); }
BENCHMARK(BM_rngtrk_fork_advance_restore);

// Compared with the step above in the same run (bench/ratios.py).
void BM_rngtrk_fork_advance_restore_ledger(benchmark::State &st) { fork_advance_restore(st, RNGTRK_LEDGER_RAISE); }
BENCHMARK(BM_rngtrk_fork_advance_restore_ledger);

// The reference: TransformerEngine's fork copies the named state into the
// generator and copies the generator back on exit.
struct DictTracker {
    struct State { uint64_t seed, offset; };
    std::unordered_map<std::string, State> states;
    State generator{0, 0};
    std::vector<State> saved;
    void fork(const char *name) {
        saved.push_back(generator);
        generator = states.at(name);
    }
    State advance(uint64_t n) {
        const State before = generator;
        generator.offset += (n + 3) / 4 * 4;
        return before;
    }
    void restore(const char *name) {
        states.at(name) = generator;
        generator = saved.back();
        saved.pop_back();
    }
};

void BM_reference_dict_fork_advance_restore(benchmark::State &st) {
    DictTracker t;
    t.states["data-parallel-rng"] = {1234, 0};
    t.states["model-parallel-rng"] = {3955, 0};
    t.states["expert-parallel-rng"] = {2358, 0};
    for (auto _ : st) {
        t.fork("model-parallel-rng");
        DictTracker::State s = t.advance(4096);
        t.restore("model-parallel-rng");
        benchmark::DoNotOptimize(s);
    }
}
BENCHMARK(BM_reference_dict_fork_advance_restore);

// ---- generation ------------------------------------------------------------

constexpr int64_t kSmall = 1 << 12;  // 16 KiB: in L1/L2
constexpr int64_t kLarge = 1 << 24;  // 64 MiB: memory

void BM_rngtrk_random_u32(benchmark::State &st) {
    std::vector<uint32_t> out(static_cast<size_t>(st.range(0)));
    const rngtrk_philox_state s{42, 0};
    for (auto _ : st) {
        rngtrk_random_u32(&s, 0, out.size(), out.data());
        benchmark::DoNotOptimize(out.data());
    }
    st.SetBytesProcessed(st.iterations() * st.range(0) * 4);
}
BENCHMARK(BM_rngtrk_random_u32)->Arg(kSmall)->Arg(kLarge);

void BM_rngtrk_uniform_f32(benchmark::State &st) {
    std::vector<float> out(static_cast<size_t>(st.range(0)));
    const rngtrk_philox_state s{42, 0};
    for (auto _ : st) {
        rngtrk_uniform_f32(&s, 0, out.size(), out.data());
        benchmark::DoNotOptimize(out.data());
    }
    st.SetBytesProcessed(st.iterations() * st.range(0) * 4);
}
BENCHMARK(BM_rngtrk_uniform_f32)->Arg(kSmall)->Arg(kLarge);

void BM_reference_random123_loop(benchmark::State &st) {
    std::vector<uint32_t> out(static_cast<size_t>(st.range(0)));
    const philox4x32_key_t key = {{42, 0}};
    for (auto _ : st) {
        for (size_t i = 0; i < out.size(); i += 4) {
            const uint64_t b = i / 4;
            const philox4x32_ctr_t ctr = {{uint32_t(b), uint32_t(b >> 32), 0, 0}};
            const philox4x32_ctr_t r = philox4x32_R(10, ctr, key);
            std::memcpy(&out[i], r.v, 16);
        }
        benchmark::DoNotOptimize(out.data());
    }
    st.SetBytesProcessed(st.iterations() * st.range(0) * 4);
}
BENCHMARK(BM_reference_random123_loop)->Arg(kSmall)->Arg(1 << 18)->Arg(kLarge);

// ---- sampling (rngtrk_sample): one line per case in ratios.py ----------------
// The CPU path is the library's choice, or RNGTRK_CPU (make bench runs this
// binary once per path).  Arg = number of elements.

void run_sample(benchmark::State &st, rngtrk_layout layout, rngtrk_distribution dist, rngtrk_dtype dtype,
                size_t element_bytes, uint32_t threads = 1) {
    rngtrk_sample_spec spec;
    if (RNGTRK_SAMPLE_SPEC_INIT(&spec, layout, dist, dtype) != RNGTRK_OK) {
        st.SkipWithError(rngtrk_last_error());  // a kind an older library (tools/bench_cpu_compare.sh) lacks
        return;
    }
    spec.threads = threads;
    std::vector<unsigned char> out(static_cast<size_t>(st.range(0)) * element_bytes);
    const rngtrk_philox_state s{42, 0};
    for (auto _ : st) {
        if (rngtrk_sample(&s, &spec, 0, static_cast<uint64_t>(st.range(0)), out.data(), out.size()) != RNGTRK_OK)
            st.SkipWithError(rngtrk_last_error());
        benchmark::DoNotOptimize(out.data());
    }
    st.SetBytesProcessed(st.iterations() * static_cast<int64_t>(out.size()));
    st.SetLabel(rngtrk_cpu_path());
}

void BM_sample_u32_stateless(benchmark::State &st) {
    run_sample(st, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_BITS, RNGTRK_DTYPE_U32, 4);
}
void BM_sample_uniform_f32_stateless(benchmark::State &st) {
    run_sample(st, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32, 4);
}
void BM_sample_uniform_f32_nvfuser(benchmark::State &st) {
    run_sample(st, RNGTRK_LAYOUT_NVFUSER, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32, 4);
}
void BM_sample_normal_f32_stateless(benchmark::State &st) {
    run_sample(st, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32, 4);
}
// Normal in the other dtypes and layouts (issue 30).
void BM_sample_normal_f64_stateless(benchmark::State &st) {
    run_sample(st, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F64, 8);
}
void BM_sample_normal_f16_stateless(benchmark::State &st) {
    run_sample(st, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F16, 2);
}
void BM_sample_normal_bf16_stateless(benchmark::State &st) {
    run_sample(st, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_BF16, 2);
}
void BM_sample_normal_f32_nvfuser(benchmark::State &st) {
    run_sample(st, RNGTRK_LAYOUT_NVFUSER, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32, 4);
}
void BM_sample_normal_f32_torch_eager_cuda(benchmark::State &st) {
    run_sample(st, RNGTRK_LAYOUT_TORCH_EAGER_CUDA, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32, 4);
}
void BM_sample_normal_f32_triton(benchmark::State &st) {
    run_sample(st, RNGTRK_LAYOUT_TRITON, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32, 4);
}
void BM_sample_bernoulli_mask_stateless(benchmark::State &st) {
    run_sample(st, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8, 1);
}
// The 2-thread option, for large buffers (reported separately).
void BM_sample_u32_stateless_2threads(benchmark::State &st) {
    run_sample(st, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_BITS, RNGTRK_DTYPE_U32, 4, 2);
}
void BM_sample_uniform_f32_stateless_2threads(benchmark::State &st) {
    run_sample(st, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32, 4, 2);
}
void BM_sample_normal_f32_stateless_2threads(benchmark::State &st) {
    run_sample(st, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32, 4, 2);
}
constexpr int64_t kCached = 1 << 18;  // 1 MiB of 32-bit elements: in L2, compute-bound
BENCHMARK(BM_sample_u32_stateless)->Arg(kCached)->Arg(kLarge);
BENCHMARK(BM_sample_uniform_f32_stateless)->Arg(kCached)->Arg(kLarge);
BENCHMARK(BM_sample_uniform_f32_nvfuser)->Arg(kCached)->Arg(kLarge);
BENCHMARK(BM_sample_normal_f32_stateless)->Arg(kCached)->Arg(kLarge);
BENCHMARK(BM_sample_normal_f64_stateless)->Arg(kCached)->Arg(kLarge);
BENCHMARK(BM_sample_normal_f16_stateless)->Arg(kCached)->Arg(kLarge);
BENCHMARK(BM_sample_normal_bf16_stateless)->Arg(kCached)->Arg(kLarge);
BENCHMARK(BM_sample_normal_f32_nvfuser)->Arg(kCached);
BENCHMARK(BM_sample_normal_f32_torch_eager_cuda)->Arg(kCached);
BENCHMARK(BM_sample_normal_f32_triton)->Arg(kCached);
BENCHMARK(BM_sample_bernoulli_mask_stateless)->Arg(kCached)->Arg(kLarge);
BENCHMARK(BM_sample_u32_stateless_2threads)->Arg(kLarge)->UseRealTime();
BENCHMARK(BM_sample_uniform_f32_stateless_2threads)->Arg(kLarge)->UseRealTime();
BENCHMARK(BM_sample_normal_f32_stateless_2threads)->Arg(kLarge)->UseRealTime();

void BM_reference_memset(benchmark::State &st) {
    std::vector<uint32_t> out(static_cast<size_t>(st.range(0)));
    int v = 0;
    for (auto _ : st) {
        std::memset(out.data(), ++v, out.size() * 4);
        benchmark::DoNotOptimize(out.data());
    }
    st.SetBytesProcessed(st.iterations() * st.range(0) * 4);
}
BENCHMARK(BM_reference_memset)->Arg(kSmall)->Arg(kLarge);

}  // namespace

BENCHMARK_MAIN();
