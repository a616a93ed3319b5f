# SPDX-License-Identifier: Apache-2.0
"""One process of run_lightning.py's Trainer jobs: the Lightning Trainer's
own fit, checkpoints (ModelCheckpoint) and resume (fit with ckpt_path), DDP
on CPU, from a checkout outside this project, with or without
rngtrk.torch.lightning.RNGStateCallback.

    job.py --ckpt-dir DIR --out DIR [--resume FILE] [--no-callback]
           [--every-steps N] [--weights-only] [--on-missing raise|fresh]
           [--on-absent raise|warn] [--stage fit|validate] [--restore-after-setup]

Every process seeds with lightning's seed_everything(100 + rank), as the
same script does when it is started again, and fits 3 epochs of 4 steps
(32 samples, batch 4, shuffled by Lightning's DistributedSampler), saving
a checkpoint after each epoch (--every-steps: every N steps instead;
--weights-only: ModelCheckpoint's save_weights_only), or (--stage
validate) validates from --resume; --restore-after-setup: Lightning's DDP
strategy made to restore the checkpoint after its setup, as its FSDP,
DeepSpeed and ModelParallel strategies do (on_fit_start then comes
before the restore).  Each training step first draws one
value from Python's, NumPy's and torch's generator (then a dropout):
OUT/rank{R}.json holds them per (epoch, batch), one more of each drawn
after the run ("after"), the rngtrk warnings of the run, the error (if
any), the generators the last load started fresh, and rank 0's list of
checkpoint files.

Start the processes with tests/torch_dist/launch.py (Lightning's
LightningEnvironment reads its variables).  Lightning's: Trainer,
LightningModule, ModelCheckpoint, seed_everything, the DDP strategy.
Ours: the model and the data."""
import argparse
import os
import random
import sys
import traceback
import warnings

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

import lightning.pytorch as L
from lightning.pytorch.strategies import DDPStrategy

from checkpoint_runs import write_record


class RestoringAfterSetup(DDPStrategy):
    """DDP with the restore order of FSDP, DeepSpeed and ModelParallel."""

    @property
    def restore_checkpoint_after_setup(self):
        return True


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 1)
        self.draws = []

    def training_step(self, batch, index):
        (x,) = batch
        self.draws.append([self.current_epoch, index, [random.random(), float(np.random.rand()), torch.rand(1).item()]])
        return nn.functional.dropout(self.linear(x), 0.5).square().mean()

    def validation_step(self, batch, index):
        pass

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt-dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--resume")
    p.add_argument("--no-callback", action="store_true")
    p.add_argument("--every-steps", type=int, default=0)
    p.add_argument("--on-missing", default="raise")
    p.add_argument("--on-absent", default="raise")
    p.add_argument("--weights-only", action="store_true")
    p.add_argument("--stage", choices=("fit", "validate"), default="fit")
    p.add_argument("--restore-after-setup", action="store_true")
    args = p.parse_args()

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(32, 4))
    L.seed_everything(100 + rank, verbose=False)
    callbacks = []
    rng = None
    if not args.no_callback:
        from rngtrk.torch.lightning import RNGStateCallback
        rng = RNGStateCallback(on_missing=args.on_missing, on_absent=args.on_absent)
        callbacks.append(rng)  # the one line: callbacks=[RNGStateCallback(), ...]
    callbacks.append(L.callbacks.ModelCheckpoint(
        dirpath=args.ckpt_dir, save_top_k=-1, filename="{epoch}-{step}", save_weights_only=args.weights_only,
        every_n_epochs=None if args.every_steps else 1, every_n_train_steps=args.every_steps or None))
    strategy = RestoringAfterSetup() if args.restore_after_setup else "ddp"
    trainer = L.Trainer(accelerator="cpu", devices=world, strategy=strategy, max_epochs=3, callbacks=callbacks,
                        logger=False, enable_progress_bar=False, enable_model_summary=False,
                        num_sanity_val_steps=0)
    model = Model()
    result = {"rank": rank, "world": world}
    caught = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loader = DataLoader(data, batch_size=4, shuffle=True)
            path = os.path.join(args.ckpt_dir, args.resume) if args.resume else None
            if args.stage == "fit":
                trainer.fit(model, loader, ckpt_path=path)
            else:
                trainer.validate(model, loader, ckpt_path=path, verbose=False)
    except Exception as e:
        result["error"] = f"{type(e).__module__}.{type(e).__name__}: {e}"
        result["traceback_tail"] = traceback.format_exc().splitlines()[-12:]
    result["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught
                          if "rngtrk" in w.category.__module__ or "RNGState" in str(w.message)]
    result["not_resumable_warning"] = any("dataloader is not resumable" in str(w.message) for w in caught)
    result["environment"] = type(trainer.strategy.cluster_environment).__name__
    result["fresh_process"] = list(rng.last.fresh_process) if rng is not None and rng.last is not None else None
    result["draws"] = model.draws
    result["after"] = [random.random(), float(np.random.rand()), torch.rand(1).item()]
    if rank == 0:
        result["files"] = sorted(os.listdir(args.ckpt_dir)) if os.path.isdir(args.ckpt_dir) else []
    write_record(args.out, rank, result)


if __name__ == "__main__":
    sys.exit(main())
