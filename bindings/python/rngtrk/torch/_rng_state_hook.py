# SPDX-License-Identifier: Apache-2.0
"""torch.get_rng_state() and torch.set_rng_state() carry rngtrk's states.

torch saves and restores its CPU generator through these two functions
wherever it replays random work: torch.utils.checkpoint (reentrant and
not, and checkpoint_sequential), torch.random.fork_rng, and activation
checkpointing under torch.compile (run_and_save_rng_state /
run_with_rng_state).  Once rngtrk.torch is imported, the tensor that
torch.get_rng_state() returns also stands for the states of every tracker
rngtrk.torch draws from, and torch.set_rng_state() of that tensor puts them
back, so a recomputation draws what the forward drew, as torch's own
random ops do (docs/pytorch.md, "Activation checkpointing").

What a tensor stands for, per tracker (`_Snapshot`): the named states, the
generator (what rngtrk.torch's ops draw from: on CPU-only torch rngtrk's
active state, with CUDA torch's CUDA generator, which torch saves itself
only for the devices of a checkpointed function's tensor arguments, so a
function of CPU tensors drawing through a CUDA machine's tracker needs it
here), the forks open at the time, and, with the tracker's ledger on, the
ledger's position.  The record lives beside the tensor (keyed by its
id, dropped with it), never in it: a saved tensor pickles as torch's own.

Restoring puts the named states back and writes the saved generator into
the generator now (as torch does with its CUDA generator).  A restore
during a backward pass is the start of a recompute: it also re-enters the
forks that were open when the state was saved, if they are not open now
(a fork written around the checkpointed call: the recompute draws inside
it again, and a name forked again inside continues its stream, as in the
forward), and, when the tracker's ledger is on and the restore rewinds
it, opens a ledger replay from the saved position: every recomputed draw
must equal the forward's draw at the same place (ReplayMismatchError
otherwise).  The next restore of a state saved before that start (the end
of the recompute: fork_rng's exit) leaves those forks and ends the replay.
A recompute may stop early (torch's non-reentrant checkpoint stops once it
has what backward needs), so fewer draws than the forward made is not an
error.  Outside a backward pass a rewind is only a rewind, and numbers
drawn again are reuse, as the ledger says.

Trackers followed: every drop-in tracker (they register when made) and
every open plain rngtrk.Tracker but those inside drop-ins (a plain
tracker's first draw may come after torch saved the state it must
restore: a fresh tracker's first checkpointed step).
"""
import itertools
import weakref

import torch

from ..errors import InvalidArgumentError, ReplayMismatchError
from ..tracker import OPEN_TRACKERS, Tracker
from ._dynamo_watch import when_dynamo_imported
from ._generators import capturing

# torch's own functions: for callers that save and restore rngtrk's states
# themselves (rngtrk.torch's and Megatron's checkpoints: capture_all).
torch_get_rng_state = getattr(torch.get_rng_state, "torch_function", torch.get_rng_state)
torch_set_rng_state = getattr(torch.set_rng_state, "torch_function", torch.set_rng_state)

_followed = weakref.WeakSet()
_records = {}                # id(state tensor) -> _Record
_serials = itertools.count(1)
_recomputes = weakref.WeakKeyDictionary()  # tracker -> _Recompute opened by a restore


def follow(tracker):
    """Makes torch.get_rng_state() carry drop-in `tracker`'s states from now on."""
    _followed.add(tracker)


class _Snapshot:
    __slots__ = ("named", "generator", "default", "forks", "position")

    def __init__(self, named, generator, default, forks, position):
        self.named, self.generator, self.default, self.forks, self.position = named, generator, default, forks, position


class _Record:
    __slots__ = ("serial", "entries", "tensor")

    def __init__(self, serial, entries, tensor):
        self.serial, self.entries, self.tensor = serial, entries, tensor


class _Recompute:
    """What a restore during backward opened: the forks entered again, a
    ledger replay (or None), when (a serial: a restore of a state saved
    before it ends the recompute), in which backward pass (the graph task:
    a recompute that raised never sees its end, and the next backward, or
    anything outside one, abandons it), and the tracker as it was before
    (what an abandoned recompute puts back)."""
    __slots__ = ("opened", "forks", "context", "task", "before")

    def __init__(self, opened, forks, context, task, before):
        self.opened, self.forks, self.context, self.task, self.before = opened, forks, context, task, before


def _is_plain(tracker):
    return isinstance(tracker, Tracker)


def _ledger(tracker):
    return tracker if _is_plain(tracker) else tracker.tracker


def _position(tracker):
    """The ledger's position, or None when its ledger is off."""
    ledger = _ledger(tracker)
    if ledger.ledger_mode == "off":
        return None
    try:
        return ledger.ledger_position()
    except InvalidArgumentError:
        return None


