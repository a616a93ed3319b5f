/* SPDX-License-Identifier: Apache-2.0 */
/*
 * make demo — rngtrk's main job in C.
 *
 * A simulated training loop on one tracker, set up the way Megatron-LM seeds
 * one rank (seed 1234, tensor-parallel rank 3): every step draws
 * dropout-style uniforms inside a "model-parallel-rng" fork (different on
 * each tensor-parallel rank), inside a "data-parallel-rng" fork (the same on
 * every tensor-parallel rank), and from the default state.  After step K
 * the tracker is saved; the run continues to step N.  Then a fresh tracker
 * loads the checkpoint and replays steps K+1..N: every number must be
 * identical.  Steps are numbered from 1.
 *
 * With a folder argument it also leaves there, for the Python and Rust
 * parts of `make demo`: checkpoint.rtck, the first run's numbers of steps
 * K+1..N as raw float32 (draws.f32), and run.txt, the layout of a step.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rngtrk.h"

enum { STEPS = 8, CHECKPOINT_AFTER = 3, MP_DRAWS = 4096, DP_DRAWS = 1000, DEFAULT_DRAWS = 37 };
enum { DRAWS_PER_STEP = MP_DRAWS + DP_DRAWS + DEFAULT_DRAWS };

#define TRY(call)                                                                             \
    do {                                                                                      \
        rngtrk_status st_ = (call);                                                           \
        if (st_ != RNGTRK_OK) {                                                               \
            fprintf(stderr, "demo: %s failed: %s: %s\n", #call, rngtrk_status_string(st_),    \
                    rngtrk_last_error());                                                     \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

/* Reserves `n` numbers from the active state and draws them, as a dropout
 * kernel launched with the reserved (seed, offset) would. */
static void draw(rngtrk_tracker *t, uint64_t n, float *out) {
    rngtrk_philox_state s;
    TRY(rngtrk_tracker_advance(t, n, &s));
    TRY(rngtrk_uniform_f32(&s, 0, n, out));
}

static void draw_in_fork(rngtrk_tracker *t, const char *name, uint64_t n, float *out) {
    TRY(rngtrk_tracker_fork(t, name));
    draw(t, n, out);
    TRY(rngtrk_tracker_restore(t, name));
}

/* One training step's random numbers. */
static void step(rngtrk_tracker *t, float *out) {
    draw_in_fork(t, "model-parallel-rng", MP_DRAWS, out);        /* tensor-parallel dropout */
    draw_in_fork(t, "data-parallel-rng", DP_DRAWS, out + MP_DRAWS); /* replicated dropout */
    draw(t, DEFAULT_DRAWS, out + MP_DRAWS + DP_DRAWS);              /* e.g. data shuffling */
}

/* FNV-1a over the floats' bytes: a short fingerprint of one step. */
static uint32_t fingerprint(const float *v, size_t n) {
    uint32_t h = 2166136261u;
    const unsigned char *p = (const unsigned char *)v;
    for (size_t i = 0; i < n * sizeof *v; ++i) h = (h ^ p[i]) * 16777619u;
    return h;
}

/* The first values a step drew from each state, next to its fingerprint. */
static void print_values(const float *v) {
    printf("%.4f %.4f %.4f | %.4f | %.4f", v[0], v[1], v[2], v[MP_DRAWS], v[MP_DRAWS + DP_DRAWS]);
}

static void print_states(const rngtrk_tracker *t) {
    rngtrk_philox_state s;
    size_t count = 0;
    TRY(rngtrk_tracker_get_default(t, &s));
    printf("    %-22s seed=%-6" PRIu64 " offset=%" PRIu64 "\n", "(default)", s.seed, s.offset);
    TRY(rngtrk_tracker_count(t, &count));
    for (size_t i = 0; i < count; ++i) {
        const char *name;
        TRY(rngtrk_tracker_name_at(t, i, &name));
        TRY(rngtrk_tracker_get_state(t, name, &s));
        printf("    %-22s seed=%-6" PRIu64 " offset=%" PRIu64 "\n", name, s.seed, s.offset);
    }
}

/* Writes `len` bytes to dir/name; returns 0 on success. */
static int write_file(const char *dir, const char *name, const void *data, size_t len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    const int bad = fwrite(data, 1, len, f) != len;
    return fclose(f) != 0 || bad;
}

static int leave_for_python(const char *dir, const uint8_t *checkpoint, size_t checkpoint_len,
                            float first_run[][DRAWS_PER_STEP]) {
    char layout[256];
    const int n = snprintf(layout, sizeof layout,
                           "steps %d\ncheckpoint_after %d\nmodel_parallel_draws %d\n"
                           "data_parallel_draws %d\ndefault_draws %d\n",
                           STEPS, CHECKPOINT_AFTER, MP_DRAWS, DP_DRAWS, DEFAULT_DRAWS);
    return write_file(dir, "checkpoint.rtck", checkpoint, checkpoint_len) ||
           write_file(dir, "draws.f32", first_run[CHECKPOINT_AFTER],
                      sizeof(float) * DRAWS_PER_STEP * (STEPS - CHECKPOINT_AFTER)) ||
           write_file(dir, "run.txt", layout, (size_t)n);
}

