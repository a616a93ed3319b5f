# SPDX-License-Identifier: Apache-2.0
"""python3 -m rngtrk: the C `rngtrk` command's inspect and version, with the
same output, the same one-line errors and the same exit codes (0 success, 1
a data error, 2 a usage error).  Its other commands (sample, seeds,
dtensor-offsets) are the C command's alone: one command per job.

    python3 -m rngtrk inspect FILE   print a checkpoint as canonical JSON
    python3 -m rngtrk version        print the library version
    python3 -m rngtrk help           this list
"""
import difflib
import sys

from . import version_string
from .checkpoint_json import file_to_json
from .errors import RngtrkError

COMMANDS = {"inspect": "print a checkpoint as one line of canonical JSON",
            "version": "print the library's version",
            "help": "this list"}
USAGE = "usage: python3 -m rngtrk COMMAND\n\ncommands:\n" + "".join(
    f"  {name:<17} {summary}\n" for name, summary in COMMANDS.items())


def error(command, message, code):
    print(f"rngtrk{' ' + command if command else ''}: {message}", file=sys.stderr)
    return code


def inspect(args):
    if not args:
        return error("inspect", "needs a FILE (see rngtrk help inspect)", 2)
    if args[0].startswith("-") and args[0] != "-":
        return error("inspect", f"unknown option {args[0]}", 2)
    if len(args) > 1:
        return error("inspect", f"takes one FILE; unexpected '{args[1]}'", 2)
    try:
        line = file_to_json(args[0])
    except RngtrkError as e:
        # The library's message names the file and what is wrong with it.
        return error("inspect", e.message, 1)
    # UTF-8 whatever the locale: the C tool writes the names' bytes as they are.
    sys.stdout.buffer.write((line + "\n").encode("utf-8"))
    sys.stdout.flush()
    return 0


def main(argv):
    if not argv:
        sys.stderr.write(USAGE)
        return 2
    command, args = argv[0], argv[1:]
    if command in ("help", "--help", "-h"):
        sys.stdout.write(USAGE)
        return 0
    if command in ("version", "--version"):
        if args:
            return error("version", "takes no arguments", 2)
        print(version_string())
        return 0
    if command == "inspect":
        return inspect(args)
    if command == "sample":  # this module had it once
        return error(None, "'sample' is a command of the C `rngtrk` tool, not of python3 -m rngtrk: "
                           "run `rngtrk sample ...` (`rngtrk help sample` lists its options)", 2)
    guess = difflib.get_close_matches(command, list(COMMANDS), n=1)
    if guess:
        return error(None, f"unknown command '{command}' (did you mean '{guess[0]}'?)", 2)
    return error(None, f"unknown command '{command}'; commands: {', '.join(COMMANDS)}", 2)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
