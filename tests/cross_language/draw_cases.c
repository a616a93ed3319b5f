/* SPDX-License-Identifier: Apache-2.0 */
/* The C driver of the cross-language draw test (tests/cross_language/run.py):
 * draws each case of a case file (the format: cases.py) through the public C
 * API and prints one result line per case.  C99, the public header only.
 *
 *     draw_cases CASE_FILE
 *
 * Lines: "ok <hex>" (the output bytes as they lie in memory, "-" for none),
 * "error <status>", each followed by " offset=<n>" for tracker cases (the
 * named state's offset afterwards), or "unsupported <why>" for a case this
 * driver cannot read.  Exit status 0, or 2 for a missing or unreadable file. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rngtrk.h"

#define STATE_NAME "xlang-rng" /* as cases.py's STATE_NAME */
#define MAX_LINE 8192
#define MAX_TOKENS 32
#define MAX_DIMS 32

typedef struct {
    const char *key[MAX_TOKENS];
    const char *value[MAX_TOKENS];
    int n;
} case_t;

static const char *get(const case_t *c, const char *key) {
    int i;
    for (i = 0; i < c->n; ++i)
        if (strcmp(c->key[i], key) == 0) return c->value[i];
    return NULL;
}

/* Splits `line` (modified in place) into key=value tokens; 0 on success. */
static int split(char *line, case_t *c) {
    char *token = strtok(line, " \r\n");
    c->n = 0;
    for (; token != NULL; token = strtok(NULL, " \r\n")) {
        char *eq = strchr(token, '=');
        if (eq == NULL || c->n == MAX_TOKENS) return -1;
        *eq = '\0';
        c->key[c->n] = token;
        c->value[c->n] = eq + 1;
        c->n++;
    }
    return 0;
}

/* A decimal u64: 0 on success. */
static int parse_u64(const char *text, uint64_t *out) {
    char *end;
    unsigned long long v;
    if (text == NULL || *text < '0' || *text > '9') return -1;
    errno = 0;
    v = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0') return -1;
    *out = (uint64_t)v;
    return 0;
}

/* The u64 `key`, which must be there: 0 on success. */
static int need_u64(const case_t *c, const char *key, uint64_t *out) { return parse_u64(get(c, key), out); }

/* A comma-separated list of u64 (possibly empty): the count, or -1. */
static int parse_dims(const char *text, uint64_t *out) {
    char buffer[MAX_LINE];
    char *item;
    int n = 0;
    if (text == NULL || strlen(text) >= sizeof buffer) return -1;
    if (*text == '\0') return 0;
    strcpy(buffer, text);
    for (item = strtok(buffer, ","); item != NULL; item = strtok(NULL, ",")) {
        if (n == MAX_DIMS || parse_u64(item, &out[n]) != 0) return -1;
        n++;
    }
    return n;
}

/* A real written by Python's repr(): 0 on success. */
static int parse_real(const char *text, double *out) {
    char *end;
    if (text == NULL || *text == '\0') return -1;
    *out = strtod(text, &end);
    return *end == '\0' ? 0 : -1;
}

static void print_hex(const unsigned char *bytes, size_t n) {
    static const char digits[] = "0123456789abcdef";
    size_t i;
    if (n == 0) {
        putchar('-');
        return;
    }
    for (i = 0; i < n; ++i) {
        putchar(digits[bytes[i] >> 4]);
        putchar(digits[bytes[i] & 15]);
    }
}

/* Fills `spec` from the case (a dropout spec when `dropout`: over the
 * case's data dtype, or f32 for a tracker's rngtrk_tracker_dropout_f32);
 * returns the library's status, or 1 (with *why set) when the case cannot
 * be read. */
