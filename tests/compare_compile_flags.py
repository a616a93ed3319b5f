# SPDX-License-Identifier: Apache-2.0
"""Does another build compile each library source with the Makefile's flags?

    compare_compile_flags.py NAME TOP MAKE_N_OUTPUT compile_commands FILE
    compare_compile_flags.py NAME TOP MAKE_N_OUTPUT args-dir DIR SRC_ROOT

MAKE_N_OUTPUT is what `make -n -B CUDA=0 lib` printed in TOP.  The other
build's commands come from CMake's compile_commands.json, or from the
`.args` files rngtrk-sys's build script writes beside its objects (one
argument per line; DIR/core/x.args for SRC_ROOT/core/x.cpp).  A source's
flags are its words but the compiler, `-c SRC`, `-o OBJ`, make's `-MMD -MP`
(dependency files) and the source itself; include folders are compared
relative to the tree they name.  The order is not compared (sorted): the
flags are.  Exits 1, naming each source that differs, or the sources one
build has and the other lacks.
"""
import json
import os
import shlex
import sys


def flags(words, source, root):
    out = []
    skip = False
    for word in words[1:]:
        if skip:
            skip = False
            continue
        if word in ("-o", "-c"):
            skip = True
            continue
        if word in ("-MMD", "-MP") or word == source:
            continue
        if word.startswith("-I"):
            word = "-I" + os.path.relpath(os.path.join(root, word[2:]), root)
        out.append(word)
    return sorted(out)


def from_make(path, top):
    made = {}
    for line in open(path):
        words = shlex.split(line)
        if "-c" in words and words[words.index("-c") + 1].endswith(".cpp"):
            source = words[words.index("-c") + 1]
            made[source] = flags(words, source, top)
    return made


def from_compile_commands(path, top):
    return {os.path.relpath(e["file"], top): flags(shlex.split(e["command"]), e["file"], top)
            for e in json.load(open(path))}


def from_args_dir(folder, root):
    found = {}
    for here, _, names in os.walk(folder):
        for name in names:
            if name.endswith(".args"):
                path = os.path.join(here, name)
                source = os.path.relpath(path, folder)[:-len(".args")] + ".cpp"
                words = ["compiler"] + open(path).read().split("\n")
                found[source] = flags(words, os.path.join(root, source), root)
    return found


def main():
    name, top, make, kind = sys.argv[1:5]
    made = from_make(make, top)
    if kind == "compile_commands":
        other = from_compile_commands(sys.argv[5], top)
    elif kind == "args-dir":
        other = from_args_dir(sys.argv[5], sys.argv[6])
    else:
        sys.exit(f"compare_compile_flags: unknown kind {kind!r}")
    if not made or set(made) != set(other):
        print(f"{name}: sources differ: only make: {sorted(set(made) - set(other))}, "
              f"only {name}: {sorted(set(other) - set(made))}")
        sys.exit(1)
    bad = [s for s in sorted(made) if made[s] != other[s]]
    for source in bad:
        print(source, "make:", made[source], f"{name}:", other[source])
    if bad:
        sys.exit(1)
    print(f"{name}: the flags of {len(made)} sources equal the Makefile's")


main()
