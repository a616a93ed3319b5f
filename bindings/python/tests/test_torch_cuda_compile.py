# SPDX-License-Identifier: Apache-2.0
"""rngtrk.torch under torch.compile and activation checkpointing on a GPU
(the CPU half: test_torch_compile.py, test_torch_checkpoint.py, and the
CUDA-generator emulation's emulated_cuda_compile_checks.py): the random
ops from an explicit state (a state tensor, or a PhiloxState argument of
any u64 seed) compile whole on CUDA tensors and give eager's bits; a layer
that forks a CUDA tracker around torch's own random ops and rngtrk's
compiles with the fork entered outside the graph, so that with inductor
keeping torch's random kernels (fallback_random) its outputs, gradients,
torch's CUDA generator and the named states equal eager's (default mode
and reduce-overhead, every drop-in tracker); fullgraph refuses such a fork
with rngtrk's error; torch.utils.checkpoint, eager and compiled, recomputes
the forward's masks, torch's and rngtrk's, inside forks and around them.
Skips where there is no CUDA device or no torch.compile (torch < 2.4)."""
import pytest

import rngtrk

torch = pytest.importorskip("torch", reason="PyTorch is not installed here: torch interop not exercised")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: torch.compile on CUDA not exercised", allow_module_level=True)
import rngtrk.torch as rt  # noqa: E402
from rngtrk.torch import _torch_ops  # noqa: E402

if not _torch_ops.AVAILABLE:
    pytest.skip(f"torch {torch.__version__} has no torch.compile custom operators (2.4 needed)",
                allow_module_level=True)
import torch._dynamo as dynamo  # noqa: E402
import torch._inductor.config as inductor_config  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.utils.checkpoint import checkpoint  # noqa: E402

pytestmark = pytest.mark.usefixtures("fresh_torch_trackers", "fresh_dynamo")
ST = rt.state_tensor(rngtrk.PhiloxState(20261126, 8))


@pytest.fixture
def fresh_dynamo():
    dynamo.reset()
    yield
    dynamo.reset()
    inductor_config.fallback_random = False


@pytest.fixture
def fallback_random():
    inductor_config.fallback_random = True


def seeded(graph_safe=False):
    rt.model_parallel_cuda_manual_seed(1234, tp_rank=1, ep_rank=0, etp_rank=0, use_cudagraphable_rng=graph_safe,
                                      force_reset_rng=True)
    return rt.get_cuda_rng_tracker()


def megatron_tracker():
    return seeded(False)


def megatron_graph_safe_tracker():
    return seeded(True)


def te_tracker():
    """TransformerEngine's flavour (graph-safe wherever torch can be), its
    states added as TE users add them."""
    from rngtrk.torch import te
    tracker = te.CudaRNGStatesTracker()
    tracker.add("model-parallel-rng", 4000)
    tracker.add("expert-parallel-rng", 5000)
    return tracker


def slapo_tracker():
    from rngtrk.torch import slapo
    slapo.set_random_seed(123, tp_rank=1)
    tracker = slapo.get_cuda_rng_tracker()
    tracker.add("expert-parallel-rng", 6000)
    return tracker


TRACKERS = [megatron_tracker, megatron_graph_safe_tracker, te_tracker, slapo_tracker]


def where(tracker):
    """torch's CUDA generator and every named state, as bytes."""
    return bytes(torch.cuda.get_rng_state().numpy()), tracker.tracker.save() if not tracker.graph_safe else \
        {k: bytes(v.get_state().numpy()) for k, v in tracker.get_states().items()}


def every_op(x, st):
    return [rt.rand(3, 5, state=st, device="cuda"), rt.randn(4, 4, state=st, device="cuda", dtype=torch.bfloat16),
            rt.rand(9, state=st, device="cuda", layout="torch-eager-cuda", dtype=torch.float64),
            rt.bernoulli(10, p=0.3, state=st), rt.dropout(x, 0.25, state=st),
            rt.randn_like(x, state=st, layout="triton"), rt.rand_slice((6, 8), (2, 4), (3, 4), state=st, device="cuda"),
            rt.dropout(x.half(), 0.4, state=st), rt.dropout_slice(x.bfloat16()[:2], (8, 5), (3, 0), 0.5, state=st)]


