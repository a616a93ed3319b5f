# SPDX-License-Identifier: Apache-2.0
"""rngtrk.torch against real PyTorch on the CPU (Debian's python3-torch,
installed by tools/install-deps.sh): the Megatron-LM / TransformerEngine
drop-in, model_parallel_cuda_manual_seed, checkpoints through torch.save,
the random ops and their sharded forms, and bad input (slapo's, DTensor's
and Thunder's interfaces: test_torch_slapo.py, test_torch_dtensor.py,
test_torch_thunder.py).
GPU behaviour is in test_torch.py."""
import io

import numpy
import pytest

import rngtrk

torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
import rngtrk.torch as rt  # noqa: E402  (after the skip)

S = rngtrk.PhiloxState(20261123, 8)


pytestmark = pytest.mark.usefixtures("fresh_torch_trackers")  # each test starts with no process tracker


def snapshot(tracker):
    inner = tracker.tracker if isinstance(tracker, rt.CudaRNGStatesTracker) else tracker
    return inner.save(), inner.active_state(), inner.fork_depth


# -- the drop-in tracker -------------------------------------------------------------


def test_the_upstream_interface_on_cpu_only_torch():
    t = rt.CudaRNGStatesTracker()
    assert not t.is_initialized() and t.get_states() == {}
    t.add("model-parallel-rng", 3952)
    with pytest.raises(rngtrk.DuplicateSeedError):
        t.add("other", 3952)
    with pytest.raises(rngtrk.DuplicateNameError):
        t.add("model-parallel-rng", 1)
    assert t.is_initialized()
    states = t.get_states()
    assert list(states) == ["model-parallel-rng"] and states["model-parallel-rng"].dtype == torch.uint8
    assert rt.state_of(states["model-parallel-rng"]) == rngtrk.PhiloxState(3952, 0)
    # set_states takes tensors, bytes and PhiloxStates, all or nothing (other values: test_torch_kept_values.py).
    t.set_states({"a": rt.state_tensor(rngtrk.PhiloxState(5, 4)), "b": rngtrk.PhiloxState(6, 0).to_bytes()})
    assert {k: rt.state_of(v) for k, v in t.get_states().items()} == {"a": (5, 4), "b": (6, 0)}
    before = snapshot(t)
    with pytest.raises(rngtrk.DuplicateSeedError):
        t.set_states({"a": rngtrk.PhiloxState(7, 0), "b": rngtrk.PhiloxState(7, 0)})
    assert snapshot(t) == before
    t.reset()
    assert not t.is_initialized()
    assert rt.get_cuda_rng_tracker() is rt.get_rng_state_tracker()
    assert not rt.CudaRNGStatesTracker().graph_safe


def test_a_fork_on_the_cpu_makes_the_named_state_active_for_rngtrks_ops():
    t = rt.get_rng_state_tracker()
    t.add("model-parallel-rng", 3952)
    with t.fork():
        inside = rt.rand(100)
    want = rngtrk.sample(rngtrk.PhiloxState(3952, 0), 100)
    assert numpy.array_equal(inside.numpy(), want)
    assert t.tracker.get_state("model-parallel-rng") == (3952, 100)
    assert t.tracker.active_state() == (0, 0), "the default state did not move"
    outside = rt.rand(4)
    assert numpy.array_equal(outside.numpy(), rngtrk.sample(rngtrk.PhiloxState(0, 0), 4))
    with pytest.raises(rngtrk.UnknownNameError):
        with t.fork("no-such-state"):
            pass


def test_model_parallel_cuda_manual_seed_uses_megatrons_formulas():
    rt.model_parallel_cuda_manual_seed(1234, tp_rank=3, ep_rank=2, etp_rank=1)
    seeds = {k: rt.state_of(v).seed for k, v in rt.get_cuda_rng_tracker().get_states().items()}
    assert seeds == {"data-parallel-rng": 1234, "model-parallel-rng": 1234 + 2718 + 3,
                     "expert-parallel-rng": 1234 + 1024 + 100 * 2 + 1}
    assert rt.get_cuda_rng_tracker().tracker.active_state() == (1234, 0), "the default takes the data-parallel seed"
    with pytest.raises(rngtrk.InvalidArgumentError, match="tp_rank"):
        rt.model_parallel_cuda_manual_seed(1)


