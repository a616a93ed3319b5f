# SPDX-License-Identifier: Apache-2.0
"""torch.compile over forks of a CUDA tracker, on CPU-only torch (>= 2.4),
under tests/upstream/cuda_emulation.py (a CPU stand-in of torch's default
CUDA generator): the GPU half's pattern (test_torch_cuda_compile.py) that
the CPU can show.  Run by test_torch_emulated_cuda.py in a process of its
own (the emulation replaces torch.cuda's functions for the whole process).

A CUDA tracker's fork swaps torch's CUDA generator for torch's own random
ops inside it (Megatron-LM's pattern: F.dropout in
get_cuda_rng_tracker().fork()).  `torch_dropout` stands in for such an op:
a torch operator tagged nondeterministic_seeded, as torch's random ops
are, that reads the (emulated) CUDA generator when it runs and moves it.
Compiled with dynamo and AOTAutograd (backend aot_eager: inductor asks the
emulated device for properties it does not have), a layer that forks
around it (Megatron-LM's and slapo's trackers; nested forks of the same
name and of two names) must give eager's outputs, gradients, generator and
named states, step after step; fullgraph=True must refuse the fork with
rngtrk's error.  (TransformerEngine's tracker is graph-safe wherever torch
is: its generators are real CUDA ones, which the emulation cannot make; it
is in the GPU half.)  (Before the fork was entered outside the graph, dynamo
ran the fork's __enter__ as a compiled frame of its own, which only
recorded the fork: the stand-in, like F.dropout on an H200, drew from the
generator outside it.)"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tests", "upstream"))
sys.path.insert(0, os.path.join(HERE, ".."))  # this checkout's rngtrk
import torch  # noqa: E402
import torch._dynamo as dynamo  # noqa: E402
# Dynamo imports this module while it traces a `with` statement; its import
# asks CUDA for its compiled version, which a CPU-only torch under the
# emulation lacks: imported first, before the emulation answers for CUDA.
import torch.testing._internal.jit_utils  # noqa: E402,F401
import cuda_emulation  # noqa: E402

GENERATOR = cuda_emulation.emulate()  # before rngtrk.torch reads torch.cuda

import pytest  # noqa: E402
from torch.utils.checkpoint import checkpoint  # noqa: E402

import rngtrk  # noqa: E402
import rngtrk.torch as rt  # noqa: E402
from rngtrk.torch import _torch_ops  # noqa: E402

_lib = torch.library.Library("standin_cuda", "DEF")
_lib.define("dropout_mask(Tensor x, float p) -> Tensor", tags=(torch.Tag.nondeterministic_seeded,))


def _dropout_mask(x, p):
    """The keep mask torch's CUDA dropout would draw: from the CUDA
    generator's state when it runs, which then moves past the draw."""
    state = rt.state_of(GENERATOR.get_state())
    mask = rt.bernoulli(tuple(x.shape), p=1.0 - p, state=state).to(x.dtype)
    GENERATOR.set_offset(state.advanced(rngtrk.offset_increment(x.numel(), dist="bernoulli", dtype="u8")).offset)
    return mask


_lib.impl("dropout_mask", _dropout_mask, "CompositeExplicitAutograd")
torch.library.register_fake("standin_cuda::dropout_mask", lambda x, p: torch.empty_like(x), lib=_lib)


def torch_dropout(x, p):
    return x * torch.ops.standin_cuda.dropout_mask(x, p) / (1.0 - p)


def seeded():
    rt.model_parallel_cuda_manual_seed(1234, tp_rank=1, ep_rank=0, etp_rank=0, force_reset_rng=True)
    torch.cuda.manual_seed(77)
    tracker = rt.get_cuda_rng_tracker()
    assert tracker._cuda, "the emulation makes the process tracker a CUDA tracker"
    return tracker


def where(tracker):
    """torch's (emulated) CUDA generator and every named state."""
    return bytes(GENERATOR.get_state().numpy()), tracker.tracker.save()


def megatron_tracker():
    return seeded()


