# SPDX-License-Identifier: Apache-2.0
"""The streams of rngtrk.torch.dcp.RNGState: what each rank holds, as
fixed-width rows; the two gathers that bring every rank's rows to every
rank; the merge into one stream table, which checks that the holders of a
stream agree on its position; and, on load, this rank's streams matched
against a table.  Needs torch but not torch.distributed.checkpoint, so
bench/bench_dcp.py runs it on any torch, with a simulated group.

A stream is keyed by what it is (docs/checkpoint-format.md, "The key of a
stream"): its kind, name, seed and stream origin (rngtrk._stream_origins),
or its rank for a generator without a stream origin.
"""
import json
from collections import namedtuple

import numpy as np
import torch

from .._stream_origins import AXES, DEFAULT, StreamOrigin, stream_origin
from ..distributed import POLICY_NAMES
from ..errors import RngtrkError, invalid
from ..state import PhiloxState
from ..tracker import Tracker
from . import _dcp_table
from ._dcp_table import KIND_GENERATOR, KIND_NAMED, NO_POLICY, Entry
from ._tracker import CHECKPOINT_KEY


class StreamPositionError(RngtrkError, RuntimeError):
    """dcp.save: ranks hold one stream (the same name, seed and stream
    origin) at different positions, so no position is the stream's.  Raised on every rank before
    anything is written; the message names the stream, the positions and
    the ranks."""


class PeerRankError(RngtrkError, RuntimeError):
    """Another rank could not save or load its streams: raised on the ranks
    that could, so that every rank stops (the failing rank raises its own
    error).  The message names the rank and its error."""


class Stream(namedtuple("Stream", "name seed rank origin", defaults=(None,))):
    """A stream as RNGState reports it: a named state (name, seed; rank
    None) or the generator outside every fork (name None, its seed; the
    rank in the group where it has no stream origin, else None), with its
    stream origin (rngtrk._stream_origins.StreamOrigin, or None: a state
    the seeding policy did not give)."""

    __slots__ = ()

    def __str__(self):
        what = (f"the generator of rank {self.rank}" if self.name is None and self.rank is not None
                else "the generator" if self.name is None else repr(self.name))
        return f"{what} (seed {self.seed}{_origin_text(self.origin)})"

    def _json(self):
        return [self.name, self.seed, self.rank, None if self.origin is None else list(self.origin)]

    @classmethod
    def _from_json(cls, fields):
        name, seed, rank, origin = fields
        return cls(name, seed, rank, None if origin is None else StreamOrigin(*origin[:4], tuple(origin[4])))


def _origin_text(origin):
    """", megatron seed 1234 pp 1 ep 0": the policy and what the seed depends on."""
    if origin is None:
        return ""
    axes = " ".join(f"{axis} {value}" for i, (axis, value) in enumerate(zip(AXES, origin.coordinates))
                    if origin.depends >> i & 1)
    return f", {POLICY_NAMES.get(origin.policy, origin.policy)} seed {origin.seed}" + (f" {axes}" if axes else "")


def rank_and_size(group):
    import torch.distributed as dist
    if not (dist.is_available() and dist.is_initialized()):
        if group is not None:
            raise invalid("RNGState: a process_group was given but torch.distributed is not initialized")
        return 0, 1  # DCP's single-process mode
    rank = dist.get_rank(group)
    if rank < 0:
        raise invalid("RNGState: this process is not in the process_group given")
    return rank, dist.get_world_size(group)


class Collectives:
    """The two gathers RNGState makes, as fixed-width tensors (no pickles):
    a few integers per rank, then each rank's bytes padded to the longest.
    On a group of one process (or without torch.distributed) they return
    this rank's own.  bench/bench_dcp.py puts a simulated group here."""

    def __init__(self, group, world_size):
        self.group, self.world_size = group, world_size

    def _device(self):
        import torch.distributed as dist
        return torch.device("cuda", torch.cuda.current_device()) if dist.get_backend(self.group) == "nccl" \
            else torch.device("cpu")

    def ints(self, values):
        """(world_size, len(values)) int64 array: every rank's `values`."""
        return self._all_gather(torch.tensor(values, dtype=torch.int64))

    def padded(self, payload, width):
        """(world_size, width) uint8 array: every rank's bytes, each padded
        with zeros to `width` (at least the longest; the same on every rank)."""
        mine = torch.zeros(max(width, 1), dtype=torch.uint8)  # never an empty collective
        if payload:
            mine[:len(payload)] = torch.frombuffer(bytearray(payload), dtype=torch.uint8)
        return self._all_gather(mine)

    def _all_gather(self, mine):
        """(world_size, len(mine)) array of every rank's 1-d CPU tensor `mine`."""
        import torch.distributed as dist
        if self.world_size == 1 or not dist.is_initialized():
            return mine.reshape(1, -1).numpy()
        mine = mine.to(self._device())
        out = [torch.empty_like(mine) for _ in range(self.world_size)]
        dist.all_gather(out, mine, group=self.group)
        return torch.stack(out).cpu().numpy()


