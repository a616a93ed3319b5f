#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Python part of `make demo`: resume the C demo's training run.

tools/demo_training_loop.c saved its tracker after step K and kept the
numbers its first run drew in steps K+1..N (steps count from 1).  Here,
in another language and another process, a tracker loads that checkpoint
and runs the same steps (a "model-parallel-rng" fork, a
"data-parallel-rng" fork, the default state), and every number must
equal what C drew.

    demo_resume.py FOLDER    (FOLDER holds checkpoint.rtck, draws.f32, run.txt)
"""
import os
import sys

import numpy

import rngtrk


def fnv1a(data):
    h = 2166136261
    for byte in data:
        h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
    return h


def step(tracker, layout):
    """One training step's random numbers, as the C demo draws them."""
    parts = []
    for name, key in (("model-parallel-rng", "model_parallel_draws"), ("data-parallel-rng", "data_parallel_draws")):
        with tracker.fork(name):
            parts.append(tracker.uniform_f32(layout[key]))
    parts.append(tracker.uniform_f32(layout["default_draws"]))
    return numpy.concatenate(parts)


def first_values(v, layout):
    mp, dp = layout["model_parallel_draws"], layout["data_parallel_draws"]
    return f"{v[0]:.4f} {v[1]:.4f} {v[2]:.4f} | {v[mp]:.4f} | {v[mp + dp]:.4f}"


def main(folder):
    with open(os.path.join(folder, "run.txt")) as f:
        layout = {key: int(value) for key, value in (line.split() for line in f if line.strip())}
    with open(os.path.join(folder, "checkpoint.rtck"), "rb") as f:
        checkpoint = f.read()
    c_draws = numpy.fromfile(os.path.join(folder, "draws.f32"), dtype=numpy.float32)
    per_step = layout["model_parallel_draws"] + layout["data_parallel_draws"] + layout["default_draws"]
    first, last = layout["checkpoint_after"] + 1, layout["steps"]
    print(f"rngtrk {rngtrk.version_string()} Python: load C's checkpoint taken after step {first - 1} "
          f"({len(checkpoint)} bytes) and run steps {first}..{last}")
    print("  " + rngtrk.checkpoint_to_json(checkpoint))
    all_same = True
    with rngtrk.Tracker() as tracker:
        tracker.load(checkpoint)
        print("  step  first values: model-parallel | data-parallel | default   C run      Python")
        for k in range(first, last + 1):
            ours = step(tracker, layout)
            theirs = c_draws[(k - first) * per_step:(k - first + 1) * per_step]
            same = ours.tobytes() == theirs.tobytes()
            all_same &= same
            print(f"  {k:4d}  {first_values(ours, layout)}   {fnv1a(theirs.tobytes()):08x}   "
                  f"{fnv1a(ours.tobytes()):08x}  {'identical' if same else 'DIFFERENT'}")
    if all_same:
        print(f"OK: Python continued C's checkpoint and drew, in each of steps {first}..{last}, "
              f"the same {per_step} numbers as C")
    else:
        print(f"FAILED: Python drew different numbers from C in steps {first}..{last}")
    return 0 if all_same else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
