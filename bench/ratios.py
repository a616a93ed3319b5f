#!/usr/bin/env python3
"""Prints rngtrk's benchmark figures as ratios against the references
measured in the same run (reads Google Benchmark's JSON output)."""
import json
import sys

PAIRS = [
    ("BM_rngtrk_fork_advance_restore", "BM_reference_dict_fork_advance_restore",
     "fork+advance+restore, time vs a C++ dictionary tracker (lower is better)", "time"),
    ("BM_rngtrk_random_u32/4096", "BM_reference_random123_loop/4096", "random_u32 16 KiB, speed vs Random123 loop", "speed"),
    ("BM_rngtrk_random_u32/16777216", "BM_reference_random123_loop/16777216", "random_u32 64 MiB, speed vs Random123 loop", "speed"),
    ("BM_rngtrk_uniform_f32/16777216", "BM_reference_random123_loop/16777216", "uniform_f32 64 MiB, speed vs Random123 loop", "speed"),
    ("BM_rngtrk_random_u32/16777216", "BM_reference_memset/16777216", "random_u32 64 MiB, speed vs memset (memory ceiling)", "speed"),
]


def main(path):
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


if __name__ == "__main__":
    main(sys.argv[1])
