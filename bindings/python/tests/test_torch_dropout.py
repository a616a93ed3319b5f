# SPDX-License-Identifier: Apache-2.0
"""rngtrk.torch.dropout and dropout_slice in one pass, keeping no mask
(rngtrk.torch._dropout): the bits of the mask-then-multiply formula
(x * (mask * scale), scale = 1 / (1 - p) rounded to x's dtype, as torch's
own dropout computes) for every float dtype and layout, NaN, infinities and
signed zeros included; backward draws the mask again from the state, so
nothing is saved for it (torch's F.dropout saves its mask), the gradient is
the scaled mask, and neither backward nor a recompute moves the tracker or
the ledger; torch.utils.checkpoint and torch.compile (torch >= 2.4) keep
all of it.  CPU here; the CUDA kernel is checked against the CPU in
test_torch.py on a GPU."""
import struct

import pytest

import rngtrk

torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
import rngtrk.torch as rt  # noqa: E402
from rngtrk.torch import _torch_ops  # noqa: E402
from torch.utils.checkpoint import checkpoint  # noqa: E402

pytestmark = pytest.mark.usefixtures("fresh_torch_trackers")
S = rngtrk.PhiloxState(20261127, 12)
LAYOUTS = list(rngtrk.sampling.LAYOUTS)
FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
GEOMETRY = dict(sm_count=2, max_threads_per_sm=256)


def awkward(n, dtype):
    """n values with NaN, both infinities, both zeros and negatives among them."""
    x = torch.linspace(-3.0, 3.0, n, dtype=torch.float64)
    specials = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, -1e-30, 65504.0, -7.5],
                            dtype=torch.float64)[:n]
    x[: len(specials)] = specials
    return x.to(dtype)


def bits(t):
    """The tensor's bit patterns, every NaN as one pattern (+0 and -0
    differ).  (Which NaN a float multiply makes of NaN * 0 or inf * 0 is
    the hardware's, and torch's own bf16 rounding writes one NaN in its
    vectorized loop and another in its scalar one: NaN-ness is the
    contract, not the payload.)"""
    width = {8: torch.int64, 4: torch.int32, 2: torch.int16}[t.element_size()]
    t = t.contiguous()
    return torch.where(torch.isnan(t), torch.full_like(t, float("nan")), t).view(width)


def by_formula(x, p, state, layout="stateless", box=None, **geometry):
    """What rngtrk.torch.dropout computed before it was one pass: the
    bernoulli mask, then x * (mask * scale) with torch's own ops."""
    if box is None:
        mask = rt.bernoulli(tuple(x.shape), p=1.0 - p, state=state, layout=layout, **geometry)
    else:
        mask = rt.bernoulli_slice(*box, p=1.0 - p, state=state, layout=layout, **geometry)
    scale = torch.tensor(1.0 / (1.0 - p), dtype=x.dtype)
    return x * (mask.to(x.dtype) * scale)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_one_pass_has_the_bits_of_the_mask_then_multiply_formula(layout, dtype):
    for n, p in ((1, 0.5), (7, 0.1), (1000, 0.3), (4099, 0.9)):
        x = awkward(n, dtype)
        got = rt.dropout(x, p, state=S, layout=layout, **GEOMETRY)
        assert got.dtype == dtype and got.shape == x.shape
        assert torch.equal(bits(got), bits(by_formula(x, p, S, layout, **GEOMETRY))), (n, p)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_slice_is_the_box_of_the_whole_tensors_dropout(layout, dtype):
    shape = (6, 10)
    x = awkward(60, dtype).reshape(shape)
    whole = rt.dropout(x, 0.3, state=S, layout=layout, **GEOMETRY)
    for start, local in [((0, 0), (6, 10)), ((2, 5), (3, 4)), ((5, 9), (1, 1)), ((1, 0), (2, 10))]:
        part = tuple(slice(a, a + n) for a, n in zip(start, local))
        got = rt.dropout_slice(x[part].clone(), shape, start, 0.3, state=S, layout=layout, **GEOMETRY)
        assert torch.equal(bits(got), bits(whole[part]))
        assert torch.equal(bits(got), bits(by_formula(x[part], 0.3, S, layout, box=(shape, start, local),
                                                      **GEOMETRY)))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_in_place_and_strided_inputs_give_the_same_values(dtype):
    x = awkward(96, dtype).reshape(8, 12)
    expected = rt.dropout(x, 0.4, state=S)
    strided = x.t().contiguous().t()  # the same values, column-major
    assert not strided.is_contiguous()
    assert torch.equal(bits(rt.dropout(strided, 0.4, state=S)), bits(expected))
    target = strided.clone()
    assert rt.dropout(target, 0.4, state=S, inplace=True) is target
    assert torch.equal(bits(target), bits(expected)), "in place into a strided tensor"
    target = x.clone()
    assert rt.dropout(target, 0.4, state=S, inplace=True) is target
    assert torch.equal(bits(target), bits(expected)), "in place"