def test_state_dict_round_trips_through_torch_save_and_is_a_c_checkpoint():
    rt.model_parallel_cuda_manual_seed(1234, tp_rank=1, ep_rank=0, etp_rank=0)
    t = rt.get_cuda_rng_tracker()
    with t.fork():
        rt.rand(1000)
    buffer = io.BytesIO()
    torch.save(t.state_dict(), buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)
    other = rt.CudaRNGStatesTracker()
    other.load_state_dict(loaded)
    assert {k: rt.state_of(v) for k, v in other.get_states().items()} == \
        {k: rt.state_of(v) for k, v in t.get_states().items()}
    # The bytes are an rngtrk checkpoint: the C describer reads them.
    assert '"model-parallel-rng"' in rngtrk.checkpoint_to_json(loaded[rt.CHECKPOINT_KEY])
    # Another rank's checkpoint is refused unless asked, and changes nothing.
    rt.model_parallel_cuda_manual_seed(1234, tp_rank=0, ep_rank=0, etp_rank=0, force_reset_rng=True)
    mine = rt.get_cuda_rng_tracker()
    before = snapshot(mine)
    with pytest.raises(rngtrk.WrongRankError):
        mine.load_state_dict(loaded)
    with pytest.raises(rngtrk.CorruptCheckpointError):
        mine.load_state_dict({rt.CHECKPOINT_KEY: loaded[rt.CHECKPOINT_KEY][:-1]})
    with pytest.raises(rngtrk.InvalidArgumentError, match="rngtrk_checkpoint"):
        mine.load_state_dict({"something": b""})
    assert snapshot(mine) == before
    mine.load_state_dict(loaded, any_rank=True)
    assert mine.tracker.get_state("model-parallel-rng").seed == 1234 + 2718 + 1


# -- random ops ----------------------------------------------------------------------

LAYOUTS = ["stateless", "nvfuser", "torch-eager-cuda"]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype, name", [(torch.float32, "f32"), (torch.float64, "f64"), (torch.float16, "f16"),
                                         (torch.bfloat16, "bf16")])
def test_rand_is_the_librarys_uniform_with_an_explicit_state(layout, dtype, name):
    x = rt.rand(7, 9, state=S, dtype=dtype, layout=layout, low=-2.0, high=3.0)
    assert x.shape == (7, 9) and x.dtype == dtype
    want = rngtrk.sample(S, 63, layout=layout, dist="uniform", dtype=name, low=-2.0, high=3.0)
    got = x.view(torch.int16).numpy() if dtype == torch.bfloat16 else x.numpy()
    assert numpy.array_equal(got.reshape(-1).view(want.dtype), want)


def test_randn_bernoulli_and_like_forms():
    assert numpy.array_equal(rt.randn(50, state=S, dtype=torch.float64).numpy(),
                             rngtrk.sample(S, 50, dist="normal", dtype="f64"))
    half = rt.randn(50, state=S, dtype=torch.float16)
    assert torch.equal(half, rt.randn(50, state=S).to(torch.float16)), "f16 randn is the f32 draw rounded"
    mask = rt.bernoulli(4, 8, p=0.25, state=S)
    assert mask.dtype == torch.uint8 and numpy.array_equal(mask.numpy().reshape(-1),
                                                            rngtrk.sample(S, 32, dist="bernoulli", dtype="u8", p=0.25))
    assert rt.bernoulli(32, p=0.25, state=S, dtype=torch.bool).dtype == torch.bool
    like = torch.empty(3, 5, dtype=torch.float64)
    r = rt.rand_like(like, state=S)
    assert r.shape == like.shape and r.dtype == torch.float64
    assert torch.equal(rt.randn_like(like, state=S), rt.randn(3, 5, state=S, dtype=torch.float64))
    assert rt.bernoulli_like(like, 0.5, state=S).dtype == torch.float64


