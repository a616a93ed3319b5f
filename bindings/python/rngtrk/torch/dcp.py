"""rngtrk.torch.dcp: every rank's random streams in a
torch.distributed.checkpoint (DCP) checkpoint, and a resume on any layout
(docs/pytorch.md, "Distributed checkpoints (DCP)").

    import torch.distributed.checkpoint as dcp
    from rngtrk.torch.dcp import RNGState
    dcp.save({"model": model.state_dict(), "rng": RNGState()}, checkpoint_id=path)
    # later, on any number of ranks, after seeding the process tracker for
    # the new ranks (model_parallel_cuda_manual_seed):
    dcp.load({"model": model.state_dict(), "rng": RNGState()}, checkpoint_id=path)

Why not {"rng": tracker.state_dict()}: DCP writes a value that every rank
holds under one key once, from one rank, so one rank's RNG comes back on
every rank (or, with rngtrk's rank-aware bytes, is refused as another
rank's).  RNGState keys what it saves by stream, not by rank: a named state
is (name, seed), which data-parallel replicas share; the generator outside
every fork is per rank.

Why one DCP value: DCP's load asks each Stateful for its state_dict()
before it reads the checkpoint's metadata, and its default planner fails
the whole load on a requested key the checkpoint lacks.  A rank of a new
layout cannot know beforehand which streams the checkpoint holds, so every
stream of the job goes into one value that every rank of every layout
requests: the stream table (rngtrk.torch._dcp_table, documented in
docs/checkpoint-format.md).  state_dict() builds it from one all_gather,
after checking that the ranks holding a stream agree on its position, so
it is the same bytes on every rank and DCP's deduplication keeps one copy,
whichever rank it picks.  load_state_dict() matches this rank's streams
against it, decides with one more all_gather whether the load can go ahead
on every rank, and only then changes the tracker.
"""
import warnings
from collections import namedtuple
from collections.abc import Mapping

import torch

from ..errors import ForkOrderError, RngtrkError, UnavailableError, invalid
from ..state import PhiloxState
from ..tracker import Tracker
from . import _dcp_table
from ._dcp_table import KIND_GENERATOR, KIND_NAMED, Entry
from ._tracker import CHECKPOINT_KEY, is_rngtrk_tracker

STREAMS_KEY = "rngtrk_streams"  # the one key of RNGState.state_dict()
ON_MISSING = ("raise", "fresh")
MINIMUM_TORCH = "2.2"  # DCP's Stateful protocol (dcp.save and dcp.load call state_dict/load_state_dict)


class DCPUnavailableError(UnavailableError, ImportError):
    """This torch has no torch.distributed.checkpoint with the Stateful
    protocol: rngtrk's UnavailableError, and an ImportError (raised when
    rngtrk.torch.dcp is imported)."""


def _why_not_supported():
    """None where DCP can call an RNGState, else the reason."""
    try:
        import torch.distributed.checkpoint as dcp
        from torch.distributed.checkpoint.stateful import Stateful  # noqa: F401
    except ImportError as e:
        return f"{type(e).__name__}: {e}"
    if not (callable(getattr(dcp, "save", None)) and callable(getattr(dcp, "load", None))):
        return "torch.distributed.checkpoint has no save() and load()"
    return None


_REASON = _why_not_supported()
if _REASON is not None:
    raise DCPUnavailableError(f"rngtrk.torch.dcp needs torch.distributed.checkpoint with dcp.save, dcp.load and "
                              f"the Stateful protocol (torch {MINIMUM_TORCH} or later; tested on 2.6 and 2.14); "
                              f"this torch is {torch.__version__} ({_REASON})")


class StreamPositionError(RngtrkError, RuntimeError):
    """dcp.save: ranks hold one stream (the same name and seed) at different
    positions, so no position is the stream's.  Raised on every rank before
    anything is written; the message names the stream, the positions and
    the ranks."""


class MissingStreamError(RngtrkError, RuntimeError):
    """dcp.load with on_missing="raise": streams this layout holds that the
    checkpoint lacks (a rank that did not exist when it was saved).  Raised
    on every rank, naming every such stream and its ranks, before any
    tracker changes.  (RuntimeError: what DCP raises for a missing key.)"""


class PeerRankError(RngtrkError, RuntimeError):
    """Another rank could not save or load its streams: raised on the ranks
    that could, so that every rank stops (the failing rank raises its own
    error).  The message names the rank and its error."""


