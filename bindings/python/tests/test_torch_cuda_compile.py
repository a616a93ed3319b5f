"""rngtrk.torch under torch.compile and activation checkpointing on a GPU
(the CPU half: test_torch_compile.py, test_torch_checkpoint.py): the
random ops from an explicit state compile whole on CUDA tensors and give
eager's bits; a layer that forks the process tracker around torch's own
F.dropout and rngtrk's ops compiles around the fork, which breaks the
graph on purpose and runs as it is, so that with inductor keeping torch's
random kernels (fallback_random) its outputs, torch's CUDA generator and
the named states equal eager's; torch.utils.checkpoint, eager and compiled, recomputes the forward's
masks, torch's and rngtrk's, inside forks and around them.  Skips where
there is no CUDA device or no torch.compile (torch < 2.4)."""
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


def where(tracker):
    """torch's CUDA generator and every named state, as bytes."""
    return bytes(torch.cuda.get_rng_state().numpy()), tracker.tracker.save() if not tracker.graph_safe else \
        {k: bytes(v.get_state().numpy()) for k, v in tracker.get_states().items()}


def every_op(x, st):
    return [rt.rand(3, 5, state=st, device="cuda"), rt.randn(4, 4, state=st, device="cuda", dtype=torch.bfloat16),
            rt.rand(9, state=st, device="cuda", layout="torch-eager-cuda", dtype=torch.float64),
            rt.bernoulli(10, p=0.3, state=st, device="cuda"), rt.dropout(x, 0.25, state=st),
            rt.randn_like(x, state=st, layout="triton"), rt.rand_slice((6, 8), (2, 4), (3, 4), state=st, device="cuda")]


def test_every_op_from_an_explicit_state_compiles_whole_on_cuda_and_equals_eager():
    x = torch.randn(4, 5, device="cuda")
    expected = every_op(x, ST)
    got = torch.compile(every_op, fullgraph=True)(x, ST)
    assert all(a.device.type == "cuda" and torch.equal(a, b) for a, b in zip(got, expected))


class Layer(torch.nn.Module):
    """Elementwise work only: inductor computes a matmul (and its bias) its
    own way, in other roundings than eager's, and the comparison is of bits."""

    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.full((64,), 1.5))

    def forward(self, x):
        tracker = rt.get_cuda_rng_tracker()
        h = F.dropout(x * self.scale, 0.1)
        with tracker.fork():
            h = F.dropout(h, 0.5) + rt.dropout(h, 0.3)
            with tracker.fork():
                h = h * rt.rand(h.shape, device="cuda")
        return F.dropout(h.relu(), 0.2) + rt.randn(h.shape, device="cuda")


def steps(model, graph_safe, count=3):
    tracker = seeded(graph_safe)
    x = torch.randn(8, 64, device="cuda", generator=torch.Generator("cuda").manual_seed(1))
    outs = [model(x) for _ in range(count)]
    return outs, where(tracker)


@pytest.mark.usefixtures("fallback_random")
@pytest.mark.parametrize("graph_safe", [False, True], ids=["generator", "graph-safe"])
def test_a_forking_layer_compiles_around_its_forks_and_equals_eager(graph_safe):
    """A fork of a CUDA tracker breaks the graph on purpose (_torch_ops.
    fork_enter: torch's own random ops in it have no fixed place relative to
    a traced generator swap); dynamo compiles the code around it and runs
    the fork as it is, so with inductor keeping torch's random kernels
    (fallback_random) every number and state equals eager's."""
    layer = Layer().cuda()
    seeded(graph_safe)
    explained = dynamo.explain(layer)(torch.randn(8, 64, device="cuda"))
    assert explained.graph_count >= 1 and explained.graph_break_count >= 1
    eager = steps(layer, graph_safe)
    compiled = steps(torch.compile(layer), graph_safe)
    assert all(torch.equal(a, b) for a, b in zip(eager[0], compiled[0]))
    assert eager[1] == compiled[1], "torch's generator and the named states end where eager leaves them"


class RngtrkOnly(torch.nn.Module):
    def forward(self, x):
        with rt.get_cuda_rng_tracker().fork():
            h = rt.dropout(x, 0.5) * rt.rand(x.shape, device="cuda")
        return h + rt.randn(x.shape, device="cuda")


def test_a_cuda_fork_is_refused_under_fullgraph_and_rngtrks_draws_stay_eagers():
    """fullgraph refuses the fork's break; rngtrk's draws, which read the
    generator when they run, are eager's with inductor's own random numbers
    too (torch's ops are not: inductor draws those its own way)."""
    layer = Layer().cuda()
    seeded()
    with pytest.raises(dynamo.exc.Unsupported, match="graph_break"):  # the fork's own break, nothing else
        torch.compile(layer, fullgraph=True)(torch.randn(8, 64, device="cuda"))
    dynamo.reset()
    only = RngtrkOnly()
    eager = steps(only, False)
    compiled = steps(torch.compile(only), False)
    assert all(torch.equal(a, b) for a, b in zip(eager[0], compiled[0]))
    assert eager[1] == compiled[1]


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
