# SPDX-License-Identifier: Apache-2.0
"""One worker of the elastic jobs of test_torch_elastic.py (gloo on the
CPU; elastic_agents.py starts, kills and restarts the workers).

    elastic_job.py --rank R --world W --store FILE --dir DIR --label L
                   [--steps N] [--every K] [--kill step:S|save:S] [--doomed R,...]
                   [--from-step S] [--no-save]

Each rank seeds its process generators by rank (Python's, NumPy's, torch's
CPU generator: 1000 + rank) and the tracker as Megatron-LM does for one
tensor-parallel rank, then trains: every step draws from each generator
and, inside the fork, from the tracker's model-parallel stream, then joins
an all_reduce (the step's gradient sync).  After every K-th step it saves
{"rng": RNGState(process=True)} with DCP into DIR/ckpt/step_S, and rank 0
marks the folder complete once every rank has returned from the save.  On
start it loads the newest complete checkpoint (or, --from-step, that one:
the uninterrupted run it is held to, which saves nothing: --no-save) and
goes on from the next step.

--kill step:S makes the --doomed ranks stop half way through step S;
--kill save:S, inside the save after step S, after writing their own data
and before DCP's metadata is written.  There they write DIR/doomed and wait
for the agent to kill them with SIGKILL.  What each rank drew is written to
DIR/L/rank{R}.json after every step, so a killed rank leaves what it had.
"""
import argparse
import faulthandler
import json
import os
import random
import sys
import time
import warnings

import numpy as np
import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bindings/python

import rngtrk.torch as rt  # noqa: E402
import rngtrk.torch.megatron as m  # noqa: E402
from rngtrk.torch.dcp import RNGState  # noqa: E402

COMPLETE = "complete"  # the marker of a checkpoint every rank finished


def parse():
    parser = argparse.ArgumentParser()
    for name in ("--rank", "--world"):
        parser.add_argument(name, type=int, required=True)
    for name in ("--store", "--dir", "--label"):
        parser.add_argument(name, required=True)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--every", type=int, default=2)
    parser.add_argument("--kill", default="")
    parser.add_argument("--doomed", default="")
    parser.add_argument("--from-step", type=int, default=None)
    parser.add_argument("--no-save", action="store_true")
    return parser.parse_args()


def newest_complete(folder):
    """The step of the newest checkpoint every rank finished, or None."""
    steps = [int(name[len("step_"):]) for name in os.listdir(folder)
             if name.startswith("step_") and os.path.exists(os.path.join(folder, name, COMPLETE))] \
        if os.path.isdir(folder) else []
    return max(steps) if steps else None


def wait_for_the_kill(args):
    with open(os.path.join(args.dir, "doomed"), "w") as f:
        f.write(str(args.rank))
    time.sleep(600)


class Writer(dcp.FileSystemWriter):
    """DCP's file writer; on a doomed rank of a save:S job, stops once its
    own data is written, before the coordinator writes the metadata."""

    def __init__(self, path, args, doomed):
        super().__init__(path)
        self._args, self._doomed = args, doomed

    def write_data(self, plan, planner):
        written = super().write_data(plan, planner)
        if self._doomed:
            written.wait()
            wait_for_the_kill(self._args)
        return written


def step_draws(tracker, args, step, doomed_here):
    draws = {"python": random.random(), "numpy": float(np.random.rand())}
    if doomed_here:
        wait_for_the_kill(args)  # half way through the step
    draws["torch"] = torch.rand(2).tolist()
    with tracker.fork("model-parallel-rng"):
        draws["stream"] = rt.rand(3).tolist()
    return draws


def main():
    faulthandler.dump_traceback_later(180, exit=False)  # a worker still running then shows where it waits
    args = parse()
    kind, _, at = args.kill.partition(":")
    doomed = str(args.rank) in args.doomed.split(",")
    store = dist.FileStore(args.store, args.world)
    dist.init_process_group("gloo", store=store, rank=args.rank, world_size=args.world)
    random.seed(1000 + args.rank)
    np.random.seed(1000 + args.rank)
    torch.manual_seed(1000 + args.rank)
    m.model_parallel_cuda_manual_seed(1234, tp_rank=0, ep_rank=0, etp_rank=0)
    tracker = m.get_cuda_rng_tracker()

    folder = os.path.join(args.dir, "ckpt")
    loaded = args.from_step if args.from_step is not None else newest_complete(folder)
    record = {"rank": args.rank, "world": args.world, "loaded": loaded, "warnings": [], "draws": {}}
    if loaded is not None:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            dcp.load({"rng": RNGState(process=True)}, checkpoint_id=os.path.join(folder, f"step_{loaded}"))
        record["warnings"] = [f"{w.category.__name__}: {w.message}" for w in seen
                              if w.category.__name__.endswith(("StreamWarning", "StateWarning"))]
    out = os.path.join(args.dir, args.label, f"rank{args.rank}.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)

    for step in range(0 if loaded is None else loaded + 1, args.steps):
        record["draws"][step] = step_draws(tracker, args, step, doomed and kind == "step" and int(at) == step)
        dist.all_reduce(torch.ones(1))  # the step's gradient sync
        with open(out + ".part", "w") as f:
            json.dump(record, f)
        os.replace(out + ".part", out)
        if (step + 1) % args.every == 0 and not args.no_save:
            path = os.path.join(folder, f"step_{step}")
            writer = Writer(path, args, doomed and kind == "save" and int(at) == step)
            dcp.save({"rng": RNGState(process=True)}, storage_writer=writer)
            dist.barrier()
            if args.rank == 0:
                open(os.path.join(path, COMPLETE), "w").close()
            dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
