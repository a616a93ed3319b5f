"""The Megatron-LM / TransformerEngine drop-in: CudaRNGStatesTracker, the
process tracker and model_parallel_cuda_manual_seed, backed by rngtrk.

A fork does two things at once:

* it forks the rngtrk tracker, so rngtrk.torch's own random ops (rand,
  dropout, ...) draw from the named state; this works on every torch,
  CPU-only torch included;
* where torch has CUDA, it swaps PyTorch's CUDA generator to the named
  state, so torch's own CUDA random ops (F.dropout, torch.rand) draw from
  it too, as the upstream trackers do.  What they consume goes back into the
  named state when the fork ends; rngtrk.torch's ops inside the fork draw
  from (and advance) the swapped generator, so both kinds of op share one
  stream without overlap.

Graph-safe mode (torch >= 2.2, a CUDA device): each named state lives in a
CUDA torch.Generator, swapped in with graphsafe_set_state, so a fork inside
a captured CUDA graph draws fresh numbers on each replay (register the
generators with graph.register_generator_state).  The states are read back
into rngtrk at get_states() and state_dict().  Elsewhere the tracker falls
back to get_rng_state/set_rng_state and says so in `graph_safe`.
"""
import contextlib

import torch

from ..errors import invalid
from ..state import PhiloxState
from ..tracker import DEFAULT_FORK_NAME, Tracker

CHECKPOINT_KEY = "rngtrk_checkpoint"


def cuda_ready():
    """Whether torch can run CUDA ops here (False on CPU-only torch)."""
    return torch.cuda.is_available()


def graph_safe_supported():
    """Whether this torch has graph-safe generator states (torch >= 2.2 and a device)."""
    return cuda_ready() and hasattr(torch.Generator, "graphsafe_set_state")


def state_tensor(state):
    """A PhiloxState as torch.cuda.get_rng_state()'s 16-byte CPU ByteTensor."""
    return torch.tensor(list(state.to_bytes()), dtype=torch.uint8)


def state_of(value, what="state"):
    """A PhiloxState from a 16-byte tensor, bytes, a PhiloxState or a
    torch.Generator (its get_state())."""
    if isinstance(value, PhiloxState):
        return value
    if isinstance(value, torch.Generator):
        value = value.get_state()
    if isinstance(value, torch.Tensor):
        if value.dtype != torch.uint8 or value.numel() != 16:
            raise invalid(f"{what}: a state tensor is 16 uint8 values (torch.cuda.get_rng_state()), "
                          f"not {value.numel()} of {value.dtype}")
        value = bytes(value.cpu().contiguous().tolist())
    return PhiloxState.from_bytes(value)


def _current_generator():
    torch.cuda.init()  # default_generators is empty until CUDA is initialised
    return torch.cuda.default_generators[torch.cuda.current_device()]