_OK, _FAILED = 0, 1


def gather_reports(gather, rank, report, error, what):
    """Every rank's `report` (bytes), after raising on every rank when any
    rank failed: its own error on a failing rank, PeerRankError naming the
    first failing rank on the others."""
    payload = report if error is None else summary(error).encode("utf-8")
    counts = gather.ints([_OK if error is None else _FAILED, len(payload)])
    rows = gather.padded(payload, int(counts[:, 1].max()))
    if error is not None:
        raise error
    failed = np.flatnonzero(counts[:, 0] != _OK)
    if len(failed):
        first = int(failed[0])
        more = f" (and {len(failed) - 1} more ranks)" if len(failed) > 1 else ""
        failure = rows[first, :counts[first, 1]].tobytes().decode("utf-8", "replace")
        raise PeerRankError(f"RNGState: rank {first}{more} could not {what} its streams, so no rank does: {failure}")
    return [rows[r, :counts[r, 1]].tobytes() for r in range(gather.world_size)]


def agree(gather, rank, action, what):
    """Runs action() here, then raises on every rank if it raised on any
    (gather_reports): what RNGState does last before a change, so that
    a change is made on every rank or on none."""
    error = None
    try:
        action()
    except Exception as e:  # reported to every rank first, then raised here
        error = e
    gather_reports(gather, rank, b"", error, what)


def summary(error):
    return f"{type(error).__name__}: {error}"


# -- this rank's streams, as fixed-width rows ----------------------------------------------

def snapshot(tracker):
    """({name: PhiloxState} in the tracker's order, the generator's state,
    the tracker's checkpoint bytes, its rngtrk.Origin or None), read through
    the tracker's own state_dict() (which reads torch's CUDA generators
    first)."""
    own = tracker.state_dict()[CHECKPOINT_KEY]
    with Tracker() as copy:
        copy.load(own, any_rank=True)
        named = {name: PhiloxState.from_bytes(raw) for name, raw in copy.get_states().items()}
        return named, copy.get_default(), own, copy.origin()


def _row_type(name_width):
    """The gathered row of one stream: the key (kind, name, seed, stream
    origin, and the rank for a generator without one) and then the offset,
    so that a row's key is its bytes but the last 8."""
    return np.dtype([("kind", "u1"), ("name", f"S{max(name_width, 1)}"), ("seed", "<u8"),
                     ("policy", "<u4"), ("flags", "<u4"), ("origin_seed", "<u8"), ("depends", "<u4"),
                     ("coordinates", "<u4", (len(AXES),)), ("rank", "<u4"), ("offset", "<u8")])


def own_streams(tracker, with_generator, rank):
    """streams_of() this rank's drop-in tracker."""
    named, generator, _, origin = snapshot(tracker)
    return streams_of(named, generator, origin, with_generator, rank)


def streams_of(named, generator, origin, with_generator, rank):
    """[(kind, name bytes or b"", seed, offset, StreamOrigin or None, key
    rank)] of a rank's named states ({name: PhiloxState}), generator and
    rngtrk.Origin (or None)."""
    streams = [(KIND_NAMED, name.encode("utf-8"), state.seed, state.offset,
                stream_origin(origin, name, state.seed), 0) for name, state in named.items()]
    if with_generator:
        found = stream_origin(origin, DEFAULT, generator.seed)
        streams.append((KIND_GENERATOR, b"", generator.seed, generator.offset, found,
                        rank if found is None else 0))
    return streams


