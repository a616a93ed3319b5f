# SPDX-License-Identifier: Apache-2.0
"""The process part of rngtrk.torch.dcp.RNGState(process=True): every rank's
process generators (rngtrk.torch._process_generators) gathered into one
process table (rngtrk.torch._process_table) keyed by the user's key (the
rank in the group by default), and on load, this rank's generators matched
against it.  Like _dcp_streams: a save is the same bytes on every rank, a
load decides everything before anything changes, and any rank's error is
raised on every rank.

Replicas: ranks whose key function gives one key declare that they hold one
process state (data-parallel replicas keyed by their model-parallel
coordinates, say).  Their generators must be equal at save, byte for byte;
else the save is refused on every rank naming the key, the ranks and the
generators that differ.
"""
import hashlib
import json
import struct
from collections import namedtuple

from ..errors import RngtrkError
from . import _process_generators as generators
from . import _process_table as table_format
from ._dcp_streams import LISTED, gather_reports, ranks_text


class ProcessStateError(RngtrkError, RuntimeError):
    """RNGState(process=True) cannot save or load the process generators:
    replicas (ranks of one key) that differ at save, a checkpoint without a
    process part, a generator the checkpoint holds that this process cannot
    take (NumPy saved, not importable here).  Raised on every rank, before
    anything is written or changed."""


def rank_key(key_of, rank):
    """This rank's key: key_of() (checked), or the rank when key_of is None."""
    if key_of is None:
        return rank
    return table_format.checked_key(key_of(), "RNGState: the key function's value")


def _key_text(key):
    return f"key {key!r}"


# -- a save ----------------------------------------------------------------------------------

def _report(key, states):
    raw = table_format.key_bytes(key)
    return struct.pack("<H", len(raw)) + raw + struct.pack("<I", len(states)) + table_format.encode_generators(states)


def _from_report(data):
    (length,) = struct.unpack_from("<H", data, 0)
    raw = data[2:2 + length]
    key = struct.unpack("<Q", raw[1:])[0] if raw[0] == table_format.KEY_INTEGER else raw[1:].decode("utf-8")
    (count,) = struct.unpack_from("<I", data, 2 + length)
    states, _ = table_format.decode_generators(data, 6 + length, len(data), count, f"the report of {_key_text(key)}")
    return key, states


def save_table(key_of, cuda_carried, gather, rank):
    """The process table's bytes, the same on every rank of the group:
    this rank's generators (the CUDA one unless `cuda_carried`: a tracker
    carries it) under its key, gathered with every rank's.
    ProcessStateError on every rank when replicas differ; an error reading
    them is raised here and PeerRankError on the others."""
    report = error = None
    try:
        key = rank_key(key_of, rank)
        report = _report(key, [(k, d, generators.read(k, d)) for k, d in generators.present(cuda_carried)])
    except Exception as e:  # reported to every rank first, then raised here
        error = e
    reports = gather_reports(gather, rank, report, error, "save")
    by_key = {}
    for r, data in enumerate(reports):
        key, states = _from_report(data)
        by_key.setdefault(key, []).append((r, states))
    _check_replicas(by_key)
    entries = [table_format.Entry(key, held[0][0], len(held), held[0][1]) for key, held in by_key.items()]
    entries.sort(key=lambda e: table_format.key_order(e.key))
    return table_format.encode(table_format.Table(gather.world_size, tuple(entries)))


def _check_replicas(by_key):
    lines, count = [], 0
    for key, held in by_key.items():
        distinct = {}
        for r, states in held:
            distinct.setdefault(states, []).append(r)
        if len(distinct) < 2:
            continue
        count += 1
        if len(lines) >= LISTED:
            continue
        names, partial = set(), set()
        variants = [dict(((k, d), s) for k, d, s in states) for states in distinct]
        for generator in set().union(*variants):
            if len({v.get(generator) for v in variants}) > 1:
                names.add(generator)
            if any(generator not in v for v in variants):
                partial.add(generator)
        groups = "; ".join(ranks_text(ranks) for ranks in distinct.values())
        held = (f" ({', '.join(generators.name(*g) for g in sorted(partial))} held by only some of them)"
                if partial else "")
        lines.append(f"  {_key_text(key)}: {', '.join(generators.name(*g) for g in sorted(names))} differ between "
                     f"{groups}{held}")
    if count:
        if count > len(lines):
            lines.append(f"  and {count - len(lines)} more keys")
        raise ProcessStateError(
            "RNGState(process=True): ranks with one key hold different process generators, so no state is the "
            "key's; nothing was written:\n" + "\n".join(lines)
            + "\nRanks that share a key are replicas and must draw alike. Give each rank its own key (the default "
              "key is the rank), or keep replicas' draws equal.")