def test_tracker_draws_advance_by_exactly_the_increment_and_only_on_success():
    t = rt.get_rng_state_tracker()
    t.add("model-parallel-rng", 77)
    with t.fork():
        rt.rand(10, layout="torch-eager-cuda", sm_count=2)
        rt.randn(3, 3, dtype=torch.float64)
        rt.bernoulli(5, p=0.5)
    want = rngtrk.offset_increment(10, layout="torch-eager-cuda", dist="uniform", dtype="f32", sm_count=2)
    want += rngtrk.offset_increment(9, dist="normal", dtype="f64") + rngtrk.offset_increment(5, dist="bernoulli",
                                                                                          dtype="u8")
    assert t.tracker.get_state("model-parallel-rng") == (77, want)
    # A plain rngtrk.Tracker works as a tracker too.
    plain = rngtrk.Tracker()
    plain.manual_seed(9)
    a = rt.rand(6, tracker=plain)
    assert numpy.array_equal(a.numpy(), rngtrk.sample(rngtrk.PhiloxState(9, 0), 6))
    assert plain.active_state() == (9, 8)


def test_bad_input_raises_one_clear_error_and_leaves_the_tracker_unchanged():
    t = rt.get_rng_state_tracker()
    t.add("model-parallel-rng", 77)
    before = snapshot(t)
    x = torch.ones(8)
    cases = [
        (lambda: rt.dropout(x, p=1.5), rngtrk.InvalidArgumentError, "p must be"),
        (lambda: rt.dropout(x, p=-0.1), rngtrk.InvalidArgumentError, "p must be"),
        (lambda: rt.bernoulli(4, p=2), rngtrk.InvalidArgumentError, "p must be"),
        (lambda: rt.dropout(torch.ones(4, dtype=torch.int32), 0.5), TypeError, "floating-point"),
        (lambda: rt.dropout(torch.ones(4, requires_grad=True), 0.5, inplace=True), rngtrk.InvalidArgumentError,
         "requires grad"),
        (lambda: rt.rand(4, dtype=torch.int64), TypeError, "makes"),
        (lambda: rt.randn(4, dtype=torch.uint8), TypeError, "makes"),
        (lambda: rt.rand(-1), rngtrk.InvalidArgumentError, "non-negative"),
        (lambda: rt.rand(4, low=2.0, high=1.0), rngtrk.InvalidArgumentError, "low"),
        (lambda: rt.rand(4, wrong=1), TypeError, "unexpected keyword"),
        (lambda: rt.rand_slice((2 ** 32, 2 ** 32), (0, 0), (1, 1)), rngtrk.RngtrkOverflowError, "64 bits"),
        (lambda: rt.rand_slice((4, 4), (3, 0), (2, 4)), rngtrk.InvalidArgumentError, "box"),
        (lambda: rt.rand_slice((4, 4), (0,), (2, 4)), rngtrk.InvalidArgumentError, "dimensions"),
        (lambda: rt.dropout_slice(torch.ones(2, 3), (4, 4), (3, 3), 0.5), rngtrk.InvalidArgumentError, "box"),
        (lambda: rt.rand(4, device="meta"), TypeError, "CPU and CUDA"),
    ]
    with t.fork():
        inside = snapshot(t)
        for call, error, words in cases:
            with pytest.raises(error, match=words):
                call()
            assert snapshot(t) == inside, words
    assert snapshot(t) == before


def test_dropout_has_torchs_semantics_with_rngtrks_mask():
    x = torch.arange(1.0, 1001.0, requires_grad=True)
    y = rt.dropout(x, 0.2, state=S)
    mask = rngtrk.sample(S, 1000, dist="bernoulli", dtype="u8", p=0.8)
    scale = torch.tensor(1.0 / 0.8, dtype=torch.float32)
    assert torch.equal(y.detach(), x.detach() * torch.from_numpy(mask).float() * scale)
    y.sum().backward()
    assert torch.equal(x.grad, torch.from_numpy(mask).float() * scale), "the gradient is the scaled mask"
    assert rt.dropout(x, 0.2, training=False) is x
    assert rt.dropout(x, 0.0) is x
    assert torch.equal(rt.dropout(x.detach(), 1.0), torch.zeros(1000))
    z = torch.ones(16, dtype=torch.float64)
    out = rt.dropout(z, 0.5, state=S, inplace=True)
    assert out is z and set(z.tolist()) <= {0.0, 2.0}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_sharded_ops_give_the_box_of_the_unsharded_tensor(layout):
    shape = (6, 10)
    whole_u = rt.rand(shape, state=S, layout=layout, sm_count=2, max_threads_per_sm=256)
    whole_n = rt.randn(shape, state=S, layout=layout, sm_count=2, max_threads_per_sm=256)
    whole_b = rt.bernoulli(shape, p=0.7, state=S, layout=layout, sm_count=2, max_threads_per_sm=256)
    x = torch.arange(60.0).reshape(shape)
    whole_d = rt.dropout(x, 0.3, state=S, layout=layout, sm_count=2, max_threads_per_sm=256)
    for start, local in [((0, 0), (6, 10)), ((2, 5), (3, 4)), ((5, 9), (1, 1)), ((1, 0), (2, 10))]:
        sl = tuple(slice(a, a + n) for a, n in zip(start, local))
        geo = dict(state=S, layout=layout, sm_count=2, max_threads_per_sm=256)
        assert torch.equal(rt.rand_slice(shape, start, local, **geo), whole_u[sl])
        assert torch.equal(rt.randn_slice(shape, start, local, **geo), whole_n[sl])
        assert torch.equal(rt.bernoulli_slice(shape, start, local, p=0.7, **geo), whole_b[sl])
        assert torch.equal(rt.dropout_slice(x[sl].clone(), shape, start, 0.3, **geo), whole_d[sl])