def slapo_tracker():
    from rngtrk.torch import slapo
    slapo.set_random_seed(123, tp_rank=1)
    tracker = slapo.get_cuda_rng_tracker()
    tracker.add("expert-parallel-rng", 6000)
    torch.cuda.manual_seed(77)
    return tracker


class Layer(torch.nn.Module):
    """Torch's random op and rngtrk's, outside a fork, in it, in a fork of
    the same name inside it and in a fork of another name inside that."""

    def __init__(self, make_tracker):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.full((64,), 1.5))
        self.tracker = make_tracker()

    def forward(self, x):
        tracker = self.tracker
        h = torch_dropout(x * self.scale, 0.1)
        with tracker.fork():
            h = torch_dropout(h, 0.5) + rt.dropout(h, 0.3, tracker=tracker)
            with tracker.fork():
                h = h * rt.rand(h.shape, tracker=tracker) + torch_dropout(h, 0.25)
                with tracker.fork("expert-parallel-rng"):
                    h = torch_dropout(h, 0.3) * rt.rand(h.shape, tracker=tracker)
        return torch_dropout(h.relu(), 0.2) + rt.randn(h.shape, tracker=tracker)


def steps(make_tracker, compiled, count=3):
    """Outputs and input gradients of `count` steps of a Layer on a freshly
    seeded tracker, eager or compiled, then where the generator and the
    named states are."""
    layer = Layer(make_tracker)
    model = torch.compile(layer, backend="aot_eager") if compiled else layer
    x = torch.randn(8, 64, generator=torch.Generator().manual_seed(1)).requires_grad_()
    seen = []
    for _ in range(count):
        out = model(x)
        out.sum().backward()
        seen += [out.detach(), x.grad]
        x.grad = None
    return seen, where(layer.tracker)


def compiled_forks_equal_eager():
    for make_tracker in (megatron_tracker, slapo_tracker):
        dynamo.reset()
        eager = steps(make_tracker, compiled=False)
        compiled = steps(make_tracker, compiled=True)
        name = make_tracker.__name__
        assert all(torch.equal(a, b) for a, b in zip(eager[0], compiled[0])), f"{name}: outputs and gradients"
        assert eager[1] == compiled[1], f"{name}: the CUDA generator and the named states end where eager leaves them"
        assert eager[1][0] != bytes(rt.state_tensor(rngtrk.PhiloxState(77, 0)).numpy()), "torch's op drew"


def fullgraph_refuses_the_fork():
    dynamo.reset()
    seeded()
    with pytest.raises(_torch_ops.NotCompilableError, match="cannot hold a fork of a CUDA tracker"):
        torch.compile(Layer(megatron_tracker), backend="aot_eager", fullgraph=True)(torch.ones(8, 64))


def block(x):
    tracker = rt.get_cuda_rng_tracker()
    y = torch_dropout(x, 0.5)
    with tracker.fork():
        y = torch_dropout(y.sin(), 0.5) * rt.rand(y.shape)
        with tracker.fork():
            y = rt.dropout(y, 0.4)
    return y


def grad_step(f, compiled):
    tracker = seeded()
    x = torch.randn(16, 32, generator=torch.Generator().manual_seed(2)).requires_grad_()
    (torch.compile(f, backend="aot_eager") if compiled else f)(x).backward()
    return x.grad, where(tracker)


def compiled_checkpoint_recomputes_the_forwards_masks():
    """torch.utils.checkpoint under compile over forks of a CUDA tracker:
    the recompute draws the forward's masks, torch's op's and rngtrk's."""
    dynamo.reset()
    expected = grad_step(lambda x: block(x).sum(), compiled=False)
    got = grad_step(lambda x: checkpoint(block, x, use_reentrant=False).sum(), compiled=True)
    assert torch.equal(got[0], expected[0]) and got[1] == expected[1]


CHECKS = (compiled_forks_equal_eager, fullgraph_refuses_the_fork, compiled_checkpoint_recomputes_the_forwards_masks)

if __name__ == "__main__":
    for check in CHECKS:
        check()
        print(f"ok {check.__name__}")