int main(int argc, char **argv) {
    const uint64_t seed = 1234, tp_rank = 3;
    static float first_run[STEPS][DRAWS_PER_STEP], resumed[STEPS][DRAWS_PER_STEP];
    printf("rngtrk %s demo: one training process, seeded as Megatron-LM seeds tensor-parallel rank %" PRIu64
           " of a job with seed %" PRIu64 "\n",
           rngtrk_version_string(), tp_rank, seed);
    printf("  states: model-parallel-rng (seed %" PRIu64 " + 2718 + %" PRIu64 " = %" PRIu64
           ", different on every tensor-parallel rank),\n"
           "          data-parallel-rng (seed %" PRIu64 ", the same on every rank) and the default state (seed %" PRIu64
           ")\n",
           seed, tp_rank, seed + 2718 + tp_rank, seed, seed);
    printf("  each step draws %d dropout uniforms from model-parallel-rng, %d from data-parallel-rng, %d from the default\n",
           MP_DRAWS, DP_DRAWS, DEFAULT_DRAWS);
    printf("  %d steps; checkpoint taken after step %d; a fresh tracker loads it and replays steps %d..%d\n", STEPS,
           CHECKPOINT_AFTER, CHECKPOINT_AFTER + 1, STEPS);

    rngtrk_tracker *t = NULL;
    TRY(rngtrk_tracker_new(&t));
    TRY(rngtrk_tracker_manual_seed(t, seed));
    TRY(rngtrk_tracker_add(t, "model-parallel-rng", seed + 2718 + tp_rank));
    TRY(rngtrk_tracker_add(t, "data-parallel-rng", seed));

    uint8_t *checkpoint = NULL;
    size_t checkpoint_len = 0;
    for (int k = 0; k < STEPS; ++k) {
        if (k == CHECKPOINT_AFTER) {
            TRY(rngtrk_tracker_save(t, NULL, 0, &checkpoint_len));
            checkpoint = malloc(checkpoint_len);
            if (checkpoint == NULL) return 1;
            TRY(rngtrk_tracker_save(t, checkpoint, checkpoint_len, &checkpoint_len));
            printf("  checkpoint taken after step %d: %zu bytes, states (offsets count 32-bit numbers drawn):\n", k,
                   checkpoint_len);
            print_states(t);
        }
        step(t, first_run[k]);
    }
    printf("  after step %d (end of the first run):\n", STEPS);
    print_states(t);

    rngtrk_tracker *u = NULL;
    TRY(rngtrk_tracker_new(&u));
    TRY(rngtrk_tracker_load(u, checkpoint, checkpoint_len));
    for (int k = CHECKPOINT_AFTER; k < STEPS; ++k) step(u, resumed[k]);

    int identical = 1;
    printf("  step  first values: model-parallel | data-parallel | default   first run  resumed   (FNV-1a of the "
           "step's %d floats)\n",
           DRAWS_PER_STEP);
    for (int k = CHECKPOINT_AFTER; k < STEPS; ++k) {
        const int same = memcmp(first_run[k], resumed[k], sizeof first_run[k]) == 0;
        identical &= same;
        printf("  %4d  ", k + 1);
        print_values(first_run[k]);
        printf("   %08x   %08x  %s\n", fingerprint(first_run[k], DRAWS_PER_STEP),
               fingerprint(resumed[k], DRAWS_PER_STEP), same ? "identical" : "DIFFERENT");
    }
    /* The model-parallel numbers differ from the data-parallel ones. */
    const int distinct = memcmp(first_run[0], first_run[0] + MP_DRAWS, DP_DRAWS * sizeof(float)) != 0;
    if (identical && distinct)
        printf("OK: a fresh tracker loaded the checkpoint taken after step %d and drew, in each of steps %d..%d, "
               "the same %d numbers as the uninterrupted run\n",
               CHECKPOINT_AFTER, CHECKPOINT_AFTER + 1, STEPS, DRAWS_PER_STEP);
    else
        printf("FAILED: the resumed run drew %s numbers%s\n", identical ? "the same" : "different",
               distinct ? "" : ", and the two named states drew the same numbers");
    if (argc > 1 && leave_for_python(argv[1], checkpoint, checkpoint_len, first_run) != 0) return 1;
    free(checkpoint);
    rngtrk_tracker_free(u);
    rngtrk_tracker_free(t);
    return identical && distinct ? 0 : 1;
}
