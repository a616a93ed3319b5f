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

void BM_rngtrk_fork_advance_restore(benchmark::State &st) {
    rngtrk_tracker *t = nullptr;
    rngtrk_tracker_new(&t);
    rngtrk_tracker_add(t, "data-parallel-rng", 1234);
    rngtrk_tracker_add(t, "model-parallel-rng", 3955);
    rngtrk_tracker_add(t, "expert-parallel-rng", 2358);
    rngtrk_philox_state s;
    for (auto _ : st) {
        rngtrk_tracker_fork(t, "model-parallel-rng");
        rngtrk_tracker_advance(t, 4096, &s);
        rngtrk_tracker_restore(t, "model-parallel-rng");
        benchmark::DoNotOptimize(s);
    }
    rngtrk_tracker_free(t);
}
BENCHMARK(BM_rngtrk_fork_advance_restore);

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
BENCHMARK(BM_reference_random123_loop)->Arg(kSmall)->Arg(kLarge);

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
