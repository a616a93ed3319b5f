#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""torchtitan's own CheckpointManager (from a checkout outside this
project) on gloo ranks, with "rng": RNGState(process=True) in its states,
as it is, and with torchtitan #1194's proposal; prints what each load
restored and one count line.

    python3 tests/upstream/run_torchtitan.py TORCHTITAN_CHECKOUT [--path DIR ...] [--keep DIR]

--path: folders of torchtitan's pure-Python imports that Debian lacks
(tyro, spmd_types, docstring_parser, typeguard, shtab: checkouts, each
holding its package).  Four ranks seed by rank, train two steps, save and
draw on (the continuation every load is held to, per rank and generator:
Python's, NumPy's, torch's CPU generator).  With the line:
  4 ranks: every generator of every rank continues;
  2: ranks 0 and 1 continue, keys 2 and 3 named in one DroppedStateWarning;
  8, on_missing="fresh": 0-3 continue, 4-7 start from derived states, all
      different; 8, on_missing="raise": MissingStreamError on every rank;
  a checkpoint saved without the line: DCP's refusal on every rank, and
      with exclude_from_loading=["rng"] it loads, the RNG left as seeded.
torchtitan as it is (no RNG saved: every generator restarts from the
reseed) and #1194's proposal (the RNG inside the train state, which DCP
writes once for all ranks: one rank's state comes back everywhere) are
shown, and each is checked to be what the line removes.  Torch 2.2 or
later.  Exits 1 if a check fails."""
import argparse
import os
import shutil
import sys

from checkpoint_runs import Tally, all_are, environment, launch, records_of, verdicts, without_dcp, workspace

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "torchtitan_job.py")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", help="a torchtitan checkout")
    parser.add_argument("--path", action="append", default=[], help="a folder of torchtitan's imports")
    parser.add_argument("--keep", help="a folder to keep the checkpoints, records and logs in")
    options = parser.parse_args()
    skipped = without_dcp("torchtitan")
    if skipped:
        print(skipped)
        return 0
    work = workspace(options.keep, "rngtrk-torchtitan-")
    env = environment(options.checkout, *options.path)

    def job(label, nproc, mode, phase, checkpoint, *extra):
        out = os.path.join(work, label)
        launch(nproc, [sys.executable, JOB, "--mode", mode, "--phase", phase, "--ckpt", os.path.join(work, checkpoint),
                       "--out", out, *extra], env, out + ".log", label)
        return records_of(out, nproc, label)

    tally = Tally()
    try:
        print("torchtitan's CheckpointManager with states[\"rng\"] = RNGState(process=True):")
        saved = job("rngtrk-save", 4, "rngtrk", "save", "rngtrk")
        tally.check("the manager keeps the caller's states dict (the line reaches dcp.save)",
                    all(r["states_is_callers_dict"] and "rng" in r["manager_keys"] for r in saved))
        same = job("rngtrk-load4", 4, "rngtrk", "load", "rngtrk")
        tally.check("4 ranks: every generator of every rank continues, train state restored",
                    all_are(verdicts(saved, same), "cont") and all(r["step"] == 2 for r in same),
                    verdicts(saved, same))
        fewer = job("rngtrk-load2", 2, "rngtrk", "load", "rngtrk")
        dropped = [w for w in fewer[0]["warnings"] if "DroppedStateWarning" in w and "2, 3" in w]
        tally.check("2 ranks: 0 and 1 continue, keys 2 and 3 named in one warning",
                    all_are(verdicts(saved, fewer), "cont") and len(dropped) == 1 and not fewer[1]["warnings"],
                    (verdicts(saved, fewer), fewer[0]["warnings"]))
        fresh = job("rngtrk-load8-fresh", 8, "rngtrk", "load", "rngtrk", "--on-missing", "fresh")
        rows = verdicts(saved, fresh)
        new = [tuple(tuple(v) for v in r["draws"].values()) for r in fresh[4:]]
        tally.check("8 ranks, on_missing='fresh': 0-3 continue, 4-7 start from derived states, all different",
                    all_are(rows[:4], "cont") and all_are(rows[4:], "other") and len(set(new)) == 4
                    and all(r["fresh_process"] == ["python", "numpy", "torch-cpu"] for r in fresh[4:]), rows)
        refused = job("rngtrk-load8-raise", 8, "rngtrk", "load", "rngtrk", "--on-missing", "raise")
        tally.check("8 ranks, on_missing='raise': MissingStreamError on every rank, no generator changed",
                    all("MissingStreamError" in r.get("error", "") for r in refused)
                    and all_are(verdicts(saved, refused), "seed0"), [r.get("error", "")[:80] for r in refused])

        print("torchtitan as it is, and #1194's proposal (the baselines):")
        asis = job("asis-save", 4, "asis", "save", "asis")
        asis_rows = verdicts(asis, job("asis-load4", 4, "asis", "load", "asis"))
        print(f"  as it is, 4 ranks: {asis_rows}")
        tally.check("as it is, no generator continues (it saves no RNG: every one is the reseed)",
                    all_are(asis_rows, "seed0"), asis_rows)
        proposal = job("proposal-save", 4, "proposal", "save", "proposal")
        proposal_rows = verdicts(proposal, job("proposal-load4", 4, "proposal", "load", "proposal"))
        print(f"  #1194's proposal, 4 ranks: {proposal_rows}")
        sources = {g: {i if row[g] == "cont" else int(row[g][len("cont"):]) if row[g].startswith("cont") else None
                       for i, row in enumerate(proposal_rows)} for g in proposal_rows[0]}
        tally.check("#1194's proposal: each generator comes back from one rank on every rank",
                    all(len(ranks) == 1 and None not in ranks for ranks in sources.values()), sources)

        old = job("old-load4", 4, "rngtrk", "load", "asis")
        tally.check("a checkpoint saved without the line: DCP's refusal on every rank",
                    all("CheckpointException" in r.get("error", "") for r in old), [r.get("error", "")[:80] for r in old])
        excluded = job("old-load4-exclude", 4, "rngtrk", "load", "asis", "--exclude", "rng")
        tally.check("... loaded with exclude_from_loading=['rng']: it loads, the RNG left as seeded",
                    all(r["step"] == 2 and "error" not in r for r in excluded)
                    and all_are(verdicts(asis, excluded), "seed0"))
    finally:
        if not options.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"torchtitan: {tally.passed} passed, {tally.failed} failed")
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
