/* SPDX-License-Identifier: Apache-2.0 */
/* rngtrk sample: sampled values, one per line, streamed in bounded memory. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "cli.h"

/* The parameters each distribution takes (the command offers the
 * distributions it has options for: the first KNOWN_DISTS). */
enum { KNOWN_DISTS = 4 };
static const char *const kParams[KNOWN_DISTS][2] = {
    {NULL, NULL}, {"--low", "--high"}, {"--mean", "--std"}, {"--p", NULL}};

/* The names of layouts, distributions and dtypes are the library's
 * (numbered from 0 without gaps): a choice's index is the value. */
enum { MAX_KIND = 16 };
static const char *layouts[MAX_KIND], *dists[MAX_KIND], *dtypes[MAX_KIND];
static int nlayouts, ndists, ndtypes;

static void list_kinds(void) {
    while (nlayouts < MAX_KIND && (layouts[nlayouts] = rngtrk_layout_name((rngtrk_layout)nlayouts)) != NULL)
        ++nlayouts;
    while (ndists < KNOWN_DISTS && (dists[ndists] = rngtrk_distribution_name((rngtrk_distribution)ndists)) != NULL)
        ++ndists;
    while (ndtypes < MAX_KIND && (dtypes[ndtypes] = rngtrk_dtype_name((rngtrk_dtype)ndtypes)) != NULL) ++ndtypes;
}

/* Whether the library makes `dtype` for `dist` (it refuses a spec otherwise). */
static int makes(int dist, int dtype) {
    rngtrk_sample_spec spec;
    return RNGTRK_SAMPLE_SPEC_INIT(&spec, RNGTRK_LAYOUT_STATELESS, (rngtrk_distribution)dist, (rngtrk_dtype)dtype) ==
           RNGTRK_OK;
}

/* The dtype when --dtype is not given: f32 where the distribution makes it,
 * else the first it makes. */
static int default_dtype(int dist) {
    if (makes(dist, RNGTRK_DTYPE_F32)) return RNGTRK_DTYPE_F32;
    for (int t = 0; t < ndtypes; ++t)
        if (makes(dist, t)) return t;
    return RNGTRK_DTYPE_F32;
}

enum { CHUNK = 1 << 16 }; /* elements per library call: bounded memory for any --count */

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

