#!/usr/bin/env python3
"""make bench-gpu, the PyTorch part: torch.rand, Tensor.uniform_ and
torch.nn.functional.dropout on the device, measured right after
bench_gpu (same `make bench-gpu`, same device, same element count), and
rngtrk's figures from bench_gpu's JSON as ratios to them.  Skips (exit 0,
saying why) when torch or a GPU is missing.

    bench_gpu_torch.py GPU_JSON
"""
import json
import sys

try:
    import torch
except ImportError:
    print("bench-gpu (torch): PyTorch is not installed here; torch.rand not measured")
    sys.exit(0)
if not torch.cuda.is_available():
    print("bench-gpu (torch): no CUDA device; torch.rand not measured")
    sys.exit(0)

with open(sys.argv[1]) as f:
    ours = json.load(f)
n = ours["elements"]
REPEATS = 30


def median_seconds(fn):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(REPEATS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return sorted(times)[len(times) // 2]


out = torch.empty(n, device="cuda")
x = torch.randn(n, device="cuda")
torch_figures = {
    "torch.rand f32": (median_seconds(lambda: torch.rand(n, device="cuda", out=out)), 4),
    "Tensor.uniform_ f32": (median_seconds(lambda: out.uniform_(-1.5, 2.25)), 4),
    "F.dropout f32 (p=0.1)": (median_seconds(lambda: torch.nn.functional.dropout(x, 0.1)), 8),
}
print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}, {n} elements, median of {REPEATS}")
gbs = {}
for name, (seconds, width) in torch_figures.items():
    gbs[name] = n * width / seconds / 1e9
    print(f"bench-gpu {name:30s} {gbs[name]:6.0f} GB/s  {100 * gbs[name] / ours['write_gbs']:3.0f}% of write-only"
          f"  ({seconds * 1e6:.1f} us)")
pairs = [("uniform_f32_stateless", "torch.rand f32"), ("uniform_f32_torch_eager_cuda", "torch.rand f32"),
         ("dropout_f32_stateless", "F.dropout f32 (p=0.1)"), ("dropout_f32_torch_eager_cuda", "F.dropout f32 (p=0.1)")]
for case, reference in pairs:
    if case in ours["cases"]:
        ratio = ours["cases"][case]["gbs"] / gbs[reference]
        print(f"bench-gpu ratio rngtrk {case} / {reference}: {ratio:.2f}x")
