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
    # the whole process: Python's, NumPy's, torch's CPU and CUDA generators too
    dcp.save({..., "rng": RNGState(process=True)}, checkpoint_id=path)

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
import sys
import warnings
from collections.abc import Mapping

import torch

from ..errors import ForkOrderError, RngtrkError, UnavailableError, invalid
from . import _dcp_process, _dcp_streams, _dcp_table, _process_generators
from ._dcp_process import ProcessStateError  # noqa: F401  (this module's name)
from ._generators import cuda_ready
from ._dcp_streams import PeerRankError, Stream, StreamPositionError  # noqa: F401  (this module's names)
from ._tracker import CHECKPOINT_KEY, is_rngtrk_tracker, made_process_tracker, process_tracker

STREAMS_KEY = "rngtrk_streams"  # the key of RNGState.state_dict()'s stream table
PROCESS_KEY = "rngtrk_process"  # and, with process=True, of its process table
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


class NoRNGStateError(RngtrkError, RuntimeError):
    """A stack's checkpoint holds no rngtrk state where a hook of
    rngtrk.torch expects one (saved without it: rngtrk.torch.accelerate's
    register(), rngtrk.torch.lightning's RNGStateCallback).  Raised on
    every process before anything changes (RuntimeError: what Accelerate
    raises for a missing custom checkpoint)."""


class FreshStreamWarning(UserWarning):
    """on_missing="fresh": streams the checkpoint lacked started at offset 0
    (process generators: from derived states)."""


class DroppedStateWarning(UserWarning):
    """process=True: states the checkpoint holds that no rank of this layout
    takes (the keys of ranks a scale-down left out; CUDA devices this
    process does not have), left unused."""


