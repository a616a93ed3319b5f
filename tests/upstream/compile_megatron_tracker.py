#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A transformer layer's random work under torch.compile, forked by
Megatron-LM's own CudaRNGStatesTracker and by rngtrk.torch.megatron's, on
the same torch and GPU (docs/pytorch.md, "torch.compile"):

    python3 tests/upstream/compile_megatron_tracker.py MEGATRON_LM_CHECKOUT

The layer draws torch's own F.dropout outside forks, inside the
model-parallel fork, and in a fork of the same name inside that; with
rngtrk's tracker it also draws rngtrk.torch's dropout in the fork.  For
each tracker it reports, measured with torch._dynamo.explain, how many
graphs and breaks dynamo makes (and why), and whether three compiled steps
(inductor with fallback_random, so torch's random ops are eager's kernels)
give eager's outputs and leave torch's CUDA generator and the tracker's
states where eager leaves them; then the time of one step, eager and
compiled.  Megatron-LM's random.py runs from the checkout (its packages
entered bare, with our stand-ins of parallel_state and utils: the
megatron_plugin.py set-up); nothing of it is copied here.  Needs CUDA.
Exits 1 if rngtrk's tracker gives other numbers than eager.  Each
tracker runs in a process of its own, under a time limit: on torch 2.11 on
an H200 (2026-11-26), Megatron-LM's tracker hung inside
torch.cuda._lazy_call when dynamo compiled the callback Megatron's
_set_cuda_rng_state hands it (dynamo's own RNG restore calls _lazy_call
again); the script then says so and goes on with rngtrk's.
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "bindings", "python")]

import torch  # noqa: E402
import torch._dynamo as dynamo  # noqa: E402
import torch._inductor.config as inductor_config  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def megatron_random(root):
    """Megatron-LM's megatron.core.tensor_parallel.random from `root`."""
    import megatron_plugin
    sys.path.insert(0, root)
    for name in ("megatron", "megatron.core", "megatron.core.tensor_parallel", "megatron.core.transformer"):
        megatron_plugin._bare_package(name, os.path.join(root, *name.split(".")))
    megatron_plugin._standin("megatron.core.parallel_state", "parallel_state.py")
    megatron_plugin._standin("megatron.core.utils", "megatron_core_utils.py")
    megatron_plugin._standin("megatron.core.transformer.cuda_graphs", "cuda_graphs.py")
    sys.modules["megatron.core.parallel_state"]._set(tp_rank=0, tp_size=1, ep_rank=0, etp_rank=0)
    import megatron.core.tensor_parallel.random as random
    return random


class Layer(torch.nn.Module):
    """Elementwise work only (inductor rounds a matmul its own way, and the
    comparison is of bits)."""

    def __init__(self, tracker, rngtrk_ops):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.full((256,), 1.5))
        self.tracker, self.rngtrk_ops = tracker, rngtrk_ops

    def forward(self, x):
        h = F.dropout(x * self.scale, 0.1)
        with self.tracker.fork():
            h = F.dropout(h, 0.5)
            with self.tracker.fork():
                h = h * 2
            if self.rngtrk_ops:
                import rngtrk.torch as rt
                h = rt.dropout(h, 0.3)
        return F.dropout(h.relu(), 0.1)


def where(tracker):
    """torch's CUDA generator and the tracker's states, as bytes."""
    states = {k: (v.get_state() if isinstance(v, torch.Generator) else v).clone()
              for k, v in tracker.get_states().items()}
    return torch.cuda.get_rng_state().clone(), states


def same_place(a, b):
    return torch.equal(a[0], b[0]) and a[1].keys() == b[1].keys() and all(torch.equal(a[1][k], b[1][k]) for k in a[1])


def run(layer, seed, steps=3):
    seed()
    x = torch.randn(64, 256, device="cuda", generator=torch.Generator("cuda").manual_seed(0))
    outs = [layer(x) for _ in range(steps)]
    torch.cuda.synchronize()
    return outs, where(layer.tracker)


def step_time(layer, repeats=50):
    x = torch.randn(64, 256, device="cuda")
    for _ in range(5):
        layer(x)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        layer(x)
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / repeats * 1e6


def compare(name, tracker, seed, rngtrk_ops):
    layer = Layer(tracker, rngtrk_ops).cuda()
    seed()
    explained = dynamo.explain(layer)(torch.randn(64, 256, device="cuda"))
    reasons = sorted({str(r.reason).splitlines()[0][:110] for r in explained.break_reasons})
    eager = run(layer, seed)
    dynamo.reset()
    compiled_layer = torch.compile(layer)
    compiled = run(compiled_layer, seed)
    values = all(torch.equal(a, b) for a, b in zip(eager[0], compiled[0]))
    state = same_place(eager[1], compiled[1])
    t_eager, t_compiled = step_time(layer), step_time(compiled_layer)
    print(f"{name}: {explained.graph_count} graph(s), {explained.graph_break_count} break(s); "
          f"compiled == eager: values {values}, generator and states {state}; "
          f"step {t_eager:.0f} us eager, {t_compiled:.0f} us compiled")
    for reason in reasons:
        print(f"    break: {reason}")
    return values and state


def run_one(which):
    """One tracker's comparisons, in this process."""
    inductor_config.fallback_random = True  # torch's random ops as eager's kernels, in program order
    if which == "megatron":
        random = megatron_random(sys.argv[1])

        def seed_megatron():
            random.model_parallel_cuda_manual_seed(1234, force_reset_rng=True)

        seed_megatron()
        return compare("Megatron-LM's tracker, torch's dropout", random.get_cuda_rng_tracker(), seed_megatron, False)
    import rngtrk.torch.megatron as m

    def seed_rngtrk():
        m.model_parallel_cuda_manual_seed(1234, tp_rank=0, ep_rank=0, etp_rank=0, force_reset_rng=True)

    seed_rngtrk()
    ok = compare("rngtrk's tracker, torch's dropout", m.get_cuda_rng_tracker(), seed_rngtrk, False)
    ok &= compare("rngtrk's tracker, torch's and rngtrk's dropout", m.get_cuda_rng_tracker(), seed_rngtrk, True)
    inductor_config.fallback_random = False
    dynamo.reset()
    print("inductor fallback_random=False (inductor's own random numbers for torch's ops):")
    compare("rngtrk's tracker, torch's dropout", m.get_cuda_rng_tracker(), seed_rngtrk, False)
    return ok


def main():
    if len(sys.argv) not in (2, 3) or not torch.cuda.is_available():
        sys.exit(__doc__ if len(sys.argv) not in (2, 3) else "compile_megatron_tracker: needs CUDA")
    if len(sys.argv) == 3:  # a child: one tracker
        sys.exit(0 if run_one(sys.argv[2]) else 1)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, inductor fallback_random=True")
    # Each tracker in a process of its own with a time limit: Megatron-LM's
    # fork, run by torch.compile, can hang (module text), and the other
    # tracker is still measured.
    import subprocess
    codes = {}
    for which in ("megatron", "rngtrk"):
        try:
            codes[which] = subprocess.run([sys.executable, __file__, sys.argv[1], which], timeout=150).returncode
        except subprocess.TimeoutExpired:
            print(f"{which}: did not finish in 150 s")
            codes[which] = None
    sys.exit(0 if codes["rngtrk"] == 0 else 1)


if __name__ == "__main__":
    main()