class FreshStreamWarning(UserWarning):
    """on_missing="fresh": streams the checkpoint lacked started at offset 0."""


class Stream(namedtuple("Stream", "name seed rank")):
    """A stream as RNGState reports it: a named state (name, seed; rank
    None) or a rank's generator outside every fork (name None, its seed,
    the rank in the group that loads)."""

    __slots__ = ()

    def __str__(self):
        if self.name is None:
            return f"the generator of rank {self.rank} (seed {self.seed})"
        return f"{self.name!r} (seed {self.seed})"


class RNGState:
    """A DCP Stateful for a drop-in tracker's streams (module text).

    tracker: a drop-in tracker (rngtrk.torch.megatron's or .te's); None
    (the default) means the process tracker,
    rngtrk.torch.megatron.get_cuda_rng_tracker(), looked up at each call.
    on_missing: what a load does with a stream this rank holds that the
    checkpoint lacks: "raise" (MissingStreamError on every rank, nothing
    changed) or "fresh" (it starts at offset 0 from its seed; a
    FreshStreamWarning, and the attribute `fresh`).
    generator (rngtrk's): also save and restore the generator outside every
    fork, per rank (torch's default CUDA generator; on CPU-only torch the
    tracker's default state, which plays it).
    process_group (rngtrk's): the group given to dcp.save / dcp.load (None:
    the default group).

    `fresh`: the streams of this rank that the last load started at offset
    0 (a tuple of Stream; empty when every stream was in the checkpoint)."""

    def __init__(self, tracker=None, *, on_missing="raise", generator=True, process_group=None):
        if tracker is not None and not is_rngtrk_tracker(tracker):
            raise TypeError(f"RNGState takes one of rngtrk.torch's drop-in trackers (rngtrk.torch.megatron's or "
                            f".te's CudaRNGStatesTracker), not {type(tracker).__name__}")
        if on_missing not in ON_MISSING:
            raise invalid(f"on_missing is one of {ON_MISSING}, not {on_missing!r}")
        if not isinstance(generator, bool):
            raise TypeError(f"generator is a bool, not {type(generator).__name__}")
        self._tracker = tracker
        self.on_missing = on_missing
        self.generator = generator
        self.process_group = process_group
        self.fresh = ()
        self._returned = None  # the bytes state_dict() handed out last

    def __repr__(self):
        which = "the process tracker" if self._tracker is None else repr(self._tracker)
        return f"<RNGState of {which} on_missing={self.on_missing!r} generator={self.generator}>"

    # -- the Stateful protocol -------------------------------------------------------

    def state_dict(self):
        """{"rngtrk_streams": the stream table's bytes}: every stream of every
        rank of the group.  A collective (one all_gather): DCP calls it on
        every rank, on save and on load.  StreamPositionError on every rank
        if ranks hold one stream at different positions; PeerRankError if
        another rank could not read its tracker."""
        rank, world_size = _rank_and_size(self.process_group)
        mine = error = None
        try:
            named, generator, _ = _snapshot(self._current_tracker())
            mine = ([(name, state.seed, state.offset) for name, state in named.items()],
                    tuple(generator) if self.generator else None)
        except Exception as e:  # reported to every rank first, then raised here
            error = e
        gathered = _all_gather((mine, _summary(error)), self.process_group, world_size)
        _stop_if_any_failed(gathered, rank, error, "save")
        data = _dcp_table.encode(_merge(world_size, [streams for streams, _ in gathered]))
        self._returned = data
        return {STREAMS_KEY: data}

    def load_state_dict(self, state_dict):
        """Restores this rank's streams from the stream table DCP read: each
        one the checkpoint holds continues where it was; the others follow
        on_missing.  A collective (one all_gather); on any error, on any
        rank, every rank raises and no tracker changes."""
        rank, world_size = _rank_and_size(self.process_group)
        prepared = error = None
        missing, unread = [], False
        try:
            tracker = self._current_tracker()
            if tracker.tracker.fork_depth:
                raise ForkOrderError("RNGState: a load is refused while a fork is open (the open fork would go on "
                                     "with a state the load replaced)")
            table = self._table_of(state_dict)
            unread = table is None
            prepared, missing = self._prepare(tracker, table, rank)
        except Exception as e:
            error = e
        gathered = _all_gather(([tuple(stream) for stream in missing], unread, _summary(error)),
                               self.process_group, world_size)
        _stop_if_any_failed([(None, failure) for _, _, failure in gathered], rank, error, "load")
        everywhere = {r: [Stream(*s) for s in streams] for r, (streams, _, _) in enumerate(gathered) if streams}
        if everywhere and self.on_missing == "raise":
            raise MissingStreamError(_missing_message(everywhere, any(u for _, u, _ in gathered)))
        tracker.load_state_dict({CHECKPOINT_KEY: prepared})
        self.fresh = tuple(missing)
        if missing:
            warnings.warn(FreshStreamWarning(
                f"RNGState: rank {rank}: the checkpoint lacks {_listing(missing)}; started at offset 0 from "
                f"{'its seed' if len(missing) == 1 else 'their seeds'} (on_missing='fresh'); "
                f"{sum(len(s) for s in everywhere.values())} stream(s) on {len(everywhere)} rank(s) in all"),
                stacklevel=2)

    # -- pieces -----------------------------------------------------------------------

    def _current_tracker(self):
        if self._tracker is not None:
            return self._tracker
        from .megatron import get_cuda_rng_tracker
        tracker = get_cuda_rng_tracker()
        if not is_rngtrk_tracker(tracker):
            raise TypeError(f"RNGState: the process tracker is a {type(tracker).__name__}, not one of rngtrk's "
                            "(rngtrk.torch.megatron.install() puts rngtrk's in Megatron-LM)")
        return tracker

    def _table_of(self, state_dict):
        """The stream table DCP read, or None when the value is the one
        state_dict() handed out, unread (dcp.load with allow_partial_load on
        a checkpoint without it): then no stream is in the checkpoint."""
        if not isinstance(state_dict, Mapping) or STREAMS_KEY not in state_dict:
            raise invalid(f"RNGState.load_state_dict takes the dict RNGState.state_dict() returns, with the key "
                          f"{STREAMS_KEY!r}")
        data = state_dict[STREAMS_KEY]
        if data is self._returned:
            return None
        if isinstance(data, torch.Tensor):
            data = data.detach().cpu().contiguous().numpy().tobytes()
        return _dcp_table.decode(data)

    def _prepare(self, tracker, table, rank):
        """(the tracker's checkpoint bytes with every stream at its new
        position, the streams the table lacks), changing nothing."""
        named, generator, own = _snapshot(tracker)
        saved = table.named() if table is not None else {}
        if saved and not named:
            raise invalid("RNGState: the tracker holds no named states, so no stream of the checkpoint is this "
                          "rank's: seed it for this rank first (model_parallel_cuda_manual_seed with the new "
                          "ranks), then load")
        missing, states = [], {}
        for name, state in named.items():
            entry = saved.get((name, state.seed))
            if entry is None:
                missing.append(Stream(name, state.seed, None))
            states[name] = PhiloxState(state.seed, entry.offset if entry is not None else 0)
        if self.generator:
            entry = table.generators().get(rank) if table is not None else None
            if entry is None or entry.seed != generator.seed:  # another seed is another stream
                missing.append(Stream(None, generator.seed, rank))
                generator = PhiloxState(generator.seed, 0)
            else:
                generator = PhiloxState(generator.seed, entry.offset)
        with Tracker() as copy:  # the tracker's own checkpoint, so its origin (its rank) stays
            copy.load(own, any_rank=True)
            copy.set_states(states)
            copy.set_default(generator)
            return copy.save(), missing


