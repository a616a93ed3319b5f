# SPDX-License-Identifier: Apache-2.0
"""Megatron-LM's RNG interface (megatron/core/tensor_parallel/random.py, main
at d98e8a64, August 2026), backed by rngtrk (docs/pytorch.md).

One import and one call make Megatron use it everywhere:

    import rngtrk.torch.megatron
    rngtrk.torch.megatron.install()      # before or after Megatron is imported

After install(), every Megatron call site, whatever name it bound at import
time, reaches an rngtrk tracker: Megatron's getters return the module-global
tracker object, which is ours; its initialize_rng_tracker and
model_parallel_cuda_manual_seed construct our classes; names imported from
megatron.core.tensor_parallel.random later are ours (rngtrk.torch.megatron
._megatron_install says how).  Without Megatron, this module is the same
interface on its own.

The same names, parameters, defaults and return types as upstream;
exceptions are upstream's classes or subclasses of them.  What differs, on
purpose, is listed with its reason in docs/pytorch.md.
"""
import contextlib
import importlib
import sys

import torch

from ..errors import InvalidArgumentError
from ..state import PhiloxState
from ..tracker import Tracker
from ._generators import (
    GraphSafeUnavailableError, cuda_ready, default_generator, graph_safe_api, new_generator, require_cuda,
    state_of, state_tensor, why_no_cuda,
)
from . import _megatron_checkpoint, _megatron_install
from ._megatron_checkpoint import CheckpointWithoutOutput, CheckpointWithoutOutputManager, checkpoint
from ._megatron_forms import MegatronFormError
from ._megatron_stage_seed import training_seed
from ._megatron_install import install, installed, uninstall
from ._kept_values import NotAStateError
from ._tracker import (
    RngtrkStatesTracker, capture_all, is_rngtrk_tracker, register_process_tracker, restore_all, set_cuda_rng_state,
)

# Megatron-LM's state names.
_MODEL_PARALLEL_RNG_TRACKER_NAME = "model-parallel-rng"
_EXPERT_PARALLEL_RNG_TRACKER_NAME = "expert-parallel-rng"
_DATA_PARALLEL_RNG_TRACKER_NAME = "data-parallel-rng"
_GTP_REMAT_RNG_TRACKER_NAME = "gtp-remat-rng"
_EXPERT_GTP_REMAT_RNG_TRACKER_NAME = "egtp-remat-rng"

# The process tracker.  install() moves it into Megatron's module, whose
# globals of the same names its own functions read: `_home` is the dict that
# holds it, this module's globals until then.
_CUDA_RNG_STATE_TRACKER = None
_CUDA_RNG_STATE_TRACKER_INITIALIZED = False
_home = globals()


class RankUnavailableError(InvalidArgumentError, AssertionError):
    """A rank that was neither given nor found in megatron.core.parallel_state
    (Megatron's getters raise AssertionError when it is not initialised)."""


def get_expert_parallel_rng_tracker_name():
    """Get the expert parallel rng tracker name."""
    return _EXPERT_PARALLEL_RNG_TRACKER_NAME


def get_data_parallel_rng_tracker_name():
    """Get the data parallel rng tracker name."""
    return _DATA_PARALLEL_RNG_TRACKER_NAME


def get_gtp_remat_rng_tracker_name(is_expert=False):
    """Get the (E)GTP_remat weight-init rng tracker name."""
    return _EXPERT_GTP_REMAT_RNG_TRACKER_NAME if is_expert else _GTP_REMAT_RNG_TRACKER_NAME


