# SPDX-License-Identifier: Apache-2.0
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
rank's).  RNGState keys what it saves by stream, not by rank, and a stream
by what it is, not its seed number: its name, seed and stream origin (the
seeding policy and the coordinates its seed depends on), which data-parallel
replicas share (rngtrk.torch._dcp_streams).

Why one DCP value: DCP's load asks each Stateful for its state_dict()
before it reads the checkpoint's metadata, and its default planner fails
the whole load on a requested key the checkpoint lacks.  A rank of a new
layout cannot know beforehand which streams the checkpoint holds, so every
stream of the job goes into one value that every rank of every layout
requests: the stream table (rngtrk.torch._dcp_table, documented in
docs/checkpoint-format.md).  state_dict() builds it from two fixed-width
all_gathers, after checking that the ranks holding a stream agree on its position, so
it is the same bytes on every rank and DCP's deduplication keeps one copy,
whichever rank it picks.  load_state_dict() matches this rank's streams
against it, decides with two more all_gathers whether the load can go ahead
on every rank, and only then changes the tracker.
"""
import os
import warnings
from collections.abc import Mapping

import torch

from ..errors import ForkOrderError, RngtrkError, UnavailableError, invalid
from . import _dcp_streams, _dcp_table
from ._dcp_streams import PeerRankError, Stream, StreamPositionError  # noqa: F401  (this module's names)
from ._tracker import CHECKPOINT_KEY, is_rngtrk_tracker

STREAMS_KEY = "rngtrk_streams"  # the one key of RNGState.state_dict()
ON_MISSING = ("raise", "fresh")
MINIMUM_TORCH = "2.2"  # DCP's Stateful protocol (dcp.save and dcp.load call state_dict/load_state_dict)
# The debug mode (RNGTRK_DEBUG=1 in the environment at import): each saved
# table is decoded again and compared with what was meant (docs/pytorch.md).
DEBUG = os.environ.get("RNGTRK_DEBUG", "") not in ("", "0")


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


class MissingStreamError(RngtrkError, RuntimeError):
    """dcp.load with on_missing="raise": streams this layout holds that the
    checkpoint lacks (a rank that did not exist when it was saved).  Raised
    on every rank, naming every such stream and its ranks, before any
    tracker changes.  (RuntimeError: what DCP raises for a missing key.)"""


class FreshStreamWarning(UserWarning):
    """on_missing="fresh": streams the checkpoint lacked started at offset 0."""


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
        rank of the group, each once, keyed by what it is.  A collective
        (two fixed-width all_gathers): DCP calls it on every rank, on save
        and on load.  StreamPositionError on every rank if ranks hold one
        stream at different positions; PeerRankError if another rank could
        not read its tracker."""
        rank, world_size = _dcp_streams.rank_and_size(self.process_group)
        gather = _dcp_streams.Collectives(self.process_group, world_size)
        data = _dcp_streams.save_table(self._current_tracker, self.generator, gather, rank, check=DEBUG)
        self._returned = data
        return {STREAMS_KEY: data}

    def load_state_dict(self, state_dict):
        """Restores this rank's streams from the stream table DCP read: each
        one the checkpoint holds continues where it was; the others follow
        on_missing.  A collective (two fixed-width all_gathers); on any
        error, on any rank, every rank raises and no tracker changes."""
        rank, world_size = _dcp_streams.rank_and_size(self.process_group)
        gather = _dcp_streams.Collectives(self.process_group, world_size)
        tracker = None

        def prepare():
            nonlocal tracker
            tracker = self._current_tracker()
            if tracker.tracker.fork_depth:
                raise ForkOrderError("RNGState: a load is refused while a fork is open (the open fork would go on "
                                     "with a state the load replaced)")
            table = self._table_of(state_dict)
            prepared, missing = self._prepare(tracker, table, rank)
            return prepared, missing, table is None

        prepared, missing, everywhere, unread_anywhere = _dcp_streams.agree_on_load(prepare, gather, rank)
        if everywhere and self.on_missing == "raise":
            raise MissingStreamError(_missing_message(everywhere, unread_anywhere))
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
        return _dcp_streams.prepare(tracker, table, rank, self.generator)


def _listing(streams):
    return ", ".join(str(s) for s in streams)


def _missing_message(everywhere, unread):
    by_stream = {}
    for rank, streams in everywhere.items():
        for stream in streams:
            by_stream.setdefault(stream, []).append(rank)
    listed = _dcp_streams.LISTED
    lines = [f"  {stream} on {_dcp_streams.ranks_text(ranks)}"
             for stream, ranks in sorted(by_stream.items(), key=lambda item: (min(item[1]), str(item[0])))[:listed]]
    if len(by_stream) > listed:
        lines.append(f"  and {len(by_stream) - listed} more streams")
    why = (" (the checkpoint holds no rngtrk stream table under this key: dcp.load skipped it)" if unread else "")
    return (f"RNGState: the checkpoint lacks streams this layout holds{why}; nothing was changed:\n"
            + "\n".join(lines)
            + "\nThey belong to ranks the saving job did not have (a new tensor- or expert-parallel rank, a new "
              "rank's generator). RNGState(on_missing='fresh') starts them at offset 0 from their seeds; "
              "RNGState(generator=False) leaves the generators out.")


__all__ = ["RNGState", "Stream", "StreamPositionError", "MissingStreamError", "PeerRankError", "FreshStreamWarning",
           "DCPUnavailableError", "STREAMS_KEY"]
