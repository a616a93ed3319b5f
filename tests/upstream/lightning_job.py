# SPDX-License-Identifier: Apache-2.0
"""One process of run_lightning.py's jobs: Lightning Fabric's own save and
load (fabric.save / fabric.load, DDP strategy on CPU, from a checkout
outside this project), with the RNG of the process handled three ways
(--mode):

  rngtrk  state = {"model", "optimizer", "step", "rng": RNGState(process=True)}
  asis    state = {"model", "optimizer", "step"}                  (Fabric today)
  naive   state = {..., "rng": this process's states, as Lightning's own
          launcher collects them (lightning.fabric.utilities.seed's
          _collect_rng_states)}: Fabric writes rank 0's dict only

    job.py --mode M --phase save --ckpt FILE --out DIR [--same-seed]
    job.py --mode M --phase load --ckpt FILE --out DIR [--on-missing raise|fresh]
           [--no-strict]

Phase save: fabric.seed_everything(1000 + rank) (--same-seed: 42 on every
rank, Fabric's usual call), train 2 steps (batches from torch's
generator, one draw of Python's and NumPy's each step), fabric.save, then
draw K values from each generator: the expected continuation,
OUT/rank{R}.json.  Phase load: fabric.seed_everything(0), fabric.load
(strict unless --no-strict), then the same draws, with the loaded step,
the rngtrk warnings issued during the load and the error raised (if any).

Start the processes with tests/torch_dist/launch.py: its environment
(RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR/PORT) is what Fabric's
LightningEnvironment reads, so Fabric starts no processes of its own.
Lightning's: Fabric, its DDP strategy, seed_everything, its checkpoint
file.  Ours: the model (one nn.Linear) and the loop.
"""
import argparse
import os
import random
import sys
import traceback
import warnings

import numpy as np
import torch
import torch.nn as nn

from lightning.fabric import Fabric
from lightning.fabric.utilities.seed import _collect_rng_states, _set_rng_states

from checkpoint_runs import draws, write_record

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=("rngtrk", "asis", "naive"), required=True)
    p.add_argument("--phase", choices=("save", "load"), required=True)
    p.add_argument("--ckpt", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--on-missing", default="raise")
    p.add_argument("--no-strict", action="store_true")
    p.add_argument("--same-seed", action="store_true")
    args = p.parse_args()

    world = int(os.environ["WORLD_SIZE"])
    fabric = Fabric(accelerator="cpu", devices=world, strategy="ddp")
    fabric.launch()  # the processes exist already (LightningEnvironment): this joins the gloo group
    rank = fabric.global_rank
    torch.manual_seed(42)  # one model on every rank: data-parallel replicas
    model = nn.Linear(4, 2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model, optimizer = fabric.setup(model, optimizer)
    state = {"model": model, "optimizer": optimizer, "step": 0}
    rng = None
    if args.mode == "rngtrk":
        from rngtrk.torch.dcp import RNGState
        rng = RNGState(process=True, on_missing=args.on_missing)
        state["rng"] = rng  # the one line
    result = {"rank": rank, "world": world, "mode": args.mode, "phase": args.phase,
              "environment": type(fabric._connector.cluster_environment).__name__,
              "backend": torch.distributed.get_backend()}

    if args.phase == "save":
        fabric.seed_everything(42 if args.same_seed else 1000 + rank, verbose=False)
        for _ in range(2):
            random.random(), np.random.random()
            loss = model(torch.randn(3, 4)).square().mean()
            fabric.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            state["step"] += 1
        if args.mode == "naive":
            state["rng"] = _collect_rng_states(include_cuda=False)
        fabric.save(args.ckpt, state)
        result["step"] = state["step"]
        result["weight_sum"] = float(model.weight.detach().sum())
        result["draws"] = draws()
    else:
        fabric.seed_everything(0, verbose=False)
        if args.mode == "naive":
            state["rng"] = None  # fabric.load puts what the file holds here
        caught = []
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                # Lightning's _collect_rng_states holds NumPy arrays, which
                # torch.load's weights_only mode refuses; rngtrk's state is bytes.
                fabric.load(args.ckpt, state, strict=not args.no_strict,
                            **({"weights_only": False} if args.mode == "naive" else {}))
            if args.mode == "naive":
                _set_rng_states(state["rng"])
        except Exception as e:
            result["error"] = f"{type(e).__module__}.{type(e).__name__}: {e}"
            result["traceback_tail"] = traceback.format_exc().splitlines()[-12:]
        result["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught
                              if "rngtrk" in w.category.__module__ or "RNGState" in str(w.message)]
        result["step"] = state["step"]
        result["weight_sum"] = float(model.weight.detach().sum())
        if rng is not None:
            result["fresh_process"] = list(rng.fresh_process)
        result["draws"] = draws()

    write_record(args.out, rank, result)
    fabric.barrier()
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
