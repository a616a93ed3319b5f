# SPDX-License-Identifier: Apache-2.0
"""Running a job's ranks as subprocesses (the DCP and DTensor CPU-mesh
jobs): started together, each with one OpenMP thread (four ranks on a
2-core machine), and waited for with a time limit; a rank that hangs shows
what every rank printed and how each ended, not the wait alone."""
import os
import subprocess
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def run_ranks(commands, what, env=None, timeout=300):
    """Runs the commands (one per rank) at once; returns their outputs, or
    fails the test naming `what` when one does not finish or exits non-zero."""
    env = dict(os.environ if env is None else env, OMP_NUM_THREADS="1")
    procs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
             for command in commands]
    logs = []
    try:
        for p in procs:
            logs.append(p.communicate(timeout=timeout)[0])
    except subprocess.TimeoutExpired:
        # A rank that failed leaves the others waiting for it.
        for p in procs:
            p.kill()
        logs += [p.communicate()[0] for p in procs[len(logs):]]
        pytest.fail(f"{what} did not finish in {timeout} s:\n" + "\n".join(
            f"rank {r} ended with {p.returncode} (-9: killed here):\n{logs[r][-3000:]}" for r, p in enumerate(procs)))
    failed = [(r, p.returncode, logs[r]) for r, p in enumerate(procs) if p.returncode]
    if failed:
        pytest.fail(f"{what} failed: " + "\n".join(f"rank {r} exited {code}:\n{log[-3000:]}" for r, code, log in failed))
    return logs


# -- the DCP jobs' harness (test_torch_dcp.py, test_torch_dcp_process.py) -----------------

def distributed_ok():
    import torch.distributed as dist
    return dist.is_available() and dist.is_gloo_available()


def dcp_jobs(tmp_path_factory, label, job, dcp_module):
    """The module-scoped Jobs of a DCP test file, or a skip saying why
    (dcp_module: rngtrk.torch.dcp, None where this torch has no DCP)."""
    import torch
    if dcp_module is None:
        pytest.skip(f"this torch ({torch.__version__}) has no torch.distributed.checkpoint (torch >= 2.2)")
    if not distributed_ok():
        pytest.skip("this torch has no torch.distributed with gloo")
    return Jobs(str(tmp_path_factory.mktemp(label)), job)


class Jobs:
    """Runs the phases of a rank job (dcp_job.py, process_job.py) once per
    test session, in one folder; each rank saves what it recorded to
    FOLDER/PHASE/rank{R}.pt (dcp_job.Recorder)."""

    def __init__(self, folder, job):
        self.folder, self.job = folder, job
        self.results = {}

    def run(self, phase, world, timeout=300):
        if phase in self.results:
            return self.results[phase]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(HERE)] + [p for p in os.environ.get(
                       "PYTHONPATH", "").split(os.pathsep) if p]))
        # A store file of its own per run: a killed run's file would hold
        # the next run of the phase (a later test) at the rendezvous.
        store = os.path.join(tempfile.mkdtemp(prefix=f"store-{phase}-", dir=self.folder), "store")
        run_ranks([[sys.executable, self.job, phase, "--rank", str(r), "--world", str(world), "--store", store, "--dir",
                    self.folder] for r in range(world)], f"the {phase} phase on {world} ranks", env, timeout)
        import torch
        self.results[phase] = [torch.load(os.path.join(self.folder, phase, f"rank{r}.pt"), weights_only=False)
                               for r in range(world)]
        return self.results[phase]


def outcome(rank_result, label):
    return rank_result["outcomes"][label]


def raised(rank_result, label, cls):
    kind, classes, message = outcome(rank_result, label)
    assert kind == "error" and cls in classes, f"{label}: expected {cls}, got {kind} {classes} {message}"
    return message


def ok(rank_result, label):
    kind, classes, message = outcome(rank_result, label)
    assert kind == "ok", f"{label}: {classes} {message}"