# -- collectives and the table ------------------------------------------------------------

def _rank_and_size(group):
    import torch.distributed as dist
    if not (dist.is_available() and dist.is_initialized()):
        if group is not None:
            raise invalid("RNGState: a process_group was given but torch.distributed is not initialized")
        return 0, 1  # DCP's single-process mode
    rank = dist.get_rank(group)
    if rank < 0:
        raise invalid("RNGState: this process is not in the process_group given")
    return rank, dist.get_world_size(group)


def _all_gather(obj, group, world_size):
    import torch.distributed as dist
    if not (dist.is_available() and dist.is_initialized()):
        return [obj]
    out = [None] * world_size
    dist.all_gather_object(out, obj, group=group)
    return out


def _snapshot(tracker):
    """({name: PhiloxState} in the tracker's order, the generator's state,
    the tracker's checkpoint bytes), read through the tracker's own
    state_dict() (which reads torch's CUDA generators first)."""
    own = tracker.state_dict()[CHECKPOINT_KEY]
    with Tracker() as copy:
        copy.load(own, any_rank=True)
        named = {name: PhiloxState.from_bytes(raw) for name, raw in copy.get_states().items()}
        return named, copy.get_default(), own


def _summary(error):
    return None if error is None else f"{type(error).__name__}: {error}"