def test_every_rank_advances_by_the_whole_tensor():
    trackers = []
    for rank in range(3):
        t = rngtrk.Tracker()
        t.manual_seed(5)
        rt.rand_slice((9, 4), (3 * rank, 0), (3, 4), tracker=t)
        trackers.append(t.active_state())
    assert trackers == [(5, 36)] * 3

# -- activation checkpointing proven by the ledger --------------------------------------


def _block(x, weight):
    # As in Megatron-LM, the fork is inside the checkpointed function, so the
    # recompute runs in it too.
    with rt.get_rng_state_tracker().fork():
        return rt.dropout(torch.tanh(x @ weight), 0.3) * 2


def test_checkpointed_recompute_replays_exactly_and_gives_the_same_gradients():
    from rngtrk.torch.checkpoint import checkpoint
    t = rt.get_rng_state_tracker()
    t.add("model-parallel-rng", 3952)
    t.tracker.set_ledger("raise")
    x0 = torch.randn(8, 16)
    w0 = torch.randn(16, 16)
    results = []
    for use_checkpoint in (False, True):
        t.tracker.set_ledger("raise")  # a fresh ledger and the same starting states
        t.set_states({"model-parallel-rng": rngtrk.PhiloxState(3952, 0)})
        t.tracker.set_default(rngtrk.PhiloxState(0, 0))
        x, w = x0.clone().requires_grad_(), w0.clone().requires_grad_()
        for step in range(3):
            y = checkpoint(_block, x, w) if use_checkpoint else _block(x, w)
            y.sum().backward()
        results.append((x.grad.clone(), w.grad.clone(), t.tracker.get_state("model-parallel-rng")))
    assert torch.equal(results[0][0], results[1][0]) and torch.equal(results[0][1], results[1][1])
    assert results[0][2] == results[1][2], "the recompute left the states where the forward did"
    # A fork around the checkpoint call (Megatron's sequence-parallel block
    # does that) is no longer open when backward runs: the recompute enters
    # it again, so it draws from the same stream, and the ledger agrees.
    def block(a):
        plain = rt.dropout(a, 0.3)  # from the forked state
        with t.fork():               # the same name again: its one stream goes on
            return plain + rt.dropout(a, 0.5)
    x = torch.full((2000,), 10.0, requires_grad=True)
    with t.fork():
        y = checkpoint(block, x)
    y.sum().backward()  # the ledger ("raise") checks every reservation of the recompute
    # The forward's masks, read off its output (10/0.7, 10/0.5 or both), and
    # the recompute's, read off the gradient (1/0.7, 1/0.5 or both).
    kept_1, kept_2 = torch.zeros(2000, dtype=torch.bool), torch.zeros(2000, dtype=torch.bool)
    for value, first, second in [(10 / 0.7, True, False), (10 / 0.5, False, True), (10 / 0.7 + 10 / 0.5, True, True)]:
        hit = torch.isclose(y.detach(), torch.tensor(value))
        kept_1 |= hit & first
        kept_2 |= hit & second
    assert 0.6 < kept_1.float().mean() < 0.8 and 0.4 < kept_2.float().mean() < 0.6
    assert torch.allclose(x.grad, kept_1.float() / 0.7 + kept_2.float() / 0.5), "the recompute drew the same masks"