def _snapshot(tracker):
    if _ledger(tracker).closed:
        return None  # a closed tracker has nothing to restore
    if _is_plain(tracker):
        forks = tracker.open_forks
        if len(forks) != tracker.fork_depth:
            forks = None  # forks entered through the C API: their names are unknown here
        return _Snapshot(tracker.get_states(), tracker.active_state(), tracker.get_default(), forks,
                         _position(tracker))
    if tracker._cuda and capturing():
        return None  # torch can read no generator during a capture (and restores none then either)
    if tracker._graph_safe or tracker._kept:
        named = tracker.get_states()  # copies of the live generators, or with the values set_states kept
    else:
        tracker._sync_open()
        named = tracker.tracker.get_states()  # {name: 16 bytes}: the cheapest copy
    return _Snapshot(named, tracker.generator_state(), None, tuple(tracker._open), _position(tracker))


def _every_tracker():
    """The followed drop-ins and the open plain trackers not inside one."""
    dropins = list(_followed)
    inner = {id(d.tracker) for d in dropins}
    return dropins + [t for t in list(OPEN_TRACKERS) if id(t) not in inner]


def get_rng_state():
    """torch.get_rng_state(), which also stands for rngtrk's states (module text)."""
    settle()
    state = torch_get_rng_state()
    if _followed or OPEN_TRACKERS:
        entries = []
        for tracker in _every_tracker():
            snapshot = _snapshot(tracker)
            if snapshot is not None:
                entries.append((weakref.ref(tracker), snapshot))
        key = id(state)
        # The record goes when the tensor goes (the reference keeps the callback alive as long).
        _records[key] = _Record(next(_serials), entries, weakref.ref(state, lambda _, key=key: _records.pop(key, None)))
    return state


def set_rng_state(new_state):
    """torch.set_rng_state(), which also puts back the rngtrk states
    `new_state` stands for (module text).  Every tracker is restored even
    when one fails; then the first error is raised."""
    settle()
    torch_set_rng_state(new_state)
    record = _records.get(id(new_state))
    if record is None:
        return
    backward = _in_backward()
    entries = [(ref(), snapshot) for ref, snapshot in record.entries]
    entries = [(t, snapshot) for t, snapshot in entries if t is not None and not _ledger(t).closed]
    errors = []

    def each(step, *args):
        try:
            step(*args)
        except Exception as e:  # noqa: BLE001  (raised after every tracker is restored)
            errors.append(e)

    # In phases, not tracker by tracker: with CUDA every drop-in's generator
    # is torch's one CUDA generator, so each tracker's forks are left while
    # it still holds the recompute's progress, and written only at the end.
    for tracker, _ in entries:
        recompute = _recomputes.get(tracker)
        if recompute is not None and record.serial < recompute.opened:
            each(_close, tracker)
    before = {tracker: _snapshot(tracker) for tracker, _ in entries} if backward else {}
    for tracker, snapshot in entries:
        each(_put_states, tracker, snapshot)
    if backward:
        for tracker, snapshot in entries:
            each(_maybe_open, tracker, snapshot, before.get(tracker))
    for tracker, snapshot in entries:
        if snapshot.generator is not None and (backward or _is_plain(tracker) or not tracker._cuda):
            # (torch's CUDA generator only for a recompute: outside one,
            # fork_rng(devices=[]) means to leave it alone)
            each(_set_generator, tracker, snapshot.generator)
    if errors:
        raise errors[0]


def _put_states(tracker, snapshot):
    _put_named(tracker, snapshot.named)
    if _is_plain(tracker) and tracker.get_default() != snapshot.default:
        tracker.set_default(snapshot.default)


def _maybe_open(tracker, snapshot, before):
    """A restore during backward starts a recompute (module text)."""
    if _recomputes.get(tracker) is not None or snapshot.forks is None or before is None:
        return
    now = tracker.open_forks if _is_plain(tracker) else tuple(tracker._open)
    reopen = () if now == snapshot.forks else snapshot.forks
    # Only draws that go through the rngtrk tracker reach its ledger: a
    # plain tracker's, and a drop-in's where rngtrk keeps the generator.
    replay = ((_is_plain(tracker) or not tracker._cuda) and snapshot.position is not None
              and _rewinds(tracker, snapshot.position))
    if reopen or replay:
        _open(tracker, reopen, snapshot.position if replay else None, before)


def _put_named(tracker, named):
    """set_states(named), skipped when nothing changed since (the common
    case of a save and restore around work that drew nothing of rngtrk's)."""
    if _is_plain(tracker) or tracker._graph_safe or tracker._kept or not all(
            isinstance(raw, bytes) for raw in named.values()):
        tracker.set_states(named)
        return
    tracker._sync_open()
    if tracker.tracker.get_states() != named:
        tracker.set_states(named)


def _rewinds(tracker, position):
    now = _position(tracker)
    return now is not None and position < now


def _set_generator(tracker, state):
    """Writes the saved generator into the generator now: a drop-in's (its
    active state, or torch's CUDA generator), or a plain tracker's active
    state (its default outside forks, else the innermost open fork's)."""
    if not _is_plain(tracker):
        if tracker.generator_state() != state:
            tracker.set_generator_state(state)
    elif tracker.fork_depth == 0:
        tracker.set_default(state)
    elif len(tracker.open_forks) == tracker.fork_depth:
        tracker.set_state(tracker.open_forks[-1], state)


