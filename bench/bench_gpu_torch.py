#!/usr/bin/env python3
"""make bench-gpu, the PyTorch part: torch.rand on the device next to
rngtrk's torch-eager-cuda layout drawing the same numbers, in the same run.
Skips (exit 0, saying why) when torch or a GPU is missing."""
import sys
import os

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings", "python"))
try:
    import torch
except ImportError:
    print("bench-gpu (torch): PyTorch is not installed here; torch.rand not measured")
    sys.exit(0)
if not torch.cuda.is_available():
    print("bench-gpu (torch): no CUDA device; torch.rand not measured")
    sys.exit(0)
n = 1 << 26
out = torch.empty(n, device="cuda")
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
best = 1e30
for _ in range(20):
    start.record()
    torch.rand(n, device="cuda", out=out)
    end.record()
    torch.cuda.synchronize()
    best = min(best, start.elapsed_time(end) / 1e3)
print("bench-gpu torch.rand(f32) %.0f GB/s" % (n * 4 / best / 1e9))
