/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The rngtrk command's shared pieces: how a subcommand reports errors, and
 * the option parser every subcommand uses.  Only the public C API is used.
 *
 * Manners (git's and zstd's): usage errors exit 2, data errors exit 1;
 * every error is one line on stderr, "rngtrk SUBCOMMAND: ...", naming
 * values by their names.
 */
#ifndef RNGTRK_CLI_H
#define RNGTRK_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rngtrk.h"

enum { EXIT_DATA = 1, EXIT_USAGE = 2 };

/* A subcommand: its name, one-line summary, full usage text and entry. */
struct command {
    const char *name;
    const char *summary;
    const char *usage;
    int (*run)(int argc, char **argv); /* argv holds the options only */
};

extern const struct command cmd_inspect, cmd_sample, cmd_seeds, cmd_dtensor_offsets;

/* "rngtrk COMMAND: <message>\n" on stderr; returns EXIT_USAGE or EXIT_DATA. */
int usage_error(const char *command, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
int data_error(const char *command, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The library's message for a failed call, with its status named once
 * ("corrupt checkpoint: checksum mismatch", never twice). */
const char *library_message(rngtrk_status status, char *buf, size_t size);

/* The closest of `names` to `word` (a likely misspelling), or NULL. */
const char *closest(const char *word, const char *const *names, size_t n);

/* -- options ---------------------------------------------------------------- */

enum option_kind {
    OPT_FLAG,    /* no value: *(int *)target = 1 */
    OPT_U64,     /* unsigned decimal below 2^64 */
    OPT_U32_POS, /* 1 .. 2^32 - 1 */
    OPT_DOUBLE,  /* a finite number */
    OPT_CHOICE,  /* one of choices[]: *(int *)target = its index */
    OPT_TEXT     /* kept as given: *(const char **)target */
};

struct option {
    const char *name; /* "--count" */
    enum option_kind kind;
    void *target;
    const char *const *choices; /* OPT_CHOICE */
    int nchoices;
    int given; /* set by parse_options */
};

/* Parses "--name value", "--name=value" and flags into the options' targets.
 * Returns 0, or prints one usage line for `command` and returns EXIT_USAGE:
 * an unknown option (with the closest known one), a missing value, a
 * malformed, negative or too large number, an unknown choice. */
int parse_options(const char *command, struct option *opts, size_t n, int argc, char **argv);

/* The option called `name` in `opts` (it must be there). */
struct option *option_named(struct option *opts, size_t n, const char *name);

#endif