def _open(tracker, forks, position, before):
    """The recompute's context: re-enters `forks` (those open when the
    state was saved) and, given a ledger position, opens a prefix replay
    from it.  A position the ledger no longer holds (its capacity) gets no
    replay: the recompute runs unproven rather than failing."""
    entered = []
    try:
        for name in forks:
            entered.append(_enter(tracker, name))
        context = None
        if position is not None:
            context = _ledger(tracker).replay_prefix(position)
            try:
                context.__enter__()
            except ReplayMismatchError:
                context = None  # the log lost the region (docs/ledger.md, capacity)
    except BaseException:
        for fork in reversed(entered):
            _leave(tracker, fork)
        raise
    _recomputes[tracker] = _Recompute(next(_serials), entered, context, _graph_task(), before)


def _enter(tracker, name):
    """Enters the fork `name`; returns what _leave needs."""
    if _is_plain(tracker):
        fork = tracker.fork(name)
        fork.__enter__()
        return fork
    tracker._enter(name)
    return name


def _leave(tracker, fork):
    if _is_plain(tracker):
        fork.__exit__(None, None, None)
    else:
        tracker._leave(fork)


def _close(tracker):
    recompute = _recomputes.pop(tracker)
    try:
        if recompute.context is not None:
            recompute.context.__exit__(None, None, None)  # a prefix replay: fewer draws than recorded is fine
    finally:
        for fork in reversed(recompute.forks):
            _leave(tracker, fork)
    return recompute


def settle():
    """Ends the recomputes that will never see their end: opened in a
    backward pass that has finished (a recompute that raised skips the
    restore that would end it), and puts their trackers back as they were
    before them, so no later draw reuses the recompute's numbers."""
    if not _recomputes.data:  # (the dictionary itself: every draw asks, and len() of the weak mapping costs more)
        return
    task = _graph_task()
    for tracker, recompute in list(_recomputes.items()):
        if task is None or (recompute.task is not None and recompute.task != task):
            _close(tracker)
            before = recompute.before
            if before is not None and not _ledger(tracker).closed:
                _put_states(tracker, before)
                if before.generator is not None:
                    _set_generator(tracker, before.generator)


# -- in a backward pass? ------------------------------------------------------------------

# _graph_task(): the running backward pass (its graph task id), or None
# outside one; torch < 2.1 has no id and says only whether one is running.
if hasattr(torch._C, "_current_graph_task_id"):
    def _graph_task():
        task = torch._C._current_graph_task_id()
        return None if task == -1 else task
else:  # the engine refuses this question about a node outside a backward pass
    with torch.enable_grad():
        _PROBE = (torch.ones(1, requires_grad=True) * 1).grad_fn

    def _graph_task():
        try:
            torch._C._will_engine_execute_node(_PROBE)
        except RuntimeError:
            return None
        return -1  # some backward pass


def _in_backward():
    return _graph_task() is not None


get_rng_state.torch_function = torch_get_rng_state  # (a reload of this module finds torch's own)
set_rng_state.torch_function = torch_set_rng_state

# What torch.get_rng_state / set_rng_state are while installed: the two
# functions above, or, once torch._dynamo is imported, the same behind
# torch._dynamo.disable, so that torch.compile never traces into them (it
# would compile their helpers frame by frame and recompile at every save);
# it breaks the graph there and runs them as they are.
_current = {"get": get_rng_state, "set": set_rng_state}
_dynamo_watched = []


def _put(get, set_):
    torch.get_rng_state = torch.random.get_rng_state = get
    torch.set_rng_state = torch.random.set_rng_state = set_


def _behind_dynamo_disable(module):
    """Run right after torch._dynamo is imported: wrap the two functions,
    and put the wrapped ones in place if installed."""
    was_installed = installed()
    for key, plain in (("get", get_rng_state), ("set", set_rng_state)):
        wrapped = module.disable(plain)
        wrapped.torch_function = plain.torch_function
        _current[key] = wrapped
    if was_installed:
        _put(_current["get"], _current["set"])


def install():
    """Puts the two functions in place of torch's (idempotent)."""
    _put(_current["get"], _current["set"])
    if not _dynamo_watched:
        _dynamo_watched.append(True)
        when_dynamo_imported(_behind_dynamo_disable)


def uninstall():
    """Puts torch's own two functions back (tests: what torch does alone)."""
    _put(torch_get_rng_state, torch_set_rng_state)


def installed():
    return torch.get_rng_state in (get_rng_state, _current["get"]) and \
        torch.set_rng_state in (set_rng_state, _current["set"])


__all__ = ["follow", "install", "uninstall", "installed", "get_rng_state", "set_rng_state", "torch_get_rng_state",
           "torch_set_rng_state"]
