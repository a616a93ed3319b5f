# SPDX-License-Identifier: Apache-2.0
"""Running a job's ranks as subprocesses (the DCP and DTensor CPU-mesh
jobs): started together, each with one OpenMP thread (four ranks on a
2-core machine), and waited for with a time limit; a rank that hangs shows
what every rank printed and how each ended, not the wait alone."""
import os
import subprocess

import pytest


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
