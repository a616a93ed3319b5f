#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`make bench-python`: what the Python binding costs per call.

Each rngtrk figure is printed next to a reference measured in the same run:
a pure-Python, dict-based tracker in TransformerEngine's style doing the
same work (fork = swap the active state, advance = round up and bump an
int), and, for bulk generation, numpy's own Philox generator.  Figures are
the best of several repeats (timeit), in microseconds per call; the ratios
are what to compare across machines.  Not a test: nothing here asserts.
"""
import contextlib
import os
import sys
import timeit

import numpy

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings", "python"))
import rngtrk  # noqa: E402


class DictTracker:
    """The reference: named (seed, offset) states in a dict, in pure Python."""

    def __init__(self):
        self.states = {}
        self.default = [0, 0]
        self.active = self.default

    def add(self, name, seed):
        if name in self.states:
            raise ValueError(name)
        self.states[name] = [seed, 0]

    @contextlib.contextmanager
    def fork(self, name="model-parallel-rng"):
        previous, self.active = self.active, self.states[name]
        try:
            yield
        finally:
            self.active = previous

    def advance(self, increment):
        before = (self.active[0], self.active[1])
        self.active[1] += (increment + 3) // 4 * 4
        return before


def per_call_us(statement, number, repeat=7):
    return min(timeit.repeat(statement, number=number, repeat=repeat)) / number * 1e6


def setup(tracker):
    tracker.add("model-parallel-rng", 3955)
    tracker.add("data-parallel-rng", 1234)
    return tracker


def fork_only(t):
    with t.fork("model-parallel-rng"):
        pass


def fork_advance(t):
    with t.fork("model-parallel-rng"):
        t.advance(4096)


def main():
    ours, reference = setup(rngtrk.Tracker()), setup(DictTracker())
    rows = []
    calls = [
        ("with tracker.fork(name): pass", fork_only, 200_000),
        ("tracker.advance(4096)", lambda t: t.advance(4096), 200_000),
        ("with fork: advance(4096)", fork_advance, 100_000),
    ]
    for label, call, number in calls:
        a = per_call_us(lambda: call(ours), number)
        b = per_call_us(lambda: call(reference), number)
        rows.append((label, a, "pure-Python dict tracker", b))

    n = 1 << 22  # 16 MiB of float32
    out = numpy.empty(n, dtype=numpy.float32)
    state = rngtrk.PhiloxState(1234, 0)
    generator = numpy.random.Generator(numpy.random.Philox(1234))
    target = numpy.empty(n, dtype=numpy.float32)
    a = per_call_us(lambda: rngtrk.uniform_f32(state, n, out=out), 5, repeat=5)
    b = per_call_us(lambda: generator.random(n, dtype=numpy.float32, out=target), 5, repeat=5)
    rows.append((f"rngtrk.uniform_f32 into numpy, {n * 4 >> 20} MiB", a,
                 "numpy Generator(Philox).random(float32)", b))
    small = numpy.empty(1024, dtype=numpy.float32)
    a = per_call_us(lambda: ours.uniform_f32(1024, out=small), 100_000)
    b = per_call_us(lambda: generator.random(1024, dtype=numpy.float32, out=small), 100_000)
    rows.append(("tracker.uniform_f32(1024, out=...)", a, "numpy Generator(Philox).random(1024)", b))

    print(f"rngtrk {rngtrk.version_string()} Python binding ({rngtrk.library_path}), "
          f"Python {sys.version.split()[0]}, cffi ABI mode")
    print(f"{'call':<40} {'rngtrk µs':>10}   {'reference':<40} {'ref µs':>8}   ratio (time)")
    for label, ours_us, ref_label, ref_us in rows:
        print(f"{label:<40} {ours_us:>10.3f}   {ref_label:<40} {ref_us:>8.3f}   {ours_us / ref_us:5.2f}x")
    seconds = rows[3][1] / 1e6
    print(f"uniform_f32 throughput: {n * 4 / seconds / 1e9:.2f} GB/s")
    ours.close()


if __name__ == "__main__":
    main()
