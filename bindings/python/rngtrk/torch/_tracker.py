# SPDX-License-Identifier: Apache-2.0
"""The rngtrk-backed CudaRNGStatesTracker that the Megatron-LM and
TransformerEngine drop-ins (rngtrk.torch.megatron, rngtrk.torch.te) share.

The named states live in an rngtrk.Tracker (`.tracker`): its rules (names,
distinct seeds, all-or-nothing updates, checkpoints, the ledger) are the C
library's.  "The generator" is what a fork swaps and what random ops draw
from:

* with CUDA, torch's default CUDA generator, shared by torch's own CUDA ops
  (F.dropout, torch.rand, ...) and rngtrk.torch's ops, as in the upstream
  trackers.  A fork writes the named state into it and, on exit, what the
  body consumed back into the named state.  Forks nest and may re-fork an
  open name (Megatron-LM's rule since January 2026): entering a fork first
  stores the generator's progress into the name that was active, and
  leaving one resumes the outer name from its stored state, so one name is
  one stream wherever it is forked and no number is drawn twice.
* graph-safe (torch >= 2.2 and a device): each named state lives in its own
  CUDA torch.Generator, shared into the default generator with
  graphsafe_set_state, so a fork captured in a CUDA graph draws fresh
  numbers at every replay.  `states_` hands out those live generators (for
  graph.register_generator_state); get_states() hands out copies
  (clone_state), so a saved state is not advanced by later draws and an
  activation recompute replays exactly.  set_states copies into the live
  generators rather than replacing them, so graphs that registered them
  stay valid.  While a CUDA graph is being captured, torch can neither copy
  nor set a generator's state: get_states() and the checkpoint functions
  then hand out and take back the live generators, as upstream does.
* on CPU-only torch, rngtrk's own active state: a fork makes the named
  state active in the rngtrk tracker, and rngtrk.torch's ops draw from it
  (torch's CPU generator, a Mersenne Twister, is left alone).  The tracker's
  default state plays the part of the CUDA generator outside forks.

With CUDA, the rngtrk tracker's default state is the CUDA generator's state
outside every fork whenever the tracker is saved (state_dict), and a load
puts it back into the generator.

set_states() stores what upstream stores: a value that is not a state is
kept beside the rngtrk tracker, as given (rngtrk.torch._kept_values).

The class is in three parts, one job each: the upstream interface and
checkpoints (here), the generator's side of forks and draws
(_generator_side), and the kept values (_kept_values).
"""
from collections.abc import Mapping

import torch

from ..errors import (DuplicateNameError, DuplicateSeedError, ForkOrderError, InvalidArgumentError, UnavailableError,
                      invalid)
from ..state import PhiloxState
from ..tracker import DEFAULT_FORK_NAME, Tracker
from ._generator_side import GeneratorSide
from ._generators import (
    capturing, cuda_ready, default_generator, new_generator, state_of, state_tensor, write_generator,
)
from ._kept_values import KeptValues, NotAStateError, _article  # noqa: F401 (NotAStateError: callers catch it here)
from . import _rng_state_hook, _torch_ops

CHECKPOINT_KEY = "rngtrk_checkpoint"
DEFAULT_RNG_NAME = "default-rng"  # Megatron-LM's name for "no fork open"


class DuplicateStateError(DuplicateNameError, RuntimeError):
    """add() of a name the tracker holds: rngtrk's DuplicateNameError, and
    the RuntimeError TransformerEngine raises (Megatron-LM raises Exception)."""


class DuplicateStateSeedError(DuplicateSeedError, RuntimeError):
    """add() of a seed another named state uses: rngtrk's
    DuplicateSeedError, and TransformerEngine's RuntimeError."""


class _Fork:
    """The context manager fork() returns: nothing happens until it is
    entered.  While torch traces the caller (torch.compile), entry and exit
    are recorded for the draws inside (_torch_ops.fork_enter), so the fork
    is part of the graph with no break and no frame skipped; a fork of a
    CUDA tracker is entered for real, outside the graph (_torch_ops._cuda_fork
    says why)."""

    __slots__ = ("_owner", "_name")

    def __init__(self, owner, name):
        self._owner = owner
        self._name = name

    def __enter__(self):
        if _torch_ops.tracing():
            if self._name in self._owner._kept:
                self._owner._refuse_kept(self._name, "fork")
            _torch_ops.fork_enter(self._owner, self._name)
        else:
            self._owner._enter(self._name)

    def __exit__(self, exc_type, exc, traceback):
        if _torch_ops.tracing():
            _torch_ops.fork_exit(self._owner, self._name)
        else:
            self._owner._leave(self._name)
        return False


