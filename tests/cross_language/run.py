#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The same draws in C, Python and Rust, byte for byte.

    run.py C_DRIVER RUST_DRIVER [--cases N] [--seed S] [--case K] [--keep DIR]

Makes N random cases (cases.py; the seed is random unless given, and printed
first), writes them to a case file, and draws every case three times: with
the C driver (draw_cases.c, the C API), the Rust driver (the example
draw_cases, the safe crate) and in this process through the Python API
(draw_cases.py).  Each prints one line per case: the output bytes in hex, or
the error status, plus the tracker's offset after a tracker draw.  The test
fails when any case's lines differ (each such case is named with the seed,
its line and which languages agree; the first 10 in full), when a driver
exits non-zero or prints the wrong number of lines, or, in a run of 500
cases or more, when some operation, layout, distribution-dtype pair or
dropout data dtype of the library never drew, fewer than 60% of the cases drew or fewer than 3%
failed (agreement on nothing proves nothing).

Rerun a failure with the seed it printed: `--seed S` gives the same cases
(the first N of any longer run too); `--case K` runs only case K (0-based)
and prints its line and all three results in full; `--keep DIR` keeps the
case file and the three outputs there (rerun one driver by hand:
`draw_cases DIR/cases.txt`, `draw_cases.py DIR/cases.txt`).  C_DRIVER is build/tests/draw_cases; RUST_DRIVER
is build/rust/debug/examples/draw_cases (`cargo build --offline --example
draw_cases` in bindings/rust).
"""
import argparse
import collections
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cases as case_maker  # noqa: E402  (sets up the path to the Python binding)
import draw_cases as python_driver  # noqa: E402

LANGUAGES = ("C", "Python", "Rust")


def shorten(text, limit=400):
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def read_lines(path):
    with open(path, encoding="ascii", errors="replace") as f:
        return f.read().splitlines()


def covered(kinds, lines, results):
    """What the cases did not reach: a list of problems (empty when fine)."""
    problems = []
    drew = collections.Counter()
    for line, result in zip(lines, results):
        if result.startswith("ok "):
            case = case_maker.parse(line)
            drew[("op", case["op"])] += 1
            drew[("layout", case["layout"])] += 1
            if "dist" in case:
                drew[("kind", case["dist"], case["dtype"])] += 1
            elif "dtype" in case:  # dropout's data
                drew[("kind", "dropout", case["dtype"])] += 1
    wanted = ([("op", op) for op in case_maker.OPS] + [("layout", layout) for layout in kinds.layouts] +
              [("kind", dist, dtype) for dist, dtypes in kinds.makes.items() for dtype in dtypes] +
              [("kind", "dropout", dtype) for dtype in kinds.dropout_dtypes])
    missing = [" ".join(w[1:]) for w in wanted if drew[w] == 0]
    if missing:
        problems.append(f"no successful draw of: {', '.join(missing)}")
    ok = sum(result.startswith("ok ") for result in results)
    errors = sum(result.startswith("error ") for result in results)
    if ok < 0.6 * len(results):
        problems.append(f"only {ok} of {len(results)} cases drew")
    if errors < 0.03 * len(results):
        problems.append(f"only {errors} of {len(results)} cases failed")
    return problems


def run_drivers(drivers, folder, case_file, lines):
    """{language: result lines} of the three drivers, and whether all ran
    cleanly.  C and Rust run as processes while Python draws here."""
    for language, driver in drivers.items():
        if not os.access(driver, os.X_OK):
            print(f"FAIL: the {language} driver {driver} is not an executable file")
            return {}, False
    processes = {}
    try:
        for language, driver in drivers.items():
            with open(os.path.join(folder, f"{language.lower()}.txt"), "w", encoding="ascii") as out, \
                    open(os.path.join(folder, f"{language.lower()}.stderr"), "w", encoding="utf-8") as err:
                processes[language] = subprocess.Popen([driver, case_file], stdout=out, stderr=err)
        results = {"Python": [python_driver.result(line) for line in lines]}
    except BaseException:
        for process in processes.values():
            process.kill()
            process.wait()
        raise
    with open(os.path.join(folder, "python.txt"), "w", encoding="ascii", errors="replace") as f:
        f.write("".join(line + "\n" for line in results["Python"]))
    clean = True
    for language, process in processes.items():
        try:
            code = process.wait(timeout=600)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            code = "killed after 600 s"
        results[language] = read_lines(os.path.join(folder, f"{language.lower()}.txt"))
        if code != 0:
            stderr = "\n".join(read_lines(os.path.join(folder, f"{language.lower()}.stderr")))
            print(f"FAIL: the {language} driver exited {code}; its stderr: {shorten(stderr, 2000)}")
            clean = False
        if len(results[language]) != len(lines):
            print(f"FAIL: the {language} driver printed {len(results[language])} lines for {len(lines)} cases")
            clean = False
    return results, clean


def compare(lines, results, seed, numbers, rerun, show_all):
    """Prints the cases whose results differ (the first 10 in full); returns their count."""
    differences = 0
    for index, line in enumerate(lines):
        got = {language: (results[language][index] if index < len(results[language]) else "(no line)")
               for language in LANGUAGES}
        same = len(set(got.values())) == 1 and not got["C"].startswith("unsupported")
        differences += not same
        if show_all or (not same and differences <= 10):
            groups = collections.defaultdict(list)
            for language in LANGUAGES:
                groups[got[language]].append(language)
            agree = " | ".join(" = ".join(names) for names in groups.values())
            print(f"{'same' if same else 'DIFFERENT'} (seed {seed}, case {numbers[index]}): {agree}")
            print(f"  case: {line}")
            for language in LANGUAGES:
                print(f"  {language + ':':8}{got[language] if show_all else shorten(got[language])}")
            if not same and not show_all:
                print(f"  rerun: {rerun} --case {numbers[index]}")
    return differences


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("c_driver")
    parser.add_argument("rust_driver")
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=None, help="default: a random seed")
    parser.add_argument("--case", type=int, default=None, help="run only this case (0-based) and show it in full")
    parser.add_argument("--keep", default=None, help="keep the case file and outputs in this folder")
    opts = parser.parse_args()
    seed = random.SystemRandom().getrandbits(48) if opts.seed is None else opts.seed
    print(f"seed {seed}", flush=True)
    rerun = f"{sys.executable} {sys.argv[0]} {opts.c_driver} {opts.rust_driver} --seed {seed} --cases {opts.cases}"

    started = time.monotonic()
    kinds = case_maker.kinds()
    lines = case_maker.generate(opts.cases, seed, kinds)
    numbers = list(range(len(lines)))
    if opts.case is not None:
        if not 0 <= opts.case < len(lines):
            parser.error(f"--case {opts.case}: the run has cases 0 to {len(lines) - 1}")
        lines, numbers = [lines[opts.case]], [opts.case]
    folder = opts.keep or tempfile.mkdtemp(prefix="rngtrk-xlang-")
    try:
        os.makedirs(folder, exist_ok=True)
        case_file = os.path.join(folder, "cases.txt")
        with open(case_file, "w", encoding="ascii") as f:
            f.write("".join(line + "\n" for line in lines))
        results, clean = run_drivers({"C": opts.c_driver, "Rust": opts.rust_driver}, folder, case_file, lines)
    finally:
        if opts.keep:
            print(f"case file and outputs in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    if not results:
        return 1

    differences = compare(lines, results, seed, numbers, rerun, show_all=opts.case is not None)
    summary = collections.Counter(" ".join(r.split()[:2]) if r.startswith("error") else r.split(" ")[0]
                                  for r in results["C"])
    print(f"{len(lines)} case{'s' * (len(lines) != 1)} (seed {seed}) in {time.monotonic() - started:.1f} s: "
          + ", ".join(f"{n} {what}" for what, n in sorted(summary.items()))
          + f"; {differences} differing; layouts {' '.join(kinds.layouts)}; "
          + "; ".join(f"{dist} {' '.join(dtypes)}" for dist, dtypes in kinds.makes.items())
          + f"; dropout {' '.join(kinds.dropout_dtypes)}")
    failed = not clean
    if differences:
        print(f"FAIL: {differences} of {len(lines)} cases differ between C, Python and Rust; rerun: {rerun}")
        failed = True
    if opts.case is None and len(lines) >= 500:
        for problem in covered(kinds, lines, results["C"]):
            print(f"FAIL: the cases prove too little: {problem} (seed {seed})")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
