#!/usr/bin/env python3
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
    "BM_sample_bernoulli_mask_stateless": ("bernoulli_mask_u8_stateless", 1),
    "BM_sample_u32_stateless_2threads": ("u32_stateless_2threads", 4),
    "BM_sample_uniform_f32_stateless_2threads": ("uniform_f32_stateless_2threads", 4),
    "BM_sample_normal_f32_stateless_2threads": ("normal_f32_stateless_2threads", 4),
}
SIZES = {"262144": "1MiB", "16777216": "64MiB"}


def sample_lines(path):
    """One line per case of a per-path run of the benchmark binary."""
    with open(path) as f:
        runs = {b["name"]: b for b in json.load(f)["benchmarks"]}
    for name, run in sorted(runs.items()):
        base, _, size = name.partition("/")
        size = size.split("/")[0]  # drop "/real_time"
        if base not in SAMPLE_CASES or size not in SIZES:
            continue
        ref = runs.get("BM_reference_random123_loop/" + size)
        if ref is None:
            continue
        case, width = SAMPLE_CASES[base]
        ours = run["bytes_per_second"]
        theirs = ref["bytes_per_second"]
        ratio = (ours / width) / (theirs / 4)
        print("bench %s[%s,%s] %.2f GB/s vs random123_scalar %.2f GB/s ratio %.2f" % (
            case, run.get("label", "?"), SIZES[size], ours / 1e9, theirs / 1e9, ratio))


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
