# SPDX-License-Identifier: Apache-2.0
"""rngtrk.torch under torch.compile, torch.export and torch.func (torch >=
2.4, CPU; the CUDA half is in test_torch_cuda_compile.py): the random ops are torch
operators (rngtrk.torch._torch_ops), so a function drawing from an explicit
state traces with fullgraph=True and gives eager's bits; a module whose
forward forks the process tracker compiles into one graph with no break,
draws eager's numbers and leaves the tracker where eager leaves it, step
after step; two equal draws stay two draws and an unused one still moves
the tracker; activation checkpointing under compile recomputes the
forward's numbers.  Inductor compiles C++ here, so each inductor case is
one graph with many ops; the other cases use aot_eager (the same tracing,
functionalization and partitioning, without code generation)."""
import pytest

import rngtrk

torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
import rngtrk.torch as rt  # noqa: E402  (after the skip)
from rngtrk.torch import _torch_ops  # noqa: E402

if not _torch_ops.AVAILABLE:
    pytest.skip(f"torch {torch.__version__} has no torch.library.register_fake / torch.compile (2.4 needed)",
                allow_module_level=True)
import torch._dynamo as dynamo  # noqa: E402
from torch.utils.checkpoint import checkpoint  # noqa: E402

pytestmark = pytest.mark.usefixtures("fresh_torch_trackers", "fresh_dynamo")
S = rngtrk.PhiloxState(20261126, 8)
ST = rt.state_tensor(S)
READS_PHILOX_STATES = _torch_ops.traceable_state(S)


@pytest.fixture
def fresh_dynamo():
    dynamo.reset()
    yield
    dynamo.reset()


def every_op(x, st):
    """Every random op and form, from the explicit state `st`."""
    return [
        rt.rand(3, 5, state=st), rt.rand(7, state=st, dtype=torch.float64, low=-2.0, high=3.0),
        rt.rand(4, 4, state=st, dtype=torch.bfloat16, layout="torch-eager-cuda"),
        rt.rand(9, state=st, dtype=torch.float16, layout="triton"),
        rt.randn(6, state=st, mean=1.0, std=0.5), rt.randn(5, state=st, dtype=torch.float64, layout="nvfuser"),
        rt.randn(4, state=st, dtype=torch.bfloat16),
        rt.bernoulli(10, p=0.3, state=st), rt.bernoulli(4, p=0.5, state=st, dtype=torch.bool),
        rt.dropout(x, 0.25, state=st), rt.rand_like(x, state=st), rt.randn_like(x, state=st),
        rt.bernoulli_like(x, p=0.7, state=st),
        rt.rand_slice((6, 8), (2, 4), (3, 4), state=st), rt.randn_slice((6, 8), (0, 0), (2, 8), state=st),
        rt.bernoulli_slice((6, 8), (5, 1), (1, 7), p=0.4, state=st),
        rt.dropout_slice(x[:2], (8, 5), (3, 0), 0.5, state=st),
    ]


def equal(a, b):
    return len(a) == len(b) and all(p.dtype == q.dtype and torch.equal(p, q) for p, q in zip(a, b))


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_every_op_from_an_explicit_state_traces_whole_and_equals_eager(backend):
    x = torch.randn(4, 5)
    expected = every_op(x, ST)
    compiled = torch.compile(every_op, backend=backend, fullgraph=True)
    assert equal(compiled(x, ST), expected)
    other = rt.state_tensor(rngtrk.PhiloxState(5, 4))
    assert equal(compiled(x, other), every_op(x, other)), "a state tensor is an input: new state, new numbers"


def test_a_new_state_tensor_each_step_compiles_once():
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    compiled = torch.compile(lambda st: rt.randn(64, state=st), backend=backend, fullgraph=True)
    for offset in range(0, 40, 4):
        st = rt.state_tensor(rngtrk.PhiloxState(3, offset))
        assert torch.equal(compiled(st), rt.randn(64, state=st))
    assert len(graphs) == 1
    assert any(n.target in (torch.ops.rngtrk.sample, torch.ops.rngtrk.sample.default) for n in graphs[0].graph.nodes)