class _StatesView(Mapping):
    """`tracker.states_`: the named states by name, read live.  Values are
    the live CUDA generators in graph-safe mode (what CUDA graphs register)
    and 16-byte CPU ByteTensors of the current state otherwise."""

    __slots__ = ("_owner",)

    def __init__(self, owner):
        self._owner = owner

    def __getitem__(self, name):
        owner = self._owner
        if name in owner._kept:
            return owner._kept[name]
        if name not in owner.tracker:
            raise KeyError(name)
        if owner._graph_safe:
            return owner._generators[name]
        owner._sync_open()
        return state_tensor(owner.tracker.get_state(name))

    def __iter__(self):
        return iter(self._owner._names())

    def __len__(self):
        return len(self._owner._names())

    def __contains__(self, name):
        return name in self._owner._kept or name in self._owner.tracker

    def __repr__(self):
        return f"states_({dict(self)!r})"


class RngtrkStatesTracker(GeneratorSide, KeptValues):
    """The shared implementation (module text): the upstream interface and
    checkpoints here, the generator's side in _generator_side, the values
    set_states keeps in _kept_values.  Use the flavours:
    rngtrk.torch.megatron.CudaRNGStatesTracker and
    rngtrk.torch.te.CudaRNGStatesTracker."""

    def __init__(self, *, graph_safe=False, tracker=None):
        self.tracker = tracker if tracker is not None else Tracker()
        self._cuda = cuda_ready()
        self._graph_safe = bool(graph_safe) and self._cuda
        self._generators = {}  # graph-safe: name -> live CUDA torch.Generator, in the tracker's order
        self._open = []        # names of the open forks, innermost last
        self._outside = []     # per open fork: the generator (state, or state object) outside it
        self._c_forks = []     # per open fork: the rngtrk tracker's fork, entered
        self._fork_of = {}     # name -> the rngtrk tracker's fork context (its name encoded once)
        self._keep({})         # no values kept that are not states (_kept_values)
        self._initialized = len(self.tracker) > 0
        self._refresh_generators()
        _torch_ops.register(self)        # the torch operators name it by number
        _rng_state_hook.follow(self)     # torch.get_rng_state() carries its states

    @property
    def graph_safe(self):
        """Whether the named states live in graph-safe CUDA generators."""
        return self._graph_safe

    # -- the upstream interface -------------------------------------------------

    def is_initialized(self):
        """Megatron-LM's rule: True after add() or set_states(), False after
        reset() and construction."""
        return self._initialized

    def reset(self):
        """Drops every named state (ForkOrderError while a fork is open)."""
        self.tracker.reset()
        self._keep({})
        self._generators = {}
        self._initialized = False
        self._states_changed()

    def add(self, name, seed):
        """A named state (seed, 0).  DuplicateStateError /
        DuplicateStateSeedError (also RuntimeError) for a name or seed in
        use; a failed add changes nothing, and burns no seed."""
        if name in self._kept:
            kind = type(self._kept[name]).__name__
            raise DuplicateStateError(f"cuda rng state {name} already exists (set_states gave it "
                                      f"{_article(kind)} {kind})")
        try:
            self.tracker.add(name, seed)
        except DuplicateNameError as e:
            raise DuplicateStateError(e.message, e.code) from None
        except DuplicateSeedError as e:
            raise DuplicateStateSeedError(e.message, e.code) from None
        if self._graph_safe:
            self._generators[name] = new_generator(PhiloxState(seed, 0))
        self._initialized = True
        self._states_changed()

    def get_states(self):
        """{name: state}, in insertion order: 16-byte CPU ByteTensors, or in
        graph-safe mode torch.Generator copies (clone_state).  A snapshot:
        later draws do not change it, also when taken inside a fork."""
        if self._graph_safe:
            if capturing():
                return self._with_kept(dict(self._generators))
            return self._with_kept({name: generator.clone_state() for name, generator in self._generators.items()})
        self._sync_open()
        return self._with_kept({name: state_tensor(PhiloxState.from_bytes(raw))
                                for name, raw in self.tracker.get_states().items()})

    def set_states(self, states):
        """Replaces the named states by `states` ({name: ByteTensor, bytes,
        PhiloxState or torch.Generator}), in its order; all or nothing.  In
        graph-safe mode the values are copied into the live generators.  A
        value that is not a state is kept as given, as upstream stores any
        value: get_states() returns it, and a fork or save of it raises
        NotAStateError naming it."""
        if not isinstance(states, Mapping):
            raise TypeError(f"set_states takes a mapping of name to state, not {type(states).__name__}")
        if self._graph_safe and capturing():
            self._set_states_capturing(states)
            return
        converted, kept, why = {}, {}, {}
        for name, value in states.items():
            try:
                converted[name] = state_of(value, f"state {name!r}")
            except (TypeError, InvalidArgumentError) as e:
                kept[name], why[name] = value, str(e)
        for name in self._open:
            if name in kept:
                raise ForkOrderError(f"set_states gives the state of the open fork {name!r} a value that is not a "
                                     f"state ({why[name]})")
        self.tracker.set_states(converted)  # may refuse (a seed twice, a fork's name dropped): nothing changed
        self._keep(kept, why, list(states))
        self._refresh_generators()
        self._initialized = True
        self._states_changed()

    def _set_states_capturing(self, states):
        """set_states during a graph capture: the same names, each given its
        live generator back (what get_states() handed out then) or another
        torch.Generator, which the name then uses, as upstream stores it;
        the other names' values are kept (_kept_values)."""
        generators = {name: value for name, value in states.items() if name in self._generators}
        if list(generators) != list(self._generators):
            raise UnavailableError(f"set_states during a CUDA graph capture keeps the names "
                                   f"{list(self._generators)}, not {list(states)}")
        for name, value in generators.items():
            if not isinstance(value, torch.Generator):
                raise UnavailableError(f"set_states during a CUDA graph capture takes torch.Generators (torch "
                                       f"cannot set a generator's state then); state {name!r} is a "
                                       f"{type(value).__name__}")
        kept = {name: value for name, value in states.items() if name not in self._generators}
        self._generators = generators
        self._keep(kept, {name: "kept during a CUDA graph capture" for name in kept}, list(states))
        self._initialized = True
        self._states_changed()

    def fork(self, name=DEFAULT_FORK_NAME):
        """A context manager: inside it the named state is what the
        generator draws from (module text); it may be entered inside a fork
        of any name, the same name included."""
        return _Fork(self, name)

    # -- Megatron-LM's attributes -----------------------------------------------

    @property
    def states_(self):
        """A live, read-only mapping of the named states (see _StatesView)."""
        return _StatesView(self)

    @property
    def seeds_(self):
        """The seeds of the named states held now."""
        return {PhiloxState.from_bytes(raw).seed for raw in self.tracker.get_states().values()}

    @property
    def _current_state_name(self):
        return self._open[-1] if self._open else DEFAULT_RNG_NAME

    def _states_changed(self):
        """Called after the set of named states changed (the TE flavour
        tells TransformerEngine's graph code)."""

    # -- seeding and checkpoints ---------------------------------------------------

    def seed_rank(self, policy, seed, **rank):
        """rngtrk.Tracker.seed_rank (the named states and the origin that
        checkpoints record); graph-safe generators follow.  torch's CUDA
        generator is not touched."""
        self.tracker.seed_rank(policy, seed, **rank)
        self._keep({})
        self._refresh_generators()
        self._initialized = True
        self._states_changed()

    def state_dict(self):
        """{"rngtrk_checkpoint": bytes}: the tracker's checkpoint (default and
        named states as they are now, and the rank that seeded it), for
        torch.save or Lightning, one file per rank (in
        torch.distributed.checkpoint use rngtrk.torch.dcp.RNGState); C and
        Rust read it too.  With CUDA the default state is torch's CUDA generator
        outside every fork.  NotAStateError while set_states() keeps a value
        that is not a state."""
        for name in self._kept:
            self._refuse_kept(name, "state_dict (a save)")
        self._sync_for_save()
        return {CHECKPOINT_KEY: self.tracker.save()}

    def load_state_dict(self, state_dict, *, any_rank=False):
        """Loads what state_dict() gave (here or in another language).  A
        checkpoint of another rank raises WrongRankError unless any_rank; on
        any error nothing changes.  With CUDA, torch's CUDA generator takes
        the default state."""
        if not isinstance(state_dict, Mapping) or CHECKPOINT_KEY not in state_dict:
            raise invalid(f"load_state_dict takes the dict state_dict() returns, with the key {CHECKPOINT_KEY!r}")
        data = state_dict[CHECKPOINT_KEY]
        if isinstance(data, torch.Tensor):
            data = data.detach().cpu().contiguous().numpy().tobytes()
        self.tracker.load(data, any_rank=any_rank)  # refused inside a fork
        self._keep({})
        self._refresh_generators()
        if self._cuda:
            write_generator(default_generator(), self.tracker.get_default())
        self._initialized = True
        self._states_changed()

    def __repr__(self):
        mode = "graph-safe" if self._graph_safe else ("cuda" if self._cuda else "cpu")
        return f"<{type(self).__name__} {mode} names={self._names()!r} open={self._open!r}>"


