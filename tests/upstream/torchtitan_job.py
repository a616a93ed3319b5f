# SPDX-License-Identifier: Apache-2.0
"""One rank of run_torchtitan.py's jobs: a gloo (CPU) job that saves and
loads with torchtitan's own CheckpointManager
(torchtitan/components/checkpointer/dcp.py, from a checkout outside this
project), with the RNG of the process handled three ways (--mode):

  rngtrk    states={"train_state": TrainState, "rng": RNGState(process=True)}
  asis      states={"train_state": TrainState}            (torchtitan today)
  proposal  states={"train_state": TrainState(with_rng)}  (pytorch/torchtitan#1194:
            the rank's Python/NumPy/torch RNG states inside the train state)

    job.py --mode M --phase save --ckpt DIR --out DIR [--step S]
    job.py --mode M --phase load --ckpt DIR --out DIR [--on-missing raise|fresh]
           [--exclude rng] [--async-mode async]

Phase save: seed random/numpy/torch with 1000+rank, train 2 steps (the
batches come from torch's generator), manager.save(S), then draw K values
from each generator: the expected continuation, OUT/rank{R}.json.
Phase load: seed everything 0, manager.load(step=-1) (the latest), draw K
values from each generator into OUT/rank{R}.json, with the loaded step,
the warnings issued during the load and the error it raised (if any).

Start the ranks with tests/torch_dist/launch.py (env:// rendezvous), with
torchtitan's source, its pure-Python dependencies (tyro, spmd_types, ...)
and bindings/python on PYTHONPATH (run_torchtitan.py does).  torchtitan's:
CheckpointManager, OptimizersContainer, LRSchedulersContainer.  Ours: the
model (one nn.Linear, replicated, gradients averaged with all_reduce), the
train state (the Trainer's state_dict fields) and the unit test's kind of
fake dataloader.
"""
import argparse
import io
import os
import pickle
import random
import sys
import traceback
import warnings

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.checkpoint.stateful import Stateful

from torchtitan.components.checkpointer import CheckpointManager
from torchtitan.components.optimizer import LRSchedulersContainer, OptimizersContainer
from torchtitan.components.optimizer.optimizer import ParamGroupConfig

from checkpoint_runs import draws, seed_all, write_record


class TrainState(Stateful):
    """What the Trainer itself registers as "train_state" (trainer.py:
    state_dict() -> {"step", "ntokens_seen"}); with_rng adds the #1194
    proposal: this rank's RNG states inside it."""

    def __init__(self, with_rng=False):
        self.step = 0
        self.ntokens_seen = 0
        self.with_rng = with_rng

    def state_dict(self):
        sd = {"step": self.step, "ntokens_seen": self.ntokens_seen}
        if self.with_rng:
            sd["rng"] = {"python": pickle.dumps(random.getstate()),
                         "numpy": pickle.dumps(np.random.get_state()),
                         "torch": torch.get_rng_state()}
        return sd

    def load_state_dict(self, sd):
        self.step = sd["step"]
        self.ntokens_seen = sd["ntokens_seen"]
        if self.with_rng:
            rng = sd["rng"]
            random.setstate(pickle.loads(_as_bytes(rng["python"])))
            np.random.set_state(pickle.loads(_as_bytes(rng["numpy"])))
            torch.set_rng_state(rng["torch"])


def _as_bytes(value):
    return value.getvalue() if isinstance(value, io.BytesIO) else value


class FakeDataLoader(Stateful):
    """The unit test's FakeDataLoader, minus torch's DataLoader base."""

    def state_dict(self):
        return {}

    def load_state_dict(self, sd):
        pass


def build(args, rank):
    torch.manual_seed(42)  # one model on every rank: data-parallel replicas
    model = nn.Linear(4, 2)
    optimizers = OptimizersContainer.Config(param_groups=[
        ParamGroupConfig(pattern=".*", optimizer_name="AdamW", optimizer_kwargs={"lr": 1e-2})]).build(
        model_parts=[model])
    lr_schedulers = LRSchedulersContainer.Config(warmup_steps=1).build(optimizers=optimizers, training_steps=10)
    train_state = TrainState(with_rng=args.mode == "proposal")
    states = {"train_state": train_state}
    rng = None
    if args.mode == "rngtrk":
        from rngtrk.torch.dcp import RNGState
        rng = RNGState(process=True, on_missing=args.on_missing)
        states["rng"] = rng  # the one line (trainer.py: states={"train_state": self, "rng": RNGState(process=True)})
    config = CheckpointManager.Config(
        enable=True,
        async_mode=args.async_mode,
        folder=os.path.abspath(args.ckpt),
        interval=1,
        keep_latest_k=0,
        last_save_model_only=args.last_save_model_only,
        export_dtype="float32",
        exclude_from_loading=args.exclude,
        initial_load_path=None,
        initial_load_model_only=False,
    )
    manager = CheckpointManager(config, dataloader=FakeDataLoader(), model_parts=[model], optimizers=optimizers,
                                lr_schedulers=lr_schedulers, states=states, sd_adapter=None, base_folder="")
    return model, optimizers, lr_schedulers, train_state, rng, states, manager


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=("rngtrk", "asis", "proposal"), required=True)
    p.add_argument("--phase", choices=("save", "load"), required=True)
    p.add_argument("--ckpt", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--step", type=int, default=2)
    p.add_argument("--on-missing", default="raise")
    p.add_argument("--exclude", action="append", default=[])
    p.add_argument("--async-mode", default="disabled")
    p.add_argument("--last-step", action="store_true", help="save(step, last_step=True)")
    p.add_argument("--last-save-model-only", action="store_true")
    args = p.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    model, optimizers, lr_schedulers, train_state, rng, states, manager = build(args, rank)
    result = {"rank": rank, "world": world, "mode": args.mode, "phase": args.phase,
              "states_is_callers_dict": manager.states is states, "manager_keys": sorted(manager.states)}

    if args.phase == "save":
        seed_all(1000 + rank)
        for _ in range(args.step):  # train: batches from torch's generator, one draw of python's and numpy's
            random.random(), np.random.random()
            loss = model(torch.randn(3, 4)).square().mean()
            loss.backward()
            for param in model.parameters():  # DDP's gradient average
                dist.all_reduce(param.grad)
                param.grad /= world
            optimizers.step()
            lr_schedulers.step()
            optimizers.zero_grad()
            train_state.step += 1
            train_state.ntokens_seen += 12
        result["saved"] = manager.save(curr_step=train_state.step, last_step=args.last_step)
        manager.maybe_wait_for_saving()
        result["weight_sum"] = float(model.weight.detach().sum())
        result["draws"] = draws()
    else:
        seed_all(0)
        caught = []
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result["loaded"] = manager.load(step=-1)
        except BaseException as e:  # DCP's CheckpointException is a BaseException
            if isinstance(e, KeyboardInterrupt):
                raise
            result["error"] = f"{type(e).__module__}.{type(e).__name__}: {e}"
            result["traceback_tail"] = traceback.format_exc().splitlines()[-12:]
        result["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught
                              if "rngtrk" in w.category.__module__ or "RNGState" in str(w.message)]
        result["other_warnings"] = sorted({f"{w.category.__name__}: {str(w.message)[:160]}" for w in caught
                                           if f"{w.category.__name__}: {w.message}" not in result["warnings"]})
        result["step"] = train_state.step
        result["weight_sum"] = float(model.weight.detach().sum())
        if rng is not None:
            result["fresh_process"] = list(rng.fresh_process)
        result["draws"] = draws()

    write_record(args.out, rank, result)
    manager.close()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