static int make_spec(const case_t *c, int dropout, int tracker, rngtrk_sample_spec *spec, const char **why) {
    static const char *const reals_a[] = {"low", "mean", "p"}, *const reals_b[] = {"high", "std"};
    rngtrk_layout layout;
    rngtrk_distribution dist;
    rngtrk_dtype dtype, data = RNGTRK_DTYPE_F32;
    rngtrk_status status;
    uint64_t whole;
    size_t i;
    /* Names through the library's own lookup (the case file holds its names). */
    if (get(c, "layout") == NULL || rngtrk_layout_from_name(get(c, "layout"), &layout) != RNGTRK_OK)
        return *why = "layout", 1;
    if (dropout) {
        dist = RNGTRK_DIST_BERNOULLI;
        dtype = RNGTRK_DTYPE_U8;
        if (!tracker && (get(c, "dtype") == NULL || rngtrk_dtype_from_name(get(c, "dtype"), &data) != RNGTRK_OK))
            return *why = "dtype", 1;
    } else if (get(c, "dist") == NULL || rngtrk_distribution_from_name(get(c, "dist"), &dist) != RNGTRK_OK ||
               get(c, "dtype") == NULL || rngtrk_dtype_from_name(get(c, "dtype"), &dtype) != RNGTRK_OK) {
        return *why = "dist or dtype", 1;
    }
    status = RNGTRK_SAMPLE_SPEC_INIT(spec, layout, dist, dtype);
    if (status != RNGTRK_OK) return status;
    if (dropout) spec->dtype = tracker ? RNGTRK_DTYPE_F32 : data; /* dropout: a bernoulli mask over the data */
    for (i = 0; i < sizeof reals_a / sizeof *reals_a; ++i)
        if (get(c, reals_a[i]) != NULL && parse_real(get(c, reals_a[i]), &spec->param_a) != 0)
            return *why = reals_a[i], 1;
    for (i = 0; i < sizeof reals_b / sizeof *reals_b; ++i)
        if (get(c, reals_b[i]) != NULL && parse_real(get(c, reals_b[i]), &spec->param_b) != 0)
            return *why = reals_b[i], 1;
    if (get(c, "sm_count") != NULL) {
        if (parse_u64(get(c, "sm_count"), &whole) != 0 || whole > UINT32_MAX) return *why = "sm_count", 1;
        spec->sm_count = (uint32_t)whole;
    }
    if (get(c, "max_threads_per_sm") != NULL) {
        if (parse_u64(get(c, "max_threads_per_sm"), &whole) != 0 || whole > UINT32_MAX)
            return *why = "max_threads_per_sm", 1;
        spec->max_threads_per_sm = (uint32_t)whole;
    }
    if (get(c, "numel") != NULL && parse_u64(get(c, "numel"), &spec->numel) != 0) return *why = "numel", 1;
    if (get(c, "threads") != NULL) {
        if (parse_u64(get(c, "threads"), &whole) != 0 || whole > UINT32_MAX) return *why = "threads", 1;
        spec->threads = (uint32_t)whole;
    }
    return RNGTRK_OK;
}

/* What one case made: its status (or 1: unreadable), bytes and the tracker offset. */
typedef struct {
    int status;
    const char *why;
    unsigned char *bytes;
    size_t n;
    int has_offset;
    uint64_t offset;
} result_t;

/* A parsed request: what every op needs but the spec.  dropout: dropout,
 * dslice, tdropout; slice: slice, dslice, tslice. */
typedef struct {
    int tracker, dropout, slice;
    rngtrk_philox_state state;
    uint64_t first, count, shape[MAX_DIMS], start[MAX_DIMS], box[MAX_DIMS];
    int ndim;
} request_t;

/* Reads everything but the spec from the case; 0 on success, else *why. */
static int read_request(const case_t *c, request_t *q, const char **why) {
    const char *op = get(c, "op");
    int d;
    memset(q, 0, sizeof *q);
    if (op == NULL) return *why = "op", -1;
    q->tracker = op[0] == 't';
    if (q->tracker) op++;
    q->dropout = strcmp(op, "dropout") == 0 || (!q->tracker && strcmp(op, "dslice") == 0);
    q->slice = strcmp(op, "slice") == 0 || (!q->tracker && strcmp(op, "dslice") == 0);
    if (!q->dropout && !q->slice && strcmp(op, "sample") != 0) return *why = "op", -1;
    if (need_u64(c, "seed", &q->state.seed) != 0 || need_u64(c, "offset", &q->state.offset) != 0)
        return *why = "seed or offset", -1;
    if (q->slice) {
        q->ndim = parse_dims(get(c, "shape"), q->shape);
        if (q->ndim < 0 || parse_dims(get(c, "start"), q->start) != q->ndim ||
            parse_dims(get(c, "box"), q->box) != q->ndim)
            return *why = "shape, start or box", -1;
        for (q->count = 1, d = 0; d < q->ndim; ++d) q->count *= q->box[d]; /* the cases' boxes are small */
    } else if ((!q->tracker && need_u64(c, "first", &q->first) != 0) || need_u64(c, "count", &q->count) != 0) {
        return *why = "first or count", -1;
    }
    return 0;
}

/* Element i of dropout's input, (i * 7) % 23 - 11, as `dtype` at `out`:
 * f32, or the f16 or bf16 bits of that small integer (exact). */
static void put_input(rngtrk_dtype dtype, uint64_t i, unsigned char *out) {
    const float v = (float)((i * 7) % 23) - 11.0f;
    uint32_t bits;
    uint16_t h;
    memcpy(&bits, &v, 4);
    if (dtype == RNGTRK_DTYPE_F32) {
        memcpy(out, &v, 4);
        return;
    }
    if (dtype == RNGTRK_DTYPE_BF16) {
        h = (uint16_t)(bits >> 16);
    } else { /* f16: rebias the exponent, drop the 13 low mantissa bits (zero here) */
        h = (uint16_t)((bits >> 16) & 0x8000u);
        if ((bits & 0x7FFFFFFFu) != 0)
            h = (uint16_t)(h | ((((bits >> 23) & 0xFFu) - 112u) << 10) | ((bits >> 13) & 0x3FFu));
    }
    memcpy(out, &h, 2);
}

