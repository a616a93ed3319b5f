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
(on DDP rank 0 writes the file); fit with ckpt_path calls every callback's
setup, then, where the checkpoint holds callback states at all, its
on_load_checkpoint and load_state_dict (after on_fit_start on the
strategies that restore after their setup: FSDP, DeepSpeed,
ModelParallel), then on_train_start, on every process, before the first
step.  This callback's state is RNGState(process=True, **options)'s:
state_dict() is its collective, the same bytes on every process;
load_state_dict() restores them there, with RNGState's checks and
on_missing on every process.  It restores on fit alone: validate, test
and predict with ckpt_path leave the generators as they are.

What a resume then draws is what the job that stopped drew after an
end-of-epoch checkpoint (what Lightning advises), where each epoch makes
a new DataLoader iterator (num_workers=0, or workers that are not
persistent): the Trainer starts the next epoch as that job did, drawing
the new iterator's seeds from torch's generator.  After a checkpoint from
inside an epoch the Trainer makes a new iterator where the job that
stopped went on with its own (Lightning warns that the dataloader is not
resumable): Python's and NumPy's generators continue, torch's is ahead by
what a new iterator draws.

A fit from a checkpoint without this callback's state (saved without it)
is refused on every process at on_train_start, before the first step,
with no generator changed: NoRNGStateError.  RNGStateCallback(on_absent=
"warn") resumes from it once with a warning, the generators left as they
are.  (A save_weights_only checkpoint cannot resume a fit in Lightning
itself: its KeyError at the optimizers and schedulers.)  Not seen: a state missing from the checkpoint of a fit that also
runs Lightning's LearningRateFinder or BatchSizeFinder callbacks, whose
own checkpoint and restore come first (and lose the resume in Lightning
itself).  The callback subclasses lightning.pytorch's Callback, or
pytorch_lightning's where only that is installed: give it in a list (the
Trainer checks the class of a callback given alone).
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
    the Trainer's checkpoints (module text).  on_absent: what a fit from a
    checkpoint without this callback's state does: "raise"
    (NoRNGStateError on every process, no generator changed) or "warn" (a
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
        self._fitting = True  # what the Trainer's setup() says it runs (a load outside it restores)
        self._restored = False  # whether this run's checkpoint held the state

    def setup(self, trainer, pl_module, stage):
        self._fitting = stage == "fit"
        self._restored = False

    def state_dict(self):
        return RNGState(**self.options).state_dict()

    def load_state_dict(self, state_dict):
        self._restored = True
        if not self._fitting:
            return
        state = RNGState(**self.options)
        state.load_state_dict(state_dict)
        self.last = state

    def on_train_start(self, trainer, pl_module):
        # Here: after the restore of callbacks on every strategy (FSDP,
        # DeepSpeed and ModelParallel restore after on_fit_start), with
        # trainer.ckpt_path this fit's, and before the first step.  Not in
        # on_load_checkpoint: the Trainer calls no callback's for a
        # checkpoint without callback states at all.
        if not trainer.ckpt_path or self._restored:
            return
        why = (f"rngtrk.torch.lightning: the checkpoint {trainer.ckpt_path} holds no state of {self.state_key} "
               "(saved without RNGStateCallback)")
        if self.on_absent == "raise":
            raise NoRNGStateError(why + "; no generator was changed. RNGStateCallback(on_absent='warn') resumes "
                                  "from it once, the generators left as they are")
        warnings.warn(NoRNGStateWarning(why + "; the generators are left as they are"), stacklevel=2)


__all__ = ["RNGStateCallback", "NoRNGStateError", "NoRNGStateWarning", "LightningUnavailableError"]
