#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Captures what Triton's random functions return on a GPU, as test vectors
for rngtrk's `triton` layout (docs/streams.md), which the CPU tests compare
against where there is no GPU.

    python3 tools/triton_capture.py OUTPUT.txt        (needs triton, torch and a CUDA device)

For random seeds and offsets, a tiny kernel stores tl.randint, tl.rand,
tl.randn and tl.randint4x at offset + i for i < N, once with the offset
passed as a 32-bit integer and once as a 64-bit one (Triton picks the
integer width of a scalar argument from its value, and its Philox differs
by width).  Lines:

    # versions: triton T torch P device D
    triton WIDTH SEED OFFSET N KIND v...      (hex bit patterns; KIND randint/rand/randn: N words,
                                               randint4x: 4N words, element-major)
"""
import random
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def _draw(out_int, out_rand, out_randn, out_int4, seed, offset, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = i < n
    o = offset + i
    tl.store(out_int + i, tl.randint(seed, o), mask=keep)
    tl.store(out_rand + i, tl.rand(seed, o), mask=keep)
    tl.store(out_randn + i, tl.randn(seed, o), mask=keep)
    a, b, c, d = tl.randint4x(seed, o)
    tl.store(out_int4 + 4 * i, a, mask=keep)
    tl.store(out_int4 + 4 * i + 1, b, mask=keep)
    tl.store(out_int4 + 4 * i + 2, c, mask=keep)
    tl.store(out_int4 + 4 * i + 3, d, mask=keep)


def capture(seed, offset, n, wide):
    int_dtype = torch.int64 if wide else torch.int32
    out_int = torch.zeros(n, dtype=int_dtype, device="cuda")
    out_rand = torch.zeros(n, dtype=torch.float32, device="cuda")
    out_randn = torch.zeros(n, dtype=torch.float32, device="cuda")
    out_int4 = torch.zeros(4 * n, dtype=int_dtype, device="cuda")
    block = 128
    # Triton types a Python int argument by its value: offsets >= 2**31 arrive as 64-bit.
    _draw[(triton.cdiv(n, block),)](out_int, out_rand, out_randn, out_int4, seed, offset, n, BLOCK=block)
    torch.cuda.synchronize()
    mask = (1 << 64) - 1 if wide else (1 << 32) - 1
    width = 16 if wide else 8
    hexes = lambda t: [format(int(v) & mask, f"0{width}x") for v in t.cpu().tolist()]
    f32 = lambda t: [format(int(v) & 0xFFFFFFFF, "08x") for v in t.cpu().view(torch.int32).tolist()]
    return {"randint": hexes(out_int), "rand": f32(out_rand), "randn": f32(out_randn), "randint4x": hexes(out_int4)}


def main():
    target = sys.argv[1]
    rng = random.Random(20261123)
    lines = [f"# versions: triton {triton.__version__} torch {torch.__version__} "
             f"device {torch.cuda.get_device_name().replace(' ', '_')}"]
    cases = [(0, 0, 64), (1234, 0, 33), (2 ** 32 - 1, 7, 16), (2 ** 40 + 3, 100, 16)]
    cases += [(rng.getrandbits(31), rng.getrandbits(20), 24) for _ in range(6)]
    cases += [(rng.getrandbits(63), rng.getrandbits(30), 16) for _ in range(4)]
    wide_cases = [(5, 2 ** 31, 8), (5, 2 ** 32 - 4, 8), (9, 2 ** 40 + 12, 8), (rng.getrandbits(63), 2 ** 33 + 1, 8)]
    for seed, offset, n in cases:
        for kind, values in capture(seed, offset, n, wide=False).items():
            lines.append(f"triton 32 {seed} {offset} {n} {kind} " + " ".join(values))
    for seed, offset, n in wide_cases:
        for kind, values in capture(seed, offset, n, wide=True).items():
            lines.append(f"triton 64 {seed} {offset} {n} {kind} " + " ".join(values))
    with open(target, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{len(lines) - 1} lines from triton {triton.__version__} on {torch.cuda.get_device_name()}")


if __name__ == "__main__":
    main()