def is_rngtrk_tracker(tracker):
    """Whether `tracker` is one of rngtrk.torch's drop-in trackers."""
    return isinstance(tracker, RngtrkStatesTracker)


# The process tracker is rngtrk.torch.megatron's (get_cuda_rng_tracker, which
# it registers here as it loads, with a look that makes nothing); the modules
# below it that default to the process tracker (te, checkpoint, dcp) reach it
# through process_tracker() and made_process_tracker().
_process_tracker = []


def register_process_tracker(getter, made):
    _process_tracker[:] = [getter, made]


def process_tracker(**flavour):
    """The process tracker (get_cuda_rng_tracker(**flavour)), made if need be."""
    return _process_tracker[0](**flavour)


def made_process_tracker():
    """The process tracker if one has been made, else None (makes nothing)."""
    return _process_tracker[1]()


def set_cuda_rng_state(owner, new_state, device=-1, graph_safe=False):
    """Megatron-LM's and slapo's _set_cuda_rng_state: sets the CUDA
    generator of `device` (-1: the current one) to a 16-byte state (no
    clone), or with graph_safe and a torch.Generator makes it share that
    state.  On CPU-only torch the drop-in tracker `owner()` returns plays
    the generator."""
    if not cuda_ready():
        owner().set_generator_state(new_state)
        return
    generator = default_generator(device)
    if graph_safe and isinstance(new_state, torch.Generator):
        generator.graphsafe_set_state(new_state)
    else:
        write_generator(generator, state_of(new_state, "new_state"))


