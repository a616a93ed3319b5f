/* SPDX-License-Identifier: Apache-2.0 */
/* Errors and option parsing shared by the rngtrk subcommands (cli.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

static int report(int code, const char *command, const char *format, va_list args) {
    fprintf(stderr, "rngtrk%s%s: ", command ? " " : "", command ? command : "");
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    return code;
}

int usage_error(const char *command, const char *format, ...) {
    va_list args;
    va_start(args, format);
    const int code = report(EXIT_USAGE, command, format, args);
    va_end(args);
    return code;
}

int data_error(const char *command, const char *format, ...) {
    va_list args;
    va_start(args, format);
    const int code = report(EXIT_DATA, command, format, args);
    va_end(args);
    return code;
}

const char *library_message(rngtrk_status status, char *buf, size_t size) {
    const char *what = rngtrk_status_string(status), *detail = rngtrk_last_error();
    if (strncmp(detail, what, strlen(what)) == 0) snprintf(buf, size, "%s", detail);
    else snprintf(buf, size, "%s: %s", what, detail);
    return buf;
}

/* Edit distance (insertions, deletions, substitutions), for short words. */
static size_t distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b), row[64];
    if (la >= 64 || lb >= 64) return (size_t)-1;
    for (size_t j = 0; j <= lb; ++j) row[j] = j;
    for (size_t i = 1; i <= la; ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; ++j) {
            const size_t up = row[j];
            size_t best = diagonal + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diagonal = up;
        }
    }
    return row[lb];
}

const char *closest(const char *word, const char *const *names, size_t n) {
    const char *best = NULL;
    size_t best_distance = (size_t)-1;
    for (size_t i = 0; i < n; ++i) {
        const size_t d = distance(word, names[i]);
        if (d < best_distance) best = names[i], best_distance = d;
    }
    /* Close enough to be a slip: a third of the name's letters, at least 2. */
    const size_t allowed = best && strlen(best) / 3 > 2 ? strlen(best) / 3 : 2;
    return best_distance <= allowed ? best : NULL;
}

struct option *option_named(struct option *opts, size_t n, const char *name) {
    for (size_t i = 0; i < n; ++i)
        if (strcmp(opts[i].name, name) == 0) return &opts[i];
    return NULL;
}

static int parse_u64_value(const char *command, const char *name, const char *text, uint64_t *out) {
    if (text[0] == '-') return usage_error(command, "%s must not be negative: %s", name, text);
    int digits = text[0] != '\0';
    for (const char *p = text; *p; ++p) digits &= *p >= '0' && *p <= '9';
    if (!digits) return usage_error(command, "%s needs a whole number, not '%s'", name, text);
    errno = 0;
    *out = strtoull(text, NULL, 10);
    if (errno == ERANGE) return usage_error(command, "%s is too large: %s (at most 2^64 - 1)", name, text);
    return 0;
}

/* The numbers the options take: [+-] then digits with an optional fraction
 * (or a fraction alone), then an optional exponent.  Narrower than strtod
 * (no hex, no leading spaces), and the grammar the Python and Rust sample
 * commands accept, so the three give the same answer for any text. */
static int is_decimal(const char *s) {
    size_t digits = 0;
    if (*s == '+' || *s == '-') ++s;
    while (*s >= '0' && *s <= '9') ++s, ++digits;
    if (*s == '.')
        for (++s; *s >= '0' && *s <= '9'; ++s) ++digits;
    if (digits == 0) return 0;
    if (*s == 'e' || *s == 'E') {
        ++s;
        if (*s == '+' || *s == '-') ++s;
        if (!(*s >= '0' && *s <= '9')) return 0;
        while (*s >= '0' && *s <= '9') ++s;
    }
    return *s == '\0';
}

/* "inf", "infinity" or "nan" in any case, with an optional sign. */
static int names_non_finite(const char *s) {
    if (*s == '+' || *s == '-') ++s;
    return strcasecmp(s, "inf") == 0 || strcasecmp(s, "infinity") == 0 || strcasecmp(s, "nan") == 0;
}

static int parse_value(const char *command, struct option *o, const char *text) {
    switch (o->kind) {
        case OPT_U64: return parse_u64_value(command, o->name, text, (uint64_t *)o->target);
        case OPT_U32_POS: {
            uint64_t v = 0;
            if (parse_u64_value(command, o->name, text, &v) != 0) return EXIT_USAGE;
            if (v == 0) return usage_error(command, "%s must be at least 1", o->name);
            if (v > UINT32_MAX) return usage_error(command, "%s is too large: %s (at most 4294967295)", o->name, text);
            *(uint32_t *)o->target = (uint32_t)v;
            return 0;
        }
        case OPT_DOUBLE: {
            if (!is_decimal(text))
                return usage_error(command, names_non_finite(text) ? "%s must be a finite number, not '%s'"
                                                                   : "%s needs a number, not '%s'",
                                   o->name, text);
            const double v = strtod(text, NULL); /* correctly rounded; tiny values become 0 or subnormal */
            if (!isfinite(v)) return usage_error(command, "%s must be a finite number, not '%s'", o->name, text);
            *(double *)o->target = v;
            return 0;
        }
        case OPT_CHOICE: {
            for (int i = 0; i < o->nchoices; ++i)
                if (strcmp(text, o->choices[i]) == 0) return *(int *)o->target = i, 0;
            char list[256] = "";
            for (int i = 0; i < o->nchoices; ++i)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", o->choices[i]);
            const char *guess = closest(text, o->choices, (size_t)o->nchoices);
            if (guess != NULL)
                return usage_error(command, "%s: unknown value '%s' (did you mean '%s'?); one of %s", o->name, text,
                                   guess, list);
            return usage_error(command, "%s: unknown value '%s'; one of %s", o->name, text, list);
        }
        case OPT_TEXT: *(const char **)o->target = text; return 0;
        case OPT_FLAG: break;
    }
    return 0;
}

int parse_options(const char *command, struct option *opts, size_t n, int argc, char **argv) {
    for (int i = 0; i < argc; ++i) {
        const char *arg = argv[i];
        const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
        char name[64];
        const size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), arg);
        struct option *o = len < sizeof name ? option_named(opts, n, name) : NULL;
        if (o == NULL) {
            const char *names[32];
            for (size_t k = 0; k < n && k < 32; ++k) names[k] = opts[k].name;
            const char *guess = closest(name, names, n < 32 ? n : 32);
            if (strncmp(arg, "-", 1) != 0)
                return usage_error(command, "unexpected argument '%s'", arg);
            if (guess != NULL) return usage_error(command, "unknown option %s (did you mean %s?)", name, guess);
            return usage_error(command, "unknown option %s (see rngtrk help %s)", name, command);
        }
        if (o->given) return usage_error(command, "%s is given twice", o->name);
        o->given = 1;
        if (o->kind == OPT_FLAG) {
            if (eq) return usage_error(command, "%s takes no value", o->name);
            *(int *)o->target = 1;
            continue;
        }
        const char *value = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (value == NULL) return usage_error(command, "%s needs a value", o->name);
        if (parse_value(command, o, value) != 0) return EXIT_USAGE;
    }
    return 0;
}
