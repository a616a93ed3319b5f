# SPDX-License-Identifier: Apache-2.0
"""rngtrk.torch.megatron.install(): Megatron-LM on rngtrk trackers, at every
call site (rngtrk.torch._install says why attributes alone are not enough).

In megatron.core.tensor_parallel.random (now, or when it is imported):

* the process tracker moves into Megatron's module globals
  _CUDA_RNG_STATE_TRACKER / _CUDA_RNG_STATE_TRACKER_INITIALIZED, which
  rngtrk.torch.megatron's functions then read and write too: Megatron's own
  get_cuda_rng_tracker, bound anywhere, returns the same rngtrk tracker.  A
  tracker Megatron had already made is carried over with its states.
* CudaRNGStatesTracker becomes a class that is rngtrk's and a subclass of
  Megatron's, so Megatron's initialize_rng_tracker (reached through any
  name) constructs rngtrk trackers, and Megatron's isinstance checks (its
  CUDA-graph manager's) accept them.
* the RNG functions become rngtrk.torch.megatron's: initialize_rng_tracker,
  get_cuda_rng_tracker, get_all_rng_states, model_parallel_cuda_manual_seed,
  is_graph_safe_cuda_rng_tracker, convert_cuda_rng_state,
  _get/_set_cuda_rng_state, _get/_set_all_rng_states, _fork_rng and the
  name getters.  Megatron's checkpoint functions stay; they call these.

megatron.core.tensor_parallel re-exports some of those names: they are
replaced there too.  megatron.core.extensions.transformer_engine's
TECudaRNGStatesTracker becomes a class that is rngtrk.torch.te's and a
subclass of Megatron's (and so of TransformerEngine's).

In megatron.training.initialize, and in Megatron-Bridge's
megatron.bridge.training.initialize, _set_random_seed is wrapped
(_megatron_stage_seed): Megatron's own runs, and the seeding inside it
records the base seed and the rank's true pipeline and data-parallel ranks
as the tracker's origin.

In megatron.training.checkpointing, save_checkpoint, generate_state_dict,
_load_base_checkpoint and load_checkpoint are wrapped
(_megatron_saved_streams): Megatron's own checkpoints then carry rngtrk's
stream table, and a load on any layout restores the streams it holds;
the bindings megatron.training.training and megatron.post_training
.checkpointing made at import follow.

uninstall() puts Megatron's classes and functions back; the process tracker
stays in Megatron's globals, which rngtrk.torch.megatron keeps reading, so
names bound while installed and Megatron's own still reach one tracker (a
tracker made from then on is Megatron's).  A tracker made before the bridge
existed (seeded before Megatron's import) is given the bridged class.
"""
import sys as _sys

from ._install import Installer, ModulePatch, bridge as _bridge
from . import _megatron_saved_streams as _saved_streams
from ._megatron_forms import follow
from ._megatron_stage_seed import wrap as _wrap_training_seed
from ._tracker import is_rngtrk_tracker

_m = None  # rngtrk.torch.megatron, what is installed: handed in by bind() (it imports this module)


def bind(megatron):
    global _m
    _m = megatron

RANDOM = "megatron.core.tensor_parallel.random"
PACKAGE = "megatron.core.tensor_parallel"
TE_EXTENSION = "megatron.core.extensions.transformer_engine"
TRAINING = "megatron.training.initialize"
BRIDGE_TRAINING = "megatron.bridge.training.initialize"  # Megatron-Bridge's training setup
CHECKPOINTING = "megatron.training.checkpointing"  # Megatron-LM's own checkpoints (_megatron_saved_streams)
TRAINING_LOOP, POST_TRAINING = _saved_streams.REBOUND  # bind some of the checkpoint functions at import

# The functions of Megatron's random module that become ours.
FUNCTIONS = (
    "initialize_rng_tracker", "get_cuda_rng_tracker", "get_all_rng_states", "model_parallel_cuda_manual_seed",
    "is_graph_safe_cuda_rng_tracker", "convert_cuda_rng_state", "_get_cuda_rng_state", "_set_cuda_rng_state",
    "_get_all_rng_states", "_set_all_rng_states", "_fork_rng", "get_data_parallel_rng_tracker_name",
    "get_expert_parallel_rng_tracker_name", "get_gtp_remat_rng_tracker_name",
)


def _reclass(tracker):
    """Gives an rngtrk tracker made before the bridge existed (say, seeded
    before Megatron was imported) the bridged class of its flavour, so
    Megatron's and TransformerEngine's isinstance checks hold for it too."""
    if not is_rngtrk_tracker(tracker):
        return
    base = _m._classes["te" if getattr(tracker, "_te_flavour", False) else "megatron"]
    if base is None:
        return
    target = _m._inference_class(base) if getattr(tracker, "_inference", False) else base
    if not isinstance(tracker, target):
        tracker.__class__ = target  # the same instance layout: a subclass of the tracker's own class


def _carry_over(old):
    """An rngtrk tracker of the process tracker's kind with `old`'s states."""
    te = _m._te_distributed()
    use_te = te is not None and isinstance(old, te.CudaRNGStatesTracker)
    inference = bool(getattr(old, "is_inference_rng_tracker", False))
    cudagraphable = bool(getattr(old, "use_cudagraphable_rng", False))
    base = _m._tracker_class(use_te)
    cls = _m._inference_class(base) if inference else base
    new = cls(is_inference_rng_tracker=inference) if use_te else \
        cls(use_cudagraphable_rng=cudagraphable, is_inference_rng_tracker=inference)
    if not inference:
        states = old.get_states()
        if states:
            new.set_states(states)
        new._initialized = bool(old.is_initialized()) if hasattr(old, "is_initialized") else bool(states)
    return new