class CudaRNGStatesTracker(RngtrkStatesTracker):
    """Megatron-LM's CudaRNGStatesTracker over rngtrk (rngtrk.torch._tracker
    says how forks, graph-safe mode and CPU-only torch work).

    use_cudagraphable_rng: the named states live in graph-safe CUDA
    generators (torch >= 2.2; on an older torch AssertionError, as upstream).
    is_inference_rng_tracker: read by Megatron's CUDA-graph code.
    tracker (keyword, rngtrk's): the rngtrk.Tracker to hold the states."""

    def __init__(self, use_cudagraphable_rng=False, is_inference_rng_tracker=False, *, tracker=None):
        if use_cudagraphable_rng and not graph_safe_api():
            raise GraphSafeUnavailableError("Tried using cudagraphs with RNG, however not detected in pytorch! "
                                            f"(graph-safe generator states need torch >= 2.2; this is "
                                            f"{torch.__version__})")
        if use_cudagraphable_rng and not cuda_ready():
            raise GraphSafeUnavailableError("Tried using cudagraphs with RNG, however not detected in pytorch! "
                                            f"(graph-safe generator states live on a CUDA device: {why_no_cuda()})")
        super().__init__(graph_safe=use_cudagraphable_rng, tracker=tracker)
        self.use_cudagraphable_rng = bool(use_cudagraphable_rng)
        self.is_inference_rng_tracker = bool(is_inference_rng_tracker)


_INFERENCE_CLASSES = {}


def _inference_class(base):
    """Megatron's InferenceCudaRNGStatesTracker over `base`: add, set_states
    and fork do nothing (inference draws from the default generator)."""
    if base not in _INFERENCE_CLASSES:
        def add(self, name, seed):
            """Mirrors the interface from the training RNG tracker."""

        def set_states(self, states):
            """Mirrors the interface from the training RNG tracker."""

        def fork(self, name=_MODEL_PARALLEL_RNG_TRACKER_NAME):
            """Mirrors the interface from the training RNG tracker."""
            return contextlib.nullcontext()

        _INFERENCE_CLASSES[base] = type("InferenceCudaRNGStatesTracker", (base,), {
            "__module__": __name__, "__doc__": "RNG tracker for inference.", "_inference": True,
            "add": add, "set_states": set_states, "fork": fork})
    return _INFERENCE_CLASSES[base]


InferenceCudaRNGStatesTracker = _inference_class(CudaRNGStatesTracker)


# The classes initialize_rng_tracker constructs; install() puts classes that
# are also Megatron's (and TransformerEngine's) here.
_classes = {"megatron": CudaRNGStatesTracker, "te": None}


def _tracker_class(use_te_rng_tracker):
    if use_te_rng_tracker:
        if _classes["te"] is None:
            from .te import CudaRNGStatesTracker as te_class
            _classes["te"] = te_class
        return _classes["te"]
    return _classes["megatron"]


def initialize_rng_tracker(use_te_rng_tracker=False, inference_rng_tracker=False, use_cudagraphable_rng=False,
                           force_reset=False):
    """Creates the process tracker once (again with force_reset):
    TransformerEngine's flavour (rngtrk.torch.te; graph-safe wherever torch
    can) with use_te_rng_tracker, else Megatron's; the inference variant
    with inference_rng_tracker."""
    if force_reset:
        _home["_CUDA_RNG_STATE_TRACKER"] = None
        _home["_CUDA_RNG_STATE_TRACKER_INITIALIZED"] = False
    if _home["_CUDA_RNG_STATE_TRACKER_INITIALIZED"]:
        return
    base = _tracker_class(use_te_rng_tracker)
    if use_te_rng_tracker:
        kwargs = {"is_inference_rng_tracker": inference_rng_tracker}
    else:
        kwargs = {"use_cudagraphable_rng": use_cudagraphable_rng, "is_inference_rng_tracker": inference_rng_tracker}
    tracker_class = _inference_class(base) if inference_rng_tracker else base
    _home["_CUDA_RNG_STATE_TRACKER"] = tracker_class(**kwargs)
    _home["_CUDA_RNG_STATE_TRACKER_INITIALIZED"] = True