def save_table(tracker_of, with_generator, gather, rank, check=False):
    """The stream table's bytes, the same on every rank of the group
    (RNGState.state_dict): this rank's streams (of the drop-in tracker
    tracker_of() returns) gathered with every rank's.  An error reading
    them is reported to every rank, then raised here; PeerRankError on the
    others."""
    streams = error = None
    try:
        streams = own_streams(tracker_of(), with_generator, rank)
    except Exception as e:  # reported to every rank first, then raised here
        error = e
    return _dcp_table.encode(gathered_table(gather, rank, gather.world_size, streams, error), check=check)


def agree_on_load(prepare, gather, rank):
    """Runs prepare() -> (the tracker's new checkpoint bytes, [Stream] the
    table lacks, whether the table was unread) and tells every rank what
    every rank found (RNGState.load_state_dict): (the bytes, this rank's
    missing streams, {rank: [Stream]} of every rank's, whether any rank's
    table was unread).  Any rank's error raises on every rank (its own on
    the failing rank, PeerRankError on the others) before anything changes.
    One gather of four integers per rank; the missing streams themselves
    are gathered only when some rank has some."""
    prepared = error = None
    missing, unread = [], False
    try:
        prepared, missing, unread = prepare()
    except Exception as e:
        error = e
    counts = gather.ints([_OK if error is None else _FAILED, len(missing), int(unread)])
    if (counts[:, 0] != _OK).any():
        gather_reports(gather, rank, b"", error, "load")  # the failing ranks' messages: every rank raises
    everywhere = {}
    if counts[:, 1].any():
        report = json.dumps([stream._json() for stream in missing]).encode("utf-8")
        reports = gather_reports(gather, rank, report, None, "load")
        everywhere = {r: [Stream._from_json(s) for s in json.loads(reports[r])] for r in np.flatnonzero(counts[:, 1])}
    return prepared, missing, everywhere, bool(counts[:, 2].any())


def rows_of(streams, name_width):
    """The bytes a rank sends of its `streams`: one fixed-width row each."""
    rows = np.zeros(len(streams), _row_type(name_width))
    for row, (kind, name, seed, offset, origin, key_rank) in zip(rows, streams):
        row["kind"], row["name"], row["seed"], row["offset"], row["rank"] = kind, name, seed, offset, key_rank
        if origin is None:
            row["policy"] = NO_POLICY
        else:
            row["policy"], row["flags"], row["origin_seed"], row["depends"] = origin[:4]
            row["coordinates"] = origin.coordinates
    return rows.tobytes()


def gathered_table(gather, rank, world_size, streams, error):
    """The stream table of every rank's streams (this rank's: `streams`, or
    `error`), from two gathers: each rank's stream count and longest name,
    then its rows, all as wide as the longest name of the group."""
    width = max((len(s[1]) for s in streams), default=0) if error is None else 0
    count = len(streams) if error is None else 0
    counts = gather.ints([_OK if error is None else _FAILED, count, width])
    if (counts[:, 0] != _OK).any():
        gather_reports(gather, rank, b"", error, "save")  # the failing ranks' messages: every rank raises
    width = int(counts[:, 2].max())
    row_type = _row_type(width)
    per_rank = counts[:, 1]
    payload = gather.padded(rows_of(streams, width), max(int(per_rank.max()), 1) * row_type.itemsize)
    rows = payload.reshape(-1).view(row_type).reshape(world_size, -1)
    held = np.arange(rows.shape[1])[None, :] < per_rank[:, None]
    ranks = np.broadcast_to(np.arange(world_size)[:, None], rows.shape)[held]
    return _merge(world_size, rows[held], ranks)