static void print_value(const unsigned char *p, int dtype, size_t width, int raw) {
    uint64_t v = 0;
    memcpy(&v, p, width); /* little-endian host */
    if (raw) {
        printf("%0*" PRIx64 "\n", (int)(2 * width), v);
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

static int refuse_dtype(int dist, int dtype) {
    char list[128] = ""; /* the default first, as the usage text lists them */
    const int first = default_dtype(dist);
    snprintf(list, sizeof list, "%s", dtypes[first]);
    for (int t = 0; t < ndtypes; ++t)
        if (t != first && makes(dist, t)) snprintf(list + strlen(list), sizeof list - strlen(list), ", %s", dtypes[t]);
    return usage_error("sample", "--dist %s makes --dtype %s, not %s", dists[dist], list, dtypes[dtype]);
}

/* A library refusal: the arguments (exit 2), or anything else (exit 1). */
static int library_failure(rngtrk_status st) {
    char message[512];
    library_message(st, message, sizeof message);
    return st == RNGTRK_E_INVALID_ARGUMENT || st == RNGTRK_E_OVERFLOW ? usage_error("sample", "%s", message)
                                                                      : data_error("sample", "%s", message);
}

static int sample(int argc, char **argv) {
    int layout = RNGTRK_LAYOUT_STATELESS, dist = RNGTRK_DIST_UNIFORM, dtype = -1, raw = 0;
    uint64_t seed = 0, offset = 0, first = 0, count = 0, numel = 0;
    uint32_t sm = 0, threads = 0;
    double low = 0, high = 1, mean = 0, sd = 1, p = 0.5;
    list_kinds();
    struct option opts[] = {
        {"--layout", OPT_CHOICE, &layout, layouts, nlayouts, 0},
        {"--dist", OPT_CHOICE, &dist, dists, ndists, 0},
        {"--dtype", OPT_CHOICE, &dtype, dtypes, ndtypes, 0},
        {"--seed", OPT_U64, &seed, NULL, 0, 0},
        {"--offset", OPT_U64, &offset, NULL, 0, 0},
        {"--first", OPT_U64, &first, NULL, 0, 0},
        {"--count", OPT_U64, &count, NULL, 0, 0},
        {"--low", OPT_DOUBLE, &low, NULL, 0, 0},
        {"--high", OPT_DOUBLE, &high, NULL, 0, 0},
        {"--mean", OPT_DOUBLE, &mean, NULL, 0, 0},
        {"--std", OPT_DOUBLE, &sd, NULL, 0, 0},
        {"--p", OPT_DOUBLE, &p, NULL, 0, 0},
        {"--sm-count", OPT_U32_POS, &sm, NULL, 0, 0},
        {"--max-threads-per-sm", OPT_U32_POS, &threads, NULL, 0, 0},
        {"--numel", OPT_U64, &numel, NULL, 0, 0},
        {"--bits", OPT_FLAG, &raw, NULL, 0, 0},
    };
    const size_t n = sizeof opts / sizeof opts[0];
    if (parse_options("sample", opts, n, argc, argv) != 0) return EXIT_USAGE;
    if (!option_named(opts, n, "--seed")->given || !option_named(opts, n, "--count")->given)
        return usage_error("sample", "needs --seed and --count (see rngtrk help sample)");
    if (dtype < 0) dtype = default_dtype(dist);
    if (!makes(dist, dtype)) return refuse_dtype(dist, dtype);
    /* A parameter of another distribution is a mistake, as in Python. */
    static const char *const all_params[] = {"--low", "--high", "--mean", "--std", "--p"};
    for (size_t i = 0; i < 5; ++i) {
        const char *name = all_params[i];
        const int mine = (kParams[dist][0] && strcmp(kParams[dist][0], name) == 0) ||
                         (kParams[dist][1] && strcmp(kParams[dist][1], name) == 0);
        if (option_named(opts, n, name)->given && !mine)
            return usage_error("sample", "%s does not apply to --dist %s", name, dists[dist]);
    }
    if (offset % 4 != 0)
        return usage_error("sample", "--offset must be a multiple of 4 (offsets count 32-bit outputs, 4 per block)");
    if (count > UINT64_MAX - first) return usage_error("sample", "--first + --count must stay below 2^64");
    if (numel != 0 && numel < first + count)
        return usage_error("sample", "--numel %" PRIu64 " is smaller than --first + --count (%" PRIu64 ")", numel,
                           first + count);

    rngtrk_sample_spec spec;
    rngtrk_status st = RNGTRK_SAMPLE_SPEC_INIT(&spec, (rngtrk_layout)layout, (rngtrk_distribution)dist,
                                               (rngtrk_dtype)dtype);
    if (st != RNGTRK_OK) return library_failure(st);
    if (dist == RNGTRK_DIST_UNIFORM) spec.param_a = low, spec.param_b = high;
    if (dist == RNGTRK_DIST_NORMAL) spec.param_a = mean, spec.param_b = sd;
    if (dist == RNGTRK_DIST_BERNOULLI) spec.param_a = p;
    if (sm) spec.sm_count = sm;
    if (threads) spec.max_threads_per_sm = threads;
    /* The whole request is one tensor, drawn in chunks: every chunk sees the
     * tensor's size, so the values equal one call's. */
    spec.numel = numel ? numel : first + count;
    const rngtrk_philox_state state = {seed, offset};
    static unsigned char buf[CHUNK * 8];
    /* Check the whole request before printing anything (bad parameters, numel). */
    st = rngtrk_sample(&state, &spec, first, count < CHUNK ? count : CHUNK, buf, sizeof buf);
    if (st != RNGTRK_OK) return library_failure(st);
    for (uint64_t done = 0; done < count;) {
        const uint64_t part = count - done < CHUNK ? count - done : CHUNK;
        if (done > 0 && (st = rngtrk_sample(&state, &spec, first + done, part, buf, sizeof buf)) != RNGTRK_OK)
            return library_failure(st);
        const size_t width = rngtrk_dtype_size((rngtrk_dtype)dtype);
        for (uint64_t i = 0; i < part; ++i) print_value(buf + i * width, dtype, width, raw);
        if (ferror(stdout)) return data_error("sample", "cannot write the output");
        done += part;
    }
    return fflush(stdout) != 0 ? data_error("sample", "cannot write the output") : 0;
}

const struct command cmd_sample = {"sample", "print sampled values, one per line",
/* tools/cli/sample_usage.txt, made a C string by the Makefile. */
#include "sample_usage.inc"
                                  ,
                                  sample};
