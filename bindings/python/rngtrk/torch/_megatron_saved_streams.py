# SPDX-License-Identifier: Apache-2.0
"""Megatron-LM's own checkpoints carry rngtrk's stream table under
install(), so a resume on another tensor-, pipeline-, data- or
expert-parallel layout restores every stream the new layout holds
(docs/pytorch.md, "Megatron-LM's own checkpoints").

Megatron-LM's checkpoint code (megatron/training/checkpointing.py, main
d98e8a64 and core_r0.19.0) saves each rank's RNG as one object per (pp, tp)
position, and its load restores that object only when the layout is the
same: a (TP, PP) change prints "RNG state will be ignored" and every stream
restarts from its seed.  install() wraps four of its functions, which still
do all they do:

* save_checkpoint: first, on every rank, the stream table of rngtrk's
  process tracker is built, as rngtrk.torch.dcp.RNGState builds it (a
  collective: streams keyed by what they are, replicas checked); nothing
  when --no-save-rng is given.
* generate_state_dict, during that save: the table goes into the state
  dict under "rngtrk_streams", a plain value, so Megatron writes it with
  its common state (torch_dist: common.pt, from rank 0; the legacy torch
  format: in every file written).
* _load_base_checkpoint: the table the checkpoint holds is noted.
* load_checkpoint: after Megatron's own load (which restores its per-rank
  RNG where the layout is the same), the noted table is applied to the
  process tracker by RNGState.load_state_dict: every stream the
  checkpoint holds continues, on every layout; the others follow
  on_missing ("raise", the default: MissingStreamError on every rank,
  nothing changed; "fresh": from offset 0 with a warning); install(on_missing=)
  sets it.  Nothing when Megatron itself would not load RNG: --finetune,
  --no-load-rng, a release checkpoint.

A checkpoint saved without install() has no table: the load is Megatron's
alone.  Carried in the torch_dist format (the default) and the legacy
torch format; Megatron's torch_dcp and fsdp_dtensor loads ask DCP for a
fixed set of keys, so there the save carries no table and says so once
(a RuntimeWarning).  megatron.training.training and
megatron.post_training.checkpointing bind some of these functions at
import; those names are replaced too when they are Megatron's originals.
Every wrapper does Megatron's alone once uninstall() has run (a module
imported while installed keeps the wrapper it bound).
"""
import functools
import threading
import warnings

STATE_KEY = "rngtrk_streams"  # the key in Megatron's state dict (RNGState's own key for its table)
ON_MISSING = ("raise", "fresh")
FORMATS = ("torch_dist", "torch")  # the ckpt_formats whose loads read every common key
REBOUND = {  # modules that bind some of the four at import: the names replaced there
    "megatron.training.training": ("save_checkpoint", "load_checkpoint"),
    "megatron.post_training.checkpointing": ("load_checkpoint", "_load_base_checkpoint"),
}

_policy = {"on_missing": "raise", "active": False}
_warned = set()
_calls = threading.local()  # .table: the table of the save under way; .seen: what the load under way read


def set_on_missing(on_missing):
    from ..errors import invalid
    if on_missing not in ON_MISSING:
        raise invalid(f"install(on_missing=...) is one of {ON_MISSING}, not {on_missing!r}")
    _policy["on_missing"] = on_missing


def on_missing():
    return _policy["on_missing"]


def set_active(active):
    """install() and uninstall(): whether the wrappers do anything."""
    _policy["active"] = bool(active)


def _wrapped(theirs, make):
    """`make(theirs)`, marked so a second install() leaves it alone."""
    if not callable(theirs) or hasattr(theirs, "__rngtrk_wrapped__"):
        return None
    ours = functools.wraps(theirs)(make(theirs))
    ours.__rngtrk_wrapped__ = theirs
    return ours


def checkpointing_attributes(module):
    """megatron.training.checkpointing's four functions, wrapped."""
    makers = {"save_checkpoint": lambda theirs: _save(module, theirs),
              "generate_state_dict": _generate_state_dict,
              "_load_base_checkpoint": _load_base_checkpoint,
              "load_checkpoint": lambda theirs: _load(module, theirs)}
    wrapped = {name: _wrapped(module.__dict__.get(name), make) for name, make in makers.items()}
    return {name: ours for name, ours in wrapped.items() if ours is not None}