def _merge(world_size, rows, ranks):
    """The stream table of the gathered `rows` (ranks: the rank of each):
    one entry per key, after checking that every holder of a key holds it
    at one offset."""
    if not len(rows):  # no rank holds a stream (generator=False, no named states): an empty table
        return _dcp_table.canonical(world_size, [])
    size = rows.dtype.itemsize
    keys = np.ascontiguousarray(rows.view(np.uint8).reshape(len(rows), size)[:, :size - 8])
    keys = keys.view(np.dtype((np.void, size - 8))).reshape(-1)
    _, first, group = np.unique(keys, return_index=True, return_inverse=True)
    group = group.reshape(-1)
    order = np.argsort(group, kind="stable")
    starts = np.concatenate(([0], np.flatnonzero(np.diff(group[order])) + 1))
    offsets = rows["offset"][order]
    low, high = np.minimum.reduceat(offsets, starts), np.maximum.reduceat(offsets, starts)
    holders = np.diff(np.concatenate((starts, [len(order)])))
    disagreeing = np.flatnonzero(low != high)
    if len(disagreeing):
        raise StreamPositionError(_disagreement_message(
            {_stream_of(rows[first[g]], ranks[first[g]]): _positions(rows, ranks, order, starts, holders, g)
             for g in disagreeing[:LISTED]}, len(disagreeing)))
    entries = []
    for g, index in enumerate(first):
        row = rows[index]
        stream = _stream_of(row, ranks[index])
        entries.append(Entry(int(row["kind"]), stream.name, stream.seed, int(low[g]), int(ranks[index]),
                             int(holders[g]), stream.origin))
    return _dcp_table.canonical(world_size, entries)


def _stream_of(row, rank):
    origin = None
    if int(row["policy"]) != NO_POLICY:
        origin = StreamOrigin(int(row["policy"]), int(row["flags"]), int(row["origin_seed"]), int(row["depends"]),
                              tuple(int(c) for c in row["coordinates"]))
    if int(row["kind"]) == KIND_GENERATOR:
        return Stream(None, int(row["seed"]), None if origin is not None else int(rank), origin)
    return Stream(bytes(row["name"]).decode("utf-8"), int(row["seed"]), None, origin)


def _positions(rows, ranks, order, starts, holders, g):
    members = order[starts[g]:starts[g] + holders[g]]
    found = {}
    for index in members:
        found.setdefault(int(rows["offset"][index]), []).append(int(ranks[index]))
    return found


LISTED = 10  # streams named in one message; the rest are counted


def ranks_text(ranks):
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


def _disagreement_message(disagreeing, count):
    """disagreeing: {Stream: {offset: [ranks]}} of the first streams; count:
    how many streams disagree."""
    lines = []
    for stream, found in disagreeing.items():
        where = "; ".join(f"offset {offset} on {ranks_text(ranks)}" for offset, ranks in sorted(found.items()))
        lines.append(f"  {stream}: {where}")
    if count > len(disagreeing):
        lines.append(f"  and {count - len(disagreeing)} more streams")
    return ("RNGState: ranks hold one stream (the same name, seed and origin) at different positions, so no position "
            "is the stream's; nothing was written:\n" + "\n".join(lines))


# -- a load ------------------------------------------------------------------------------

def prepare(tracker, table, rank, with_generator):
    """For a load: (the tracker's checkpoint bytes with every stream at its new
    position, the streams the table lacks), changing nothing.  A
    version-1 table (before streams had origins) is read as it was
    written: named streams by (name, seed), generators by rank."""
    named, generator, own, origin = snapshot(tracker)
    with_origins = table is not None and table.version >= 2
    saved = table.named() if table is not None else {}
    if saved and not named:
        raise invalid("RNGState: the tracker holds no named states, so no stream of the checkpoint is this "
                      "rank's: seed it for this rank first (model_parallel_cuda_manual_seed with the new "
                      "ranks), then load")
    missing, states = [], {}
    for name, state in named.items():
        found = stream_origin(origin, name, state.seed)
        entry = saved.get((name, state.seed, found if with_origins else None))
        if entry is None:
            missing.append(Stream(name, state.seed, None, found))
        states[name] = PhiloxState(state.seed, entry.offset if entry is not None else 0)
    if with_generator:
        found = stream_origin(origin, DEFAULT, generator.seed)
        generators = table.generators() if table is not None else {}
        if with_origins and found is not None:
            entry = generators.get((generator.seed, found))
        else:
            entry = generators.get(rank)
            if entry is not None and entry.seed != generator.seed:  # another seed is another stream
                entry = None
        if entry is None:
            missing.append(Stream(None, generator.seed, None if found is not None else rank, found))
            generator = PhiloxState(generator.seed, 0)
        else:
            generator = PhiloxState(generator.seed, entry.offset)
    with Tracker() as copy:  # the tracker's own checkpoint, so its origin (its rank) stays
        copy.load(own, any_rank=True)
        copy.set_states(states)
        copy.set_default(generator)
        return copy.save(), missing
