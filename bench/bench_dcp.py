#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`make bench-dcp`: what rngtrk.torch.dcp.RNGState costs one rank of a W-rank
job, for W = 1k, 4k and 16k, simulated in one process (issue 34).  Not a
test: nothing here asserts; the figures are printed with their targets
(at most 100 ms per rank for each of save and load at 16k).

What runs is what RNGState.state_dict() and load_state_dict() run
(rngtrk.torch._dcp_streams.save_table and agree_on_load, the stream table's
encode and decode, the match of this rank's streams), on one rank's real
drop-in tracker.  What the simulation replaces is the group: the two
all_gathers of each call return the arrays a W-rank gloo group would hand
this rank (every rank's counts and rows, built beforehand from W trackers
seeded as Megatron-LM's training setup seeds them), so the figures leave
out the network and the other ranks' waits, and count the bytes this rank
would receive.  It needs no torch.distributed.checkpoint, so it runs on
Debian 12's torch 1.13 as on newer ones.

The layout: tp 8 x pp 8 x dp W/64, expert parallelism 8 over dp; each rank
seeded with Megatron's stage seed (seed + 100 pp) through
model_parallel_cuda_manual_seed, its streams drawn by amounts that depend
on the stage (so that stage-sharing seed numbers are told apart), the
generator included.  Peak memory is tracemalloc's peak over the call
(Python and numpy allocations).
"""
import os
import sys
import time
import tracemalloc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings", "python"))
import numpy as np  # noqa: E402
import torch  # noqa: E402

import rngtrk  # noqa: E402
import rngtrk.torch.megatron as megatron  # noqa: E402
from rngtrk.torch import _dcp_process, _dcp_streams, _dcp_table  # noqa: E402
from rngtrk.torch import _process_generators as generators  # noqa: E402
from rngtrk.torch._tracker import CHECKPOINT_KEY  # noqa: E402

SEED = 1234
TP, PP, EP = 8, 8, 8
WORLDS = (1024, 4096, 16384)
TARGET_MS = 100.0
REPEATS = 5


def coordinates(rank, world):
    """(tp, pp, dp, ep) of `rank`: tp fastest, then dp, then pp (Megatron's order)."""
    dp_size = world // (TP * PP)
    tp, dp, pp = rank % TP, (rank // TP) % dp_size, rank // (TP * dp_size)
    return tp, pp, dp, dp % EP


def offsets(name, pp):
    """A stage-dependent position: stage pp drew (pp + 1) times as much."""
    return 4 * (pp + 1) * (3 + len(name))


def plain_streams(rank, world, cache):
    """What rank `rank` contributes (streams_of), from a plain rngtrk.Tracker:
    the same for every rank of one (tp, pp, ep), so made once per triple."""
    tp, pp, _, ep = coordinates(rank, world)
    key = (tp, pp, ep)
    if key not in cache:
        with rngtrk.Tracker() as t:
            t.seed_rank("megatron", SEED + 100 * pp, tp=tp, ep=ep)
            named = {name: rngtrk.PhiloxState.from_bytes(raw) for name, raw in t.get_states().items()}
            named = {name: rngtrk.PhiloxState(s.seed, offsets(name, pp)) for name, s in named.items()}
            generator = rngtrk.PhiloxState(t.get_default().seed, offsets("generator", pp))
            cache[key] = _dcp_streams.streams_of(named, generator, t.origin(), True, rank)
    return cache[key]


class SimulatedGroup:
    """Collectives' two gathers, answered from every rank's arrays (this
    rank's own put in its place): no network, the bytes counted."""

    def __init__(self, world, rank, ints_of, bytes_of):
        self.world_size, self.rank = world, rank
        self._ints_of, self._bytes_of = ints_of, bytes_of
        self.received = 0

    def ints(self, values):
        out = self._ints_of(len(values))
        out[self.rank] = values
        self.received += out.nbytes
        return out

    def padded(self, payload, width):
        out = self._bytes_of(max(width, 1))
        out[self.rank, :] = 0
        out[self.rank, :len(payload)] = np.frombuffer(payload, np.uint8)
        self.received += out.nbytes
        return out


def save_group(world, rank, cache):
    """The arrays a save's two gathers return on `world` ranks."""
    streams = [plain_streams(r, world, cache) for r in range(world)]
    width = max(len(s[1]) for rs in streams for s in rs)
    count = max(len(rs) for rs in streams)
    counts = np.array([[0, len(rs), max(len(s[1]) for s in rs)] for rs in streams], np.int64)
    rows = {}
    for r, rs in enumerate(streams):
        rows.setdefault(id(rs), np.frombuffer(_dcp_streams.rows_of(rs, width), np.uint8))
    row_bytes = [rows[id(rs)] for rs in streams]

    def ints_of(k):
        return counts[:, :k].copy()

    def bytes_of(w):
        out = np.zeros((world, w), np.uint8)
        for r, b in enumerate(row_bytes):
            out[r, :len(b)] = b
        return out
    return ints_of, bytes_of, count


def measured(fn, repeats=REPEATS):
    """(best seconds of `repeats` runs, peak bytes of one more run under
    tracemalloc, which slows allocations and so is not timed) of fn()."""
    best = float("inf")
    for _ in range(repeats):
        began = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - began)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return best, peak


def drop_in_tracker(rank, world):
    """This rank's drop-in tracker, seeded and moved as plain_streams says."""
    tp, pp, _, ep = coordinates(rank, world)
    megatron.model_parallel_cuda_manual_seed(SEED + 100 * pp, tp_rank=tp, ep_rank=ep, etp_rank=0, force_reset_rng=True)
    tracker = megatron.get_cuda_rng_tracker()
    states = {name: rngtrk.PhiloxState.from_bytes(raw) for name, raw in tracker.tracker.get_states().items()}
    tracker.tracker.set_states({name: rngtrk.PhiloxState(s.seed, offsets(name, pp)) for name, s in states.items()})
    tracker.tracker.set_default(rngtrk.PhiloxState(tracker.tracker.get_default().seed, offsets("generator", pp)))
    return tracker


def one_world(world):
    rank = world // 2 + TP + 1  # a rank of a middle stage, not rank 0
    cache = {}
    began = time.perf_counter()
    ints_of, bytes_of, _ = save_group(world, rank, cache)
    setup = time.perf_counter() - began
    tracker = drop_in_tracker(rank, world)
    snapshot = tracker.state_dict()

    group = SimulatedGroup(world, rank, ints_of, bytes_of)
    data = _dcp_streams.save_table(lambda: tracker, True, group, rank)
    save_received = group.received
    save_s, save_peak = measured(lambda: _dcp_streams.save_table(lambda: tracker, True, group, rank))

    # a load's gather: every rank's counts (no failure, no missing stream, read)
    load_counts = np.zeros((world, 3), np.int64)
    load_group = SimulatedGroup(world, rank, lambda k: load_counts[:, :k].copy(), None)

    def load():
        def prepare():
            table = _dcp_table.decode(data)
            prepared, missing = _dcp_streams.prepare(tracker, table, rank, True)
            return prepared, missing, False
        prepared, missing, _, _ = _dcp_streams.agree_on_load(prepare, load_group, rank)
        tracker.load_state_dict({CHECKPOINT_KEY: prepared})
        assert not missing  # every stream of this rank is in the table (not a test: a broken bench stops here)

    load()
    load_received = load_group.received
    load_s, load_peak = measured(load)
    assert tracker.state_dict() == snapshot
    table = _dcp_table.decode(data)
    print(f"W={world:>6}: save {save_s * 1e3:7.1f} ms (target <= {TARGET_MS:.0f}), received {save_received / 1e6:6.2f} MB, "
          f"peak {save_peak / 1e6:6.1f} MB | load {load_s * 1e3:6.1f} ms (target <= {TARGET_MS:.0f}), received "
          f"{load_received / 1e3:6.1f} kB, peak {load_peak / 1e6:5.1f} MB | table {len(data) / 1e3:.1f} kB, "
          f"{len(table.entries)} streams (set-up of the simulated group {setup:.1f} s)")


def process_world(world):
    """RNGState(process=True)'s process part on `world` ranks keyed by rank
    (the default): every rank's Python, NumPy and torch CPU states, all
    different, gathered into one table; then this rank's load of it."""
    rank = world // 2 + TP + 1
    began = time.perf_counter()
    kinds = [g for g in generators.present() if g[0] != generators.KIND_CUDA]
    reports = [_dcp_process._report(r, [(k, d, generators.derived(b"bench", str(r).encode(), k, d))
                                         for k, d in kinds]) for r in range(world)]
    width = max(len(b) for b in reports)
    counts = np.array([[0, len(b)] for b in reports], np.int64)
    payload = np.zeros((world, width), np.uint8)
    for r, b in enumerate(reports):
        payload[r, :len(b)] = np.frombuffer(b, np.uint8)
    setup = time.perf_counter() - began
    group = SimulatedGroup(world, rank, lambda k: counts[:, :k].copy(), lambda w: payload[:, :w].copy())
    data = _dcp_process.save_table(None, (), group, rank)
    received = group.received
    save_s, save_peak = measured(lambda: _dcp_process.save_table(None, (), group, rank), repeats=2)

    def load():
        plan, _ = _dcp_process.prepare(data, None, (), rank, unread=False)
        assert not plan.fresh  # this rank's key is in the table (not a test: a broken bench stops here)
    load_s, load_peak = measured(load, repeats=2)
    print(f"W={world:>6}: save {save_s * 1e3:7.1f} ms, received {received / 1e6:7.2f} MB, peak {save_peak / 1e6:6.1f} "
          f"MB | load {load_s * 1e3:6.1f} ms, peak {load_peak / 1e6:6.1f} MB | table {len(data) / 1e6:.2f} MB, "
          f"{len(reports[rank])} bytes per key (set-up {setup:.1f} s)")


def main():
    torch.set_num_threads(1)
    print(f"bench-dcp: one rank of a W-rank job (tp {TP} x pp {PP} x dp W/{TP * PP}, ep {EP}), simulated in one "
          f"process; best of {REPEATS}; torch {torch.__version__}")
    for world in WORLDS:
        one_world(world)
    print("process=True, the process part (Python, NumPy, torch CPU per rank; no target: it grows with W, "
          "docs/pytorch.md):")
    for world in WORLDS:
        process_world(world)


if __name__ == "__main__":
    main()
