/*
 * rngtrk — the command-line tool.  Uses only the public C API.
 *
 *   rngtrk inspect FILE   print a checkpoint as one line of canonical JSON
 *   rngtrk sample ...     print sampled values, one per line (see usage())
 *   rngtrk seeds ...      every rank's seeds under a policy; --check finds collisions
 *   rngtrk dtensor-offsets ...  PyTorch DTensor's RNG offsets for one rank
 *   rngtrk version        print the library's version
 *
 * Canonical JSON is what Python's json.dumps(obj, ensure_ascii=False) gives:
 * {"format_version": N, "default": {"seed": S, "offset": O},
 *  "states": [{"name": "...", "seed": S, "offset": O}, ...]}
 * keys in that order, states in stored order.  Every binding prints the same.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rngtrk.h"

/* Header fields needed before reading the whole file (docs/checkpoint-format.md). */
#define HEADER_PREFIX_BYTES 20 /* magic 8, format_version 4, total_length 8 */

static int usage(FILE *to) {
    fprintf(to,
            "usage: rngtrk inspect FILE   print a checkpoint as canonical JSON\n"
            "       rngtrk sample --layout stateless|nvfuser|torch-eager-cuda\n"
            "                     --dist bits|uniform|normal|bernoulli --dtype u8|u32|u64|f16|bf16|f32|f64\n"
            "                     --seed S --offset O [--first F] --count N\n"
            "                     [--low A --high B | --mean M --std S | --p P]\n"
            "                     [--sm-count C --max-threads-per-sm K] [--numel N] [--bits]\n"
            "                     print one value per line (--bits: raw bits in hex)\n"
            "       rngtrk seeds --policy megatron|slapo|derived --seed S --tp A --pp B --dp C\n"
            "                    [--ep D --etp E] [--dp-random-init] [--always-enable-tp-seed] [--check]\n"
            "                     every rank's seeds; --check reports collisions (exit 1 if any)\n"
            "       rngtrk dtensor-offsets --mesh 2x4 --coord 1,3 --placements S0,R --shape 8,16\n"
            "                    [--offset O] [--rule torch|exact]\n"
            "                     PyTorch DTensor's pre-op and post-op RNG offsets\n"
            "       rngtrk version        print the library version\n");
    return to == stderr ? 2 : 0;
}

static uint64_t le_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

static uint32_t le_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Writes `s` as a JSON string the way Python's json.dumps(ensure_ascii=False) does. */
static void print_json_string(const char *s) {
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
        switch (*p) {
            case '"': fputs("\\\"", stdout); break;
            case '\\': fputs("\\\\", stdout); break;
            case '\n': fputs("\\n", stdout); break;
            case '\r': fputs("\\r", stdout); break;
            case '\t': fputs("\\t", stdout); break;
            case '\b': fputs("\\b", stdout); break;
            case '\f': fputs("\\f", stdout); break;
            default:
                if (*p < 0x20) printf("\\u%04x", *p);
                else putchar(*p);
        }
    }
    putchar('"');
}

static int fail_with(const char *path, const char *what) {
    fprintf(stderr, "rngtrk: %s: %s\n", path, what);
    return 1;
}

/* Reads the checkpoint at `path` into a malloc'd buffer.  The header is read
 * first, so a file that is not a checkpoint, or whose declared length does
 * not match its size, is refused without reading (or allocating) the rest. */
static int read_checkpoint(const char *path, unsigned char **out, size_t *out_len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return fail_with(path, strerror(errno));
    unsigned char head[HEADER_PREFIX_BYTES];
    const size_t got = fread(head, 1, sizeof head, f);
    if (got < sizeof head || memcmp(head, "RNGTRKCK", 8) != 0) {
        fclose(f);
        return fail_with(path, got < 8 || memcmp(head, "RNGTRKCK", 8) != 0
                                   ? "not an rngtrk checkpoint (bad magic)"
                                   : "truncated checkpoint header");
    }
    if (le_u32(head + 8) != 1 && le_u32(head + 8) != 2) {
        fclose(f);
        return fail_with(path, "unsupported checkpoint format version");
    }
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return fail_with(path, "cannot seek (not a regular file?)");
    }
    const long size = ftell(f);
    const uint64_t declared = le_u64(head + 12);
    if (size < 0 || (uint64_t)size != declared) {
        fclose(f);
        return fail_with(path, (uint64_t)size < declared ? "truncated checkpoint"
                                                         : "trailing bytes after the checkpoint");
    }
    unsigned char *buf = malloc((size_t)size);
    if (buf == NULL) {
        fclose(f);
        return fail_with(path, "out of memory");
    }
    rewind(f);
    if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        fclose(f);
        return fail_with(path, "read error");
    }
    fclose(f);
    *out = buf;
    *out_len = (size_t)size;
    return 0;
}

