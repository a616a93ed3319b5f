#!/usr/bin/env python3
"""`make bench-torch`: what rngtrk.torch.megatron's `with fork():` costs,
next to a plain tracker written here that does what upstream's trackers do
(swap torch's generator state with get_rng_state / set_rng_state), timed in
the same run on the same torch.

With CUDA both swap torch's CUDA generator (torch.cuda.get_rng_state /
set_rng_state); on CPU-only torch the plain tracker swaps torch's CPU
generator (torch.get_rng_state / set_rng_state: there is no other) and the
drop-in forks rngtrk's state, which is what each does on such a machine.
Cases: an empty fork, and a fork around the same small random op in both
(torch's dropout of a 4096-element tensor), so the difference is the fork's.
Figures are the best of several repeats, in microseconds per fork; the
ratio (drop-in / plain) is what compares across machines (target <= 1.2).
Not a test: nothing here asserts.
"""
import contextlib
import os
import sys
import timeit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings", "python"))
import torch  # noqa: E402

import rngtrk.torch.megatron as megatron  # noqa: E402
from rngtrk.torch import _rng_state_hook  # noqa: E402

CUDA = torch.cuda.is_available()


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


def per_fork_us(pairs, number, sync, repeat=9):
    """Best time per fork of each (tracker, body), the trackers measured in
    turn within each repeat so that both see the same machine."""
    steps = []
    for tracker, body in pairs:
        def step(tracker=tracker, body=body):
            with tracker.fork():
                body()
        step()
        steps.append(step)
    best = [float("inf")] * len(steps)
    for _ in range(repeat):
        for i, step in enumerate(steps):
            sync()
            best[i] = min(best[i], timeit.timeit(step, number=number) / number * 1e6)
    return best


def main():
    device = "cuda" if CUDA else "cpu"
    x = torch.ones(4096, device=device)
    plain = PlainTracker()
    plain.add("model-parallel-rng", 3952)
    dropin = megatron.CudaRNGStatesTracker()
    dropin.add("model-parallel-rng", 3952)
    sync = torch.cuda.synchronize if CUDA else (lambda: None)
    cases = [
        ("empty fork", lambda: None, lambda: None, 20000),
        ("fork + dropout of 4096", lambda: torch.nn.functional.dropout(x, 0.1),
         lambda: torch.nn.functional.dropout(x, 0.1), 2000),
    ]
    print(f"torch {torch.__version__}, {'CUDA ' + torch.cuda.get_device_name() if CUDA else 'CPU only'}")
    torch.set_num_threads(1)  # one thread: the op's own timing varies least
    for label, plain_body, dropin_body, number in cases:
        reference, ours = per_fork_us([(plain, plain_body), (dropin, dropin_body)], number, sync)
        print(f"bench torch-fork {label}: rngtrk.torch.megatron {ours:.2f} us, plain swap tracker "
              f"{reference:.2f} us, ratio {ours / reference:.2f}")
    # What torch's RNG state costs once it carries rngtrk's states (the
    # drop-in above is followed): a save and restore, as torch.utils.checkpoint
    # and fork_rng make them, next to torch's own two functions.
    ours, reference = (min(timeit.repeat(lambda g=g, s=s: s(g()), number=5000, repeat=9)) / 5000 * 1e6
                       for g, s in ((torch.get_rng_state, torch.set_rng_state),
                                    (_rng_state_hook.torch_get_rng_state, _rng_state_hook.torch_set_rng_state)))
    print(f"bench torch-fork torch.get_rng_state + set_rng_state: with rngtrk's states {ours:.2f} us, torch's own "
          f"{reference:.2f} us, ratio {ours / reference:.2f}")


if __name__ == "__main__":
    main()
