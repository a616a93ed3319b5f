# SPDX-License-Identifier: Apache-2.0
"""rngtrk.torch.accelerate: the whole process's random state in Hugging
Face Accelerate's own save_state / load_state, by one call
(docs/resuming.md).

    from rngtrk.torch.accelerate import register
    register(accelerator)              # RNGState's options: on_missing=, key=, ...
    accelerator.save_state(folder)     # also writes folder/rngtrk_dcp (DCP, every rank)
    accelerator.load_state(folder)     # on any number of processes

Accelerate saves each process's Python, NumPy and torch generators in
random_states_{i}.pkl and restores them in a try/except that logs "Could
not load random states" at INFO on the main process only: a process whose
file is missing (more processes than saved) keeps its generators without a
word, and on CPU-only torch the restore fails after the CPU generators
were set and says it failed (Accelerate #4283; Accelerate 16cb6eb).
register() puts rngtrk.torch.dcp.RNGState(process=True) beside it, through
Accelerate's own extension points (accelerator.py, checkpointing.py):

* a save pre-hook, which Accelerate calls on every process with the output
  folder before it writes its own state: dcp.save of the RNGState into
  <folder>/rngtrk_dcp (a refusal, such as replicas that differ, comes
  before Accelerate writes its files, where the model is not already
  written by FSDP, DeepSpeed or Megatron);
* a load pre-hook, called on every process with the folder before
  Accelerate restores anything: dcp.load of it, so RNGState's checks
  (MissingStreamError with on_missing="raise", the warnings) are made on
  every process before any generator changes; what it restored is kept
  (a failure of Accelerate's own load after this point finds the
  generators already restored by rngtrk);
* an object given to register_for_checkpointing, whose load_state_dict
  Accelerate calls on every process after its own RNG restore: it applies
  what the pre-hook restored again, so rngtrk's states are the ones the
  job goes on with.  Its state_dict is a small marker (Accelerate writes
  one custom_checkpoint_{i}.pkl per registered object and insists on as
  many at load).

Register it at the same position among the registered objects when saving
and loading (Accelerate matches custom_checkpoint_{i} by index).  The
folder must be one every process reads, as DCP's file system storage
needs.  A checkpoint saved without register() is refused on load
(NoRNGStateError, on every process: they agree first); Accelerate would
refuse it too, for the missing custom_checkpoint file.  Accelerate's
save_on_each_node (a folder per node) is refused at register().
"""
import os
import warnings

from ..errors import invalid
from .dcp import NoRNGStateError, RNGState

SUBDIR = "rngtrk_dcp"
MARKER = "rngtrk.torch.accelerate/1"


class AccelerateRNGState:
    """What register() registers: the two pre-hooks (save_pre_hook,
    load_pre_hook) and the checkpointed object (state_dict,
    load_state_dict).  `last`: the RNGState of the last load (its .fresh
    and .fresh_process); `handles`: Accelerate's removable handles of the
    pre-hooks."""

    def __init__(self, subdir=SUBDIR, **options):
        if os.path.isabs(subdir) or not subdir or os.pardir in subdir.split(os.sep):
            raise invalid(f"subdir is a folder name inside the checkpoint, not {subdir!r}")
        options.setdefault("process", True)
        RNGState(**options)  # bad options are refused now, not at the first save
        self.options, self.subdir = options, subdir
        self.last = None
        self.handles = ()
        self._restored = None  # (the RNGState, its state_dict()) from the load pre-hook to load_state_dict

    def save_pre_hook(self, models, weights, output_dir):
        import torch.distributed.checkpoint as dcp
        dcp.save({"rng": RNGState(**self.options)}, checkpoint_id=os.path.join(os.fspath(output_dir), self.subdir))

    def load_pre_hook(self, models, input_dir):
        import torch.distributed.checkpoint as dcp
        folder = os.path.join(os.fspath(input_dir), self.subdir)
        if not _everywhere(os.path.isfile(os.path.join(folder, ".metadata"))):
            raise NoRNGStateError(f"rngtrk.torch.accelerate: {folder} holds no rngtrk state (no DCP .metadata): "
                                  "the checkpoint was saved without rngtrk.torch.accelerate.register(), or its save "
                                  "did not finish, or this process does not see the folder the others do; nothing "
                                  "was changed")
        state = RNGState(**self.options)
        dcp.load({"rng": state}, checkpoint_id=folder)
        self._restored = (state, state.state_dict())
        self.last = state

    def state_dict(self):
        return {"format": MARKER, "subdir": self.subdir}

    def load_state_dict(self, marker):
        if not isinstance(marker, dict) or marker.get("format") != MARKER:
            raise NoRNGStateError(f"rngtrk.torch.accelerate: the custom checkpoint at this object's position is not "
                                  f"rngtrk's ({marker!r:.200}): register it at the same position as when saving")
        if self._restored is None:
            raise NoRNGStateError("rngtrk.torch.accelerate: load_state_dict without the load pre-hook (call "
                                  "accelerator.load_state with the object register() returned registered)")
        state, restored = self._restored
        self._restored = None
        fresh, fresh_process = state.fresh, state.fresh_process
        with warnings.catch_warnings():  # the pre-hook's load issued them
            warnings.simplefilter("ignore")
            state.load_state_dict(restored)  # every process's key is in it: nothing is fresh now
        state.fresh, state.fresh_process = fresh, fresh_process


def _everywhere(found):
    """Whether every process found it (one all_reduce where torch.distributed
    is initialized): a refusal is then every process's, never one that
    leaves the others waiting in dcp.load."""
    import torch
    import torch.distributed as dist
    if not (dist.is_available() and dist.is_initialized()):
        return found
    flag = torch.tensor([0 if found else 1], device="cuda" if dist.get_backend() == "nccl" else "cpu")
    dist.all_reduce(flag)
    return int(flag.item()) == 0


def register(accelerator, *, subdir=SUBDIR, **options):
    """Makes accelerator.save_state / load_state carry
    RNGState(process=True, **options) (module text); returns the registered
    AccelerateRNGState.  Refused (InvalidArgumentError) with Accelerate's
    save_on_each_node: DCP needs one folder that every process reads."""
    if getattr(getattr(accelerator, "project_configuration", None), "save_on_each_node", False):
        raise invalid("rngtrk.torch.accelerate.register: save_on_each_node is set, so each node writes its own "
                      "folder; rngtrk's state is one DCP checkpoint that every process must read from one folder")
    state = AccelerateRNGState(subdir, **options)
    state.handles = (accelerator.register_save_state_pre_hook(state.save_pre_hook),
                     accelerator.register_load_state_pre_hook(state.load_pre_hook))
    accelerator.register_for_checkpointing(state)
    return state