def get_cuda_rng_tracker(use_te_rng_tracker=False, inference_rng_tracker=False, use_cudagraphable_rng=False):
    """Get cuda rng tracker: the process tracker, created on first use."""
    initialize_rng_tracker(use_te_rng_tracker, inference_rng_tracker, use_cudagraphable_rng)
    return _home["_CUDA_RNG_STATE_TRACKER"]


def get_all_rng_states():
    """The generator states the process tracker uses, by name: its live
    `states_` (graph-safe: the CUDA generators CUDA graphs register)."""
    assert _home["_CUDA_RNG_STATE_TRACKER_INITIALIZED"], \
        "Tried getting all rng states but RNG Tracker has not been initalized!"
    tracker = _home["_CUDA_RNG_STATE_TRACKER"]
    if is_rngtrk_tracker(tracker):
        return tracker.states_
    te = _te_distributed()
    if te is not None and isinstance(tracker, te.CudaRNGStatesTracker):
        return te.get_all_rng_states()
    return {}


def is_graph_safe_cuda_rng_tracker(cuda_rng_tracker):
    """Whether the tracker keeps its states in graph-safe generators."""
    if is_rngtrk_tracker(cuda_rng_tracker):
        return cuda_rng_tracker.graph_safe
    te = _te_distributed()
    if te is not None and isinstance(cuda_rng_tracker, te.CudaRNGStatesTracker):
        return True
    return bool(getattr(cuda_rng_tracker, "use_cudagraphable_rng", False))


def _te_distributed():
    """transformer_engine.pytorch.distributed if TransformerEngine is
    already imported (this module never imports it)."""
    import sys
    return sys.modules.get("transformer_engine.pytorch.distributed")


# -- the CUDA generator --------------------------------------------------------------

def _get_cuda_rng_state(device="cuda", clone=False, graph_safe=False):
    """The generator state of a GPU: a 16-byte CPU ByteTensor, or with
    graph_safe a torch.Generator (a copy with clone, else one that shares
    the generator's live state).  On CPU-only torch: the process tracker's
    generator (rngtrk's active state) as a ByteTensor."""
    if not cuda_ready():
        return state_tensor(_cpu_generator_owner().generator_state())
    generator = default_generator(device)
    if not graph_safe:
        return generator.get_state()
    return generator.clone_state() if clone else generator.graphsafe_get_state()


def _set_cuda_rng_state(new_state, device=-1, graph_safe=False):
    """Sets the generator of a GPU: with graph_safe and a torch.Generator
    the generator shares that state (graphsafe_set_state), otherwise it
    takes its 16 bytes (no clone).  On CPU-only torch: the process
    tracker's generator."""
    set_cuda_rng_state(_cpu_generator_owner, new_state, device, graph_safe)


def _cpu_generator_owner():
    """On CPU-only torch the process tracker plays the CUDA generator; a
    tracker of Megatron's own (after uninstall) cannot."""
    tracker = get_cuda_rng_tracker()
    if not is_rngtrk_tracker(tracker):
        require_cuda("the CUDA generator of a tracker that is not rngtrk's")
    return tracker


def convert_cuda_rng_state(state, to_graphable=False):
    """A state tensor as a graph-safe CUDA torch.Generator (to_graphable) or
    a torch.Generator as its 16-byte tensor; a state already in the wanted
    form is returned as it is.  ValueError for anything else."""
    if not isinstance(state, (torch.Tensor, torch.Generator)):
        raise InvalidArgumentError(f"Invalid state type: {type(state)}")
    if not to_graphable:
        return state.get_state() if isinstance(state, torch.Generator) else state
    if isinstance(state, torch.Generator):
        return state
    require_cuda("a graphable (torch.Generator) state")
    return new_generator(state_of(state))


def _get_all_rng_states():
    """(torch's CPU state, the generator's state, the tracker's states):
    copies (rngtrk.torch._tracker.capture_all)."""
    return capture_all(get_cuda_rng_tracker())