static int library_failure(const char *path, rngtrk_status status) {
    fprintf(stderr, "rngtrk: %s: %s: %s\n", path, rngtrk_status_string(status), rngtrk_last_error());
    return 1;
}

static int inspect(const char *path) {
    unsigned char *bytes = NULL;
    size_t len = 0;
    if (read_checkpoint(path, &bytes, &len) != 0) return 1;
    const uint32_t version = le_u32(bytes + 8); /* checked by read_checkpoint */
    rngtrk_tracker *t = NULL;
    rngtrk_status st = rngtrk_tracker_new(&t);
    if (st == RNGTRK_OK) st = rngtrk_tracker_load(t, bytes, len);
    free(bytes);
    if (st != RNGTRK_OK) {
        rngtrk_tracker_free(t);
        return library_failure(path, st);
    }
    rngtrk_philox_state d;
    size_t count = 0;
    rngtrk_tracker_get_default(t, &d);
    rngtrk_tracker_count(t, &count);
    printf("{\"format_version\": %u, \"default\": {\"seed\": %" PRIu64 ", \"offset\": %" PRIu64
           "}, \"states\": [",
           (unsigned)version, d.seed, d.offset);
    for (size_t i = 0; i < count; ++i) {
        const char *name = NULL;
        rngtrk_philox_state s;
        rngtrk_tracker_name_at(t, i, &name);
        rngtrk_tracker_get_state(t, name, &s);
        printf("%s{\"name\": ", i ? ", " : "");
        print_json_string(name);
        printf(", \"seed\": %" PRIu64 ", \"offset\": %" PRIu64 "}", s.seed, s.offset);
    }
    printf("]}\n");
    rngtrk_tracker_free(t);
    return ferror(stdout) ? 1 : 0;
}


/* ---- rngtrk sample ------------------------------------------------------- */

static int lookup(const char *value, const char *const *names, int n) {
    for (int i = 0; i < n; ++i)
        if (strcmp(value, names[i]) == 0) return i;
    return -1;
}

static int parse_u64(const char *text, uint64_t *out) {
    char *end = NULL;
    if (text[0] < '0' || text[0] > '9') return -1;
    errno = 0;
    *out = strtoull(text, &end, 10);
    return errno == 0 && *end == '\0' ? 0 : -1;
}

static int parse_double(const char *text, double *out) {
    char *end = NULL;
    errno = 0;
    *out = strtod(text, &end);
    return errno == 0 && end != text && *end == '\0' ? 0 : -1;
}

static int bad_option(const char *what, const char *value) {
    fprintf(stderr, "rngtrk sample: %s%s%s\n", what, value ? ": " : "", value ? value : "");
    return 2;
}

/* The f16 / bf16 bits as the float they denote (exact). */
static float f16_value(uint16_t h) {
    const int e = (h >> 10) & 0x1F, m = h & 0x3FF;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 0x400), e - 25);
    return (h & 0x8000) ? -v : v;
}

