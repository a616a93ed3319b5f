/* SPDX-License-Identifier: Apache-2.0 */
/* Recipe replay (see checkpoint_recipes.h; format in tests/vectors/README.md). */
#include "checkpoint_recipes.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_LINE = 4096, MAX_FIELDS = 64 };

static int fail(char *err, size_t err_len, const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(err, err_len, format, args);
    va_end(args);
    return -1;
}

static int parse_u64(const char *text, uint64_t *out) {
    char *end = NULL;
    if (text == NULL || *text < '0' || *text > '9') return -1;
    *out = strtoull(text, &end, 10);
    return *end == '\0' ? 0 : -1;
}

/* Splits `line` in place at spaces; returns the number of fields. */
static int split(char *line, char *fields[MAX_FIELDS]) {
    int n = 0;
    for (char *tok = strtok(line, " "); tok != NULL && n < MAX_FIELDS; tok = strtok(NULL, " "))
        fields[n++] = tok;
    return n;
}

/* The rank field called `name`, or NULL. */
static uint32_t *rank_field(rngtrk_parallel_rank *r, const char *name) {
    const struct {
        const char *name;
        uint32_t *field;
    } fields[] = {{"tp", &r->tp},
                  {"pp", &r->pp},
                  {"dp", &r->dp},
                  {"ep", &r->ep},
                  {"etp", &r->etp},
                  {"gtp_remat", &r->gtp_remat},
                  {"gtp_remat_size", &r->gtp_remat_size},
                  {"egtp_remat", &r->egtp_remat},
                  {"egtp_remat_size", &r->egtp_remat_size}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; ++i)
        if (strcmp(name, fields[i].name) == 0) return fields[i].field;
    return NULL;
}

/* "seed_rank POLICY SEED [FIELD=N]... [FLAG]...": policy and flags by the
 * library's names. */
static rngtrk_status seed_rank(rngtrk_tracker *t, char **f, int n) {
    rngtrk_seed_policy policy;
    rngtrk_parallel_rank r;
    uint64_t seed = 0, value = 0;
    uint32_t flags = 0;
    if (n < 3 || parse_u64(f[2], &seed) != 0) return RNGTRK_E_INVALID_ARGUMENT;
    const rngtrk_status st = rngtrk_seed_policy_from_name(f[1], &policy);
    if (st != RNGTRK_OK) return st;
    if (RNGTRK_PARALLEL_RANK_INIT(&r) != RNGTRK_OK) return RNGTRK_E_INTERNAL;
    for (int i = 3; i < n; ++i) {
        char *eq = strchr(f[i], '=');
        if (eq == NULL) {
            uint32_t bit = 0;
            for (uint32_t b = 1; b != 0 && bit == 0; b <<= 1) {
                const char *name = rngtrk_seed_flag_name(b);
                if (name != NULL && strcmp(name, f[i]) == 0) bit = b;
            }
            if (bit == 0) return RNGTRK_E_INVALID_ARGUMENT;
            flags |= bit;
            continue;
        }
        *eq = '\0';
        uint32_t *field = rank_field(&r, f[i]);
        if (field == NULL || parse_u64(eq + 1, &value) != 0 || value > UINT32_MAX) return RNGTRK_E_INVALID_ARGUMENT;
        *field = (uint32_t)value;
    }
    return rngtrk_tracker_seed_rank(t, policy, seed, &r, flags);
}

/* Runs one operation line; the status of the call, or RNGTRK_E_INVALID_ARGUMENT
 * for a line this runner does not understand. */
static rngtrk_status run_line(rngtrk_tracker *t, char **f, int n) {
    uint64_t a = 0, b = 0;
    const char *op = f[0];
    if (strcmp(op, "manual_seed") == 0 && n == 2 && parse_u64(f[1], &a) == 0)
        return rngtrk_tracker_manual_seed(t, a);
    if (strcmp(op, "add") == 0 && n == 3 && parse_u64(f[2], &a) == 0) return rngtrk_tracker_add(t, f[1], a);
    if (strcmp(op, "fork") == 0 && n == 2) return rngtrk_tracker_fork(t, f[1]);
    if (strcmp(op, "restore") == 0 && n == 2) return rngtrk_tracker_restore(t, f[1]);
    if (strcmp(op, "advance") == 0 && n == 2 && parse_u64(f[1], &a) == 0)
        return rngtrk_tracker_advance(t, a, NULL);
    if (strcmp(op, "reset") == 0 && n == 1) return rngtrk_tracker_reset(t);
    if (strcmp(op, "seed_rank") == 0) return seed_rank(t, f, n);
    if (strcmp(op, "set_state") == 0 && n == 4 && parse_u64(f[2], &a) == 0 && parse_u64(f[3], &b) == 0) {
        const rngtrk_philox_state s = {a, b};
        return rngtrk_tracker_set_state(t, f[1], &s);
    }
    if (strcmp(op, "set_default") == 0 && n == 3 && parse_u64(f[1], &a) == 0 && parse_u64(f[2], &b) == 0) {
        const rngtrk_philox_state s = {a, b};
        return rngtrk_tracker_set_default(t, &s);
    }
    if (strcmp(op, "set_states") == 0 && (n - 1) % 3 == 0) {
        const char *names[MAX_FIELDS / 3];
        rngtrk_philox_state states[MAX_FIELDS / 3];
        const size_t count = (size_t)(n - 1) / 3;
        for (size_t i = 0; i < count; ++i) {
            names[i] = f[1 + 3 * i];
            if (parse_u64(f[2 + 3 * i], &states[i].seed) != 0 ||
                parse_u64(f[3 + 3 * i], &states[i].offset) != 0)
                return RNGTRK_E_INVALID_ARGUMENT;
        }
        return rngtrk_tracker_set_states(t, names, states, count);
    }
    return RNGTRK_E_INVALID_ARGUMENT;
}

int recipe_run(const char *recipes, const char *name, rngtrk_tracker *t, char *err, size_t err_len) {
    int inside = 0, found = 0;
    const char *p = recipes;
    while (*p != '\0') {
        const char *end = strchr(p, '\n');
        const size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        char line[MAX_LINE], copy[MAX_LINE];
        char *fields[MAX_FIELDS];
        if (len >= sizeof line) return fail(err, err_len, "recipe line too long");
        memcpy(line, p, len);
        line[len] = '\0';
        memcpy(copy, line, len + 1);
        p += len + (end != NULL);
        if (line[0] == '#' || line[0] == '\0') continue;
        const int n = split(line, fields);
        if (n == 0) continue;
        if (!inside) {
            inside = found = n == 2 && strcmp(fields[0], "recipe") == 0 && strcmp(fields[1], name) == 0;
            continue;
        }
        if (n == 1 && strcmp(fields[0], "end") == 0) return 0;
        const rngtrk_status st = run_line(t, fields, n);
        if (st != RNGTRK_OK)
            return fail(err, err_len, "recipe %s: \"%s\": %s: %s", name, copy, rngtrk_status_string(st),
                        rngtrk_last_error());
    }
    return fail(err, err_len, found ? "recipe %s has no end line" : "no recipe named %s", name);
}
