#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Hugging Face Accelerate's own save_state / load_state (from a checkout
outside this project: ACCELERATE/src goes on the path) on gloo processes,
as it is and with rngtrk.torch.accelerate.register(); prints what each load
restored and one count line.

    python3 tests/upstream/run_accelerate.py ACCELERATE_CHECKOUT [--keep DIR]

Two processes seed by rank, draw, save_state and draw on (the continuation
every load is held to, per process: Python's, NumPy's and torch's CPU
generator).  With register():
  2 processes: every generator continues;
  2, Accelerate's random_states_{i}.pkl rewritten with other states:
      rngtrk's states are the ones the job goes on with;
  4, on_missing="raise": MissingStreamError on every process, nothing changed;
  4, on_missing="fresh": processes 0 and 1 continue, 2 and 3 get derived
      states, different from each other's and from 0's and 1's;
  1: process 0 continues; key 1 named in a DroppedStateWarning.
Accelerate as it is (the baseline, shown, not asserted): on CPU-only torch
its restore logs "Could not load random states" though it restored them
(#4283); on 4 processes, 2 and 3 find no file and keep their own
generators without a message.  Needs Accelerate's imports (Debian
unstable packages them: huggingface_hub, safetensors, psutil, PyYAML) and
torch 2.2 or later.  Exits 1 if a check with register() fails."""
import argparse
import json
import os
import shutil
import sys

from checkpoint_runs import Tally, environment, launch, without_dcp, workspace

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "accelerate_job.py")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", help="an Accelerate checkout")
    parser.add_argument("--keep", help="a folder to keep the checkpoints, results and logs in")
    options = parser.parse_args()
    skipped = without_dcp("accelerate")
    if skipped:
        print(skipped)
        return 0
    work = workspace(options.keep, "rngtrk-accelerate-")
    env = environment(os.path.join(options.checkout, "src"))

    def job(nproc, *args):
        label = "_".join(a for a in args if not a.startswith("-") and os.sep not in a)
        out = launch(nproc, [sys.executable, JOB, *args], env, os.path.join(work, f"{label}-{nproc}.log"),
                     f"the job ({nproc} processes: {' '.join(args)})")
        return [json.loads(line[line.index("RESULT ") + len("RESULT "):]) for line in out.splitlines()
                if "RESULT " in line]

    def load(mode, nproc, on_missing="raise", variant="plain"):
        results = job(nproc, "--phase", "load", "--mode", mode, "--dir", os.path.join(work, mode),
                      "--out", os.path.join(work, "out-" + mode), "--on-missing", on_missing, "--variant", variant)
        return sorted(results, key=lambda r: r["rank"])

    def verdicts(results):
        return [set(r["verdict"].values()) for r in results]

    tally = Tally()
    try:
        for mode in ("rngtrk", "asis"):
            job(2, "--phase", "save", "--mode", mode, "--dir", os.path.join(work, mode),
                "--out", os.path.join(work, "out-" + mode))
        print("Accelerate's save_state / load_state with rngtrk.torch.accelerate.register():")
        same = load("rngtrk", 2)
        tally.check("2 processes: every generator continues", verdicts(same) == [{"restored"}] * 2, verdicts(same))
        tamper = load("rngtrk", 2, variant="tamper")
        tally.check("2, random_states_{i}.pkl rewritten: rngtrk's states win",
                    verdicts(tamper) == [{"restored"}] * 2, verdicts(tamper))
        refused = load("rngtrk", 4)
        tally.check("4, on_missing='raise': MissingStreamError on every process, nothing changed",
                    all(r["error"] and "MissingStreamError" in r["error"] for r in refused)
                    and verdicts(refused) == [{"unchanged"}] * 4, [(r["error"] or "")[:80] for r in refused])
        fresh = load("rngtrk", 4, on_missing="fresh")
        firsts = [tuple(r["first_draws"].values()) for r in fresh]
        tally.check("4, on_missing='fresh': 0 and 1 continue, 2 and 3 start from derived states, all different",
                    verdicts(fresh)[:2] == [{"restored"}] * 2 and verdicts(fresh)[2:] == [{"other"}] * 2
                    and all(r["fresh_process"] == ["python", "numpy", "torch-cpu"] for r in fresh[2:])
                    and len(set(firsts)) == 4, (verdicts(fresh), [r["fresh_process"] for r in fresh]))
        one = load("rngtrk", 1)
        tally.check("1 process: it continues, key 1 named as dropped",
                    verdicts(one) == [{"restored"}]
                    and any("DroppedStateWarning" in w and "1" in w for w in one[0]["rngtrk_warnings"]),
                    (verdicts(one), one[0]["rngtrk_warnings"]))

        print("Accelerate as it is (the baseline):")
        base = load("asis", 2)
        print(f"  2 processes: {verdicts(base)}; process 0's log: {base[0]['accelerate_log_random']}")
        base = load("asis", 4)
        print(f"  4 processes: {verdicts(base)} (processes 2 and 3: random_states file "
              f"{[r['random_states_file'] for r in base[2:]]}); their messages: "
              f"{[r['accelerate_log_random'] for r in base[2:]]}")
    finally:
        if not options.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"accelerate: {tally.passed} passed, {tally.failed} failed")
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