def _set_all_rng_states(cpu_rng_state, cuda_rng_state, cuda_rng_state_tracker):
    """Puts back what _get_all_rng_states took, by value."""
    restore_all(get_cuda_rng_tracker(), cpu_rng_state, cuda_rng_state, cuda_rng_state_tracker)


@contextlib.contextmanager
def _fork_rng():
    """Every random state as it was at entry, again at exit."""
    current_states = _get_all_rng_states()
    try:
        yield
    finally:
        _set_all_rng_states(*current_states)


# -- seeding --------------------------------------------------------------------------

# Megatron's parallel_state getter of each coordinate model_parallel_cuda_manual_seed reads.
_RANK_GETTERS = {
    "tp_rank": "get_tensor_model_parallel_rank",
    "ep_rank": "get_expert_model_parallel_rank",
    "etp_rank": "get_expert_tensor_parallel_rank",
    "gtp_remat_rank": "get_gtp_weight_remat_rank",
    "egtp_remat_rank": "get_expert_gtp_weight_remat_rank",
    "gtp_remat_world_size": "get_gtp_weight_remat_world_size",
    "egtp_remat_world_size": "get_expert_gtp_weight_remat_world_size",
}


def _parallel_state():
    """megatron.core.parallel_state, or the reason it cannot be imported."""
    try:
        return importlib.import_module("megatron.core.parallel_state"), None
    except ImportError as e:
        return None, e


def _coordinate(what, value, group, *, optional=False):
    """A rank or size: given, from a process group, or from Megatron's
    parallel_state; never a silent 0.  `optional` (the remat axes): 0
    when parallel_state is not there to ask."""
    if value is not None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidArgumentError(f"{what} must be a non-negative int, not {value!r}")
        return value
    if group is not None:
        import torch.distributed as dist
        if what.endswith("world_size"):
            return dist.get_world_size(group=group)
        rank = dist.get_rank(group=group)
        if rank < 0:
            raise RankUnavailableError(f"model_parallel_cuda_manual_seed: this process is not in the group "
                                       f"given for {what}")
        return rank
    state, reason = _parallel_state()
    if state is None:
        if optional:
            return 0
        raise RankUnavailableError(f"model_parallel_cuda_manual_seed: {what} was not given and "
                                   f"megatron.core.parallel_state cannot be imported to ask ({reason}); "
                                   f"pass {what}= (or its process group)")
    getter = getattr(state, _RANK_GETTERS[what], None)
    if getter is None and optional:
        return 0  # a Megatron-LM without this axis
    found = getter()
    if found is None:
        raise RankUnavailableError(f"model_parallel_cuda_manual_seed: {what} was not given and "
                                   f"megatron.core.parallel_state.{_RANK_GETTERS[what]}() returned None "
                                   "(is model parallelism initialised?)")
    return found