def test_every_op_from_an_explicit_state_compiles_whole_on_cuda_and_equals_eager():
    x = torch.randn(4, 5, device="cuda")
    expected = every_op(x, ST)
    got = torch.compile(every_op, fullgraph=True)(x, ST)
    assert all(a.device.type == "cuda" and torch.equal(a, b) for a, b in zip(got, expected))


@pytest.mark.parametrize("seed", [42, 1 << 63, (1 << 64) - 59])
def test_a_philox_state_argument_compiles_on_cuda_step_after_step(seed):
    x = torch.randn(64, device="cuda")
    f = torch.compile(lambda x, st: rt.dropout(x, 0.5, state=st) + rt.randn(64, state=st, device="cuda"),
                      fullgraph=True)
    for step in range(4):
        st = rngtrk.PhiloxState(seed - step, 16 * step)
        expected = rt.dropout(x, 0.5, state=st) + rt.randn(64, state=st, device="cuda")
        assert torch.equal(f(x, st), expected)


class Layer(torch.nn.Module):
    """Megatron-LM's pattern with every kind of torch random op, under forks
    of the same name and of two names.  Elementwise work only: inductor
    computes a matmul (and its bias) its own way, in other roundings than
    eager's, and the comparison is of bits."""

    def __init__(self, tracker):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.full((64,), 1.5))
        self.tracker = tracker

    def forward(self, x):
        tracker = self.tracker
        h = F.dropout(x * self.scale, 0.1)
        with tracker.fork():
            h = F.dropout(h, 0.5) + rt.dropout(h, 0.3, tracker=tracker)
            noise = torch.rand(h.shape, device="cuda") + torch.randn(h.shape, device="cuda")
            noise = noise + torch.empty_like(h).uniform_(-1.0, 1.0) * torch.empty_like(h).normal_()
            with tracker.fork():
                h = h * rt.rand(h.shape, device="cuda", tracker=tracker)
                with tracker.fork("expert-parallel-rng"):
                    with torch.no_grad():
                        w = torch.nn.init.normal_(torch.empty(64, device="cuda"), std=0.02)
                    h = F.dropout(h, 0.2) * w + rt.randn(h.shape, device="cuda", tracker=tracker)
        return F.dropout(h.relu(), 0.2) + rt.randn(h.shape, device="cuda", tracker=tracker) + noise


def run_steps(model, tracker, count=3):
    """Outputs and input gradients of `count` steps of `model`, then where
    torch's generator and `tracker`'s named states are."""
    x = torch.randn(8, 64, device="cuda", generator=torch.Generator("cuda").manual_seed(1)).requires_grad_()
    seen = []
    for _ in range(count):
        out = model(x)
        out.sum().backward()
        seen += [out.detach().clone(), x.grad.clone()]
        x.grad = None
    return seen, where(tracker)


def steps(make_tracker, mode=None):
    """run_steps of a Layer on a freshly made tracker, eager (mode None) or
    compiled in `mode`."""
    layer = Layer(make_tracker()).cuda()
    torch.cuda.manual_seed(77)
    return run_steps(layer if mode is None else torch.compile(layer, mode=mode), layer.tracker)


@pytest.mark.usefixtures("fallback_random")
@pytest.mark.parametrize("mode", ["default", "reduce-overhead"])
@pytest.mark.parametrize("make_tracker", TRACKERS, ids=lambda f: f.__name__)
def test_a_forking_layer_compiles_and_equals_eager_forward_and_backward(make_tracker, mode):
    """A fork of a CUDA tracker is entered outside the graph, for real, at
    the place eager enters it (_torch_ops._cuda_fork), so with inductor
    keeping torch's random kernels (fallback_random) every output,
    gradient, generator and named state equals eager's, step after step:
    torch's F.dropout, torch.rand/randn, uniform_/normal_ and nn.init in
    forks, rngtrk's draws in and out of them, nested forks of one name and
    of two (Megatron's, its graph-safe form, TransformerEngine's, slapo's)."""
    eager = steps(make_tracker)
    dynamo.reset()
    compiled = steps(make_tracker, mode=mode)
    assert all(torch.equal(a, b) for a, b in zip(eager[0], compiled[0])), "outputs and gradients are eager's"
    assert eager[1] == compiled[1], "torch's generator and the named states end where eager leaves them"


