#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Holds bindings/coverage.txt to the library and to both bindings.

    coverage_test.py LIBRARY RUST_LIB_DIR

Fails when an exported rngtrk_* symbol (nm -D LIBRARY) has no line, when a
line names a symbol the library does not export, when a Python name does
not resolve from `import rngtrk`, or when a Rust path does not compile
against the rngtrk crate (RUST_LIB_DIR holds librngtrk.rlib and deps/, as
`cargo build` leaves them; rustc only type-checks, --emit=metadata).  Prints
the "not wrapped" lines with their reasons.
"""
import os
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "bindings", "python"))


def exported(library):
    out = subprocess.run(["nm", "-D", "--defined-only", library], check=True, stdout=subprocess.PIPE, text=True)
    # Functions only ("T"): the version node's own symbol (rngtrk_0.1, "A") is not one.
    return {line.split()[-1].split("@")[0] for line in out.stdout.splitlines()
            if len(line.split()) == 3 and line.split()[1] == "T"}


def manifest(path):
    """{symbol: (python column, rust column)} and the problems in the file."""
    lines, problems = {}, []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            columns = [c.strip() for c in line.split("|")]
            if len(columns) != 3:
                problems.append(f"coverage.txt:{number}: needs SYMBOL | PYTHON | RUST")
                continue
            if columns[0] in lines:
                problems.append(f"coverage.txt:{number}: {columns[0]} has two lines")
            lines[columns[0]] = (columns[1], columns[2])
    return lines, problems


def names(column):
    """The names of a column, or [] for "not wrapped: ..."."""
    if column.startswith("not wrapped:"):
        return []
    return [n.strip() for n in column.split(",") if n.strip()]


def python_missing(name):
    import rngtrk
    parts = name.split(".")
    if parts[0] != "rngtrk":
        return f"{name}: not under the rngtrk package"
    obj = rngtrk
    for part in parts[1:]:
        if not hasattr(obj, part):
            return f"{name}: no attribute {part!r}"
        obj = getattr(obj, part)
    return None


def rust_missing(paths, rust_dir):
    """Compiles one program naming every path; returns compiler errors."""
    body = ["#![allow(unused)]", "fn needs_drop<T: Drop>() {}", "fn main() {"]
    for path in sorted(paths):
        if path.endswith("::drop"):  # a Drop impl: the destructor cannot be named, its impl can
            body.append(f"    needs_drop::<{path[:-len('::drop')]}>();")
        else:
            body.append(f"    let _ = {path};")
    body.append("}")
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "coverage_names.rs")
        with open(source, "w") as f:
            f.write("\n".join(body) + "\n")
        rustc = os.environ.get("RUSTC") or os.path.expanduser("~/.cargo/bin/rustc")
        done = subprocess.run([rustc if os.path.exists(rustc) else "rustc", "--edition", "2021", "--emit=metadata",
                               "--crate-type", "bin", "-o", os.path.join(tmp, "out.rmeta"), source,
                               "--extern", f"rngtrk={os.path.join(rust_dir, 'librngtrk.rlib')}",
                               "-L", f"dependency={os.path.join(rust_dir, 'deps')}"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if done.returncode != 0:
            return [line for line in done.stdout.splitlines() if line.startswith(("error", "  -->"))] or [done.stdout]
    return []


def main():
    library, rust_dir = sys.argv[1], sys.argv[2]
    symbols = exported(library)
    lines, problems = manifest(os.path.join(TOP, "bindings", "coverage.txt"))
    for symbol in sorted(symbols - set(lines)):
        problems.append(f"{symbol}: exported but has no line in bindings/coverage.txt")
    for symbol in sorted(set(lines) - symbols):
        problems.append(f"{symbol}: listed in bindings/coverage.txt but not exported")
    rust_paths, unwrapped = set(), []
    for symbol, (python, rust) in sorted(lines.items()):
        for language, column in (("Python", python), ("Rust", rust)):
            if not names(column):
                unwrapped.append(f"{symbol} ({language}): {column}")
        for name in names(python):
            missing = python_missing(name)
            if missing:
                problems.append(f"{symbol}: Python {missing}")
        rust_paths.update(names(rust))
    problems += [f"Rust: {e}" for e in rust_missing(rust_paths, rust_dir)]
    for line in unwrapped:
        print("not wrapped:", line)
    for line in problems:
        print("FAIL:", line)
    print(f"coverage: {len(symbols)} exported functions, each reached from Python and Rust "
          f"but for {len(unwrapped)} explained gaps; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