class CudaRNGStatesTracker:
    """TransformerEngine's and Megatron-LM's CudaRNGStatesTracker over an
    rngtrk.Tracker: add, fork, get_states, set_states, reset,
    is_initialized, plus state_dict/load_state_dict (rngtrk checkpoint bytes,
    which C and Rust read too).

    `use_cudagraphable_rng=True` (Megatron-LM's name; `graph_safe=True` is
    the same) holds the named states in torch.Generator objects (on the CUDA device) where
    torch can (see the module text); `graph_safe` says whether it is on."""

    def __init__(self, use_cudagraphable_rng=False, *, graph_safe=None, tracker=None):
        wanted = bool(use_cudagraphable_rng if graph_safe is None else graph_safe)
        self.graph_safe = wanted and graph_safe_supported()
        self.tracker = tracker if tracker is not None else Tracker()
        self._generators = {}  # graph-safe mode: name -> CUDA torch.Generator
        self._swapped = []     # names whose state the CUDA generator holds now, innermost last
        if self.graph_safe:
            self._refresh_generators()

    # -- the upstream interface -------------------------------------------------

    def is_initialized(self):
        return self.tracker.is_initialized()

    def reset(self):
        self.tracker.reset()
        self._generators = {}

    def add(self, name, seed):
        self.tracker.add(name, seed)
        if self.graph_safe:
            self._generators[name] = self._new_generator(self.tracker.get_state(name))

    def get_states(self):
        """{name: 16-byte CPU ByteTensor}: a snapshot, in insertion order."""
        self._sync_from_generators()
        return {name: state_tensor(PhiloxState.from_bytes(raw)) for name, raw in self.tracker.get_states().items()}

    def set_states(self, states):
        """Replaces every named state (tensors, bytes, PhiloxStates or
        torch.Generators); all or nothing."""
        converted = {name: state_of(value, f"state {name!r}") for name, value in states.items()}
        self.tracker.set_states(converted)
        if self.graph_safe:
            self._refresh_generators()

    @contextlib.contextmanager
    def fork(self, name=DEFAULT_FORK_NAME):
        """The named state is active in the body, for rngtrk.torch's ops and,
        with CUDA, for torch's own CUDA random ops."""
        with self.tracker.fork(name):
            if not cuda_ready():
                yield
                return
            if self.graph_safe:
                generator = _current_generator()
                outside = generator.graphsafe_get_state()
                generator.graphsafe_set_state(self._generators[name])
                self._swapped.append(name)
                try:
                    yield
                finally:
                    self._swapped.pop()
                    generator.graphsafe_set_state(outside)
                return
            outside = torch.cuda.get_rng_state()
            torch.cuda.set_rng_state(state_tensor(self.tracker.get_state(name)))
            self._swapped.append(name)
            try:
                yield
            finally:
                self._swapped.pop()
                # What the body's kernels consumed goes back into the state.
                self.tracker.set_state(name, state_of(torch.cuda.get_rng_state()))
                torch.cuda.set_rng_state(outside)

    def seed_rank(self, policy, seed, **rank):
        """rngtrk.Tracker.seed_rank, with the graph-safe generators following."""
        self.tracker.seed_rank(policy, seed, **rank)
        if self.graph_safe:
            self._refresh_generators()

    # -- checkpoints ----------------------------------------------------------------

    def state_dict(self):
        """{"rngtrk_checkpoint": bytes}: the tracker's checkpoint (default
        and named states, and the rank that seeded it), for torch.save,
        Lightning or distributed checkpointing."""
        self._sync_from_generators()
        return {CHECKPOINT_KEY: self.tracker.save()}

    def load_state_dict(self, state_dict, *, any_rank=False):
        """Loads what state_dict() gave (here or in another language).  A
        checkpoint of another rank raises WrongRankError unless any_rank;
        on any error the tracker is unchanged."""
        if not isinstance(state_dict, dict) or CHECKPOINT_KEY not in state_dict:
            raise invalid(f"load_state_dict takes the dict state_dict() returns, with the key {CHECKPOINT_KEY!r}")
        data = state_dict[CHECKPOINT_KEY]
        if isinstance(data, torch.Tensor):
            data = bytes(data.cpu().contiguous().tolist())
        self.tracker.load(data, any_rank=any_rank)
        if self.graph_safe:
            self._refresh_generators()

    # -- what rngtrk.torch's ops use ---------------------------------------------------

    def peek(self):
        """The state the next draw starts from: the swapped CUDA generator's
        inside a CUDA fork, else the rngtrk tracker's active state."""
        if self._swapped:
            return state_of(torch.cuda.get_rng_state())
        return self.tracker.active_state()

    def consume(self, increment):
        """Advances what peek() read by `increment` (rounded up to 4)."""
        if self._swapped:
            state = state_of(torch.cuda.get_rng_state())
            torch.cuda.set_rng_state(state_tensor(PhiloxState(state.seed, state.offset + (increment + 3) // 4 * 4)))
        else:
            self.tracker.advance(increment)

    # -- graph-safe generators ------------------------------------------------------

    def _new_generator(self, state):
        generator = torch.Generator(device=f"cuda:{torch.cuda.current_device()}")
        generator.set_state(state_tensor(state))
        return generator

    def _refresh_generators(self):
        self._generators = {name: self._new_generator(PhiloxState.from_bytes(raw))
                            for name, raw in self.tracker.get_states().items()}

    def _sync_from_generators(self):
        """Graph-safe mode: what torch consumed lives in the generators; copy it back."""
        if self.graph_safe and self._generators:
            self.tracker.set_states({name: state_of(g.get_state()) for name, g in self._generators.items()})


_TRACKER = None


def get_rng_state_tracker():
    """The process's tracker (what TransformerEngine's checkpoint() takes as
    get_rng_state_tracker)."""
    global _TRACKER
    if _TRACKER is None:
        _TRACKER = CudaRNGStatesTracker()
    return _TRACKER


def get_cuda_rng_tracker():
    """Megatron-LM's name for get_rng_state_tracker()."""
    return get_rng_state_tracker()


def _rank_and_size(rank, group, what):
    """(rank, world size or None) from an integer or a process group."""
    if group is not None:
        import torch.distributed as dist
        return dist.get_rank(group=group), dist.get_world_size(group=group)
    if rank is None:
        raise invalid(f"model_parallel_cuda_manual_seed needs {what}_rank or {what}_group")
    return rank, None


def model_parallel_cuda_manual_seed(seed, *, tp_rank=None, ep_rank=0, etp_rank=0, cp_rank=None, tp_cp_rank=None,
                                    tp_size=None, tp_group=None, ep_group=None, etp_group=None, cp_group=None,
                                    tp_cp_group=None, force_reset_rng=False, use_cudagraphable_rng=None):
    """Megatron-LM's model_parallel_cuda_manual_seed on the process tracker:
    "data-parallel-rng" = seed, "model-parallel-rng" = seed + 2718 + tp,
    "expert-parallel-rng" = seed + 1024 + 100 ep + etp, and with a
    context-parallel rank (cp_rank or cp_group) "context-parallel-rng" =
    seed + 2718 + 2048 + cp and "model-and-context-parallel-rng" = seed +
    2718 + tp_size + tp_cp (docs/pytorch.md).  The default generator (and
    rngtrk's default state) takes the data-parallel seed.  Ranks come from
    the integers or, when given, from torch.distributed process groups.
    force_reset_rng=True (or use_cudagraphable_rng given) makes a fresh
    process tracker first; otherwise the named states are replaced in the
    existing one."""
    global _TRACKER
    tp, tp_world = _rank_and_size(tp_rank, tp_group, "tp")
    ep = _rank_and_size(ep_rank, ep_group, "ep")[0]
    etp = _rank_and_size(etp_rank, etp_group, "etp")[0]
    context = {}
    if cp_rank is not None or cp_group is not None:
        cp = _rank_and_size(cp_rank, cp_group, "cp")[0]
        size = tp_size if tp_size is not None else tp_world
        if size is None:
            raise invalid("context-parallel seeding needs tp_size (or tp_group) for model-and-context-parallel-rng")
        tp_cp = tp_cp_rank if tp_cp_group is None else _rank_and_size(None, tp_cp_group, "tp_cp")[0]
        context = {"cp": cp, "tp_size": size, "tp_cp": tp_cp}
    if force_reset_rng or use_cudagraphable_rng is not None or _TRACKER is None:
        tracker = CudaRNGStatesTracker(use_cudagraphable_rng=bool(use_cudagraphable_rng))
    else:
        tracker = _TRACKER
    tracker.seed_rank("megatron", seed, tp=tp, ep=ep, etp=etp, **context)
    _TRACKER = tracker
    if cuda_ready():
        torch.cuda.manual_seed(seed)
