#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Lightning Fabric's own fabric.save / fabric.load (from a checkout outside
this project) on gloo processes, with "rng": RNGState(process=True) in
the state, as it is, and with the RNG states a user would add by hand;
prints what each load restored and one count line.

    python3 tests/upstream/run_lightning.py LIGHTNING_CHECKOUT [--path DIR ...] [--keep DIR]

LIGHTNING_CHECKOUT: a pytorch-lightning checkout (its src/ holds the
lightning package).  --path: folders of its pure-Python imports that
Debian lacks (lightning_utilities' and torchmetrics' src).  Two processes
seed with fabric.seed_everything(1000 + rank), train two steps, save and
draw on (the continuation every load is held to, per rank and generator:
Python's, NumPy's, torch's CPU generator).  With the line:
  2 processes: every generator of every rank continues;
  1: rank 0 continues, key 1 named in one DroppedStateWarning;
  4, on_missing="fresh": 0-1 continue, 2-3 start from derived states,
      different; 4, on_missing="raise": MissingStreamError on every rank;
  seed_everything(42) on every rank (equal generators): each continues;
  a checkpoint saved without the line: Fabric's strict load refuses it on
      every rank; with strict=False it loads, the RNG left as seeded.
Fabric as it is (no RNG saved: every generator restarts from the reseed)
and with each process's states added by hand (Fabric writes rank 0's dict
only: rank 0's states come back on every rank) are shown, and each is
checked to be what the line removes.

The Trainer (lightning_trainer_job.py): two processes fit 3 epochs with a
checkpoint after each, with callbacks=[RNGStateCallback()]; a resume from
the end of epoch 1 (fit with ckpt_path, the same script) draws in every
step of epoch 2 what the run that went on drew; on 1 process rank 0's
draws go on and key 1 is named; on 4, "fresh" gives the new ranks
different derived states and "raise" stops all 4; a checkpoint from inside
an epoch resumes Python's and NumPy's generators but not torch's (the
Trainer makes a new DataLoader iterator; Lightning warns, on rank 0); a
checkpoint saved without the callback is refused, or with on_absent="warn"
loaded with one warning (a save_weights_only one, Lightning refuses
itself); validate from a checkpoint leaves the generators as the Trainer
alone does; a strategy that restores after its setup (as FSDP and
DeepSpeed do) resumes as exactly and refuses as well. The Trainer as it
is: no step of the resume draws what the run that went on drew. Torch 2.2
or later. Exits 1 if a check fails."""
import argparse
import os
import shutil
import sys

from checkpoint_runs import Tally, all_are, environment, launch, records_of, verdicts, without_dcp, workspace

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "lightning_job.py")
TRAINER_JOB = os.path.join(HERE, "lightning_trainer_job.py")


def steps(record):
    """{(epoch, batch): [python, numpy, torch] drawn in that training step}."""
    return {(epoch, index): values for epoch, index, values in record["draws"]}


def same_steps(went_on, resumed):
    """Per resumed rank: the steps whose draws equal the run that went on,
    rank for rank; and whether the resume ran any step."""
    out = []
    for r in resumed:
        theirs = steps(went_on[r["rank"]]) if r["rank"] < len(went_on) else {}
        out.append(sorted(k for k, v in steps(r).items() if theirs.get(k) == v))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", help="a pytorch-lightning checkout")
    parser.add_argument("--path", action="append", default=[], help="a folder of Lightning's imports")
    parser.add_argument("--keep", help="a folder to keep the checkpoints, records and logs in")
    options = parser.parse_args()
    skipped = without_dcp("Lightning")
    if skipped:
        print(skipped)
        return 0
    work = workspace(options.keep, "rngtrk-lightning-")
    env = environment(os.path.join(options.checkout, "src"), *options.path)

    def job(label, nproc, mode, phase, checkpoint, *extra):
        out = os.path.join(work, label)
        launch(nproc, [sys.executable, JOB, "--mode", mode, "--phase", phase,
                       "--ckpt", os.path.join(work, checkpoint + ".ckpt"), "--out", out, *extra],
               env, out + ".log", label)
        return records_of(out, nproc, label)

    def restored(records, saved):
        return all(r["step"] == 2 and r["weight_sum"] == saved[0]["weight_sum"] for r in records)

    tally = Tally()
    try:
        print("Fabric's save and load with state[\"rng\"] = RNGState(process=True):")
        saved = job("rngtrk-save", 2, "rngtrk", "save", "rngtrk")
        tally.check("Fabric's own processes: its LightningEnvironment on gloo",
                    all(r["environment"] == "LightningEnvironment" and r["backend"] == "gloo" for r in saved))
        same = job("rngtrk-load2", 2, "rngtrk", "load", "rngtrk")
        tally.check("2 processes: every generator of every rank continues, model and step restored",
                    all_are(verdicts(saved, same), "cont") and restored(same, saved)
                    and not any(r["warnings"] for r in same), verdicts(saved, same))
        fewer = job("rngtrk-load1", 1, "rngtrk", "load", "rngtrk")
        dropped = [w for w in fewer[0]["warnings"] if w.startswith("DroppedStateWarning") and "key(s)" in w
                   and ": 1;" in w]
        tally.check("1 process: rank 0 continues, key 1 named in one warning",
                    all_are(verdicts(saved, fewer), "cont") and len(dropped) == 1 == len(fewer[0]["warnings"]),
                    (verdicts(saved, fewer), fewer[0]["warnings"]))
        fresh = job("rngtrk-load4-fresh", 4, "rngtrk", "load", "rngtrk", "--on-missing", "fresh")
        rows = verdicts(saved, fresh)
        new = [tuple(tuple(v) for v in r["draws"].values()) for r in fresh[2:]]
        tally.check("4 processes, on_missing='fresh': 0-1 continue, 2-3 start from derived states, different",
                    all_are(rows[:2], "cont") and all_are(rows[2:], "other") and len(set(new)) == 2
                    and all(r["fresh_process"] == ["python", "numpy", "torch-cpu"] for r in fresh[2:]), rows)
        refused = job("rngtrk-load4-raise", 4, "rngtrk", "load", "rngtrk", "--on-missing", "raise")
        tally.check("4 processes, on_missing='raise': MissingStreamError on every rank, no generator changed",
                    all("MissingStreamError" in r.get("error", "") for r in refused)
                    and all_are(verdicts(saved, refused), "seed0"), [r.get("error", "")[:80] for r in refused])
        equal = job("rngtrk-same-seed-save", 2, "rngtrk", "save", "same-seed", "--same-seed")
        again = job("rngtrk-same-seed-load2", 2, "rngtrk", "load", "same-seed")
        tally.check("seed_everything(42) on every rank: equal generators, each rank continues",
                    equal[0]["draws"] == equal[1]["draws"] and all_are(verdicts(equal, again), "cont"),
                    verdicts(equal, again))

        print("Fabric as it is, and with each process's states added by hand (the baselines):")
        asis = job("asis-save", 2, "asis", "save", "asis")
        asis_rows = verdicts(asis, job("asis-load2", 2, "asis", "load", "asis"))
        print(f"  as it is, 2 processes: {asis_rows}")
        tally.check("as it is, no generator continues (it saves no RNG: every one is the reseed)",
                    all_are(asis_rows, "seed0"), asis_rows)
        naive = job("naive-save", 2, "naive", "save", "naive")
        naive_rows = verdicts(naive, job("naive-load2", 2, "naive", "load", "naive"))
        print(f"  states added by hand, 2 processes: {naive_rows}")
        tally.check("states added by hand: rank 0's come back on every rank (Fabric writes rank 0's dict)",
                    all_are(naive_rows[:1], "cont") and all_are(naive_rows[1:], "cont0"),
                    naive_rows)

        old = job("old-load2", 2, "rngtrk", "load", "asis")
        tally.check("a checkpoint saved without the line: Fabric's strict load refuses it on every rank",
                    all("KeyError" in r.get("error", "") and "'rng'" in r.get("error", "") for r in old)
                    and all_are(verdicts(asis, old), "seed0"), [r.get("error", "")[:120] for r in old])
        lenient = job("old-load2-nonstrict", 2, "rngtrk", "load", "asis", "--no-strict")
        tally.check("... loaded with strict=False: it loads, the RNG left as seeded",
                    restored(lenient, asis) and all("error" not in r for r in lenient)
                    and all_are(verdicts(asis, lenient), "seed0"))
        trainer(tally, work, env)
    finally:
        if not options.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"Lightning: {tally.passed} passed, {tally.failed} failed")
    return 1 if tally.failed else 0


def trainer(tally, work, env):
    """The Trainer's checks (module text)."""
    def job(label, nproc, checkpoints, *extra):
        out = os.path.join(work, label)
        launch(nproc, [sys.executable, TRAINER_JOB, "--ckpt-dir", os.path.join(work, checkpoints), "--out", out,
                       *extra], env, out + ".log", label)
        return records_of(out, nproc, label)

    epoch_end = "epoch=1-step=8.ckpt"
    epoch_two = [(2, i) for i in range(4)]
    print("The Trainer with callbacks=[RNGStateCallback()]:")
    full = job("trainer-full", 2, "trainer")
    tally.check("3 epochs on 2 processes, a checkpoint after each, LightningEnvironment",
                epoch_end in full[0]["files"] and all(r["environment"] == "LightningEnvironment"
                                                      and "error" not in r for r in full), full[0].get("files"))
    resumed = job("trainer-resume2", 2, "trainer", "--resume", epoch_end)
    tally.check("resumed from the end of epoch 1 on 2 processes: every step of epoch 2 draws what the run that "
                "went on drew", same_steps(full, resumed) == [epoch_two, epoch_two], same_steps(full, resumed))
    one = job("trainer-resume1", 1, "trainer", "--resume", epoch_end)
    first = min(steps(one[0]))
    dropped = [w for w in one[0]["warnings"] if w.startswith("DroppedStateWarning") and ": 1;" in w]
    tally.check("1 process: rank 0's generators go on (its first step draws rank 0's), key 1 named in one warning",
                steps(one[0])[first] == steps(full[0])[first] and len(dropped) == 1, one[0]["warnings"])
    four = job("trainer-resume4-fresh", 4, "trainer", "--resume", epoch_end, "--on-missing", "fresh")
    firsts = [steps(r)[min(steps(r))] for r in four]
    theirs = [v for r in full for v in steps(r).values()]
    tally.check("4 processes, on_missing='fresh': 0 and 1 go on, 2 and 3 start from different derived states",
                firsts[:2] == [steps(full[0])[(2, 0)], steps(full[1])[(2, 0)]]
                and firsts[2] != firsts[3] and not any(v in theirs for v in firsts[2:])
                and all(r["fresh_process"] == ["python", "numpy", "torch-cpu"] for r in four[2:]), firsts)
    refused = job("trainer-resume4-raise", 4, "trainer", "--resume", epoch_end)
    tally.check("4 processes, on_missing='raise': MissingStreamError on every process, no step run",
                all("MissingStreamError" in r.get("error", "") and not r["draws"] for r in refused),
                [r.get("error", "")[:80] for r in refused])
    inside = job("trainer-full-every3", 2, "trainer-every3", "--every-steps", "3")
    middle = job("trainer-resume-inside", 2, "trainer-every3", "--resume", "epoch=1-step=6.ckpt", "--every-steps", "3")
    by_generator = [[steps(r)[(1, 2)][g] == steps(inside[r["rank"]])[(1, 2)][g] for g in range(3)] for r in middle]
    tally.check("from inside an epoch: Python's and NumPy's go on, torch's does not, and Lightning warns",
                by_generator == [[True, True, False]] * 2 and middle[0]["not_resumable_warning"],
                by_generator)  # Lightning warns on rank 0 only

    print("The Trainer as it is, and its checkpoints under the callback:")
    asis = job("trainer-asis-full", 2, "trainer-asis", "--no-callback")
    asis_resumed = job("trainer-asis-resume2", 2, "trainer-asis", "--no-callback", "--resume", epoch_end)
    print(f"  as it is, steps of epoch 2 that draw what the run that went on drew: {same_steps(asis, asis_resumed)}")
    tally.check("as it is, no step of the resume draws what the run that went on drew",
                same_steps(asis, asis_resumed) == [[], []] and all(len(r["draws"]) == 4 for r in asis_resumed))
    old = job("trainer-old", 2, "trainer-asis", "--resume", epoch_end)
    tally.check("a checkpoint saved without the callback: NoRNGStateError on every process, no step run",
                all("NoRNGStateError" in r.get("error", "") and not r["draws"] for r in old),
                [r.get("error", "")[:80] for r in old])
    warned = job("trainer-old-warn", 2, "trainer-asis", "--resume", epoch_end, "--on-absent", "warn")
    tally.check("... with on_absent='warn': one NoRNGStateWarning on each process, epoch 2 runs",
                all([w.split(":")[0] for w in r["warnings"]] == ["NoRNGStateWarning"] and len(r["draws"]) == 4
                    for r in warned), [r["warnings"] for r in warned])
    after_setup = job("trainer-resume2-after-setup", 2, "trainer", "--resume", epoch_end, "--restore-after-setup")
    old_after_setup = job("trainer-old-after-setup", 2, "trainer-asis", "--resume", epoch_end, "--restore-after-setup")
    tally.check("a strategy that restores after its setup (as FSDP, DeepSpeed): the resume is exact, and a checkpoint "
                "saved without the callback is refused",
                same_steps(full, after_setup) == [epoch_two, epoch_two]
                and all("NoRNGStateError" in r.get("error", "") and not r["draws"] for r in old_after_setup),
                (same_steps(full, after_setup), [r.get("error", "")[:80] for r in old_after_setup]))
    job("trainer-weights-full", 2, "trainer-weights", "--weights-only")
    weights = job("trainer-weights-resume", 2, "trainer-weights", "--resume", epoch_end, "--weights-only")
    tally.check("a save_weights_only checkpoint: Lightning's own refusal (KeyError) on every process, no step run",
                all("KeyError" in r.get("error", "") and "save_weights_only" in r.get("error", "")
                    and not r["draws"] for r in weights), [r.get("error", "")[:80] for r in weights])
    validated = job("trainer-validate", 2, "trainer", "--resume", epoch_end, "--stage", "validate")
    alone = job("trainer-validate-asis", 2, "trainer", "--resume", epoch_end, "--stage", "validate", "--no-callback")
    tally.check("validate with ckpt_path: the generators as the Trainer alone leaves them (it restores on fit)",
                [r["after"] for r in validated] == [r["after"] for r in alone]
                and not any(r.get("error") or r["warnings"] for r in validated), [r.get("error") for r in validated])


if __name__ == "__main__":
    sys.exit(main())
