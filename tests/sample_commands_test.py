#!/usr/bin/env python3
"""The same `sample` command in three languages: runs a few hundred random
argument sets through the C `rngtrk sample`, the Rust example `sample` and
Python's `python3 -m rngtrk sample`, and fails unless stdout, stderr and
the exit status agree byte for byte.

    sample_commands_test.py RNGTRK_COMMAND RUST_SAMPLE [--sets N] [--seed S]

The argument sets are mostly valid requests (every layout, distribution and
dtype, seeds and offsets up to 2^64 - 4, first indices near 2^64, numbers
in every spelling the grammar takes) with one mistake in about a third of
them (a misspelt option or value, a duplicate, a missing or stray value,
bad numbers, a parameter of another distribution, values the library
refuses).  Python runs in this process for every set (the function
`python3 -m rngtrk sample` calls) and as a real `python3 -m rngtrk sample`
process for every tenth, which checks the command's own wiring; C and Rust
run as processes every time.
"""
import argparse
import io
import os
import random
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "bindings", "python"))

from rngtrk import sample_command  # noqa: E402  (after the path is set)
from rngtrk._sample_usage import USAGE  # noqa: E402

LAYOUTS = ["stateless", "nvfuser", "torch-eager-cuda", "triton"]
MAKES = {"bits": ["u32", "u64"], "uniform": ["f32", "f64", "f16", "bf16"], "normal": ["f32", "f64"],
         "bernoulli": ["u8"]}
PARAMS = {"bits": [], "uniform": ["--low", "--high"], "normal": ["--mean", "--std"], "bernoulli": ["--p"]}
U64_MAX = (1 << 64) - 1


def a_number(rng, low=-4.0, high=4.0):
    """A finite number in one of the grammar's spellings."""
    v = rng.uniform(low, high)
    return rng.choice([repr(v), "%.3f" % v, "%.2e" % v, "%+g" % v, str(int(v)), ".5", "-0", "1e-3", "2.",
                       "0.000001", "1E2"])


def a_bad_number(rng):
    return rng.choice(["inf", "-Infinity", "nan", "1e400", "0x10", "abc", "", "1e", "+", ".", " 1", "1,5", "1_0"])


def a_bad_whole(rng):
    return rng.choice(["-1", "1.5", "18446744073709551616", "99999999999999999999999", "", "x", "0x10", "-"])


def valid_request(rng):
    """[(option, value or None)] of a request the commands should draw."""
    dist = rng.choice(list(MAKES))
    layout = rng.choice(LAYOUTS)
    options = [("--seed", str(rng.choice([0, 1, 1234, rng.getrandbits(64), U64_MAX, rng.randrange(10**6)])))]
    options.append(("--count", str(rng.choice([0, 1, 2, 3, 4, 5, 7, 8, 13, 17, 32, 40]))))
    if rng.random() < 0.7:
        options.append(("--dist", dist))
    else:
        dist = "uniform"
    if rng.random() < 0.7:
        options.append(("--layout", layout))
    else:
        layout = "stateless"
    if rng.random() < 0.7:
        options.append(("--dtype", rng.choice(MAKES[dist])))
    if rng.random() < 0.5:
        options.append(("--offset", str(4 * rng.choice([0, 1, 2, rng.getrandbits(62), (1 << 62) - 1]))))
    if rng.random() < 0.4:
        options.append(("--first", str(rng.choice([1, 3, 5, 255, 256, 257, 1023, rng.getrandbits(40)]))))
    for name in PARAMS[dist]:
        if rng.random() < 0.6:
            if name == "--p":
                options.append((name, rng.choice(["0", "1", "0.5", "0.1", "0.9", ".25", "1e-1"])))
            elif name in ("--std",):
                options.append((name, rng.choice(["0", "1", "0.02", "2.5", "1e-3"])))
            else:
                options.append((name, a_number(rng)))
    if layout == "torch-eager-cuda":
        if rng.random() < 0.5:
            options.append(("--sm-count", str(rng.choice([1, 2, 4, 108, 132]))))
        if rng.random() < 0.5:
            options.append(("--max-threads-per-sm", str(rng.choice([256, 512, 1024, 2048]))))
    if rng.random() < 0.15:
        options.append(("--numel", str(rng.choice([100, 1000, 10**6]))))
    if rng.random() < 0.2:
        options.append(("--bits", None))
    return options, dist