def model_parallel_cuda_manual_seed(seed, te_rng_tracker=False, inference_rng_tracker=False,
                                    use_cudagraphable_rng=False, tp_rank=None, ep_rank=None, etp_rank=None,
                                    gtp_remat_rank=None, egtp_remat_rank=None, force_reset_rng=False,
                                    gtp_remat_world_size=None, egtp_remat_world_size=None, *, tp_group=None,
                                    ep_group=None, etp_group=None, gtp_remat_group=None, egtp_remat_group=None):
    """Megatron-LM's model_parallel_cuda_manual_seed: resets the process
    tracker (creating it as initialize_rng_tracker does) and seeds it with
    rngtrk's "megatron" policy, Megatron's formulas (docs/pytorch.md):

      default generator, data-parallel-rng   seed
      model-parallel-rng                     seed + 2718 + tp_rank
      expert-parallel-rng                    seed + 1024 + 100 ep_rank + etp_rank
      gtp-remat-rng (gtp world size > 1)     seed + 2718 + tp_rank + 65536 (1 + gtp_remat_rank)
      egtp-remat-rng (egtp world size > 1)   expert seed + 32768 + 65536 (1 + egtp_remat_rank)

    Ranks left None come from the process groups given (rngtrk's keyword
    extras), else from megatron.core.parallel_state, else RankUnavailableError
    names the rank: never a silent 0.  Every check runs before anything
    changes.  The tracker records the rank, so a checkpoint of another rank
    is refused on load."""
    coords = {
        "tp": _coordinate("tp_rank", tp_rank, tp_group),
        "ep": _coordinate("ep_rank", ep_rank, ep_group),
        "etp": _coordinate("etp_rank", etp_rank, etp_group),
        "gtp_remat_size": _coordinate("gtp_remat_world_size", gtp_remat_world_size, gtp_remat_group, optional=True),
        "egtp_remat_size": _coordinate("egtp_remat_world_size", egtp_remat_world_size, egtp_remat_group,
                                       optional=True),
    }
    coords["gtp_remat"] = _coordinate("gtp_remat_rank", gtp_remat_rank, gtp_remat_group,
                                      optional=coords["gtp_remat_size"] <= 1)
    coords["egtp_remat"] = _coordinate("egtp_remat_rank", egtp_remat_rank, egtp_remat_group,
                                       optional=coords["egtp_remat_size"] <= 1)
    if coords["gtp_remat_size"] <= 1:
        coords["gtp_remat"] = 0  # the axis is off: Megatron ignores its rank
    if coords["egtp_remat_size"] <= 1:
        coords["egtp_remat"] = 0
    # Inside Megatron's training setup under install(), the base seed and the
    # true pp and dp behind `seed` (the same states, a truer origin).
    base, stage = training_seed(seed)
    coords.update(stage)
    seeded = Tracker()
    seeded.seed_rank("megatron", base, **coords)  # the policy's checks, before anything changes
    initialize_rng_tracker(te_rng_tracker, inference_rng_tracker, use_cudagraphable_rng, force_reset=force_reset_rng)
    tracker = _home["_CUDA_RNG_STATE_TRACKER"]
    tracker.reset()
    if cuda_ready():
        torch.cuda.manual_seed(seed)
    if is_rngtrk_tracker(tracker) and not tracker.is_inference_rng_tracker:
        tracker.seed_rank("megatron", base, **coords)
    else:
        for name, raw in seeded.get_states().items():  # a foreign tracker, or add() doing nothing
            tracker.add(name, PhiloxState.from_bytes(raw).seed)


# -- checkpointing flag (Megatron's) ------------------------------------------------------

IS_CHECKPOINTING = False


def _set_checkpointing():
    """Set state to checkpointing enabled."""
    global IS_CHECKPOINTING
    IS_CHECKPOINTING = True


def _unset_checkpointing():
    """Unset state to checkpointing enabled."""
    global IS_CHECKPOINTING
    IS_CHECKPOINTING = False


def is_checkpointing():
    """Check if currently in a checkpoint context."""
    return IS_CHECKPOINTING


# The modules below this one that call its functions, and the process tracker's getter.
_megatron_checkpoint.bind(sys.modules[__name__])
_megatron_install.bind(sys.modules[__name__])
register_process_tracker(get_cuda_rng_tracker, lambda: _home["_CUDA_RNG_STATE_TRACKER"]
                         if _home.get("_CUDA_RNG_STATE_TRACKER_INITIALIZED") else None)

__all__ = [
    "CudaRNGStatesTracker", "InferenceCudaRNGStatesTracker", "initialize_rng_tracker", "get_cuda_rng_tracker",
    "get_all_rng_states", "model_parallel_cuda_manual_seed", "is_graph_safe_cuda_rng_tracker",
    "convert_cuda_rng_state", "get_data_parallel_rng_tracker_name", "get_expert_parallel_rng_tracker_name",
    "get_gtp_remat_rng_tracker_name", "checkpoint", "CheckpointWithoutOutput", "CheckpointWithoutOutputManager",
    "is_checkpointing", "install", "uninstall", "installed", "RankUnavailableError", "NotAStateError",
    "MegatronFormError",
]