def _random_attributes(module):
    """Ours, in the installed Megatron's forms (_megatron_forms; an unknown
    form raises before anything is set)."""
    functions = {name: getattr(_m, name) for name in FUNCTIONS}
    functions.update(follow(module, _m))
    bridged = _bridge(_m.CudaRNGStatesTracker, getattr(module, "CudaRNGStatesTracker", None), "CudaRNGStatesTracker")
    _m._classes["megatron"] = bridged
    return {**functions, "CudaRNGStatesTracker": bridged}


def _random_installed(module):
    """The process tracker moves into Megatron's globals, which stay its
    home after uninstall() too (every name, bound while installed or not,
    then reaches one tracker): Megatron's tracker, carried over, or ours."""
    old = module.__dict__.get("_CUDA_RNG_STATE_TRACKER")
    if module.__dict__.get("_CUDA_RNG_STATE_TRACKER_INITIALIZED") and old is not None:
        tracker = old if is_rngtrk_tracker(old) else _carry_over(old)
    else:
        tracker = _m._home["_CUDA_RNG_STATE_TRACKER"] if _m._home["_CUDA_RNG_STATE_TRACKER_INITIALIZED"] else None
    _reclass(tracker)
    module.__dict__["_CUDA_RNG_STATE_TRACKER"] = tracker
    module.__dict__["_CUDA_RNG_STATE_TRACKER_INITIALIZED"] = tracker is not None
    _m._home = module.__dict__


def _random_uninstalling(module):
    """New trackers are Megatron's class again; the process tracker stays."""
    _m._classes["megatron"] = _m.CudaRNGStatesTracker
    _m._classes["te"] = None


def _package_attributes(module):
    """The package's re-exports of the random module's functions: what
    install() put there (the same forms)."""
    random = _installer_random_originals()
    installed = _sys.modules.get(RANDOM)
    return {name: installed.__dict__[name] if installed is not None and name in installed.__dict__ else getattr(_m, name)
            for name in FUNCTIONS
            if name in module.__dict__ and (random is None or module.__dict__[name] is random.get(name))}


def _te_extension_attributes(module):
    from .te import CudaRNGStatesTracker as te_tracker
    bridged = _bridge(te_tracker, getattr(module, "TECudaRNGStatesTracker", None), "TECudaRNGStatesTracker")
    _m._classes["te"] = bridged
    return {"TECudaRNGStatesTracker": bridged}


def _te_extension_installed(module):
    _reclass(_m._home.get("_CUDA_RNG_STATE_TRACKER"))


def _training_attributes(module):
    """Megatron's training setup's _set_random_seed, wrapped (not replaced)."""
    theirs = module.__dict__.get("_set_random_seed")
    if not callable(theirs) or hasattr(theirs, "__rngtrk_wrapped__"):
        return {}
    return {"_set_random_seed": _wrap_training_seed(theirs)}


def _training_loop_attributes(module):
    return _saved_streams.rebound_attributes(module, _sys.modules.get(CHECKPOINTING), INSTALLER.originals(CHECKPOINTING))


def _installer_random_originals():
    return INSTALLER.originals(RANDOM)


INSTALLER = Installer([
    ModulePatch(RANDOM, _random_attributes, after=_random_installed, before_undo=_random_uninstalling),
    ModulePatch(PACKAGE, _package_attributes),
    ModulePatch(TE_EXTENSION, _te_extension_attributes, after=_te_extension_installed),
    ModulePatch(TRAINING, _training_attributes),
    ModulePatch(BRIDGE_TRAINING, _training_attributes),
    ModulePatch(CHECKPOINTING, _saved_streams.checkpointing_attributes),
    ModulePatch(TRAINING_LOOP, _training_loop_attributes),
    ModulePatch(POST_TRAINING, _training_loop_attributes),
])


def install(*, on_missing=None):
    """Makes every Megatron-LM call site use rngtrk trackers (module text);
    before or after Megatron is imported; a second call does nothing.
    Returns True if it installed now.

    on_missing: what Megatron-LM's load_checkpoint does with a stream this
    layout holds that the checkpoint's rngtrk stream table lacks (a new
    tensor- or expert-parallel rank): "raise" (the default:
    MissingStreamError on every rank, nothing changed) or "fresh" (from
    offset 0 from its seed, with a warning); given on any call, installed
    or not, until uninstall() (_megatron_saved_streams)."""
    if on_missing is not None:
        _saved_streams.set_on_missing(on_missing)
    _saved_streams.set_active(True)
    return INSTALLER.install()


def uninstall():
    """Undoes install(): Megatron's classes and functions are back, so new
    trackers are Megatron's.  The process tracker stays where it is, in
    Megatron's globals, so names bound while installed and Megatron's own
    reach the same one.  Returns True if it was installed."""
    _saved_streams.set_on_missing("raise")
    _saved_streams.set_active(False)
    return INSTALLER.uninstall()


def installed():
    """Whether install() is in effect."""
    return INSTALLER.installed