class RNGState:
    """A DCP Stateful for a drop-in tracker's streams (module text).

    tracker: a drop-in tracker (rngtrk.torch.megatron's, .te's or
    .slapo's); None (the default): the process tracker this process uses,
    looked up at each call (_process_tracker): Megatron-LM's (which
    TransformerEngine's get_rng_state_tracker() also returns) or slapo's,
    whichever holds named states; both holding some, or neither with
    generator=False, are refused (InvalidArgumentError naming tracker=);
    neither with generator=True saves the generator of Megatron's process
    tracker.  A tracker the job made itself is given here, never guessed.
    on_missing: what a load does with a stream this rank holds that the
    checkpoint lacks: "raise" (MissingStreamError on every rank, nothing
    changed) or "fresh" (it starts at offset 0 from its seed; a
    FreshStreamWarning on every rank, issued before anything changes, and
    the attribute `fresh`; under warnings-as-errors the load raises on
    every rank and changes nothing).
    generator (rngtrk's): also save and restore the generator outside every
    fork, per rank (torch's default CUDA generator; on CPU-only torch the
    tracker's default state, which plays it).
    process_group (rngtrk's): the group given to dcp.save / dcp.load (None:
    the default group).
    process: also save and restore the process's own generators, per key
    (rngtrk.torch._dcp_process): Python's random, NumPy's global generator
    (when NumPy imports), torch's CPU generator and the current CUDA
    device's default generator unless the tracker carries it
    (generator=True does).  A rank whose key the checkpoint holds
    continues each; any other follows on_missing ("fresh": states derived
    from the checkpoint and the key, _process_generators.derived); keys no
    rank takes are named in one DroppedStateWarning.
    key (with process=True): a function of no arguments giving this rank's
    key, an int in [0, 2^64) or a text (None: the rank in process_group).
    Ranks with one key are replicas: their generators must be equal at
    save (ProcessStateError on every rank otherwise).

    `fresh`: the streams of this rank that the last load started at offset
    0 (a tuple of Stream; empty when every stream was in the checkpoint).
    `fresh_process`: the names of this rank's process generators the last
    load started fresh ("python", "numpy", "torch-cpu", "cuda")."""

    def __init__(self, tracker=None, *, on_missing="raise", generator=True, process_group=None, process=False,
                 key=None):
        if tracker is not None and not is_rngtrk_tracker(tracker):
            raise TypeError(f"RNGState takes one of rngtrk.torch's drop-in trackers (rngtrk.torch.megatron's or "
                            f".te's CudaRNGStatesTracker), not {type(tracker).__name__}")
        if on_missing not in ON_MISSING:
            raise invalid(f"on_missing is one of {ON_MISSING}, not {on_missing!r}")
        if not isinstance(generator, bool):
            raise TypeError(f"generator is a bool, not {type(generator).__name__}")
        if not isinstance(process, bool):
            raise TypeError(f"process is a bool, not {type(process).__name__}")
        if key is not None and not callable(key):
            raise TypeError(f"key is a function of no arguments giving this rank's key, not {type(key).__name__}")
        if key is not None and not process:
            raise invalid("RNGState: key= keys the process generators: give it with process=True")
        self._tracker = tracker
        self.process = process
        self.key = key
        self.fresh_process = ()
        self.on_missing = on_missing
        self.generator = generator
        self.process_group = process_group
        self.fresh = ()
        self._returned = None  # the bytes state_dict() handed out last
        self._returned_process = None  # and its process table

    def __repr__(self):
        which = "the process tracker" if self._tracker is None else repr(self._tracker)
        return (f"<RNGState of {which} on_missing={self.on_missing!r} generator={self.generator}"
                f"{' process=True' if self.process else ''}>")

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
        if not self.process:
            return {STREAMS_KEY: data}
        process = _dcp_process.save_table(self.key, self._cuda_carried(), gather, rank)
        self._returned_process = process
        return {STREAMS_KEY: data, PROCESS_KEY: process}

    def load_state_dict(self, state_dict):
        """Restores this rank's streams from the stream table DCP read: each
        one the checkpoint holds continues where it was; the others follow
        on_missing.  A collective (two fixed-width all_gathers); on any
        error, on any rank, every rank raises and no tracker changes."""
        rank, world_size = _dcp_streams.rank_and_size(self.process_group)
        gather = _dcp_streams.Collectives(self.process_group, world_size)
        tracker = plan = process_table = None

        def prepare():
            nonlocal tracker, plan, process_table
            table = self._table_of(state_dict)
            tracker = self._current_tracker()
            if tracker.tracker.fork_depth:
                raise ForkOrderError("RNGState: a load is refused while a fork is open (the open fork would go on "
                                     "with a state the load replaced)")
            if self.process:
                data = _value_of(state_dict, PROCESS_KEY, self._returned_process)
                plan, process_table = _dcp_process.prepare(data, self.key, self._cuda_carried(), rank,
                                                           unread=data is None and PROCESS_KEY in state_dict)
            prepared, missing = self._prepare(tracker, table, rank)
            return prepared, missing, table is None

        prepared, missing, everywhere, unread_anywhere = _dcp_streams.agree_on_load(prepare, gather, rank)
        everyone = {}
        if self.process:  # every rank's key and missing generators, to every rank
            everyone = _dcp_process.agree(_dcp_streams.gather_reports(gather, rank, _dcp_process.report(plan), None,
                                                                      "load"))
        lacking = _dcp_process.missing_message(everyone)
        if (everywhere or lacking) and self.on_missing == "raise":
            raise MissingStreamError(_missing_message(everywhere, unread_anywhere, lacking))
        dropped = _dcp_process.unclaimed(process_table, everyone) if self.process else []

        def warn():  # the warnings, before any change: under warnings-as-errors they are errors on every rank
            if missing:
                warnings.warn(_fresh_warning(rank, missing, everywhere), stacklevel=5)
            if plan is not None and plan.fresh:
                warnings.warn(_fresh_process_warning(rank, plan, sum(1 for _, fresh, _ in everyone.values() if fresh)),
                              stacklevel=5)
            if dropped and rank == 0:
                warnings.warn(_dropped_keys_warning(dropped), stacklevel=5)
            if plan is not None and plan.unused:
                warnings.warn(DroppedStateWarning(
                    f"RNGState: rank {rank}: the checkpoint holds {', '.join(_name(g) for g in plan.unused)} for "
                    f"key {plan.key!r}, which this process does not have; left unused"), stacklevel=5)

        if everywhere or lacking or dropped or any(unused for _, _, unused in everyone.values()):
            _dcp_streams.agree(gather, rank, warn, "load")
        tracker.load_state_dict({CHECKPOINT_KEY: prepared})
        if plan is not None:
            _dcp_process.apply(plan)
            self.fresh_process = tuple(_name(g) for g in plan.fresh)
        self.fresh = tuple(missing)

    # -- pieces -----------------------------------------------------------------------

    def _current_tracker(self):
        if self._tracker is not None:
            return self._tracker
        return _process_tracker(self.generator)

    def _table_of(self, state_dict):
        """The stream table given, or None when DCP left it unread: dcp.load
        (allow_partial_load, on a checkpoint without it) handed back the very
        bytes state_dict() returned, where a read puts a new object.  Then no
        stream is in the checkpoint.  The same object given outside dcp.load
        is a snapshot the caller kept (or deep-copied: bytes copy as
        themselves), and restores like any other bytes."""
        if not isinstance(state_dict, Mapping) or STREAMS_KEY not in state_dict:
            raise invalid(f"RNGState.load_state_dict takes the dict RNGState.state_dict() returns, with the key "
                          f"{STREAMS_KEY!r}")
        data = _value_of(state_dict, STREAMS_KEY, self._returned)
        return None if data is None else _dcp_table.decode(data)

    def _cuda_carried(self):
        """Whether the tracker carries the current CUDA device's generator
        (generator=True with CUDA)."""
        return self.generator and cuda_ready()

    def _prepare(self, tracker, table, rank):
        """(the tracker's checkpoint bytes with every stream at its new
        position, the streams the table lacks), changing nothing."""
        return _dcp_streams.prepare(tracker, table, rank, self.generator)