static float bf16_value(uint16_t h) {
    const uint32_t bits = (uint32_t)h << 16;
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static void print_value(const unsigned char *p, int dtype, int raw) {
    uint64_t v = 0;
    static const int widths[] = {1, 4, 8, 2, 2, 4, 8};
    memcpy(&v, p, (size_t)widths[dtype]); /* little-endian host */
    if (raw) {
        printf("%0*" PRIx64 "\n", 2 * widths[dtype], v);
        return;
    }
    switch (dtype) {
        case RNGTRK_DTYPE_F16: printf("%.9g\n", (double)f16_value((uint16_t)v)); break;
        case RNGTRK_DTYPE_BF16: printf("%.9g\n", (double)bf16_value((uint16_t)v)); break;
        case RNGTRK_DTYPE_F32: {
            float f;
            memcpy(&f, p, 4);
            printf("%.9g\n", (double)f);
            break;
        }
        case RNGTRK_DTYPE_F64: {
            double d;
            memcpy(&d, p, 8);
            printf("%.17g\n", d);
            break;
        }
        default: printf("%" PRIu64 "\n", v);
    }
}

static int sample(int argc, char **argv) {
    static const char *const layouts[] = {"stateless", "nvfuser", "torch-eager-cuda"};
    static const char *const dists[] = {"bits", "uniform", "normal", "bernoulli"};
    static const char *const dtypes[] = {"u8", "u32", "u64", "f16", "bf16", "f32", "f64"};
    int layout = -1, dist = -1, dtype = -1, raw = 0, have_seed = 0, have_offset = 0, have_count = 0;
    uint64_t seed = 0, offset = 0, first = 0, count = 0, numel = 0, sm = 0, threads = 0;
    double low = NAN, high = NAN, mean = NAN, sd = NAN, p = NAN;
    for (int i = 0; i < argc; ++i) {
        const char *opt = argv[i];
        if (strcmp(opt, "--bits") == 0) {
            raw = 1;
            continue;
        }
        if (i + 1 >= argc) return bad_option("missing value after", opt);
        const char *val = argv[++i];
        int bad = 0;
        if (strcmp(opt, "--layout") == 0) bad = (layout = lookup(val, layouts, 3)) < 0;
        else if (strcmp(opt, "--dist") == 0) bad = (dist = lookup(val, dists, 4)) < 0;
        else if (strcmp(opt, "--dtype") == 0) bad = (dtype = lookup(val, dtypes, 7)) < 0;
        else if (strcmp(opt, "--seed") == 0) bad = parse_u64(val, &seed), have_seed = 1;
        else if (strcmp(opt, "--offset") == 0) bad = parse_u64(val, &offset), have_offset = 1;
        else if (strcmp(opt, "--first") == 0) bad = parse_u64(val, &first);
        else if (strcmp(opt, "--count") == 0) bad = parse_u64(val, &count), have_count = 1;
        else if (strcmp(opt, "--numel") == 0) bad = parse_u64(val, &numel);
        else if (strcmp(opt, "--sm-count") == 0) bad = parse_u64(val, &sm) || sm == 0 || sm > UINT32_MAX;
        else if (strcmp(opt, "--max-threads-per-sm") == 0)
            bad = parse_u64(val, &threads) || threads == 0 || threads > UINT32_MAX;
        else if (strcmp(opt, "--low") == 0) bad = parse_double(val, &low);
        else if (strcmp(opt, "--high") == 0) bad = parse_double(val, &high);
        else if (strcmp(opt, "--mean") == 0) bad = parse_double(val, &mean);
        else if (strcmp(opt, "--std") == 0) bad = parse_double(val, &sd);
        else if (strcmp(opt, "--p") == 0) bad = parse_double(val, &p);
        else return bad_option("unknown option", opt);
        if (bad) return bad_option(opt + 2, val);
    }
    if (layout < 0 || dist < 0 || dtype < 0 || !have_seed || !have_offset || !have_count)
        return bad_option("--layout, --dist, --dtype, --seed, --offset and --count are required", NULL);
    rngtrk_sample_spec spec;
    rngtrk_status st = rngtrk_sample_spec_init(&spec, (rngtrk_layout)layout, (rngtrk_distribution)dist,
                                               (rngtrk_dtype)dtype);
    if (st != RNGTRK_OK) return library_failure("sample", st);
    if (dist == RNGTRK_DIST_UNIFORM) {
        if (!isnan(low)) spec.param_a = low;
        if (!isnan(high)) spec.param_b = high;
    } else if (dist == RNGTRK_DIST_NORMAL) {
        if (!isnan(mean)) spec.param_a = mean;
        if (!isnan(sd)) spec.param_b = sd;
    } else if (dist == RNGTRK_DIST_BERNOULLI && !isnan(p)) {
        spec.param_a = p;
    }
    if (sm) spec.sm_count = (uint32_t)sm;
    if (threads) spec.max_threads_per_sm = (uint32_t)threads;
    spec.numel = numel;
    static const size_t widths[] = {1, 4, 8, 2, 2, 4, 8};
    if (count > SIZE_MAX / widths[dtype]) return bad_option("--count is too large", NULL);
    unsigned char *out = malloc(count ? (size_t)count * widths[dtype] : 1);
    if (out == NULL) return bad_option("out of memory", NULL);
    const rngtrk_philox_state state = {seed, offset};
    st = rngtrk_sample(&state, &spec, first, count, out, (size_t)count * widths[dtype]);
    if (st != RNGTRK_OK) {
        free(out);
        return library_failure("sample", st);
    }
    for (uint64_t i = 0; i < count; ++i) print_value(out + i * widths[dtype], dtype, raw);
    free(out);
    return ferror(stdout) ? 1 : 0;
}

/* ---- rngtrk seeds ---------------------------------------------------------- */

/* One (rank, name) seed and what it is meant to depend on: entries with
 * equal seeds but different identities collide. */
struct seed_entry {
    uint64_t seed;
    uint64_t rank;
    const char *name;
    int64_t identity[6]; /* role, pp, dp, tp, ep, etp (-1: not a dependency) */
};

static int cmp_entry(const void *a, const void *b) {
    const struct seed_entry *x = a, *y = b;
    return x->seed < y->seed ? -1 : x->seed > y->seed ? 1 : x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int parse_u32(const char *text, uint32_t *out) {
    uint64_t v;
    if (parse_u64(text, &v) != 0 || v > UINT32_MAX) return -1;
    *out = (uint32_t)v;
    return 0;
}

static int seeds(int argc, char **argv) {
    static const char *const policies[] = {"megatron", "slapo", "derived"};
    int policy = -1, check = 0, have_seed = 0;
    uint32_t flags = 0, TP = 0, PP = 0, DP = 0, EP = 1, ETP = 1;
    uint64_t seed = 0;
    for (int i = 0; i < argc; ++i) {
        const char *opt = argv[i];
        if (strcmp(opt, "--check") == 0) { check = 1; continue; }
        if (strcmp(opt, "--dp-random-init") == 0) { flags |= RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT; continue; }
        if (strcmp(opt, "--always-enable-tp-seed") == 0) { flags |= RNGTRK_SEED_ALWAYS_ENABLE_TP_SEED; continue; }
        if (i + 1 >= argc) return bad_option("missing value after", opt);
        const char *val = argv[++i];
        int bad = 0;
        if (strcmp(opt, "--policy") == 0) bad = (policy = lookup(val, policies, 3)) < 0;
        else if (strcmp(opt, "--seed") == 0) bad = parse_u64(val, &seed), have_seed = 1;
        else if (strcmp(opt, "--tp") == 0) bad = parse_u32(val, &TP) || TP == 0;
        else if (strcmp(opt, "--pp") == 0) bad = parse_u32(val, &PP) || PP == 0;
        else if (strcmp(opt, "--dp") == 0) bad = parse_u32(val, &DP) || DP == 0;
        else if (strcmp(opt, "--ep") == 0) bad = parse_u32(val, &EP) || EP == 0;
        else if (strcmp(opt, "--etp") == 0) bad = parse_u32(val, &ETP) || ETP == 0;
        else return bad_option("unknown option", opt);
        if (bad) return bad_option(opt + 2, val);
    }
    if (policy < 0 || !have_seed || !TP || !PP || !DP)
        return bad_option("--policy, --seed, --tp, --pp and --dp are required", NULL);
    /* The expert layout splits each pipeline stage's tp x dp ranks as
     * etp (fastest) x ep x the rest, as Megatron-LM's expert groups do. */
    if (((uint64_t)TP * DP) % ((uint64_t)EP * ETP) != 0)
        return bad_option("ep * etp must divide tp * dp", NULL);
    const uint64_t world = (uint64_t)TP * PP * DP;
    if (world > 1000000) return bad_option("more than a million ranks", NULL);
    struct seed_entry *entries = malloc((size_t)world * 4 * sizeof *entries);
    rngtrk_tracker *t = NULL;
    if (entries == NULL || rngtrk_tracker_new(&t) != RNGTRK_OK) return bad_option("out of memory", NULL);
    size_t n = 0;
    const int dp_dep = policy == RNGTRK_POLICY_SLAPO || (flags & RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT);
    for (uint64_t rank = 0; rank < world; ++rank) {
        /* Megatron's order: tp fastest, then dp, then pp. */
        const uint32_t tp = (uint32_t)(rank % TP), dp = (uint32_t)(rank / TP % DP), pp = (uint32_t)(rank / TP / DP);
        const uint64_t in_stage = rank % ((uint64_t)TP * DP);
        const rngtrk_parallel_rank r = {tp, pp, dp, (uint32_t)(in_stage / ETP % EP), (uint32_t)(in_stage % ETP)};
        rngtrk_status st = rngtrk_tracker_seed_rank(t, (rngtrk_seed_policy)policy, seed, &r, flags);
        if (st == RNGTRK_E_DUPLICATE_SEED) {
            /* Two of this rank's own states would share a seed. */
            printf("rank=%" PRIu64 " tp=%u pp=%u dp=%u ep=%u etp=%u: %s\n", rank, r.tp, r.pp, r.dp, r.ep, r.etp,
                   rngtrk_last_error());
            if (check) printf("collision: rank=%" PRIu64 ": %s\n", rank, rngtrk_last_error());
            free(entries);
            rngtrk_tracker_free(t);
            return 1;
        }
        if (st != RNGTRK_OK) {
            free(entries);
            rngtrk_tracker_free(t);
            return library_failure("seeds", st);
        }
        rngtrk_philox_state d;
        size_t count = 0;
        rngtrk_tracker_get_default(t, &d);
        rngtrk_tracker_count(t, &count);
        printf("rank=%" PRIu64 " tp=%u pp=%u dp=%u ep=%u etp=%u default=%" PRIu64, rank, r.tp, r.pp, r.dp, r.ep, r.etp,
               d.seed);
        const int tp_default = policy == RNGTRK_POLICY_SLAPO && (flags & RNGTRK_SEED_ALWAYS_ENABLE_TP_SEED);
        const int64_t dp_id = dp_dep ? (int64_t)r.dp : -1;
        struct seed_entry e = {d.seed, rank, "default", {0, r.pp, dp_id, tp_default ? (int64_t)r.tp : -1, -1, -1}};
        if (tp_default) e.identity[0] = 1;
        entries[n++] = e;
        for (size_t i = 0; i < count; ++i) {
            const char *name;
            rngtrk_philox_state s;
            rngtrk_tracker_name_at(t, i, &name);
            rngtrk_tracker_get_state(t, name, &s);
            printf(" %s=%" PRIu64, name, s.seed);
            struct seed_entry x = {s.seed, rank, "", {0, r.pp, dp_id, -1, -1, -1}};
            if (strcmp(name, "model-parallel-rng") == 0) {
                x.name = "model-parallel-rng", x.identity[0] = 1, x.identity[3] = r.tp;
            } else if (strcmp(name, "expert-parallel-rng") == 0) {
                x.name = "expert-parallel-rng", x.identity[0] = 2, x.identity[4] = r.ep, x.identity[5] = r.etp;
            } else {
                x.name = "data-parallel-rng"; /* the default's stream by design */
            }
            entries[n++] = x;
        }
        printf("\n");
    }
    int collisions = 0;
    if (check) {
        qsort(entries, n, sizeof *entries, cmp_entry);
        for (size_t i = 0; i < n;) {
            size_t j = i;
            while (j < n && entries[j].seed == entries[i].seed) ++j;
            /* The first entry of each distinct identity in this seed's group. */
            size_t firsts[64];
            int distinct = 0;
            for (size_t a = i; a < j; ++a) {
                int seen = 0;
                for (int b = 0; b < distinct && !seen; ++b)
                    seen = memcmp(entries[a].identity, entries[firsts[b]].identity, sizeof entries[a].identity) == 0;
                if (!seen && distinct < 64) firsts[distinct++] = a;
            }
            if (distinct > 1) {
                printf("collision: seed=%" PRIu64 ":", entries[i].seed);
                for (int b = 0; b < distinct; ++b) printf(" rank=%" PRIu64 " %s", entries[firsts[b]].rank, entries[firsts[b]].name);
                printf("\n");
                ++collisions;
            }
            i = j;
        }
        printf("%d collision%s\n", collisions, collisions == 1 ? "" : "s");
    }
    free(entries);
    rngtrk_tracker_free(t);
    return collisions ? 1 : 0;
}

/* ---- rngtrk dtensor-offsets ------------------------------------------------- */

/* Parses "a<sep>b<sep>c" into up to 16 unsigned integers. */
static int parse_list(const char *text, char sep, uint64_t *out, size_t *n) {
    *n = 0;
    const char *p = text;
    while (*n < 16) {
        char buf[32];
        size_t len = 0;
        while (p[len] != '\0' && p[len] != sep && len < sizeof buf - 1) ++len;
        memcpy(buf, p, len);
        buf[len] = '\0';
        if (parse_u64(buf, &out[(*n)++]) != 0) return -1;
        if (p[len] == '\0') return 0;
        p += len + 1;
    }
    return -1;
}

static int dtensor_offsets(int argc, char **argv) {
    uint64_t mesh[16], coord[16], shape[16], offset = 0;
    size_t mesh_n = 0, coord_n = 0, shape_n = 0, pl_n = 0;
    rngtrk_placement placements[16];
    int rule = RNGTRK_OFFSET_RULE_TORCH, have_pl = 0;
    for (int i = 0; i < argc; ++i) {
        const char *opt = argv[i];
        if (i + 1 >= argc) return bad_option("missing value after", opt);
        const char *val = argv[++i];
        int bad = 0;
        if (strcmp(opt, "--mesh") == 0) bad = parse_list(val, 'x', mesh, &mesh_n);
        else if (strcmp(opt, "--coord") == 0) bad = parse_list(val, ',', coord, &coord_n);
        else if (strcmp(opt, "--shape") == 0) bad = parse_list(val, ',', shape, &shape_n);
        else if (strcmp(opt, "--offset") == 0) bad = parse_u64(val, &offset);
        else if (strcmp(opt, "--rule") == 0) bad = (rule = strcmp(val, "torch") == 0 ? 0 : strcmp(val, "exact") == 0 ? 1 : -1) < 0;
        else if (strcmp(opt, "--placements") == 0) {
            have_pl = 1;
            for (const char *p = val; *p && !bad; ++p) {
                if (pl_n == 16) { bad = 1; break; }
                if (*p == 'R' || *p == 'P') {
                    placements[pl_n++] = (rngtrk_placement){*p == 'R' ? RNGTRK_PLACEMENT_REPLICATE : RNGTRK_PLACEMENT_PARTIAL, 0};
                    ++p;
                } else if (*p == 'S' && p[1] >= '0' && p[1] <= '9') {
                    char *end;
                    placements[pl_n++] = (rngtrk_placement){RNGTRK_PLACEMENT_SHARD, (uint32_t)strtoul(p + 1, &end, 10)};
                    p = end;
                } else {
                    bad = 1;
                    break;
                }
                if (*p == '\0') break;
                if (*p != ',') bad = 1;
            }
        } else {
            return bad_option("unknown option", opt);
        }
        if (bad) return bad_option(opt + 2, val);
    }
    if (!mesh_n || !have_pl || !shape_n) return bad_option("--mesh, --coord, --placements and --shape are required", NULL);
    if (coord_n != mesh_n || pl_n != mesh_n)
        return bad_option("--coord and --placements need one entry per mesh dimension", NULL);
    uint64_t pre = 0, post = 0;
    const rngtrk_status st = rngtrk_dtensor_offsets(mesh_n, mesh, coord, placements, shape_n, shape, offset,
                                                    (rngtrk_offset_rule)rule, &pre, &post);
    if (st != RNGTRK_OK) return library_failure("dtensor-offsets", st);
    printf("pre=%" PRIu64 " post=%" PRIu64 "\n", pre, post);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "version") == 0) {
        printf("%s\n", rngtrk_version_string());
        return 0;
    }
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
        return usage(stdout);
    if (argc == 3 && strcmp(argv[1], "inspect") == 0) return inspect(argv[2]);
    if (argc >= 2 && strcmp(argv[1], "sample") == 0) return sample(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "seeds") == 0) return seeds(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "dtensor-offsets") == 0) return dtensor_offsets(argc - 2, argv + 2);
    return usage(stderr);
}