# -- every random state at once (activation checkpointing) ------------------------

def capture_all(tracker):
    """(torch's CPU generator state, the generator's state, tracker.get_states()):
    Megatron-LM's _get_all_rng_states for `tracker`, with copies throughout
    (the generator's state as a 16-byte tensor, or in graph-safe mode a
    clone_state() Generator), so later draws do not move what was saved.
    During a graph capture, graph-safe trackers give live references (torch
    copies nothing then); a tracker that is not rngtrk's (Megatron's own,
    after uninstall) gives what upstream gives."""
    cpu_state = _rng_state_hook.torch_get_rng_state()
    if not is_rngtrk_tracker(tracker):
        return cpu_state, torch.cuda.get_rng_state() if cuda_ready() else None, tracker.get_states()
    if tracker._graph_safe:
        generator = default_generator()
        generator = generator.graphsafe_get_state() if capturing() else generator.clone_state()
    else:
        generator = state_tensor(tracker.generator_state())
    return cpu_state, generator, tracker.get_states()


def restore_all(tracker, cpu_state, generator_state, states):
    """Puts back what capture_all took, by value: the generator keeps its
    identity (a CUDA graph may have registered it) and takes the saved
    state (during a graph capture: shares it, as upstream does)."""
    _rng_state_hook.torch_set_rng_state(cpu_state)
    if not is_rngtrk_tracker(tracker):
        if generator_state is not None:
            torch.cuda.set_rng_state(generator_state)
    elif tracker._graph_safe and capturing():
        default_generator().graphsafe_set_state(generator_state)
    else:
        tracker.set_generator_state(generator_state)
    tracker.set_states(states)


def reopened(tracker, names):
    """A context manager entering the forks `names` (outermost first) of a
    drop-in tracker: a recompute runs inside the forks its forward ran in,
    so a name re-forked inside it continues the same stream."""
    import contextlib
    stack = contextlib.ExitStack()
    if is_rngtrk_tracker(tracker):
        for name in names:
            stack.enter_context(tracker.fork(name))
    return stack


def open_forks(tracker):
    """The names of a drop-in tracker's open forks, outermost first."""
    return tuple(tracker._open) if is_rngtrk_tracker(tracker) else ()