def _stop_if_any_failed(gathered, rank, error, what):
    """Raises on every rank when any rank failed: its own error on a failing
    rank, PeerRankError naming the first failing rank on the others."""
    if error is not None:
        raise error
    failed = [(r, failure) for r, (_, failure) in enumerate(gathered) if failure is not None]
    if failed:
        first, failure = failed[0]
        more = f" (and {len(failed) - 1} more ranks)" if len(failed) > 1 else ""
        raise PeerRankError(f"RNGState: rank {first}{more} could not {what} its streams, so no rank does: {failure}")


def _merge(world_size, per_rank):
    """The stream table of every rank's (named streams, generator)."""
    positions = {}  # (name, seed) -> {offset: [ranks]}
    entries = []
    for rank, (named, generator) in enumerate(per_rank):
        for name, seed, offset in named:
            positions.setdefault((name, seed), {}).setdefault(offset, []).append(rank)
        if generator is not None:
            entries.append(Entry(KIND_GENERATOR, None, generator[0], generator[1], rank, 1))
    disagreeing = {key: found for key, found in positions.items() if len(found) > 1}
    if disagreeing:
        raise StreamPositionError(_disagreement_message(disagreeing))
    for (name, seed), found in positions.items():
        (offset, ranks), = found.items()
        entries.append(Entry(KIND_NAMED, name, seed, offset, min(ranks), len(ranks)))
    return _dcp_table.canonical(world_size, entries)


_LISTED = 10  # streams named in one message; the rest are counted


def _ranks_text(ranks):
    """"rank 3" or "ranks 0-3, 6"."""
    ranks = sorted(ranks)
    runs = []
    start = previous = ranks[0]
    for rank in ranks[1:]:
        if rank != previous + 1:
            runs.append((start, previous))
            start = rank
        previous = rank
    runs.append((start, previous))
    return (("rank " if len(ranks) == 1 else "ranks ")
            + ", ".join(str(first) if first == last else f"{first}-{last}" for first, last in runs))


def _disagreement_message(disagreeing):
    lines = []
    for (name, seed), found in sorted(disagreeing.items())[:_LISTED]:
        where = "; ".join(f"offset {offset} on {_ranks_text(ranks)}" for offset, ranks in sorted(found.items()))
        lines.append(f"  {Stream(name, seed, None)}: {where}")
    if len(disagreeing) > _LISTED:
        lines.append(f"  and {len(disagreeing) - _LISTED} more streams")
    return ("RNGState: ranks hold one stream (the same name and seed) at different positions, so no position is the "
            "stream's; nothing was written:\n" + "\n".join(lines))


def _listing(streams):
    return ", ".join(str(s) for s in streams)


def _missing_message(everywhere, unread):
    by_stream = {}
    for rank, streams in everywhere.items():
        for stream in streams:
            by_stream.setdefault(stream, []).append(rank)
    lines = [f"  {stream} on {_ranks_text(ranks)}"
             for stream, ranks in sorted(by_stream.items(), key=lambda item: (min(item[1]), str(item[0])))[:_LISTED]]
    if len(by_stream) > _LISTED:
        lines.append(f"  and {len(by_stream) - _LISTED} more streams")
    why = (" (the checkpoint holds no rngtrk stream table under this key: dcp.load skipped it)" if unread else "")
    return (f"RNGState: the checkpoint lacks streams this layout holds{why}; nothing was changed:\n"
            + "\n".join(lines)
            + "\nThey belong to ranks the saving job did not have (a new tensor- or expert-parallel rank, a new "
              "rank's generator). RNGState(on_missing='fresh') starts them at offset 0 from their seeds; "
              "RNGState(generator=False) leaves the generators out.")


__all__ = ["RNGState", "Stream", "StreamPositionError", "MissingStreamError", "PeerRankError", "FreshStreamWarning",
           "DCPUnavailableError", "STREAMS_KEY"]
