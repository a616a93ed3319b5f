# SPDX-License-Identifier: Apache-2.0
"""What the upstream checkpoint runners share (run_megatron_checkpoints.py,
run_accelerate.py, run_torchtitan.py, run_lightning.py): the torch they
need, their working folder, one gloo job started by
tests/torch_dist/launch.py, the tally of their checks; and, for the
process-generator runs (torchtitan's, Lightning's) and their jobs, the
draws a continuation is held to, each rank's record, and the verdicts."""
import glob
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LAUNCH = os.path.join(ROOT, "tests", "torch_dist", "launch.py")
BINDINGS = os.path.join(ROOT, "bindings", "python")


def without_dcp(what):
    """The line to print when this torch cannot run `what` (no DCP
    Stateful: torch before 2.2), else None."""
    import torch
    try:
        from torch.distributed.checkpoint.stateful import Stateful  # noqa: F401
    except ImportError:
        return (f"{what}: skipped: torch {torch.__version__} has no torch.distributed.checkpoint Stateful "
                "(rngtrk.torch.dcp needs torch 2.2 or later)")
    return None


def workspace(keep, prefix):
    work = os.path.abspath(keep or tempfile.mkdtemp(prefix=prefix))
    os.makedirs(work, exist_ok=True)
    return work


def environment(*paths):
    """os.environ with `paths` and bindings/python first on PYTHONPATH."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.abspath(p) for p in paths] + [BINDINGS, os.environ.get("PYTHONPATH", "")]))


def launch(nproc, command, env, log, label):
    """Runs `command` on `nproc` gloo ranks; its output goes to `log`; exits
    naming `label` if the job fails.  Returns its standard output."""
    done = subprocess.run([sys.executable, LAUNCH, "--nproc", str(nproc), "--timeout", "600", "--", *command],
                          env=env, capture_output=True, text=True, timeout=900)
    with open(log, "w") as f:
        f.write(done.stdout + done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"{label}: the job failed (exit {done.returncode}); its output:\n"
                         + (done.stdout + done.stderr)[-4000:])
    return done.stdout


class Tally:
    def __init__(self):
        self.passed, self.failed = 0, 0

    def check(self, what, ok, detail=""):
        self.passed += bool(ok)
        self.failed += not ok
        print(f"  {'ok  ' if ok else 'FAIL'} {what}" + ("" if ok else f": {detail}"))


K = 4  # values drawn from each process generator for a continuation


def draws():
    """K values from Python's, NumPy's and torch's CPU generator."""
    import numpy as np
    import torch
    return {"python": [random.random() for _ in range(K)], "numpy": np.random.random(K).tolist(),
            "torch": torch.rand(K, dtype=torch.float64).tolist()}


def seed_all(seed):
    import numpy as np
    import torch
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def reseeded():
    """What a load that restores nothing leaves: the load phase's seed 0."""
    seed_all(0)
    return draws()


def verdicts(saved, loaded):
    """Per loading rank, per generator: "cont" (its own rank's continuation),
    "cont<S>" (saved rank S's), "seed0" (untouched), or "other"."""
    zero = reseeded()
    out = []
    for r in loaded:
        row = {}
        for generator, values in r["draws"].items():
            same = [s["rank"] for s in saved if s["draws"][generator] == values]
            row[generator] = ("cont" if r["rank"] in same else f"cont{same[0]}" if same
                              else "seed0" if zero[generator] == values else "other")
        out.append(row)
    return out


def all_are(rows, verdict):
    return all(set(row.values()) == {verdict} for row in rows)


def write_record(out, rank, result):
    """A job's record of this rank, OUT/rank{R}.json, and its summary line."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps({k: v for k, v in result.items() if k not in ("draws", "traceback_tail")})[:900], flush=True)


def records_of(out, nproc, label):
    """Every process's record, by rank; exits if one is missing (no check
    may pass on fewer records than processes)."""
    records = []
    for path in glob.glob(os.path.join(out, "rank*.json")):
        with open(path) as f:
            records.append(json.load(f))
    if len(records) != nproc:
        raise SystemExit(f"{label}: {len(records)} records for {nproc} processes")
    return sorted(records, key=lambda r: r["rank"])
