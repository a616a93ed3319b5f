#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What a training step feels of the RNG tracker (issue 33, item 4), on a GPU.

A GPT-like stack (12 layers, hidden 1024, 16 heads, sequence 1024, batch
4, bf16; forward and backward) draws its dropouts as Megatron-LM places
them: the attention-probability dropout inside the model-parallel fork,
the hidden dropouts outside it.  Four variants, each step's time divided
by the same step's time with no fork at all:

  swap tracker     a tracker written here that swaps torch's CUDA generator
                   state (get_rng_state / set_rng_state), as upstream's do
  rngtrk tracker   rngtrk.torch.megatron's tracker, torch's F.dropout in it
  rngtrk dropout   rngtrk's tracker and rt.dropout in the fork (one pass,
                   no mask kept)
  (no fork)        the reference

Five runs of the four, interleaved so that all see the same GPU; the
figure is the median of the five ratios (target for "rngtrk dropout":
<= 1.05).  `--smoke` runs a tiny stack on whatever device there is, to
check the script itself (its ratios mean nothing).  Not a test.
"""
import argparse
import contextlib
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings", "python"))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import rngtrk.torch as rt  # noqa: E402
import rngtrk.torch.megatron as megatron  # noqa: E402

TARGET = 1.05


class SwapTracker:
    """Upstream's way: named states as generator-state tensors, a fork swaps them in."""

    def __init__(self, seed):
        outside = torch.cuda.get_rng_state()
        torch.cuda.manual_seed(seed)
        self.state = torch.cuda.get_rng_state()
        torch.cuda.set_rng_state(outside)

    @contextlib.contextmanager
    def fork(self):
        outside = torch.cuda.get_rng_state()
        torch.cuda.set_rng_state(self.state)
        try:
            yield
        finally:
            self.state = torch.cuda.get_rng_state()
            torch.cuda.set_rng_state(outside)


class Layer(torch.nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = torch.nn.LayerNorm(hidden), torch.nn.LayerNorm(hidden)
        self.qkv, self.proj = torch.nn.Linear(hidden, 3 * hidden), torch.nn.Linear(hidden, hidden)
        self.up, self.down = torch.nn.Linear(hidden, 4 * hidden), torch.nn.Linear(4 * hidden, hidden)

    def forward(self, x, fork, drop):
        batch, seq, hidden = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(batch, seq, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        probs = torch.softmax(q @ k.transpose(-1, -2) / (q.shape[-1] ** 0.5), dim=-1)
        with fork():
            probs = drop(probs, 0.1)  # attention dropout: model-parallel, inside the fork
        attended = (probs @ v).transpose(1, 2).reshape(batch, seq, hidden)
        x = x + F.dropout(self.proj(attended), 0.1)  # hidden dropout: outside the fork
        return x + F.dropout(self.down(F.gelu(self.up(self.norm2(x)))), 0.1)


def variants(cuda):
    """name -> (fork, drop).  (No swap tracker without CUDA: there is no
    CUDA generator to swap.)"""
    tracker = megatron.get_cuda_rng_tracker()
    cases = {"no fork": (contextlib.nullcontext, F.dropout)}
    if cuda:
        cases["swap tracker"] = (SwapTracker(4242).fork, F.dropout)
    cases["rngtrk tracker"] = (tracker.fork, F.dropout)
    cases["rngtrk dropout"] = (tracker.fork, rt.dropout)
    return cases


def step_seconds(layers, x, fork, drop, steps):
    sync = torch.cuda.synchronize if x.is_cuda else (lambda: None)
    sync()
    start = time.perf_counter()
    for _ in range(steps):
        h = x
        for layer in layers:
            h = layer(h, fork, drop)
        h.float().sum().backward()
    sync()
    return (time.perf_counter() - start) / steps


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", action="store_true", help="a tiny stack on any device: checks the script")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    cuda = torch.cuda.is_available()
    if not cuda and not args.smoke:
        print("bench train-step: no CUDA device; the training-step figure needs a GPU (--smoke checks the script)")
        return 0
    device = "cuda" if cuda else "cpu"
    depth, hidden, heads, seq, batch, steps = (12, 1024, 16, 1024, 4, 5) if not args.smoke else (2, 64, 4, 32, 2, 2)
    dtype = torch.bfloat16 if cuda else torch.float32
    rt.model_parallel_cuda_manual_seed(1234, tp_rank=0, ep_rank=0, etp_rank=0)
    torch.manual_seed(0)
    layers = torch.nn.ModuleList(Layer(hidden, heads) for _ in range(depth)).to(device=device, dtype=dtype)
    x = torch.randn(batch, seq, hidden, device=device, dtype=dtype, requires_grad=True)
    cases = variants(cuda)
    for fork, drop in cases.values():
        step_seconds(layers, x, fork, drop, 1)  # warm-up: kernels, allocator
    ratios = {name: [] for name in cases if name != "no fork"}
    for _ in range(args.runs):
        times = {name: step_seconds(layers, x, fork, drop, steps) for name, (fork, drop) in cases.items()}
        for name in ratios:
            ratios[name].append(times[name] / times["no fork"])
    print(f"bench train-step: {depth} layers, hidden {hidden}, sequence {seq}, batch {batch}, {dtype} on "
          f"{torch.cuda.get_device_name() if cuda else 'cpu'}, torch {torch.__version__}: step time over the "
          f"same step with no fork, {args.runs} runs")
    for name, values in ratios.items():
        median = statistics.median(values)
        target = f" (target <= {TARGET}: {'met' if median <= TARGET else 'NOT met'})" \
            if name == "rngtrk dropout" and not args.smoke else ""
        print(f"bench train-step {name}: median {median:.3f}, range {min(values):.3f}-{max(values):.3f}{target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