def rebound_attributes(module, installed_checkpointing, originals):
    """A module of REBOUND, which bound some of the four at import: ours
    where it holds Megatron's originals."""
    if installed_checkpointing is None or originals is None:
        return {}
    return {name: installed_checkpointing.__dict__[name] for name in REBOUND.get(module.__name__, ())
            if name in module.__dict__ and module.__dict__[name] is originals.get(name)}


def _process_tracker(module):
    """Megatron's process tracker when it is rngtrk's (else None: Megatron's
    own RNG checkpointing alone)."""
    from ._tracker import is_rngtrk_tracker
    tracker = module.tensor_parallel.get_cuda_rng_tracker()
    return tracker if is_rngtrk_tracker(tracker) else None


def _rng_state(tracker, policy="raise"):
    """An RNGState of `tracker`, or None (with a warning) where this torch
    has no torch.distributed.checkpoint to make one from."""
    try:
        from .dcp import RNGState
    except ImportError as e:
        warnings.warn(f"rngtrk.torch.megatron: Megatron-LM's checkpoint carries no rngtrk stream table on this "
                      f"torch ({e})", RuntimeWarning, stacklevel=4)
        return None
    return RNGState(tracker, on_missing=policy)


def _carried(margs):
    """Whether this save carries the table (warning once where the format cannot)."""
    if not _policy["active"] or margs.no_save_rng:
        return False
    if margs.ckpt_format not in FORMATS:
        if margs.ckpt_format not in _warned:
            _warned.add(margs.ckpt_format)
            warnings.warn(f"rngtrk.torch.megatron: Megatron-LM's {margs.ckpt_format} checkpoints carry no rngtrk stream "
                          f"table (their loads read a fixed set of keys); a load on another layout restarts the "
                          f"streams. Use --ckpt-format torch_dist", RuntimeWarning, stacklevel=3)
        return False
    return True


def _save(module, theirs):
    def save_checkpoint(*args, **kwargs):
        tracker = _process_tracker(module) if _carried(module.get_args()) else None
        state = None if tracker is None else _rng_state(tracker)
        if state is None:
            return theirs(*args, **kwargs)
        outer = getattr(_calls, "table", None)
        _calls.table = state.state_dict()[STATE_KEY]  # every rank, before Megatron writes anything
        try:
            return theirs(*args, **kwargs)
        finally:
            _calls.table = outer
    return save_checkpoint


def _generate_state_dict(theirs):
    def generate_state_dict(*args, **kwargs):
        state_dict = theirs(*args, **kwargs)
        table = getattr(_calls, "table", None)
        if table is not None:
            state_dict[STATE_KEY] = table
        return state_dict
    return generate_state_dict


def _load_base_checkpoint(theirs):
    def _load_base_checkpoint(*args, **kwargs):
        result = theirs(*args, **kwargs)
        seen = getattr(_calls, "seen", None)
        if seen is not None:
            state_dict = result[0] if isinstance(result, tuple) and result else None
            if isinstance(state_dict, dict) and STATE_KEY in state_dict:
                seen["table"] = state_dict[STATE_KEY]
                seen["release"] = bool(result[2]) if len(result) > 2 else False
        return result
    return _load_base_checkpoint


def _load(module, theirs):
    def load_checkpoint(*args, **kwargs):
        outer = getattr(_calls, "seen", None)
        seen = _calls.seen = {}
        try:
            result = theirs(*args, **kwargs)
        finally:
            _calls.seen = outer
        margs = module.get_args()
        if not _policy["active"] or "table" not in seen or seen["release"] or margs.finetune or margs.no_load_rng:
            return result
        tracker = _process_tracker(module)
        state = None if tracker is None else _rng_state(tracker, _policy["on_missing"])
        if state is not None:
            _restore(state, seen["table"])
        return result
    return load_checkpoint


def _restore(state, table):
    from .dcp import MissingStreamError
    try:
        state.load_state_dict({STATE_KEY: table})
    except MissingStreamError as e:
        raise MissingStreamError(f"{e}\nUnder Megatron-LM's load_checkpoint: rngtrk.torch.megatron.install("
                                 "on_missing='fresh') starts them at offset 0 (with a warning).") from None
