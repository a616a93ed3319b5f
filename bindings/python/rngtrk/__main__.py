"""python3 -m rngtrk: the same commands, and the same output, as the C `rngtrk`.

    python3 -m rngtrk inspect FILE   print a checkpoint as canonical JSON
    python3 -m rngtrk version        print the library version
"""
import sys

from . import version_string
from .checkpoint_json import read_checkpoint_file, to_json
from .errors import RngtrkError

USAGE = ("usage: rngtrk inspect FILE   print a checkpoint as canonical JSON\n"
         "       rngtrk version        print the library version\n")


def inspect(path):
    try:
        line = to_json(read_checkpoint_file(path))
    except OSError as error:
        print(f"rngtrk: {path}: {error.strerror or error}", file=sys.stderr)
        return 1
    except (ValueError, RngtrkError) as error:
        print(f"rngtrk: {path}: {error}", file=sys.stderr)
        return 1
    # UTF-8 whatever the locale: the C tool writes the names' bytes as they are.
    sys.stdout.buffer.write((line + "\n").encode("utf-8"))
    sys.stdout.flush()
    return 0


def main(argv):
    if argv == ["version"]:
        print(version_string())
        return 0
    if argv in (["--help"], ["-h"]):
        sys.stdout.write(USAGE)
        return 0
    if len(argv) == 2 and argv[0] == "inspect":
        return inspect(argv[1])
    sys.stderr.write(USAGE)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
