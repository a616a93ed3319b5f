#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`make bench-torch`: rngtrk.torch next to torch's own ops, in the same run
on the same torch and device, as ratios with their targets (issue 33).
Not a test: nothing here asserts; every figure is printed with what it is
compared to.

1. Cost per call: rt.rand / randn / bernoulli / dropout against torch.rand /
   randn / bernoulli / F.dropout, drawn from the process tracker (the
   common case) and from a state= (a PhiloxState, a state tensor), at 16 elements on the CPU (target <= 2.5x) and 4096 on a
   GPU (target <= 1.5x).  A call's cost is its host time: the best of
   several repeats of many calls; on a GPU the stream is synchronised
   before and after each repeat, so a kernel slower than the host shows.
2. Dropout in one pass: rt.dropout against F.dropout at 64 Mi f32 elements
   (GPU target >= 1.0x F.dropout's speed), and what each saves for
   backward per call (torch.autograd.graph.saved_tensors_hooks): F.dropout
   its mask, rngtrk nothing.
3. A fork: rngtrk.torch.megatron's `with fork():` against a plain tracker
   that swaps torch's generator state with get_rng_state / set_rng_state
   (what the upstream trackers do), empty and around F.dropout(4096)
   (target <= 1.2x on CUDA; on the CPU the empty fork's microseconds are
   the figure to keep: 2 us before issue 33).  And torch.get_rng_state +
   set_rng_state with rngtrk's states carried, against torch's own.

On CPU-only torch the plain tracker swaps torch's CPU generator (its 5 KB
state) and the drop-in forks rngtrk's state, which is what each does on
such a machine.  One torch thread throughout.  The training-step figure
(a GPT-like stack, forks as Megatron-LM places them) is
bench/bench_train_step.py (GPU only).
"""
import contextlib
import os
import sys
import timeit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings", "python"))
import torch  # noqa: E402

import rngtrk  # noqa: E402
import rngtrk.torch as rt  # noqa: E402
import rngtrk.torch.megatron as megatron  # noqa: E402
from rngtrk.torch import _rng_state_hook  # noqa: E402

CUDA = torch.cuda.is_available()
DEVICE = "cuda" if CUDA else "cpu"
SYNC = torch.cuda.synchronize if CUDA else (lambda: None)
F = torch.nn.functional


def per_call_us(pairs, number, repeat=9):
    """Best time per call of each function of `pairs` [(ours, theirs), ...],
    in microseconds, the functions measured in turn within each repeat so
    that all see the same machine."""
    functions = [f for pair in pairs for f in pair]
    best = [float("inf")] * len(functions)
    for f in functions:
        f()
    for _ in range(repeat):
        for i, f in enumerate(functions):
            SYNC()
            start = timeit.default_timer()
            for _ in range(number):
                f()
            SYNC()
            best[i] = min(best[i], (timeit.default_timer() - start) / number * 1e6)
    return [(best[2 * i], best[2 * i + 1]) for i in range(len(pairs))]


def verdict(ratio, target, lower_is_better=True):
    met = ratio <= target if lower_is_better else ratio >= target
    return f"(target {'<=' if lower_is_better else '>='} {target}: {'met' if met else 'NOT met'})"


def per_call():
    n = 4096 if CUDA else 16
    target = 1.5 if CUDA else 2.5
    megatron.get_cuda_rng_tracker()  # the process tracker, made before timing
    x = torch.randn(n, device=DEVICE)
    x_grad = torch.randn(n, device=DEVICE, requires_grad=True)
    probs = torch.full((n,), 0.5, device=DEVICE)
    # state=: a PhiloxState, and the 16-byte tensor torch.cuda.get_rng_state() gives (issue 39 item 6).
    s = rngtrk.PhiloxState(1234, 8)
    tensor = torch.tensor(list(s.to_bytes()), dtype=torch.uint8)
    cases = [
        ("rand", lambda: rt.rand(n, device=DEVICE), lambda: torch.rand(n, device=DEVICE)),
        ("randn", lambda: rt.randn(n, device=DEVICE), lambda: torch.randn(n, device=DEVICE)),
        ("bernoulli", lambda: rt.bernoulli(n, p=0.5, device=DEVICE), lambda: torch.bernoulli(probs)),
        ("dropout", lambda: rt.dropout(x, 0.1), lambda: F.dropout(x, 0.1)),
        ("dropout, x requires grad", lambda: rt.dropout(x_grad, 0.1), lambda: F.dropout(x_grad, 0.1)),
    ]
    for form, state in (("PhiloxState", s), ("state tensor", tensor)):
        cases += [
            (f"rand, state={form}", lambda st=state: rt.rand(n, device=DEVICE, state=st),
             lambda: torch.rand(n, device=DEVICE)),
            (f"randn, state={form}", lambda st=state: rt.randn(n, device=DEVICE, state=st),
             lambda: torch.randn(n, device=DEVICE)),
            (f"bernoulli, state={form}", lambda st=state: rt.bernoulli(n, p=0.5, device=DEVICE, state=st),
             lambda: torch.bernoulli(probs)),
            (f"dropout, state={form}", lambda st=state: rt.dropout(x, 0.1, state=st), lambda: F.dropout(x, 0.1)),
        ]
    results = per_call_us([(ours, theirs) for _, ours, theirs in cases], number=2000 if CUDA else 20000)
    for (name, _, _), (ours, theirs) in zip(cases, results):
        ratio = ours / theirs
        print(f"bench torch-op {name}({n}) on {DEVICE}: rngtrk.torch {ours:.2f} us, torch {theirs:.2f} us, "
              f"ratio {ratio:.2f} {verdict(ratio, target)}")


def saved_bytes(f):
    size = [0]

    def pack(t):
        size[0] += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        f()
    return size[0]


def dropout_one_pass():
    n = (1 << 26) if CUDA else (1 << 22)
    x = torch.randn(n, device=DEVICE)
    out = per_call_us([(lambda: rt.dropout(x, 0.1), lambda: F.dropout(x, 0.1))], number=20 if CUDA else 3)
    ours, theirs = out[0]
    speed = theirs / ours
    print(f"bench torch-dropout {n >> 20} Mi f32 on {DEVICE}: rngtrk.torch {ours:.0f} us, F.dropout {theirs:.0f} us, "
          f"speed {speed:.2f}x F.dropout " + (verdict(speed, 1.0, lower_is_better=False) if CUDA else
                                              "(the target, >= 1.0x, is a GPU's)"))
    del x
    x = torch.randn(1 << 20, device=DEVICE, requires_grad=True)
    ours, theirs = saved_bytes(lambda: rt.dropout(x, 0.1)), saved_bytes(lambda: F.dropout(x, 0.1))
    print(f"bench torch-dropout saved for backward per call of 1 Mi elements: rngtrk.torch {ours} bytes, "
          f"F.dropout {theirs} bytes ({theirs / (1 << 20):.2f} per element)")
    if CUDA:  # torch's own count of device memory: what 4 dropouts of 64 Mi elements hold until backward
        x = torch.randn(1 << 26, device="cuda", requires_grad=True)

        def held(drop):
            torch.cuda.synchronize()
            base = torch.cuda.memory_allocated()
            outs = [drop(x, 0.1) for _ in range(4)]
            size = torch.cuda.memory_allocated() - base
            del outs
            return size

        ours, theirs = held(rt.dropout), held(F.dropout)
        print(f"bench torch-dropout device memory held by 4 dropouts of 64 Mi f32 (outputs and what backward "
              f"keeps): rngtrk.torch {ours >> 20} MiB, F.dropout {theirs >> 20} MiB")


class PlainTracker:
    """The reference: named states as torch generator-state tensors, forked
    by swapping torch's generator state, as the upstream trackers do."""

    def __init__(self):
        # (torch's own CPU functions: rngtrk.torch's import makes torch.get_rng_state carry rngtrk's states)
        self.get, self.set = (torch.cuda.get_rng_state, torch.cuda.set_rng_state) if CUDA else \
            (_rng_state_hook.torch_get_rng_state, _rng_state_hook.torch_set_rng_state)
        self.states = {}

    def add(self, name, seed):
        outside = self.get()
        (torch.cuda.manual_seed if CUDA else torch.manual_seed)(seed)
        self.states[name] = self.get()
        self.set(outside)

    @contextlib.contextmanager
    def fork(self, name="model-parallel-rng"):
        outside = self.get()
        self.set(self.states[name])
        try:
            yield
        finally:
            self.states[name] = self.get()
            self.set(outside)