def each_op(x, st):
    """rand, randn, bernoulli and dropout from the explicit state `st`."""
    return [rt.rand(5, state=st), rt.randn(3, 2, state=st, dtype=torch.bfloat16), rt.bernoulli(7, p=0.3, state=st),
            rt.dropout(x, 0.5, state=st)]


# Seeds a step may carry: small, the first past int64 (2^63), and the last ones.
SEEDS = (42, 1 << 63, (1 << 64) - 59)


@pytest.mark.parametrize("fullgraph", [False, True], ids=["default", "fullgraph"])
@pytest.mark.parametrize("form", ["philox-state", "state-tensor"])
def test_a_state_argument_of_any_u64_seed_compiles_and_draws_eagers_numbers_step_after_step(form, fullgraph):
    """A training step takes its state as an argument: a new state each
    call, its seed anywhere in u64.  From the second state on dynamo holds
    the ints as symbolic int64 values; a seed of 2^63 or more fits no int64
    kernel argument ("expected int arg" on torch 2.14 before the state was
    split into 32-bit words).  torch 2.6's dynamo cannot read a PhiloxState
    at all: the draw then runs outside the graph, or, with fullgraph, is
    refused with rngtrk's error naming the tensor form."""
    x = torch.arange(1.0, 9.0)
    compiled = torch.compile(each_op, backend="inductor", fullgraph=fullgraph)
    for step, seed in enumerate(SEEDS + SEEDS):
        state = rngtrk.PhiloxState(seed - step, 8 * step)
        argument = state if form == "philox-state" else rt.state_tensor(state)
        if form == "philox-state" and fullgraph and not READS_PHILOX_STATES:
            with pytest.raises(_torch_ops.StateNotCompilableError, match=r"rngtrk\.torch\.state_tensor\(state\)"):
                compiled(x, argument)
            return
        assert equal(compiled(x, argument), each_op(x, argument)), (step, seed)


def test_torch_export_sees_the_operator_and_the_exported_program_draws_the_same():
    class Noisy(torch.nn.Module):
        def forward(self, x, st):
            return rt.dropout(x, 0.5, state=st) + rt.randn_like(x, state=st)

    x = torch.randn(6, 3)
    exported = torch.export.export(Noisy(), (x, ST))
    targets = {n.target for n in exported.graph.nodes}
    assert torch.ops.rngtrk.sample.default in targets
    assert torch.equal(exported.module()(x, ST), Noisy()(x, ST))


def test_torch_func_grad_and_vmap_see_ordinary_ops():
    x = torch.randn(5, 4)
    grad = torch.func.grad(lambda x: rt.dropout(x, 0.5, state=ST).sum())(x)
    mask = rt.bernoulli(5, 4, p=0.5, state=ST).to(x.dtype)
    assert torch.equal(grad, mask * 2.0)
    batch = torch.randn(3, 5, 4)
    drawn = torch.func.vmap(lambda row: row + rt.rand_like(row, state=ST))(batch)
    assert torch.equal(drawn, batch + rt.rand(5, 4, state=ST)), "each row draws what rand_like(row) draws"


def test_gradients_through_a_compiled_dropout_equal_eager():
    w = torch.randn(8, 8, requires_grad=True)
    x = torch.randn(4, 8)

    def f(w):
        return (rt.dropout(x @ w, 0.3, state=ST) ** 2).sum()

    f(w).backward()
    expected, w.grad = w.grad.clone(), None
    torch.compile(f, backend="aot_eager", fullgraph=True)(w).backward()
    assert torch.equal(w.grad, expected)


# -- the process tracker, forks -----------------------------------------------------------

# With CUDA the process tracker's forks swap torch's CUDA generator, which is
# test_torch_cuda_compile.py's (fallback_random and all).
cpu_process_tracker = pytest.mark.skipif(rt._generators.cuda_ready(), reason="torch has a CUDA device here: the "
                                         "process tracker forks torch's CUDA generator (test_torch_cuda_compile.py)")

