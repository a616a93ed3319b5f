#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Megatron-LM's own save_checkpoint and load_checkpoint (from a checkout
outside this project) on gloo ranks, under rngtrk.torch.megatron.install()
and without it; prints what each load restored and one count line.

    python3 tests/upstream/run_megatron_checkpoints.py MEGATRON_LM_CHECKOUT [--keep DIR]

A job of 4 ranks (tp 2, pp 2) seeds with Megatron's _set_random_seed,
draws, saves at iteration 2 and draws on: that continuation is what every
load is held to, per stream (its name and seed: where a stream's seed is
the same, it is the same stream).  Under install():
  same layout (tp 2, pp 2): every rank draws exactly what the saver did;
  tp 1, pp 2 (2 ranks; Megatron ignores its RNG state on a TP change):
      every stream continues;
  tp 2, pp 2, dp 2 (8 ranks): every stream continues;
  tp 4, pp 1 (4 ranks; streams of tp ranks 2 and 3 are new):
      MissingStreamError on every rank and no tracker changed; then with
      install(on_missing="fresh"): the others continue, the new ones start
      at offset 0.
Without install() (Megatron alone, the baseline), the same save and the
tp 1, pp 2 load: every stream restarts from its seed, which is the bug
this hook removes (shown, not asserted: a Megatron that fixes it is good
news).  Exits 1 if a check under install() fails.
megatron_checkpoint_job.py says what is Megatron's and what is ours."""
import argparse
import os
import shutil
import sys

from checkpoint_runs import Tally, environment, launch, without_dcp, workspace

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "megatron_checkpoint_job.py")


class Jobs:
    def __init__(self, checkout, work):
        self.checkout, self.work = checkout, work

    def run(self, label, phase, checkpoint, nproc, tp, pp, *extra):
        out = os.path.join(self.work, label)
        launch(nproc, [sys.executable, JOB, phase, os.path.join(self.work, checkpoint), out, "--checkout",
                       self.checkout, "--tp", str(tp), "--pp", str(pp), *extra],
               environment(), os.path.join(self.work, label + ".log"), label)
        import torch
        return [torch.load(os.path.join(out, f"rank{r}.pt"), weights_only=False) for r in range(nproc)]


def continuation(saved):
    """{(name, seed): (offset at save, the draws after it)} over the saving ranks."""
    out = {}
    for record in saved:
        for name, (seed, offset) in record["states"].items():
            out[(name, seed)] = (offset, [step[name] for step in record["draws"]])
    return out


def check_continues(tally, label, saved, loaded, fresh_allowed=False):
    expected = continuation(saved)
    continued = fresh = 0
    for record in loaded:
        if record["error"]:
            tally.check(f"{label}: rank {record['rank']} loads", False, record["error"][1])
            return
        for name, (seed, offset) in record["states"].items():
            want = expected.get((name, seed))
            draws = [step[name] for step in record["draws"]]
            if want is None and fresh_allowed and offset == 0:
                fresh += 1
                continue
            if want is None or (offset, draws) != want:
                tally.check(f"{label}: rank {record['rank']} stream {name!r} (seed {seed}) continues", False,
                            f"offset {offset}, expected {None if want is None else want[0]}")
                return
            continued += 1
    tally.check(f"{label}: {continued} streams continue" + (f", {fresh} start fresh" if fresh_allowed else ""),
                continued > 0 and (fresh > 0 or not fresh_allowed))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", help="a Megatron-LM checkout")
    parser.add_argument("--keep", help="a folder to keep the checkpoints, records and logs in")
    options = parser.parse_args()
    skipped = without_dcp("megatron checkpoints")
    if skipped:
        print(skipped)
        return 0
    work = workspace(options.keep, "rngtrk-megatron-ckpt-")
    jobs, tally = Jobs(os.path.abspath(options.checkout), work), Tally()
    try:
        print("Megatron-LM's save_checkpoint / load_checkpoint under rngtrk.torch.megatron.install():")
        saved = jobs.run("save", "save", "main", 4, 2, 2)
        same = jobs.run("same", "load", "main", 4, 2, 2)
        tally.check("same layout: every rank draws what it drew after the save",
                    all(a["draws"] == b["draws"] and a["process"] == b["process"] for a, b in zip(saved, same)))
        check_continues(tally, "tp 1, pp 2", saved, jobs.run("tp1", "load", "main", 2, 1, 2))
        check_continues(tally, "tp 2, pp 2, dp 2", saved, jobs.run("dp2", "load", "main", 8, 2, 2))
        refused = jobs.run("tp4", "load", "main", 4, 4, 1)
        tally.check("tp 4, pp 1: MissingStreamError on every rank, no tracker changed",
                    all(r["error"] and r["error"][0] == "MissingStreamError" and r["unchanged"] for r in refused),
                    str([r["error"] and r["error"][0] for r in refused]))
        check_continues(tally, "tp 4, pp 1, on_missing='fresh'", saved,
                        jobs.run("tp4_fresh", "load", "main", 4, 4, 1, "--on-missing", "fresh"), fresh_allowed=True)

        print("Megatron-LM alone (no install()), the baseline:")
        base_saved = jobs.run("upstream_save", "save", "upstream", 4, 2, 2, "--upstream")
        base = jobs.run("upstream_tp1", "load", "upstream", 2, 1, 2, "--upstream")
        at_save = {(n, s): o for r in base_saved for n, (s, o) in r["states"].items()}
        restarted = sum(1 for r in base for n, (s, o) in r["states"].items() if o == 0 and at_save.get((n, s)))
        total = sum(len(r["states"]) for r in base)
        print(f"  tp 1, pp 2: {restarted} of {total} streams restarted from their seeds "
              "(Megatron: \"RNG state will be ignored\")")
    finally:
        if not options.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"megatron checkpoints: {tally.passed} passed, {tally.failed} failed")
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