# -- a load ----------------------------------------------------------------------------------

# What a rank will do to its process generators: the writes (kind, device,
# state), the generators started fresh, the CUDA devices the checkpoint has
# that this process has not, and its key.
Plan = namedtuple("Plan", "writes fresh unused key")


def prepare(data, key_of, cuda_carried, rank, unread):
    """This rank's Plan from the process table's bytes `data` (None: the
    checkpoint had no process part, or DCP left it unread: `unread`),
    changing nothing.  Missing generators get derived states (used only
    with on_missing="fresh")."""
    if data is None:
        raise ProcessStateError("RNGState(process=True): the checkpoint holds no process part (it was saved "
                                "without process=True" + (", and dcp.load skipped the key" if unread else "")
                                + "); nothing was changed. Load it with RNGState(process=False), or save with "
                                  "process=True.")
    table = table_format.decode(data)
    key = rank_key(key_of, rank)
    origin = hashlib.sha256(data).digest()
    entry = table.by_key().get(key)
    saved = {} if entry is None else {(k, d): s for k, d, s in entry.generators}
    now = generators.present(cuda_carried)
    lacking = [g for g in saved if g not in now and g[0] != generators.KIND_CUDA]
    if lacking:
        raise ProcessStateError(
            f"RNGState(process=True): rank {rank}: the checkpoint holds "
            f"{', '.join(generators.name(*g) for g in lacking)} for {_key_text(key)}, which this process does not "
            "have (" + ("NumPy does not import here: install it" if (generators.KIND_NUMPY, 0) in lacking
                        else "another Python or torch") + "); nothing was changed")
    writes, fresh = [], []
    for g in now:
        if g in saved:
            generators.validate(*g, saved[g], f"DCP process table: {_key_text(key)}")  # before any write, anywhere
            writes.append((*g, saved[g]))
        else:
            fresh.append(g)
            writes.append((*g, generators.derived(origin, table_format.key_bytes(key), *g)))
    unused = [g for g in saved if g not in now]
    return Plan(tuple(writes), tuple(fresh), tuple(unused), key), table


def report(plan):
    """What a rank tells every rank of its plan (JSON bytes)."""
    return json.dumps({"key": plan.key, "fresh": [generators.name(*g) for g in plan.fresh],
                       "unused": [generators.name(*g) for g in plan.unused]}).encode("utf-8")


def agree(reports):
    """{rank: (key, [fresh generator names], [unused CUDA names])} of every
    rank's report."""
    found = {}
    for r, data in enumerate(reports):
        fields = json.loads(data)
        found[r] = (fields["key"], fields["fresh"], fields["unused"])
    return found


def missing_message(everyone, limit=LISTED):
    """The lines naming each rank's missing generators (ranks of one key
    and one list together)."""
    grouped = {}
    for r, (key, fresh, _) in everyone.items():
        if fresh:
            grouped.setdefault((json.dumps(key), tuple(fresh)), []).append(r)
    lines = [f"  {', '.join(fresh)} of key {json.loads(key)!r} on {ranks_text(ranks)}"
             for (key, fresh), ranks in sorted(grouped.items(), key=lambda item: min(item[1]))[:limit]]
    if len(grouped) > limit:
        lines.append(f"  and {len(grouped) - limit} more")
    return lines


def unclaimed(table, everyone):
    """The keys the table holds that no rank of this layout took."""
    taken = {key for key, _, _ in everyone.values()}
    return [e.key for e in table.entries if e.key not in taken]


def apply(plan):
    """Writes the plan's states (checked when the table was decoded)."""
    for kind, device, state in plan.writes:
        generators.write(kind, device, state)