def _value_of(state_dict, key, returned):
    """The bytes under `key`, or None where DCP left them unread: dcp.load
    handed back the very object state_dict() returned (see _table_of), or
    the key is not there at all (a process part asked of a state dict
    without one)."""
    if key not in state_dict:
        return None
    data = state_dict[key]
    if data is None:
        raise invalid(f"RNGState.load_state_dict: the value under {key!r} is None, not the bytes "
                      "RNGState.state_dict() returns")
    if data is returned and _called_by_dcp():
        return None
    if isinstance(data, torch.Tensor):
        data = data.detach().cpu().contiguous().numpy().tobytes()
    return data


def _name(generator):
    return _process_generators.name(*generator)


def _fresh_process_warning(rank, plan, ranks_lacking):
    return FreshStreamWarning(f"RNGState: rank {rank}: the checkpoint lacks {', '.join(map(_name, plan.fresh))} "
                              f"for key {plan.key!r}; started from states derived from the checkpoint and the key "
                              f"(on_missing='fresh'); {ranks_lacking} rank(s) in all")


def _dropped_keys_warning(keys):
    listed = ", ".join(repr(k) for k in keys[:_dcp_streams.LISTED])
    more = f" and {len(keys) - _dcp_streams.LISTED} more" if len(keys) > _dcp_streams.LISTED else ""
    return DroppedStateWarning(f"RNGState: the checkpoint holds the process generators of {len(keys)} key(s) no "
                               f"rank of this layout takes (fewer ranks than saved): {listed}{more}; left unused")


def _listing(streams):
    return ", ".join(str(s) for s in streams)


