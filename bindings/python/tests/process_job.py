# SPDX-License-Identifier: Apache-2.0
"""One rank of the multi-rank jobs of test_torch_dcp_process.py:
RNGState(process=True) on gloo ranks (started like dcp_job.py's, which
supplies the rendezvous, the recorder and the tracker's seeding).

    process_job.py PHASE --rank R --world W --store FILE --dir DIR

Each rank seeds the process tracker as dcp_job.py does (tensor-parallel
size 2, no expert parallelism, so every layout here holds only streams the
checkpoint has) and its process generators as training stacks do, per rank:
Python's random, NumPy's and torch's CPU generator from SEED + rank.  It
draws, saves or loads, and records its process generators' states and
draws in DIR/PHASE/rank{R}.pt; the test judges them.

  train   4 ranks: save "proc" (key: the rank); the uninterrupted draws;
          reseeded per data-parallel rank, save "proc_dp" with key=dp; one
          replica draws once more and saves "disagree" (refused)
  same    4 ranks: load "proc"
  fewer   2 ranks: load "proc" (keys 2 and 3 unused); then "proc_dp" with
          key = the rank (tp=1: each rank is data-parallel rank r)
  more    8 ranks: load "proc" with on_missing="raise", then "fresh"
"""
import os
import random
import sys
import warnings

import numpy as np
import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dcp_job  # noqa: E402 (this folder: the rendezvous, Recorder, the tracker's seeding)
from dcp_job import path, seed  # noqa: E402
from rngtrk.torch import _process_generators as generators  # noqa: E402
from rngtrk.torch.dcp import RNGState  # noqa: E402

SEED = 4321
TP = 2


def seed_process(value):
    random.seed(value)
    np.random.seed(value)
    torch.manual_seed(value)


def process_draws(steps=3):
    """Each step: Python's, NumPy's and torch's CPU generator, three numbers each."""
    return [{"python": torch.tensor([random.random() for _ in range(3)], dtype=torch.float64),
             "numpy": torch.from_numpy(np.random.rand(3)),
             "torch-cpu": torch.rand(3)} for _ in range(steps)]


def states():
    """{generator name: bytes} of this process's generators now."""
    return {generators.name(*g): generators.read(*g) for g in generators.present()}


def load(rec, label, checkpoint, args, **options):
    state = RNGState(process=True, **options)
    rec.data["states"]["before_" + label] = states()
    ok = rec.attempt(label, lambda: dcp.load({"rng": state}, checkpoint_id=path(args, checkpoint)))
    rec.data["states"][label] = states()
    rec.data["fresh"][label] = state.fresh_process
    return ok


def train(args, rec):
    world = dist.get_world_size()
    seed(world, TP, expert=False)
    rank = dist.get_rank()
    seed_process(SEED + rank)
    process_draws(2)
    rec.data["states"]["at_save"] = states()
    rec.attempt("save", lambda: dcp.save({"rng": RNGState(process=True)}, checkpoint_id=path(args, "proc")))
    rec.data["draws"]["after"] = process_draws()
    # Keyed by the data-parallel rank: tensor-parallel peers are replicas.
    dp = rank // TP
    seed_process(SEED + 100 + dp)
    process_draws(1)
    rec.data["states"]["at_dp_save"] = states()
    rec.attempt("save_dp", lambda: dcp.save({"rng": RNGState(process=True, key=lambda: dp)},
                                            checkpoint_id=path(args, "proc_dp")))
    rec.data["draws"]["after_dp"] = process_draws()
    if rank == 1:  # a replica of rank 0 (key 0) draws once more from Python's random
        random.random()
    rec.attempt("disagreeing_save", lambda: dcp.save({"rng": RNGState(process=True, key=lambda: dp)},
                                                     checkpoint_id=path(args, "disagree")))


def same(args, rec):
    seed(dist.get_world_size(), TP, expert=False)
    seed_process(0)
    load(rec, "load", "proc", args)
    rec.data["draws"]["after"] = process_draws()


def fewer(args, rec):
    seed(dist.get_world_size(), TP, expert=False)
    seed_process(0)
    load(rec, "load", "proc", args)
    rec.data["draws"]["after"] = process_draws()
    seed(dist.get_world_size(), 1, expert=False)  # tp=1 x dp=2: rank r is data-parallel rank r
    seed_process(0)
    rank = dist.get_rank()
    load(rec, "load_dp", "proc_dp", args, key=lambda: rank)
    rec.data["draws"]["after_dp"] = process_draws()


def more(args, rec):
    seed(dist.get_world_size(), TP, expert=False)
    seed_process(0)
    load(rec, "load_raise", "proc", args)
    load(rec, "load_fresh", "proc", args, on_missing="fresh")
    rec.data["draws"]["after"] = process_draws()


PHASES = {"train": train, "same": same, "fewer": fewer, "more": more}

if __name__ == "__main__":
    dcp_job.PHASES = PHASES
    warnings.simplefilter("default")
    dcp_job.main()