class RngtrkOnly(torch.nn.Module):
    def forward(self, x):
        with rt.get_cuda_rng_tracker().fork():
            h = rt.dropout(x, 0.5) * rt.rand(x.shape, device="cuda")
        return h + rt.randn(x.shape, device="cuda")


class RngtrkNoFork(torch.nn.Module):
    def forward(self, x):
        return rt.dropout(x, 0.5) + rt.randn(x.shape, device="cuda")


def module_steps(module, compiled):
    tracker = seeded()
    return run_steps(torch.compile(module) if compiled else module, tracker)


@pytest.mark.parametrize("module", [RngtrkOnly, RngtrkNoFork], ids=["in-a-fork", "no-fork"])
def test_rngtrks_draws_from_the_process_tracker_compile_to_eagers_numbers(module):
    """rngtrk's draws read the generator when they run: eager's numbers
    with inductor's own random numbers too (no fallback_random)."""
    eager = module_steps(module(), compiled=False)
    dynamo.reset()
    compiled = module_steps(module(), compiled=True)
    assert all(torch.equal(a, b) for a, b in zip(eager[0], compiled[0]))
    assert eager[1] == compiled[1]


def test_a_cuda_fork_is_refused_under_fullgraph_with_rngtrks_error():
    layer = Layer(seeded()).cuda()
    with pytest.raises(_torch_ops.NotCompilableError, match="cannot hold a fork of a CUDA tracker"):
        torch.compile(layer, fullgraph=True)(torch.randn(8, 64, device="cuda"))


def block(x):
    tracker = rt.get_cuda_rng_tracker()
    y = F.dropout(x, 0.5)
    with tracker.fork():
        y = F.dropout(y.sin(), 0.5) * rt.rand(y.shape, device="cuda")
        with tracker.fork():
            y = rt.dropout(y, 0.4)
    return y


def grad_step(f, fork_around=False, compiled=False):
    tracker = seeded()
    x = torch.randn(16, 32, device="cuda", generator=torch.Generator("cuda").manual_seed(2)).requires_grad_()
    if compiled:
        f = torch.compile(f)
    if fork_around:
        with tracker.fork():
            out = f(x)
    else:
        out = f(x)
    out.backward()
    return x.grad, where(tracker)


@pytest.mark.parametrize("fork_around", [False, True], ids=["forks-inside", "fork-around"])
@pytest.mark.parametrize("reentrant", [True, False], ids=["reentrant", "non-reentrant"])
def test_torch_checkpoint_on_cuda_recomputes_torchs_and_rngtrks_masks(reentrant, fork_around):
    expected = grad_step(lambda x: block(x).sum(), fork_around)
    got = grad_step(lambda x: checkpoint(block, x, use_reentrant=reentrant).sum(), fork_around)
    assert torch.equal(got[0], expected[0]) and got[1] == expected[1]


def block_without_forks(x):
    return rt.dropout(F.dropout(x, 0.5).sin(), 0.4) * rt.rand(x.shape, device="cuda")


@pytest.mark.usefixtures("fallback_random")
@pytest.mark.parametrize("f", [block_without_forks, block], ids=["one-graph", "forks-break-it"])
def test_compiled_checkpoint_on_cuda_recomputes_the_forwards_masks(f):
    """Without forks the checkpoint compiles into the graph (torch's
    checkpoint operator, which saves and restores the generators itself);
    with them dynamo breaks the graph at each fork and runs it eagerly."""
    expected = grad_step(lambda x: f(x).sum())
    got = grad_step(lambda x: checkpoint(f, x, use_reentrant=False).sum(), compiled=True)
    assert torch.equal(got[0], expected[0]) and got[1] == expected[1]


def test_reduce_overhead_leaves_the_tracker_draws_out_of_cuda_graphs():
    """Inductor's CUDA graphs would bake one offset into every replay: the
    draws are tagged so that it leaves them out (torch >= 2.8), or refused."""
    def f(x):
        return x + rt.rand(x.shape, device="cuda")

    x = torch.zeros(1024, device="cuda")
    seeded()
    eager = [f(x) for _ in range(4)]
    seeded()
    compiled = torch.compile(f, mode="reduce-overhead")
    outs = [compiled(x).clone() for _ in range(4)]
    assert all(torch.equal(a, b) for a, b in zip(outs, eager)), "every call draws eager's new numbers"