def saved_bytes(f):
    """(how many tensors autograd saved for backward while f ran, their bytes)."""
    count, size = [0], [0]

    def pack(t):
        count[0] += 1
        size[0] += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        f()
    return count[0], size[0]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_backward_draws_the_mask_again_and_nothing_is_saved_for_it(dtype):
    x = awkward(4096, dtype).nan_to_num().requires_grad_()
    assert saved_bytes(lambda: rt.dropout(x, 0.1, state=S)) == (0, 0), "a state, not a tensor"
    reference = x.detach().float().requires_grad_()  # (torch 1.13's CPU dropout has no f16)
    count, size = saved_bytes(lambda: torch.nn.functional.dropout(reference, 0.1))
    assert count >= 1 and size >= 4096, "torch's own dropout keeps its mask, a byte or more per element"
    y = rt.dropout(x, 0.1, state=S)
    grad = torch.arange(4096.0).to(dtype)
    y.backward(grad)
    assert torch.equal(bits(x.grad), bits(by_formula(grad, 0.1, S))), "the gradient is grad * (mask * scale)"


def test_double_backward_and_a_tracker_draw():
    tracker = rngtrk.Tracker()
    tracker.manual_seed(7)
    x = torch.randn(300, dtype=torch.float64, requires_grad=True)
    y = rt.dropout(x, 0.25, tracker=tracker)
    after = tracker.active_state()
    assert after == rngtrk.PhiloxState(7, 0).advanced(rngtrk.offset_increment(300, dist="bernoulli", dtype="u8"))
    (g,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    kept = by_formula(torch.ones(300, dtype=torch.float64), 0.25, rngtrk.PhiloxState(7, 0))
    assert torch.equal(g, 2 * y * kept) and torch.equal(gg, 2 * kept * kept)
    assert tracker.active_state() == after, "backward draws from the saved state: the tracker stays"


def test_the_ledger_sees_the_forward_draw_only():
    tracker = rngtrk.Tracker()
    tracker.manual_seed(9)
    tracker.set_ledger("raise")
    x = torch.randn(64, requires_grad=True)
    rt.dropout(x, 0.5, tracker=tracker).sum().backward()
    position = tracker.ledger_position()
    rt.dropout(x, 0.5, tracker=tracker).sum().backward()
    assert tracker.ledger_position() == position + 1, "one reservation per forward, none for backward"


@pytest.mark.parametrize("reentrant", [True, False], ids=["reentrant", "non-reentrant"])
def test_checkpointing_recomputes_the_same_mask_without_saving_it(reentrant):
    tracker = rt.get_cuda_rng_tracker()
    tracker.add("model-parallel-rng", 4242)

    def block(x):
        with tracker.fork():
            return rt.dropout(torch.tanh(x), 0.3).sin()

    def grad(f):
        tracker.set_states({"model-parallel-rng": rngtrk.PhiloxState(4242, 0)})
        x = torch.linspace(-1.0, 1.0, 500, requires_grad=True)
        f(x).sum().backward()
        return x.grad, tracker.get_states()

    expected = grad(block)
    got = grad(lambda x: checkpoint(block, x, use_reentrant=reentrant))
    assert torch.equal(got[0], expected[0])
    assert all(torch.equal(a, b) for a, b in zip(got[1].values(), expected[1].values()))


def test_a_device_rngtrk_cannot_fill_is_named():
    with pytest.raises(TypeError, match="not meta"):
        rt.dropout(torch.ones(8, device="meta"), 0.5, state=S)
    with pytest.raises(TypeError, match="not meta"):
        rt.rand(8, state=S, device="meta")


def test_a_layers_saved_activations_with_and_without_the_mask():
    """What a transformer layer's dropouts keep for backward (docs/pytorch.md):
    torch's F.dropout a mask per call, rngtrk's nothing."""
    hidden = torch.randn(4, 128, 256, requires_grad=True)
    probs = torch.softmax(torch.randn(4, 8, 128, 128), -1).requires_grad_()
    residual = (hidden * 2).detach().requires_grad_()

    def dropouts(drop):
        return drop(probs, 0.1).sum() + drop(hidden, 0.1).sum() + drop(residual, 0.1).sum()

    torch_count, torch_bytes = saved_bytes(lambda: dropouts(torch.nn.functional.dropout))
    ours_count, ours_bytes = saved_bytes(lambda: dropouts(lambda t, p: rt.dropout(t, p, state=S)))
    elements = probs.numel() + 2 * hidden.numel()
    assert torch_bytes >= elements and ours_bytes == 0, (torch_bytes, ours_bytes)


needs_compile = pytest.mark.skipif(not _torch_ops.AVAILABLE,
                                   reason=f"torch {torch.__version__} has no torch.compile custom operators")


@needs_compile
@pytest.mark.parametrize("source", ["state", "tracker"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_compiled_dropout_is_eagers_forward_and_backward_and_keeps_only_the_state(source, dtype):
    import torch._dynamo as dynamo
    dynamo.reset()
    tracker = rngtrk.Tracker()

    def f(x):
        if source == "state":
            return rt.dropout(x * 3, 0.3, state=rt.state_tensor(S)) * 2
        return rt.dropout(x * 3, 0.3, tracker=tracker) * 2

    def run(g):
        tracker.manual_seed(11)
        x = torch.linspace(-2.0, 2.0, 1024, dtype=dtype, requires_grad=True)
        y = g(x)
        y.sum().backward()
        return y.detach(), x.grad, tracker.active_state()

    rt.rand(1, tracker=tracker)  # a plain tracker is named by its first eager draw
    expected = run(f)
    compiled = torch.compile(f, backend="aot_eager")
    got = run(compiled)
    assert torch.equal(got[0], expected[0]) and torch.equal(got[1], expected[1]) and got[2] == expected[2]
    x = torch.ones(1024, dtype=dtype, requires_grad=True)
    count, size = saved_bytes(lambda: compiled(x))
    assert size < 1024, f"no mask saved (saved {count} tensors, {size} bytes)"


def test_in_place_dropout_counts_as_torchs_in_place_write():
    """An in-place dropout of a tensor autograd saved for another op is
    refused at backward, as x.mul_() is (the library's write alone would
    not move the version counter: backward read the dropped values)."""
    w = torch.ones(8, requires_grad=True)
    x = torch.arange(1.0, 9.0)
    y = (w * x).sum()
    version = x._version
    rt.dropout(x, 0.5, state=S, inplace=True)
    assert x._version > version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_forward_mode_ad_gives_the_tangents_dropout(dtype):
    import torch.autograd.forward_ad as fwAD
    x = torch.linspace(-1.0, 1.0, 64, dtype=torch.float64).to(dtype)
    tangent = torch.arange(64.0).to(dtype)
    for grad in (False, True):
        with fwAD.dual_level():
            dual = fwAD.make_dual(x.clone().requires_grad_(grad), tangent)
            out = fwAD.unpack_dual(rt.dropout(dual, 0.25, state=S))
        assert torch.equal(bits(out.primal.detach()), bits(rt.dropout(x, 0.25, state=S)))
        assert out.tangent is not None and torch.equal(bits(out.tangent), bits(rt.dropout(tangent, 0.25, state=S)))


def test_threads_drawing_from_one_tracker_never_draw_the_same_mask():
    """One draw at a time per tracker (_kernels.reserved): a dropout reads
    the state, fills and moves it under the tracker's lock."""
    import threading
    tracker = rngtrk.Tracker()
    tracker.manual_seed(5)
    x = torch.ones(1 << 18)
    masks = []

    def work():
        for _ in range(10):
            masks.append(rt.dropout(x, 0.5, tracker=tracker).nonzero().numpy().tobytes())

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(masks)) == len(masks) == 40
    assert tracker.active_state().offset == 40 * rngtrk.offset_increment(1 << 18, dist="bernoulli", dtype="u8")