def test_checkpoint_takes_non_tensor_arguments_anywhere():
    from rngtrk.torch.checkpoint import checkpoint
    t = rt.get_rng_state_tracker()
    t.tracker.set_ledger("raise")

    def scaled_dropout(scale, x, p, w):
        return rt.dropout(x * w, p) * scale

    x, w = torch.ones(32, requires_grad=True), torch.full((32,), 2.0, requires_grad=True)
    y = checkpoint(scaled_dropout, 3.0, x, 0.25, w)
    y.sum().backward()
    kept = y.detach() != 0
    assert torch.equal(x.grad, kept.float() * 2.0 * 3.0 / 0.75)
    assert torch.equal(w.grad, kept.float() * 1.0 * 3.0 / 0.75)


def test_a_recompute_that_draws_differently_is_caught_in_backward():
    from rngtrk.torch.checkpoint import checkpoint
    t = rt.get_rng_state_tracker()
    t.tracker.set_ledger("raise")
    calls = []

    def flaky(x):
        calls.append(1)
        extra = 4 if len(calls) > 1 else 0  # the recompute draws more: a planted bug
        return rt.dropout(x, 0.5) + rt.rand(x.numel() + extra)[: x.numel()].view_as(x) * 0

    x = torch.ones(64, requires_grad=True)
    y = checkpoint(flaky, x)
    with pytest.raises(rngtrk.ReplayMismatchError, match="expected"):
        y.sum().backward()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("layout", ["stateless", "nvfuser", "torch-eager-cuda", "triton"])
def test_half_randn_is_the_f32_draw_rounded_as_torch_rounds(layout, dtype):
    """The library's normal f16/bf16, drawn directly, equal the f32 draw
    converted by torch (what rngtrk.torch.randn gave before they existed)."""
    got = rt.randn(3, 1001, state=S, dtype=dtype, layout=layout)
    assert got.dtype == dtype
    assert torch.equal(got, rt.randn(3, 1001, state=S, layout=layout).to(dtype))
    box = rt.randn_slice((6, 40), (2, 8), (3, 20), state=S, dtype=dtype, layout=layout)
    assert torch.equal(box, rt.randn(6, 40, state=S, layout=layout).to(dtype)[2:5, 8:28])


def test_a_kind_of_draw_seen_before_draws_the_same_as_the_first_time():
    """Eager calls of a kind seen before skip the checks (_ops._PLANS): the
    process tracker's draws continue its stream exactly, a zero's sign is
    part of the kind, and what the checks refuse stays refused."""
    tracker = rt.get_cuda_rng_tracker()
    tracker.tracker.manual_seed(31)
    state = rngtrk.PhiloxState(31, 0)
    for _ in range(3):
        for draw, dist, params in ((lambda: rt.rand(16), "uniform", {}),
                                   (lambda: rt.randn(2, 3, mean=0.5), "normal", {"mean": 0.5}),
                                   (lambda: rt.bernoulli((5,), p=0.25), "bernoulli", {"p": 0.25})):
            got = draw()
            count = got.numel()
            expected = rngtrk.sample(state, count, dist=dist, dtype="u8" if dist == "bernoulli" else "f32", **params)
            assert numpy.array_equal(got.reshape(-1).numpy(), expected)
            state = state.advanced(rngtrk.offset_increment(count, dist=dist,
                                                           dtype="u8" if dist == "bernoulli" else "f32"))
    assert tracker.tracker.active_state() == state
    positive = rt.randn(64, mean=0.0, std=0.0)
    negative = rt.randn(64, mean=-0.0, std=0.0)
    assert not torch.signbit(positive).any() and torch.signbit(negative).any(), "mean -0.0 is another kind"
    rt.rand(1)
    with pytest.raises(rngtrk.InvalidArgumentError, match="non-negative integers"):
        rt.rand(True)
    rt.bernoulli(4, p=1)
    with pytest.raises(rngtrk.InvalidArgumentError, match="p must be"):
        rt.bernoulli(4, p=True)
    low = torch.tensor(0.25)
    first = rt.rand(8, low=low, high=1.0)
    low.fill_(0.75)
    assert (rt.rand(8, low=low, high=1.0) >= 0.75).all() and (first < 0.75).any(), "a tensor parameter is read"


