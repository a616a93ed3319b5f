#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prints rngtrk's benchmark figures as ratios against the references
measured in the same run (reads Google Benchmark's JSON output)."""
import json
import sys

PAIRS = [
    ("BM_rngtrk_fork_advance_restore", "BM_reference_dict_fork_advance_restore",
     "fork+advance+restore, time vs a C++ dictionary tracker (lower is better)", "time"),
    ("BM_rngtrk_fork_advance_restore_ledger", "BM_rngtrk_fork_advance_restore",
     "fork+advance+restore with the ledger on, time vs the same step with it off (target <= 2)", "time"),
    ("BM_rngtrk_random_u32/4096", "BM_reference_random123_loop/4096", "random_u32 16 KiB, speed vs Random123 loop", "speed"),
    ("BM_rngtrk_random_u32/16777216", "BM_reference_random123_loop/16777216", "random_u32 64 MiB, speed vs Random123 loop", "speed"),
    ("BM_rngtrk_uniform_f32/16777216", "BM_reference_random123_loop/16777216", "uniform_f32 64 MiB, speed vs Random123 loop", "speed"),
    ("BM_rngtrk_random_u32/16777216", "BM_reference_memset/16777216", "random_u32 64 MiB, speed vs memset (memory ceiling)", "speed"),
]


# Sampling cases: benchmark name -> (case, bytes per element).  The ratio is
# elements per second over Random123's 32-bit words per second in the same
# run (for 4-byte elements that is the ratio of the GB/s).
SAMPLE_CASES = {
    "BM_sample_u32_stateless": ("u32_stateless", 4),
    "BM_sample_uniform_f32_stateless": ("uniform_f32_stateless", 4),
    "BM_sample_uniform_f32_nvfuser": ("uniform_f32_nvfuser", 4),
    "BM_sample_normal_f32_stateless": ("normal_f32_stateless", 4),
    "BM_sample_normal_f64_stateless": ("normal_f64_stateless", 8),
    "BM_sample_normal_f16_stateless": ("normal_f16_stateless", 2),
    "BM_sample_normal_bf16_stateless": ("normal_bf16_stateless", 2),
    "BM_sample_normal_f32_nvfuser": ("normal_f32_nvfuser", 4),
    "BM_sample_normal_f32_torch_eager_cuda": ("normal_f32_torch_eager_cuda", 4),
    "BM_sample_normal_f32_triton": ("normal_f32_triton", 4),
    "BM_sample_bernoulli_mask_stateless": ("bernoulli_mask_u8_stateless", 1),
    "BM_sample_u32_stateless_2threads": ("u32_stateless_2threads", 4),
    "BM_sample_uniform_f32_stateless_2threads": ("uniform_f32_stateless_2threads", 4),
    "BM_sample_normal_f32_stateless_2threads": ("normal_f32_stateless_2threads", 4),
}
# Element counts: 2^18 (1 MiB of 4-byte elements, in cache) and 2^24 (64 MiB).
SIZES = {"262144": "1MiB", "16777216": "64MiB"}
# Issue 30's targets for normal f32 (stateless), both sizes: elements per
# second over Random123's words per second, by engine, and over uniform f32
# on the same engine.
NORMAL_TARGETS = {"avx2": 2.5, "avx512": 3.5}
NORMAL_OVER_UNIFORM_TARGET = 0.7


def size_label(size, width):
    """The buffer of 2^18 or 2^24 elements of `width` bytes, in MiB or KiB."""
    total = int(size) * width
    return "%dMiB" % (total >> 20) if total >= 1 << 20 else "%dKiB" % (total >> 10)


def usable(run):
    return run is not None and not run.get("error_occurred") and "bytes_per_second" in run


def sample_lines(path):
    """One line per case of a per-path run of the benchmark binary, then
    normal f32 against its targets."""
    with open(path) as f:
        runs = {b["name"]: b for b in json.load(f)["benchmarks"]}
    for name, run in sorted(runs.items()):
        base, _, size = name.partition("/")
        size = size.split("/")[0]  # drop "/real_time"
        if base not in SAMPLE_CASES or size not in SIZES:
            continue
        ref = runs.get("BM_reference_random123_loop/" + size)
        if not usable(run) or not usable(ref):
            if run.get("error_occurred"):
                print("bench %s[%s]: not run: %s" % (base, size, run.get("error_message", "?")))
            continue
        case, width = SAMPLE_CASES[base]
        ours = run["bytes_per_second"]
        theirs = ref["bytes_per_second"]
        ratio = (ours / width) / (theirs / 4)
        label = SIZES[size] if width == 4 else size_label(size, width)
        print("bench %s[%s,%s] %.2f GB/s vs random123_scalar %.2f GB/s ratio %.2f" % (
            case, run.get("label", "?"), label, ours / 1e9, theirs / 1e9, ratio))
    for size, label in SIZES.items():
        normal = runs.get("BM_sample_normal_f32_stateless/" + size)
        uniform = runs.get("BM_sample_uniform_f32_stateless/" + size)
        ref = runs.get("BM_reference_random123_loop/" + size)
        if not (usable(normal) and usable(uniform) and usable(ref)):
            continue
        path = normal.get("label", "?")
        over_r123 = normal["bytes_per_second"] / ref["bytes_per_second"]  # both 4 bytes per element or word
        over_uniform = normal["bytes_per_second"] / uniform["bytes_per_second"]
        target = NORMAL_TARGETS.get(path)
        print("target normal_f32_stateless[%s,%s]: %.2fx random123_scalar (target %s), %.2fx uniform_f32_stateless "
              "(target %.1f)%s" % (path, label, over_r123, "%.1f" % target if target else "none", over_uniform,
                                    NORMAL_OVER_UNIFORM_TARGET,
                                    "" if target is None else "  " + ("met" if over_r123 >= target and
                                                                      over_uniform >= NORMAL_OVER_UNIFORM_TARGET
                                                                      else "NOT met")))


def main(path, *sample_paths):
    with open(path) as f:
        runs = {b["name"]: b for b in json.load(f)["benchmarks"]}
    for name, b in sorted(runs.items()):
        extra = " %.2f GB/s" % (b["bytes_per_second"] / 1e9) if "bytes_per_second" in b else ""
        print("%-48s %10.1f %s%s" % (name, b["real_time"], b["time_unit"], extra))
    print()
    for ours, ref, label, kind in PAIRS:
        if ours in runs and ref in runs:
            a, r = runs[ours], runs[ref]
            ratio = a["real_time"] / r["real_time"] if kind == "time" else \
                a["bytes_per_second"] / r["bytes_per_second"]
            print("%-72s %.2fx" % (label, ratio))


    print()
    for sample_path in sample_paths:
        sample_lines(sample_path)


if __name__ == "__main__":
    main(*sys.argv[1:])