def mistake(rng, options, dist):
    """The options with one mistake."""
    names = [n for n, _ in options]
    kind = rng.randrange(16)
    if kind == 0:  # a required option missing
        return [o for o in options if o[0] != rng.choice(["--seed", "--count"])]
    if kind == 1:  # an option twice
        return options + [rng.choice(options)]
    if kind == 2:  # a misspelt option, close or not
        return options + [(rng.choice(["--sed", "--cont", "--dtyp", "--layuot", "--frist", "--bit", "--zzz",
                                        "--max-threads", "-h2", "--p0"]), "1")]
    if kind == 3:  # a stray argument
        return options + [("stray", None)]
    if kind == 4:  # a misspelt or unknown choice
        return options + [(rng.choice(["--layout", "--dist", "--dtype"]),
                           rng.choice(["stateles", "uniforn", "f33", "float", "torch", "bf", "x" * 70]))]
    if kind == 5:  # a bad whole number
        return [(n, a_bad_whole(rng) if n in ("--seed", "--count") else v) for n, v in options]
    if kind == 6:  # a bad real number
        name = rng.choice(PARAMS[dist] or ["--low"])
        return options + [(name, a_bad_number(rng))]
    if kind == 7:  # a parameter of another distribution
        other = [p for p in ("--low", "--high", "--mean", "--std", "--p") if p not in PARAMS[dist]]
        return options + [(rng.choice(other), "0.5")]
    if kind == 8:  # an offset that is not a multiple of 4
        return [o for o in options if o[0] != "--offset"] + [("--offset", str(rng.choice([1, 2, 3, 4 * 7 + 1])))]
    if kind == 9:  # first + count past 2^64
        return [o for o in options if o[0] not in ("--first", "--count")] + [
            ("--first", str(U64_MAX - rng.randrange(3))), ("--count", str(rng.choice([2, 5])))]
    if kind == 10:  # a wrong dtype for the distribution
        wrong = [d for d in ("u8", "u32", "u64", "f16", "bf16", "f32", "f64") if d not in MAKES[dist]]
        return [o for o in options if o[0] not in ("--dtype", "--dist")] + [("--dist", dist),
                                                                            ("--dtype", rng.choice(wrong))]
    if kind == 11:  # values the library refuses
        bad = {"uniform": [("--low", "2"), ("--high", "1")], "normal": [("--std", "-1")],
               "bernoulli": [("--p", rng.choice(["1.5", "-0.1"]))], "bits": [("--numel", "1")]}[dist]
        return [o for o in options if o[0] not in dict(bad)] + bad
    if kind == 12:  # a torch-eager-cuda geometry the library refuses, or a zero
        return [o for o in options if o[0] not in ("--layout", "--max-threads-per-sm", "--sm-count")] + [
            ("--layout", "torch-eager-cuda"),
            rng.choice([("--max-threads-per-sm", "100"), ("--sm-count", "0"), ("--sm-count", "4294967296")])]
    if kind == 13:  # a flag given a value, or an option with none at the end
        return options + ([("--bits=1", None)] if "--bits" not in names else []) + [("--seed", None)]
    if kind == 14:  # numel below first + count
        return options + [("--numel", "1")] if "--numel" not in names else options
    return options + [("--help", None)] if rng.random() < 0.3 else options  # help wins over everything


def argv_of(rng, options):
    """The options as arguments, each "--name value" or "--name=value"."""
    argv = []
    rng.shuffle(options)
    for name, value in options:
        if value is None:
            argv.append(name)
        elif rng.random() < 0.3:
            argv.append(f"{name}={value}")
        else:
            argv += [name, value]
    return argv


def run_process(argv, env=None):
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=60)
    return done.stdout, done.stderr, done.returncode


def run_in_process(args):
    out, err = io.BytesIO(), io.BytesIO()
    code = sample_command.run([a.encode() for a in args], out, err)
    return out.getvalue(), err.getvalue(), code


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command")
    parser.add_argument("rust_sample")
    parser.add_argument("--sets", type=int, default=300)
    parser.add_argument("--seed", type=int, default=2026)
    opts = parser.parse_args()
    rng = random.Random(opts.seed)
    env = dict(os.environ, PYTHONPATH=os.path.join(TOP, "bindings", "python"))

    # The help text is one file for all three; the Python copy must be current.
    with open(os.path.join(TOP, "tools", "cli", "sample_usage.txt"), encoding="utf-8") as f:
        if f.read() != USAGE:
            print("bindings/python/rngtrk/_sample_usage.py is stale: run make python-usage")
            return 1

    failures, outcomes = 0, {0: 0, 1: 0, 2: 0}
    big = [["--seed", "7", "--count", "70000", "--dist", "normal", "--dtype", "f64", "--std", "1e-3"],
           ["--seed", "8", "--count", "70000", "--dtype", "bf16", "--low", "-3", "--high", "5"]]
    for i in range(opts.sets + len(big)):
        if i < len(big):
            args = big[i]  # past one 65536-element chunk, and many formats
        else:
            options, dist = valid_request(rng)
            if rng.random() < 0.35:
                options = mistake(rng, options, dist)
            args = argv_of(rng, options)
        c = run_process([opts.command, "sample"] + args)
        results = {"rust": run_process([opts.rust_sample] + args), "python": run_in_process(args)}
        if i % 10 == 0:
            results["python3 -m rngtrk"] = run_process([sys.executable, "-m", "rngtrk", "sample"] + args, env)
        outcomes[c[2]] = outcomes.get(c[2], 0) + 1
        for who, got in results.items():
            if got != c:
                failures += 1
                print(f"DIFFERENT ({who} vs C): sample {' '.join(args)}")
                for label, mine, theirs in (("stdout", got[0], c[0]), ("stderr", got[1], c[1])):
                    if mine != theirs:
                        print(f"  {label} C:    {theirs[:300]!r}\n  {label} {who}: {mine[:300]!r}")
                if got[2] != c[2]:
                    print(f"  exit C {c[2]}, {who} {got[2]}")
    total = opts.sets + len(big)
    print(f"{total} argument sets: {outcomes.get(0, 0)} drew (exit 0), {outcomes.get(2, 0)} usage errors (exit 2), "
          f"{outcomes.get(1, 0)} data errors (exit 1); {failures} differences")
    # The generator must exercise both sides, or agreement proves little.
    if outcomes.get(0, 0) < total // 3 or outcomes.get(2, 0) < total // 10:
        print("the argument sets did not cover both successes and errors")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
