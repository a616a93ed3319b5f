/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rngtrk — the command-line tool.  Uses only the public C API.
 *
 *   rngtrk inspect FILE        print a checkpoint as one line of canonical JSON
 *   rngtrk sample ...          print sampled values, one per line
 *   rngtrk seeds ...           every rank's seeds under a policy; --check finds collisions
 *   rngtrk dtensor-offsets ... PyTorch DTensor's RNG offsets for one rank
 *   rngtrk version             print the library's version
 *   rngtrk help [COMMAND]      what the commands do, or one command's options
 *
 * Exit status: 0 success, 1 a data error (a damaged file, a collision
 * found), 2 a usage error.  Errors are one line on stderr.
 */
#include <string.h>

#include "cli.h"

static const struct command *const kCommands[] = {&cmd_inspect, &cmd_sample, &cmd_seeds, &cmd_dtensor_offsets};
enum { NCOMMANDS = sizeof kCommands / sizeof kCommands[0] };

static void list_commands(FILE *to) {
    fprintf(to, "usage: rngtrk COMMAND [options]\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; ++i) fprintf(to, "  %-17s %s\n", kCommands[i]->name, kCommands[i]->summary);
    fprintf(to, "  %-17s %s\n  %-17s %s\n", "version", "print the library's version", "help [COMMAND]",
            "this list, or one command's options");
}

static const struct command *find(const char *name) {
    for (size_t i = 0; i < NCOMMANDS; ++i)
        if (strcmp(kCommands[i]->name, name) == 0) return kCommands[i];
    return NULL;
}

static int unknown_command(const char *name) {
    const char *names[NCOMMANDS + 2];
    for (size_t i = 0; i < NCOMMANDS; ++i) names[i] = kCommands[i]->name;
    names[NCOMMANDS] = "version", names[NCOMMANDS + 1] = "help";
    const char *guess = closest(name, names, NCOMMANDS + 2);
    if (guess != NULL) return usage_error(NULL, "unknown command '%s' (did you mean '%s'?)", name, guess);
    return usage_error(NULL, "unknown command '%s'; commands: inspect, sample, seeds, dtensor-offsets, version, help",
                       name);
}

static int help(const char *topic) {
    if (topic == NULL) {
        list_commands(stdout);
        printf("\nrngtrk help COMMAND (or rngtrk COMMAND --help) shows a command's options.\n");
        return 0;
    }
    if (strcmp(topic, "version") == 0) return printf("usage: rngtrk version\n\nPrints the library's version.\n"), 0;
    if (strcmp(topic, "help") == 0) return printf("usage: rngtrk help [COMMAND]\n"), 0;
    const struct command *c = find(topic);
    if (c == NULL) return unknown_command(topic);
    fputs(c->usage, stdout);
    return 0;
}

static int is_help(const char *arg) { return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0; }

int main(int argc, char **argv) {
    if (argc < 2) {
        list_commands(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "help") == 0 || is_help(name)) {
        if (argc > 3) return usage_error("help", "takes at most one COMMAND");
        return help(argc == 3 ? argv[2] : NULL);
    }
    if (strcmp(name, "version") == 0 || strcmp(name, "--version") == 0) {
        if (argc > 2) return is_help(argv[2]) ? help("version") : usage_error("version", "takes no arguments");
        printf("%s\n", rngtrk_version_string());
        return 0;
    }
    const struct command *c = find(name);
    if (c == NULL) return name[0] == '-' ? usage_error(NULL, "unknown option %s (see rngtrk help)", name)
                                         : unknown_command(name);
    for (int i = 2; i < argc; ++i)
        if (is_help(argv[i])) return help(c->name);
    return c->run(argc - 2, argv + 2);
}
