/* SPDX-License-Identifier: Apache-2.0 */
/* rngtrk inspect FILE: a checkpoint as one line of canonical JSON.
 *
 * The library writes the JSON (rngtrk_checkpoint_file_json), so this tool,
 * `python3 -m rngtrk inspect` and the Rust example print the same bytes
 * and the same errors: the format is in docs/cli.md. */
#include <stdlib.h>

#include "cli.h"

static int inspect(int argc, char **argv) {
    if (argc == 0) return usage_error("inspect", "needs a FILE (see rngtrk help inspect)");
    if (argv[0][0] == '-' && argv[0][1] != '\0') return usage_error("inspect", "unknown option %s", argv[0]);
    if (argc > 1) return usage_error("inspect", "takes one FILE; unexpected '%s'", argv[1]);
    const char *path = argv[0];
    size_t len = 0;
    rngtrk_status st = rngtrk_checkpoint_file_json(path, NULL, 0, &len);
    char *json = st == RNGTRK_OK ? malloc(len + 1) : NULL;
    if (st == RNGTRK_OK && json == NULL) return data_error("inspect", "%s: out of memory", path);
    if (st == RNGTRK_OK) st = rngtrk_checkpoint_file_json(path, json, len + 1, &len);
    /* The library's message names the file and what is wrong with it. */
    if (st != RNGTRK_OK) {
        free(json);
        return data_error("inspect", "%s", rngtrk_last_error());
    }
    puts(json);
    free(json);
    return fflush(stdout) != 0 || ferror(stdout) ? data_error("inspect", "cannot write the output") : 0;
}

const struct command cmd_inspect = {
    "inspect", "print a checkpoint as one line of canonical JSON",
    "usage: rngtrk inspect FILE\n"
    "\n"
    "Prints the checkpoint FILE as one line of canonical JSON: format_version, the default\n"
    "state, the named states in stored order and, for a version-2 checkpoint seeded by a\n"
    "policy, its origin (policy, base seed, flags, rank). Python's `python3 -m rngtrk inspect`\n"
    "and Rust's `inspect` example print the same bytes. A damaged or foreign file gives one\n"
    "line on stderr and exit status 1.\n",
    inspect};