def test_an_empty_tracker_and_a_state_tensor_are_arguments_like_any_other():
    """`tracker=` a plain Tracker with no named states (len() 0, so falsy)
    draws from it, not from the process tracker; `state=` a 16-byte tensor
    draws from it (a tensor has no truth value)."""
    plain = rngtrk.Tracker()
    plain.manual_seed(12)
    process = rt.get_cuda_rng_tracker().tracker.active_state()
    for draw in (lambda **kw: rt.rand(8, **kw), lambda **kw: rt.randn(8, **kw), lambda **kw: rt.bernoulli(8, **kw)):
        draw()  # the kind of draw is known now
        before = plain.active_state()
        draw(tracker=plain)
        assert plain.active_state() != before, "the empty tracker moved"
        tensor_state = rt.state_tensor(S)
        assert torch.equal(draw(state=tensor_state), draw(state=S))
    assert rt.get_cuda_rng_tracker().tracker.active_state() != process  # (the unkeyed draws above)


def test_a_state_draw_of_a_kind_seen_before_reads_each_state_anew():
    """`state=` draws of a kind seen before skip the checks too (issue 39
    item 6), and a CPU state tensor is read where it lies: each call draws
    from the state it is given (a tensor changed in place, a view at an odd
    address, a strided tensor, a PhiloxState), equal to the library's own
    draw; what state_of refuses stays refused on that path."""
    def library(state, count, dist, **params):
        return rngtrk.sample(state, count, dist=dist, dtype="u8" if dist == "bernoulli" else "f32", **params)

    cases = ((lambda st: rt.rand(16, state=st), "uniform", {}),
             (lambda st: rt.randn(16, state=st, mean=-0.0, std=0.0), "normal", {"mean": -0.0, "std": 0.0}),
             (lambda st: rt.randn(16, state=st), "normal", {}),
             (lambda st: rt.bernoulli(16, p=0.25, state=st), "bernoulli", {"p": 0.25}))
    other = rngtrk.PhiloxState(7, 400)
    for draw, dist, params in cases:
        for _ in range(2):  # the second time, the kind is known
            tensor = rt.state_tensor(S)
            assert numpy.array_equal(draw(tensor).numpy(), library(S, 16, dist, **params))
            tensor.copy_(rt.state_tensor(other))  # the same tensor, another state: read anew
            assert numpy.array_equal(draw(tensor).numpy(), library(other, 16, dist, **params))
            big = torch.zeros(40, dtype=torch.uint8)
            big[3:19] = rt.state_tensor(other)
            assert big[3:19].data_ptr() % 8 != 0
            assert numpy.array_equal(draw(big[3:19]).numpy(), library(other, 16, dist, **params))
            strided = torch.zeros(32, dtype=torch.uint8)
            strided[::2] = rt.state_tensor(S)
            assert not strided[::2].is_contiguous()
            assert numpy.array_equal(draw(strided[::2]).numpy(), library(S, 16, dist, **params))
            assert numpy.array_equal(draw(other).numpy(), library(other, 16, dist, **params))
            with pytest.raises(rngtrk.InvalidArgumentError, match="16 uint8"):
                draw(torch.zeros(16, dtype=torch.int8))
            with pytest.raises(rngtrk.InvalidArgumentError, match="16 uint8"):
                draw(torch.zeros(15, dtype=torch.uint8))
            with pytest.raises(TypeError, match="a state is"):
                draw("not a state")
    negative = rt.randn(64, state=S, mean=-0.0, std=0.0)
    assert torch.signbit(negative).any() and not torch.signbit(rt.randn(64, state=S, mean=0.0, std=0.0)).any()


def test_a_device_that_only_equals_another_is_not_its_kind():
    """False == 0 == 0.0, but only 0 names a device: the seen-before path
    keys devices by str, int and torch.device alone."""
    try:
        rt.rand(4, device=0)  # cuda:0: drawn on a GPU machine, refused here
    except Exception:  # noqa: BLE001  (whichever: no CUDA here)
        pass
    for not_a_device in (False, 0.0):
        with pytest.raises((TypeError, RuntimeError)):
            rt.rand(4, device=not_a_device)