/* The spec, then the draw: from the state, or from the tracker's active state. */
static void spec_and_draw(const case_t *c, const request_t *q, rngtrk_tracker *tracker, result_t *r) {
    rngtrk_sample_spec spec;
    unsigned char *in = NULL;
    size_t width;
    r->status = make_spec(c, q->dropout, tracker != NULL, &spec, &r->why);
    if (r->status != RNGTRK_OK) return;
    width = rngtrk_dtype_size((rngtrk_dtype)spec.dtype);
    r->bytes = malloc((size_t)q->count * width + 8);
    r->n = (size_t)q->count * width;
    if (q->dropout) {
        uint64_t i;
        in = malloc((size_t)q->count * width + 8);
        for (i = 0; in != NULL && width != 0 && i < q->count; ++i)
            put_input((rngtrk_dtype)spec.dtype, i, in + i * width);
    }
    if (r->bytes == NULL || (q->dropout && in == NULL)) {
        r->status = 1;
        r->why = "out of memory";
    } else if (tracker != NULL) {
        if (q->dropout)
            r->status = rngtrk_tracker_dropout_f32(tracker, &spec, q->count, (const float *)(void *)in,
                                                   (float *)(void *)r->bytes, NULL);
        else if (q->slice)
            r->status = rngtrk_tracker_sample_slice(tracker, &spec, (size_t)q->ndim, q->shape, q->start, q->box,
                                                    r->bytes, r->n, NULL);
        else
            r->status = rngtrk_tracker_sample(tracker, &spec, q->count, r->bytes, r->n, NULL);
    } else if (q->dropout && q->slice) {
        r->status = rngtrk_dropout_slice(&q->state, &spec, (size_t)q->ndim, q->shape, q->start, q->box, in,
                                         r->bytes, r->n);
    } else if (q->dropout) {
        r->status = rngtrk_dropout(&q->state, &spec, q->first, q->count, in, r->bytes, r->n);
    } else if (q->slice) {
        r->status = rngtrk_sample_slice(&q->state, &spec, (size_t)q->ndim, q->shape, q->start, q->box, r->bytes,
                                        r->n);
    } else {
        r->status = rngtrk_sample(&q->state, &spec, q->first, q->count, r->bytes, r->n);
    }
    free(in);
}

/* Draws the case into `r`.  A tracker case: a new tracker, the named state
 * added with the seed and set to (seed, offset), forked; the draw; the fork
 * restored; the state's offset read. */
static void draw(const case_t *c, result_t *r) {
    request_t q;
    rngtrk_tracker *tracker = NULL;
    rngtrk_philox_state after;
    rngtrk_status status;
    r->status = 1;
    r->bytes = NULL;
    r->n = 0;
    r->has_offset = 0;
    if (read_request(c, &q, &r->why) != 0) return;
    if (!q.tracker) {
        spec_and_draw(c, &q, NULL, r);
        return;
    }
    status = rngtrk_tracker_new(&tracker);
    if (status == RNGTRK_OK) status = rngtrk_tracker_add(tracker, STATE_NAME, q.state.seed);
    if (status != RNGTRK_OK) { /* never with a valid case: the driver is at fault */
        r->why = "tracker_new or tracker_add failed";
        rngtrk_tracker_free(tracker);
        return;
    }
    r->status = rngtrk_tracker_set_state(tracker, STATE_NAME, &q.state);
    if (r->status == RNGTRK_OK) r->status = rngtrk_tracker_fork(tracker, STATE_NAME);
    if (r->status == RNGTRK_OK) {
        spec_and_draw(c, &q, tracker, r);
        status = rngtrk_tracker_restore(tracker, STATE_NAME);
        if (r->status == RNGTRK_OK) r->status = status;
    }
    status = rngtrk_tracker_get_state(tracker, STATE_NAME, &after);
    if (status != RNGTRK_OK && r->status != 1) r->status = status;
    r->offset = after.offset;
    r->has_offset = status == RNGTRK_OK;
    rngtrk_tracker_free(tracker);
}

int main(int argc, char **argv) {
    static char line[MAX_LINE];
    FILE *f;
    if (argc != 2) {
        fprintf(stderr, "usage: draw_cases CASE_FILE\n");
        return 2;
    }
    f = fopen(argv[1], "r");
    if (f == NULL) {
        perror(argv[1]);
        return 2;
    }
    while (fgets(line, sizeof line, f) != NULL) {
        case_t c;
        result_t r;
        if (strchr(line, '\n') == NULL && !feof(f)) {
            fprintf(stderr, "draw_cases: a line longer than %d bytes\n", MAX_LINE - 1);
            return 2;
        }
        if (split(line, &c) != 0) {
            r.status = 1;
            r.why = "a token without '='";
            r.bytes = NULL;
            r.has_offset = 0;
        } else {
            draw(&c, &r);
        }
        if (r.status == 1) {
            printf("unsupported %s", r.why);
        } else if (r.status == RNGTRK_OK) {
            fputs("ok ", stdout);
            print_hex(r.bytes, r.n);
        } else {
            printf("error %d", r.status);
        }
        if (r.has_offset && r.status != 1) printf(" offset=%llu", (unsigned long long)r.offset);
        putchar('\n');
        free(r.bytes);
    }
    if (ferror(f)) {
        perror(argv[1]);
        return 2;
    }
    fclose(f);
    return fflush(stdout) == 0 ? 0 : 2;
}
