#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make bench-gpu, the PyTorch part: torch.rand, Tensor.uniform_,
torch.randn (f32, bf16, f16) and torch.nn.functional.dropout on the
device, measured right after bench_gpu (same `make bench-gpu`, same device,
same element count), and rngtrk's figures from bench_gpu's JSON as ratios
to them.  With a second JSON -- bench_gpu of the kernels before a change,
run on the same card (tools/gpu_bench_compare.sh) -- it also prints each
case before and after.  Skips (exit 0, saying why) when torch or a GPU is
missing.

    bench_gpu_torch.py GPU_JSON [BEFORE_JSON]
"""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def compare(ours, before):
    """Each case of both runs: GB/s before and after, the speed-up, and the
    shares of the write-only rate and of the Philox bound (this run's)."""
    print(f"before/after on {ours['device']}: the same bench_gpu against both libraries, one after the other")
    bound = ours.get("philox_elements_per_s")
    for case, now in ours["cases"].items():
        then = before["cases"].get(case)
        share = 100 * now["gbs"] / ours["write_gbs"]
        philox = f", {100 * ours['elements'] / now['seconds'] / bound:3.0f}% of Philox bound" if bound else ""
        if then is None:
            print(f"bench-gpu compare {case:30s} before: not made   after {now['gbs']:6.0f} GB/s ({share:3.0f}% of "
                  f"write-only{philox})")
        else:
            print(f"bench-gpu compare {case:30s} before {then['gbs']:6.0f} GB/s   after {now['gbs']:6.0f} GB/s   "
                  f"{now['gbs'] / then['gbs']:4.2f}x  ({share:3.0f}% of write-only{philox})")


def main(argv):
    ours = load(argv[1])
    if len(argv) > 2:
        compare(ours, load(argv[2]))
    try:
        import torch
    except ImportError:
        print("bench-gpu (torch): PyTorch is not installed here; torch.rand and torch.randn not measured")
        return 0
    if not torch.cuda.is_available():
        print("bench-gpu (torch): no CUDA device; torch.rand and torch.randn not measured")
        return 0

    n = ours["elements"]
    repeats = 30

    def median_seconds(fn):
        fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        return sorted(times)[len(times) // 2]

    out = torch.empty(n, device="cuda")
    x = torch.randn(n, device="cuda")
    figures = {  # name: (seconds, bytes per element moved)
        "torch.rand f32": (median_seconds(lambda: torch.rand(n, device="cuda", out=out)), 4),
        "Tensor.uniform_ f32": (median_seconds(lambda: out.uniform_(-1.5, 2.25)), 4),
        "F.dropout f32 (p=0.1)": (median_seconds(lambda: torch.nn.functional.dropout(x, 0.1)), 8),
    }
    for dtype, width in ((torch.float32, 4), (torch.bfloat16, 2), (torch.float16, 2)):
        buffer = torch.empty(n, device="cuda", dtype=dtype)
        name = "torch.randn " + {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16"}[dtype]
        figures[name] = (median_seconds(lambda: torch.randn(n, device="cuda", dtype=dtype, out=buffer)), width)
    bound = ours.get("philox_elements_per_s")
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}, {n} elements, median of {repeats}")
    gbs = {}
    for name, (seconds, width) in figures.items():
        gbs[name] = n * width / seconds / 1e9
        philox = f"  {100 * n / seconds / bound:3.0f}% of Philox bound" if bound else ""
        print(f"bench-gpu {name:30s} {gbs[name]:6.0f} GB/s  {100 * gbs[name] / ours['write_gbs']:3.0f}% of write-only"
              f"{philox}  ({seconds * 1e6:.1f} us)")
    pairs = [("uniform_f32_stateless", "torch.rand f32"), ("uniform_f32_torch_eager_cuda", "torch.rand f32"),
             ("normal_f32_stateless", "torch.randn f32"), ("normal_bf16_stateless", "torch.randn bf16"),
             ("normal_f16_stateless", "torch.randn f16"), ("normal_f32_torch_eager_cuda", "torch.randn f32"),
             ("dropout_f32_stateless", "F.dropout f32 (p=0.1)"), ("dropout_f32_torch_eager_cuda", "F.dropout f32 (p=0.1)")]
    for case, reference in pairs:
        if case in ours["cases"]:
            ratio = ours["cases"][case]["gbs"] / gbs[reference]
            print(f"bench-gpu ratio rngtrk {case} / {reference}: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
