# SPDX-License-Identifier: Apache-2.0
"""Two elastic agents on this machine, as torchrun's would run a 2-node
job, for test_torch_elastic.py: the smallest launcher that does what
torchrun's agents do when a node dies.

Why not torchrun: torch.distributed.run's agents meet through a TCPStore
that torch 2.4 and later make with libuv, and Debian's torch (2.6, 2.14)
is built without it ("use_libuv was requested but PyTorch was built
without libuv support"; USE_LIBUV=0 does not reach the agent's store), so
neither its static nor its c10d rendezvous starts here
(tests/torch_dist/launch.py).  What is kept is what matters to the random
state: each agent starts its workers as one group; when a worker dies
(here: every worker of one agent, with SIGKILL, as when its node is
lost), the surviving agent stops its own workers too and starts them
again, as a new group of the smaller world, which resumes from the newest
complete checkpoint.  The rendezvous is a FileStore per round.

    run(folder, kill, doomed_agent=1) -> {"first": Round, "left": {...}, "resumed": [...]}
"""
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "elastic_job.py")
AGENTS, PER_AGENT = 2, 2


class Round:
    """One round of the job: every surviving agent's workers, one group."""

    def __init__(self, folder, label, world, extra):
        self.folder, self.label = folder, label
        store = os.path.join(folder, f"store-{label}")
        env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1", PYTHONPATH=os.pathsep.join(
            [os.path.dirname(HERE)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        self.logs = [open(os.path.join(folder, f"{label}-rank{r}.log"), "w") for r in range(world)]
        self.workers = [subprocess.Popen([sys.executable, JOB, "--rank", str(r), "--world", str(world), "--store",
                                          store, "--dir", folder, "--label", label, *extra],
                                         stdout=self.logs[r], stderr=subprocess.STDOUT, env=env)
                        for r in range(world)]

    def agent(self, a):
        return self.workers[a * PER_AGENT:(a + 1) * PER_AGENT]

    def kill(self, workers):
        for w in workers:
            if w.poll() is None:
                w.send_signal(signal.SIGKILL)
        for w in workers:
            w.wait()

    def finish(self, timeout):
        deadline = time.monotonic() + timeout
        for w in self.workers:
            try:
                w.wait(max(1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.kill(self.workers)
                raise RuntimeError(f"{self.label}: a worker did not finish in {timeout} s:\n{self.output()}")
        for log in self.logs:
            log.close()
        failed = [(r, w.returncode) for r, w in enumerate(self.workers) if w.returncode]
        if failed:
            raise RuntimeError(f"{self.label}: workers exited {failed}:\n{self.output()}")

    def output(self):
        text = []
        for r, log in enumerate(self.logs):
            log.flush()
            with open(log.name) as f:
                text.append(f"--- rank {r}:\n{f.read()[-2500:]}")
        return "\n".join(text)

    def records(self):
        out = []
        for r in range(len(self.workers)):
            with open(os.path.join(self.folder, self.label, f"rank{r}.json")) as f:
                out.append(json.load(f))
        return out


def run(folder, kill, doomed_agent=1, steps=8, every=2, timeout=600):
    """The job on AGENTS x PER_AGENT workers; `kill` ("step:S" or "save:S")
    says where the doomed agent's node is lost.  Then the surviving agent's
    workers, restarted as a smaller world, go on from the newest complete
    checkpoint.  Returns the first round, what its checkpoints' folders held
    when it was stopped ({"step_S": [file names]}) and the resumed round's
    records."""
    world = AGENTS * PER_AGENT
    doomed = [str(r) for r in range(doomed_agent * PER_AGENT, (doomed_agent + 1) * PER_AGENT)]
    options = ["--steps", str(steps), "--every", str(every)]
    first = Round(folder, "first", world, options + ["--kill", kill, "--doomed", ",".join(doomed[:1])])
    signal_file = os.path.join(folder, "doomed")
    deadline = time.monotonic() + timeout
    while not os.path.exists(signal_file):
        if time.monotonic() > deadline or any(w.poll() is not None for w in first.workers):
            first.kill(first.workers)
            raise RuntimeError(f"the first round never reached {kill}:\n{first.output()}")
        time.sleep(0.05)
    first.kill(first.agent(doomed_agent))  # the node is lost: all its workers at once
    survivors = [w for a in range(AGENTS) if a != doomed_agent for w in first.agent(a)]
    first.kill(survivors)  # the surviving agent stops its workers (torchrun's agent does) ...
    os.remove(signal_file)
    ckpt = os.path.join(folder, "ckpt")
    left = {name: sorted(os.listdir(os.path.join(ckpt, name))) for name in sorted(os.listdir(ckpt))}
    resumed = Round(folder, "resumed", world - PER_AGENT, options)  # ... and restarts them, a smaller world
    resumed.finish(timeout)
    return {"first": first, "left": left, "resumed": resumed.records()}


def reference(folder, step, world, steps=8, every=2, timeout=600):
    """The uninterrupted run on `world` workers from checkpoint `step`."""
    again = Round(folder, f"reference-{step}", world, ["--steps", str(steps), "--every", str(every),
                                                       "--from-step", str(step), "--no-save"])
    again.finish(timeout)
    return again.records()