def _fresh_warning(rank, missing, everywhere):
    """The FreshStreamWarning of a rank with missing streams in a load with
    on_missing="fresh", issued before anything changes on any rank (under
    warnings-as-errors it is then the error of a load that changed nothing:
    this warning here, PeerRankError naming it on the other ranks)."""
    one = len(missing) == 1
    return FreshStreamWarning(f"RNGState: rank {rank}: the checkpoint lacks {_listing(missing)}; "
                              f"{'it starts' if one else 'they start'} at offset 0 from "
                              f"{'its seed' if one else 'their seeds'} (on_missing='fresh'); "
                              f"{sum(len(s) for s in everywhere.values())} stream(s) on {len(everywhere)} rank(s) "
                              f"in all")


def _called_by_dcp():
    """Whether torch.distributed.checkpoint's code is on the call stack:
    RNGState.load_state_dict called by dcp.load, directly or through the
    caller's own Stateful."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith("torch.distributed.checkpoint."):
            return True
        frame = frame.f_back
    return False


# Where RNGState() without tracker= finds the tracker: among the process
# trackers (Megatron-LM's, which TransformerEngine's get_rng_state_tracker
# also returns, once created; slapo's once rngtrk.torch.slapo is imported),
# the one that holds named states.  Both holding some, or neither with
# generator=False, are refused: never a save that silently leaves a job's
# streams out.  A tracker the job made itself is never guessed at (which
# trackers are still alive depends on the collector): it is given.
def _process_tracker(with_generator):
    candidates = []
    made = made_process_tracker()
    if made is not None:
        candidates.append(("rngtrk.torch.megatron's process tracker (also .te's)", made))
    slapo = sys.modules.get("rngtrk.torch.slapo")
    if slapo is not None:
        candidates.append(("rngtrk.torch.slapo's process tracker", slapo.get_cuda_rng_tracker()))
    for label, tracker in candidates:
        if not is_rngtrk_tracker(tracker):
            raise TypeError(f"RNGState: {label} is a {type(tracker).__name__}, not one of rngtrk's "
                            "(rngtrk.torch.megatron.install() puts rngtrk's in Megatron-LM); give RNGState(tracker=...)")
    holding = [(label, t) for label, t in candidates if len(t.tracker)]
    if len(holding) == 1:
        return holding[0][1]
    if holding:
        raise invalid("RNGState: both process trackers hold named states, so which one to save is not known: "
                      + "; ".join(label for label, _ in holding) + ". Give RNGState(tracker=...) for each")
    if not with_generator:
        raise invalid("RNGState(generator=False): no process tracker holds a named state, so there is nothing to "
                      "save or restore. Seed it first, or give the tracker the job uses: RNGState(tracker=...)")
    return process_tracker()  # only the generator: the process tracker's, created as Megatron does


def _missing_message(everywhere, unread, lacking=()):
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
    text = ""
    if lines:
        text = (f"RNGState: the checkpoint lacks streams this layout holds{why}; nothing was changed:\n"
                + "\n".join(lines)
                + "\nThey belong to ranks the saving job did not have (a new tensor- or expert-parallel rank, a new "
                  "rank's generator). RNGState(on_missing='fresh') starts them at offset 0 from their seeds; "
                  "RNGState(generator=False) leaves the generators out.")
    if lacking:
        text += ("\n" if text else "") + (
            "RNGState(process=True): the checkpoint lacks the process generators of keys this layout has; nothing "
            "was changed:\n" + "\n".join(lacking)
            + "\nThey belong to keys the saving job did not have (more ranks than saved). "
              "RNGState(on_missing='fresh') starts them from states derived from the checkpoint and the key.")
    return text


__all__ = ["RNGState", "Stream", "StreamPositionError", "MissingStreamError", "NoRNGStateError", "PeerRankError",
           "FreshStreamWarning", "DroppedStateWarning", "ProcessStateError", "DCPUnavailableError", "STREAMS_KEY",
           "PROCESS_KEY"]