def forks():
    x = torch.ones(4096, device=DEVICE)
    plain = PlainTracker()
    plain.add("model-parallel-rng", 3952)
    dropin = megatron.CudaRNGStatesTracker()
    dropin.add("model-parallel-rng", 3952)

    def forked(tracker, body):
        def step():
            with tracker.fork():
                body()
        return step

    cases = [("empty fork", lambda: None, 20000), ("fork + F.dropout(4096)", lambda: F.dropout(x, 0.1), 2000)]
    for label, body, number in cases:
        (ours, reference), = per_call_us([(forked(dropin, body), forked(plain, body))], number)
        target = verdict(ours / reference, 1.2) if CUDA else f"({ours:.2f} us: 2 us before issue 33)" \
            if label == "empty fork" else ""
        print(f"bench torch-fork {label} on {DEVICE}: rngtrk.torch.megatron {ours:.2f} us, plain swap tracker "
              f"{reference:.2f} us, ratio {ours / reference:.2f} {target}")
    # What torch's RNG state costs once it carries rngtrk's states (the
    # drop-in above is followed): a save and restore, as torch.utils.checkpoint
    # and fork_rng make them, next to torch's own two functions.
    (ours, reference), = per_call_us([(lambda: torch.set_rng_state(torch.get_rng_state()),
                                       lambda: _rng_state_hook.torch_set_rng_state(
                                           _rng_state_hook.torch_get_rng_state()))], 5000)
    print(f"bench torch-fork torch.get_rng_state + set_rng_state: with rngtrk's states {ours:.2f} us, torch's own "
          f"{reference:.2f} us, ratio {ours / reference:.2f}")


def main():
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, {'CUDA ' + torch.cuda.get_device_name() if CUDA else 'CPU only'}, "
          f"rngtrk {rngtrk.version_string()}, cpu path {rngtrk.cpu_path()}")
    per_call()
    dropout_one_pass()
    forks()


if __name__ == "__main__":
    main()
