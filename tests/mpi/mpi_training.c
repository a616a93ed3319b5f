/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpi_training — rngtrk on a real multi-process engine (Open MPI).
 *
 *   mpirun -np 8 mpi_training train  --tp 2 --pp 2 --dp 2 --dir D
 *   mpirun -np 4 mpi_training resume --tp 4 --pp 1 --dp 1 --dir D
 *
 * Ranks are laid out as Megatron-LM does: tp fastest, then dp, then pp.
 *
 * train:  (1) seeds every rank with the megatron policy and checks, by one
 *         allgather of digests, that data-parallel replicas hold identical
 *         states and tensor-parallel shards different ones; (2) runs STEPS
 *         training steps in the sharding-invariant mode (one replicated
 *         tracker): each step draws a dropout mask of a 64x96 tensor sharded
 *         over tp (Shard(1)) and replicated over dp and pp, gathers it on
 *         rank 0 and compares it with the unsharded mask; (3) before step
 *         SAVE_AT saves the tracker (and each rank's megatron tracker) to D.
 * resume: on another layout, loads the sharding-invariant checkpoint,
 *         continues steps SAVE_AT.., and rank 0 compares every gathered
 *         mask with an uninterrupted single-process run; then each rank
 *         tries to load the megatron checkpoint of the old rank with its
 *         own index: refused exactly when that rank's streams differ, and
 *         taken with RNGTRK_LOAD_ANY_RANK.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rngtrk.h"

enum { ROWS = 64, COLS = 96, STEPS = 6, SAVE_AT = 3 };
static const uint64_t kSeed = 1234, kDropoutSeed = 98765;

static int world_rank, world_size;

#define TRY(call)                                                                                  \
    do {                                                                                           \
        rngtrk_status st_ = (call);                                                                \
        if (st_ != RNGTRK_OK) {                                                                    \
            fprintf(stderr, "rank %d: %s: %s: %s\n", world_rank, #call, rngtrk_status_string(st_), \
                    rngtrk_last_error());                                                          \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                          \
        }                                                                                          \
    } while (0)

struct layout {
    uint32_t tp, pp, dp;
};

static rngtrk_parallel_rank coords_of(int rank, struct layout L) {
    rngtrk_parallel_rank r;
    RNGTRK_PARALLEL_RANK_INIT(&r);
    r.tp = (uint32_t)rank % L.tp, r.pp = (uint32_t)rank / L.tp / L.dp, r.dp = (uint32_t)rank / L.tp % L.dp;
    return r;
}

static void path(char *out, size_t n, const char *dir, const char *name, int rank) {
    snprintf(out, n, "%s/%s%d.rtck", dir, name, rank);
}

static void save_file(rngtrk_tracker *t, const char *file) {
    size_t len = 0;
    TRY(rngtrk_tracker_save(t, NULL, 0, &len));
    uint8_t *buf = malloc(len);
    TRY(rngtrk_tracker_save(t, buf, len, &len));
    FILE *f = fopen(file, "wb");
    if (f == NULL || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "rank %d: cannot write %s\n", world_rank, file);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    free(buf);
}

static uint8_t *read_file(const char *file, size_t *len) {
    FILE *f = fopen(file, "rb");
    if (f == NULL) {
        fprintf(stderr, "rank %d: cannot read %s\n", world_rank, file);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    uint8_t *buf = malloc(*len);
    if (fread(buf, 1, *len, f) != *len) MPI_Abort(MPI_COMM_WORLD, 2);
    fclose(f);
    return buf;
}

/* The tracker of the sharding-invariant mode: the same on every rank. */
static rngtrk_tracker *replicated_tracker(void) {
    rngtrk_tracker *t;
    TRY(rngtrk_tracker_new(&t));
    TRY(rngtrk_tracker_manual_seed(t, kSeed));
    TRY(rngtrk_tracker_add(t, "dropout-rng", kDropoutSeed));
    return t;
}

static rngtrk_sample_spec mask_spec(void) {
    rngtrk_sample_spec s;
    TRY(RNGTRK_SAMPLE_SPEC_INIT(&s, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8));
    s.param_a = 0.9;
    return s;
}

/* One training step: this rank's box of the dropout mask, drawn in the
 * "dropout-rng" fork; every rank advances by the whole tensor's draw. */
static void step_box(rngtrk_tracker *t, struct layout L, uint64_t start[2], uint64_t local[2], uint8_t *box) {
    const rngtrk_parallel_rank r = coords_of(world_rank, L);
    const uint64_t mesh[3] = {L.pp, L.dp, L.tp}, coord[3] = {r.pp, r.dp, r.tp}, shape[2] = {ROWS, COLS};
    const rngtrk_placement placements[3] = {{RNGTRK_PLACEMENT_REPLICATE, 0}, {RNGTRK_PLACEMENT_REPLICATE, 0},
                                            {RNGTRK_PLACEMENT_SHARD, 1}};
    TRY(rngtrk_dtensor_local_box(3, mesh, coord, placements, 2, shape, start, local));
    const rngtrk_sample_spec s = mask_spec();
    TRY(rngtrk_tracker_fork(t, "dropout-rng"));
    TRY(rngtrk_tracker_sample_slice(t, &s, 2, shape, start, local, box, ROWS * COLS, NULL));
    TRY(rngtrk_tracker_restore(t, "dropout-rng"));
}

/* The unsharded mask of one step, from a single-process tracker. */
static void step_whole(rngtrk_tracker *t, uint8_t *mask) {
    const rngtrk_sample_spec s = mask_spec();
    TRY(rngtrk_tracker_fork(t, "dropout-rng"));
    TRY(rngtrk_tracker_sample(t, &s, ROWS * COLS, mask, ROWS * COLS, NULL));
    TRY(rngtrk_tracker_restore(t, "dropout-rng"));
}

/* Gathers every rank's box on rank 0 and rebuilds the mask there; replicas
 * must agree.  Returns 1 on rank 0 if the rebuilt mask equals `expected`. */
static int gather_and_compare(const uint64_t start[2], const uint64_t local[2], const uint8_t *box,
                              const uint8_t *expected) {
    uint64_t meta[4] = {start[0], start[1], local[0], local[1]};
    uint64_t *all_meta = world_rank == 0 ? malloc(4 * sizeof(uint64_t) * (size_t)world_size) : NULL;
    MPI_Gather(meta, 4, MPI_UINT64_T, all_meta, 4, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    const int n = (int)(local[0] * local[1]);
    int *counts = NULL, *displs = NULL;
    uint8_t *all = NULL;
    if (world_rank == 0) {
        counts = malloc(sizeof(int) * (size_t)world_size);
        displs = malloc(sizeof(int) * (size_t)world_size);
        int total = 0;
        for (int i = 0; i < world_size; ++i) {
            counts[i] = (int)(all_meta[4 * i + 2] * all_meta[4 * i + 3]);
            displs[i] = total;
            total += counts[i];
        }
        all = malloc((size_t)total);
    }
    MPI_Gatherv(box, n, MPI_UINT8_T, all, counts, displs, MPI_UINT8_T, 0, MPI_COMM_WORLD);
    int ok = 1;
    if (world_rank == 0) {
        uint8_t rebuilt[ROWS * COLS];
        memset(rebuilt, 0xFF, sizeof rebuilt);
        for (int i = 0; i < world_size; ++i) {
            const uint64_t *m = all_meta + 4 * i;
            for (uint64_t y = 0; y < m[2]; ++y)
                for (uint64_t x = 0; x < m[3]; ++x) {
                    uint8_t *cell = &rebuilt[(m[0] + y) * COLS + m[1] + x];
                    const uint8_t v = all[displs[i] + y * m[3] + x];
                    if (*cell != 0xFF && *cell != v) ok = 0; /* replicas disagree */
                    *cell = v;
                }
        }
        ok = ok && memcmp(rebuilt, expected, sizeof rebuilt) == 0;
        free(all), free(counts), free(displs), free(all_meta);
    }
    return ok;
}

static int check_replicas(struct layout L) {
    rngtrk_tracker *t;
    TRY(rngtrk_tracker_new(&t));
    const rngtrk_parallel_rank r = coords_of(world_rank, L);
    TRY(rngtrk_tracker_seed_rank(t, RNGTRK_POLICY_MEGATRON, kSeed, &r, 0));
    /* Some identical work on every rank, as a training step would do. */
    TRY(rngtrk_tracker_fork(t, "model-parallel-rng"));
    TRY(rngtrk_tracker_advance(t, 4096, NULL));
    TRY(rngtrk_tracker_restore(t, "model-parallel-rng"));
    uint64_t digest, *all = malloc(sizeof(uint64_t) * (size_t)world_size);
    TRY(rngtrk_tracker_digest(t, &digest));
    MPI_Allgather(&digest, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    int ok = 1;
    for (int i = 0; i < world_size; ++i) {
        const rngtrk_parallel_rank a = coords_of(i, L);
        for (int j = 0; j < world_size; ++j) {
            const rngtrk_parallel_rank b = coords_of(j, L);
            const int same_shard = a.tp == b.tp && a.pp == b.pp;
            if ((all[i] == all[j]) != same_shard) ok = 0;
        }
    }
    if (world_rank == 0)
        printf("  megatron seeds on %d ranks: dp replicas %s, tp shards %s (digests allgathered)\n", world_size,
               ok ? "identical" : "WRONG", ok ? "different" : "WRONG");
    free(all);
    rngtrk_tracker_free(t);
    return ok;
}

static int train(struct layout L, const char *dir) {
    int ok = check_replicas(L);
    rngtrk_tracker *t = replicated_tracker(), *reference = replicated_tracker();
    char file[4096];
    for (int k = 0; k < STEPS; ++k) {
        if (k == SAVE_AT) {
            path(file, sizeof file, dir, "invariant_rank", world_rank);
            save_file(t, file);
            /* The per-rank policy's tracker, for the wrong-rank check. */
            rngtrk_tracker *m;
            TRY(rngtrk_tracker_new(&m));
            const rngtrk_parallel_rank r = coords_of(world_rank, L);
            TRY(rngtrk_tracker_seed_rank(m, RNGTRK_POLICY_MEGATRON, kSeed, &r, 0));
            path(file, sizeof file, dir, "megatron_rank", world_rank);
            save_file(m, file);
            rngtrk_tracker_free(m);
        }
        uint64_t start[2], local[2];
        uint8_t box[ROWS * COLS], whole[ROWS * COLS];
        step_box(t, L, start, local, box);
        step_whole(reference, whole);
        const int same = gather_and_compare(start, local, box, whole);
        if (world_rank == 0) printf("  step %d: %dx%d mask from %d shards %s the unsharded mask\n", k, ROWS, COLS,
                                    world_size, same ? "equals" : "DIFFERS FROM");
        ok = ok && same;
    }
    uint64_t digest, *all = malloc(sizeof(uint64_t) * (size_t)world_size);
    TRY(rngtrk_tracker_digest(t, &digest));
    MPI_Allgather(&digest, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    int in_sync = 1;
    for (int i = 0; i < world_size; ++i) in_sync = in_sync && all[i] == all[0];
    if (world_rank == 0) printf("  after %d steps every tracker is %s (digest %016llx)\n", STEPS,
                                in_sync ? "identical" : "NOT identical", (unsigned long long)all[0]);
    free(all);
    rngtrk_tracker_free(t);
    rngtrk_tracker_free(reference);
    return ok && in_sync;
}

static int resume(struct layout L, const char *dir) {
    char file[4096];
    size_t len;
    /* Sharding-invariant: any old rank's checkpoint is every rank's. */
    path(file, sizeof file, dir, "invariant_rank", world_rank % 2);
    uint8_t *bytes = read_file(file, &len);
    rngtrk_tracker *t;
    TRY(rngtrk_tracker_new(&t));
    TRY(rngtrk_tracker_load(t, bytes, len));
    free(bytes);
    /* The uninterrupted single-process run, from scratch. */
    rngtrk_tracker *reference = replicated_tracker();
    uint8_t whole[ROWS * COLS];
    for (int k = 0; k < SAVE_AT; ++k) step_whole(reference, whole);
    int ok = 1;
    for (int k = SAVE_AT; k < STEPS; ++k) {
        uint64_t start[2], local[2];
        uint8_t box[ROWS * COLS];
        step_box(t, L, start, local, box);
        step_whole(reference, whole);
        const int same = gather_and_compare(start, local, box, whole);
        if (world_rank == 0)
            printf("  step %d on tp=%u dp=%u pp=%u: resumed mask %s the uninterrupted run\n", k, L.tp, L.dp, L.pp,
                   same ? "equals" : "DIFFERS FROM");
        ok = ok && same;
    }
    /* Per-rank policy: take the old rank with my index's megatron checkpoint. */
    rngtrk_tracker *m;
    TRY(rngtrk_tracker_new(&m));
    const rngtrk_parallel_rank mine = coords_of(world_rank, L);
    TRY(rngtrk_tracker_seed_rank(m, RNGTRK_POLICY_MEGATRON, kSeed, &mine, 0));
    path(file, sizeof file, dir, "megatron_rank", world_rank);
    bytes = read_file(file, &len);
    const rngtrk_status st = rngtrk_tracker_load(m, bytes, len);
    /* The old layout was tp=2 dp=2 pp=2: old rank R had tp R%2, pp R/4. */
    const int same_streams = (uint32_t)(world_rank % 2) == mine.tp && (uint32_t)(world_rank / 4) == mine.pp;
    const int expected = same_streams ? st == RNGTRK_OK : st == RNGTRK_E_WRONG_RANK;
    const rngtrk_status forced = rngtrk_tracker_load_flags(m, bytes, len, RNGTRK_LOAD_ANY_RANK);
    free(bytes);
    int verdict[3] = {st == RNGTRK_OK, expected, forced == RNGTRK_OK}, *all = malloc(3 * sizeof(int) * (size_t)world_size);
    MPI_Gather(verdict, 3, MPI_INT, all, 3, MPI_INT, 0, MPI_COMM_WORLD);
    if (world_rank == 0) {
        for (int i = 0; i < world_size; ++i) {
            printf("  rank %d loads old rank %d's megatron checkpoint: %s%s; with RNGTRK_LOAD_ANY_RANK: %s\n", i, i,
                   all[3 * i] ? "accepted (same streams)" : "refused, wrong rank", all[3 * i + 1] ? "" : " (UNEXPECTED)",
                   all[3 * i + 2] ? "taken" : "FAILED");
            ok = ok && all[3 * i + 1] && all[3 * i + 2];
        }
    }
    free(all);
    rngtrk_tracker_free(m);
    rngtrk_tracker_free(t);
    rngtrk_tracker_free(reference);
    return ok;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    struct layout L = {1, 1, 1};
    const char *dir = ".", *mode = argc > 1 ? argv[1] : "";
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--tp") == 0) L.tp = (uint32_t)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--pp") == 0) L.pp = (uint32_t)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--dp") == 0) L.dp = (uint32_t)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--dir") == 0) dir = argv[i + 1];
    }
    if ((int)(L.tp * L.pp * L.dp) != world_size || (strcmp(mode, "train") != 0 && strcmp(mode, "resume") != 0)) {
        if (world_rank == 0) fprintf(stderr, "usage: mpirun -np N mpi_training train|resume --tp A --pp B --dp C --dir D (A*B*C = N)\n");
        MPI_Finalize();
        return 2;
    }
    if (world_rank == 0) printf("rngtrk %s on %d MPI ranks (tp=%u pp=%u dp=%u): %s\n", rngtrk_version_string(), world_size,
                                L.tp, L.pp, L.dp, mode);
    int ok = strcmp(mode, "train") == 0 ? train(L, dir) : resume(L, dir);
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (world_rank == 0) printf("%s: %s\n", all_ok ? "OK" : "FAILED", mode);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
