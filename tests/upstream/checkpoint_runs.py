# SPDX-License-Identifier: Apache-2.0
"""What the upstream checkpoint runners share (run_megatron_checkpoints.py,
run_accelerate.py, run_torchtitan.py, run_lightning.py): the torch they
need, their working folder, one gloo job started by
tests/torch_dist/launch.py, and the tally of their checks."""
import os
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
