# SPDX-License-Identifier: Apache-2.0
"""rngtrk.torch.lightning: the whole process's random state in the
Lightning Trainer's checkpoints, by one callback (docs/resuming.md).

    from rngtrk.torch.lightning import RNGStateCallback
    trainer = Trainer(..., callbacks=[RNGStateCallback()])  # RNGState's options: on_missing=, key=, ...
    trainer.fit(model, data, ckpt_path=path)                # on any number of processes

Fabric needs no module: "rng": RNGState(process=True) in the state given
to fabric.save and fabric.load.

The Trainer saves no random state (pytorch-lightning 7f0c343).  Each
checkpoint it writes calls every callback's state_dict() on every process
and rank 0 writes the file; a load (fit, validate, test or predict with
ckpt_path) calls every callback's on_load_checkpoint and then
load_state_dict on every process, before the loops start.  This callback's
state is RNGState(process=True, **options)'s: state_dict() is its
collective, the same bytes on every process; load_state_dict() restores
them there, with RNGState's checks and on_missing on every process.

What a resume then draws is what the job that stopped drew after an
end-of-epoch checkpoint (what Lightning advises): the Trainer starts the
next epoch as that job did, drawing a new DataLoader iterator's base seed
from torch's generator.  After a checkpoint from inside an epoch the
Trainer makes a new iterator where the job that stopped went on with its
own (Lightning warns that the dataloader is not resumable): Python's and
NumPy's generators continue, torch's is one base seed ahead.

A checkpoint without this callback's state (saved without it, or with
save_weights_only) is refused on every process before anything changes
(NoRNGStateError); RNGStateCallback(on_absent="warn") loads it once with a
warning, the generators left as they are.  The callback subclasses
lightning.pytorch's Callback, or pytorch_lightning's where only that is
installed; each Trainer runs the other's callbacks too.
"""
import warnings

from ..errors import UnavailableError, invalid
from .dcp import NoRNGStateError, RNGState

ON_ABSENT = ("raise", "warn")


class LightningUnavailableError(UnavailableError, ImportError):
    """Neither lightning (lightning.pytorch) nor pytorch_lightning imports:
    rngtrk's UnavailableError, and an ImportError (raised when
    rngtrk.torch.lightning is imported)."""


def _callback_base():
    reasons = []
    for module in ("lightning.pytorch.callbacks", "pytorch_lightning.callbacks"):
        try:
            return __import__(module, fromlist=["Callback"]).Callback
        except ImportError as e:
            reasons.append(f"{module}: {type(e).__name__}: {e}")
    raise LightningUnavailableError("rngtrk.torch.lightning needs Lightning's Trainer (the lightning or "
                                    "pytorch_lightning package); " + "; ".join(reasons))


class NoRNGStateWarning(UserWarning):
    """RNGStateCallback(on_absent="warn"): the checkpoint held no rngtrk
    state; the generators were left as they were."""


class RNGStateCallback(_callback_base()):
    """A Lightning Callback carrying RNGState(process=True, **options) in
    the Trainer's checkpoints (module text).  on_absent: what a load does
    with a checkpoint that has no state of this callback: "raise"
    (NoRNGStateError on every process, nothing changed) or "warn" (a
    NoRNGStateWarning, the generators left as they are).  `last`: the
    RNGState of the last load (its .fresh and .fresh_process), or None."""

    def __init__(self, *, on_absent="raise", **options):
        super().__init__()
        if on_absent not in ON_ABSENT:
            raise invalid(f"on_absent is one of {ON_ABSENT}, not {on_absent!r}")
        options.setdefault("process", True)
        RNGState(**options)  # bad options are refused now, not at the first checkpoint
        self.options, self.on_absent = options, on_absent
        self.last = None

    def state_dict(self):
        return RNGState(**self.options).state_dict()

    def on_load_checkpoint(self, trainer, pl_module, checkpoint):
        if self.state_key in (checkpoint.get("callbacks") or {}):
            return
        why = (f"rngtrk.torch.lightning: the checkpoint holds no state of {self.state_key} (saved without "
               "RNGStateCallback, or with save_weights_only)")
        if self.on_absent == "raise":
            raise NoRNGStateError(why + "; nothing was changed. RNGStateCallback(on_absent='warn') loads it once, "
                                  "the generators left as they are")
        warnings.warn(NoRNGStateWarning(why + "; the generators are left as they are"), stacklevel=2)

    def load_state_dict(self, state_dict):
        state = RNGState(**self.options)
        state.load_state_dict(state_dict)
        self.last = state


__all__ = ["RNGStateCallback", "NoRNGStateError", "NoRNGStateWarning", "LightningUnavailableError"]