def seeded():
    rt.model_parallel_cuda_manual_seed(1234, tp_rank=1, ep_rank=0, etp_rank=0, force_reset_rng=True)
    return rt.get_cuda_rng_tracker()


class Layer(torch.nn.Module):
    """A transformer layer's random work, as Megatron-LM writes it: a
    dropout in the model-parallel fork, a fork of the same name inside it,
    draws outside forks, two equal draws and one whose values go unused."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x):
        tracker = rt.get_cuda_rng_tracker()
        h = rt.dropout(self.linear(x), 0.1)
        with tracker.fork():
            h = rt.dropout(h, 0.5)
            with tracker.fork():
                h = h * rt.rand(h.shape)
        twice = rt.rand(h.shape) + rt.rand(h.shape)
        rt.randn(100)  # unused: the tracker moves all the same
        return h + twice


def steps(model, count=3):
    tracker = seeded()
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(1))
    outs = [model(x) for _ in range(count)]
    return outs, tracker.tracker.save(), tracker.generator_state()


@cpu_process_tracker
def test_a_forking_layer_compiles_to_one_graph_without_breaks():
    seeded()
    explained = dynamo.explain(Layer())(torch.randn(4, 8))
    assert (explained.graph_count, explained.graph_break_count) == (1, 0), explained.break_reasons


@cpu_process_tracker
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_a_compiled_forking_layer_draws_eagers_numbers_and_moves_the_tracker_alike(backend):
    layer = Layer()
    eager = steps(layer)
    compiled = steps(torch.compile(layer, backend=backend, fullgraph=True))
    assert all(torch.equal(a, b) for a, b in zip(eager[0], compiled[0]))
    assert eager[1:] == compiled[1:], "the tracker ends where eager leaves it (forks, the unused draw included)"
    assert not torch.equal(compiled[0][0], compiled[0][1]), "each step draws new numbers"


@cpu_process_tracker
def test_inductors_partitioner_keeps_each_draw_in_the_forward_and_the_redraw_in_backward():
    """Inductor's min-cut partitioner may recompute ops in backward: a
    tracker's draw must not be one of them (it would draw again and move the
    tracker), and dropout's backward redraws from the state the forward
    saved.  Values, gradients and the tracker over three steps equal eager's
    (exact elementwise ops only: inductor's own sin or matmul may round
    otherwise)."""
    def f(x):
        return rt.dropout(x * 2, 0.3) * rt.randn(x.shape) + rt.dropout(x + 1, 0.5)

    def run(g):
        tracker = seeded()
        x = torch.linspace(-1.0, 1.0, 4096, requires_grad=True)
        seen = []
        for _ in range(3):
            y = g(x)
            y.backward(torch.arange(4096.0))
            seen += [y.detach(), x.grad]
            x.grad = None
        return seen, tracker.tracker.save()

    eager = run(f)
    compiled = run(torch.compile(f, backend="inductor"))
    assert all(torch.equal(a, b) for a, b in zip(eager[0], compiled[0])) and eager[1] == compiled[1]


@cpu_process_tracker
def test_an_unknown_fork_name_raises_when_the_compiled_function_draws():
    seeded()

    def f():
        with rt.get_cuda_rng_tracker().fork("no-such-rng"):
            return rt.rand(4)

    # (torch 2.6 passes an operator's error on as a RuntimeError with its message)
    with pytest.raises((KeyError, RuntimeError), match="cuda rng state no-such-rng is not added"):
        torch.compile(f, backend="aot_eager")()


def test_a_plain_tracker_is_named_after_its_first_eager_draw_and_refused_clearly_before():
    """A plain Tracker no operator names yet: fullgraph refuses it with
    rngtrk's error; without fullgraph dynamo runs the caller as it is, whose
    draw names it; once named, it compiles whole."""
    t = rngtrk.Tracker()
    t.manual_seed(5)
    with pytest.raises(_torch_ops.TrackerNotCompilableError,
                       match="draw from it, or make it, once outside the compiled function first"):
        torch.compile(lambda: rt.rand(4, tracker=t), backend="aot_eager", fullgraph=True)()
    assert t.active_state() == rngtrk.PhiloxState(5, 0)
    dynamo.reset()
    start = t.save()
    first = rt.rand(4, state=rngtrk.PhiloxState(5, 0))
    try:
        got = torch.compile(lambda: rt.rand(4, tracker=t), backend="aot_eager")()
    except TypeError as e:  # (torch 2.6 passes the refusal on instead of running the caller)
        assert "draw from it, or make it, once outside the compiled function first" in str(e)
        rt.rand(4, tracker=t)
    else:
        assert torch.equal(got, first)
    t.load(start)
    dynamo.reset()
    f = torch.compile(lambda: rt.rand(4, tracker=t), backend="aot_eager", fullgraph=True)
    assert torch.equal(f(), first) and t.active_state() == rngtrk.PhiloxState(5, 4)


# -- activation checkpointing under compile ---------------------------------------------

def block(x):
    tracker = rt.get_cuda_rng_tracker()
    y = rt.dropout(x, 0.5)
    with tracker.fork():
        y = rt.dropout(y.sin(), 0.5) * rt.rand(y.shape)
    return y


def grad_step(f, ledger):
    """(input gradient, process tracker afterwards) of one step of `f` from the seeded state."""
    tracker = seeded()
    tracker.tracker.set_ledger("raise" if ledger else "off")
    x = torch.randn(6, 8, generator=torch.Generator().manual_seed(2)).requires_grad_()
    f(x).backward()
    return x.grad, tracker.tracker.save()


@cpu_process_tracker
@pytest.mark.parametrize("ledger", [False, True], ids=["ledger-off", "ledger-raise"])
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_checkpoint_under_compile_recomputes_the_forwards_numbers(backend, ledger):
    def plain(x):
        return block(x).sum()

    def checkpointed(x):
        return checkpoint(block, x, use_reentrant=False).sum()

    expected = grad_step(plain, ledger)
    got = grad_step(torch.compile(checkpointed, backend=backend), ledger)
    assert torch.equal(got[0], expected[0]) and got[1] == expected[1]


@cpu_process_tracker
@pytest.mark.parametrize("ledger", [False, True], ids=["ledger-off", "ledger-raise"])
def test_megatrons_checkpoint_under_compile_recomputes_the_forwards_numbers(ledger):
    """rngtrk.torch.megatron.checkpoint (Megatron-LM's signature) inside a
    compiled function: dynamo breaks the graph at its autograd.Function,
    which then runs as it does eagerly."""
    import rngtrk.torch.megatron as m

    expected = grad_step(lambda x: block(x).sum(), ledger)
    got = grad_step(torch.compile(lambda x: m.checkpoint(block, False, x).sum(), backend="aot_eager"), ledger)
    assert torch.equal(got[0], expected[0]) and got[1] == expected[1]


def test_a_state_of_sixteen_bytes_traces_where_it_is_concrete_and_is_refused_by_name_where_not():
    """make_fx and the torch.func transforms run Python as it is: 16 bytes
    are read as the state eager reads; dynamo cannot read them, and
    fullgraph refuses them with rngtrk's error naming the tensor form."""
    from torch.fx.experimental.proxy_tensor import make_fx
    raw = S.to_bytes()
    traced = make_fx(lambda x: x + rt.rand(4, state=raw) + rt.dropout(x, 0.5, state=raw))(torch.zeros(4))
    assert torch.equal(traced(torch.zeros(4)), rt.rand(4, state=S) + rt.dropout(torch.zeros(4), 0.5, state=S))
    with pytest.raises(_torch_ops.StateNotCompilableError, match=r"rngtrk\.torch\.state_tensor\(state\)"):
        torch.compile(lambda x: x + rt.rand(4, state=raw), backend="aot_eager", fullgraph=True)(torch.zeros(4))
