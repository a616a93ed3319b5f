# SPDX-License-Identifier: Apache-2.0
"""The parts of the C API Python reached last: fold_in, a tracker's origin,
dropout, and outputs that are not numpy arrays (torch CPU tensors through
DLPack, f16 and bf16 included).  The CUDA calls are checked here for what
they refuse without a device; tests/test_torch.py runs them on a GPU."""
import numpy
import pytest

import rngtrk
from rngtrk import PhiloxState

STATE = PhiloxState(0x9E3779B97F4A7C15, 64)


def test_fold_in_is_philox_of_the_offset_plus_d():
    for d in (0, 1, 7, 2**40 + 3):
        counter = STATE.offset // 4 + d
        words = rngtrk.philox4x32_10((counter & 0xFFFFFFFF, counter >> 32, 0, 0),
                                     (STATE.seed & 0xFFFFFFFF, STATE.seed >> 32))
        want = PhiloxState(words[0] | words[1] << 32, words[2] | words[3] << 32)
        assert rngtrk.fold_in(STATE, d) == want
    with pytest.raises(rngtrk.InvalidArgumentError):
        rngtrk.fold_in(STATE, -1)


def test_origin_of_a_seeded_tracker_and_after_reset(tracker):
    assert tracker.origin() is None
    tracker.seed_rank("megatron", 1234, tp=3, pp=1, dp=2, ep=1, etp=0, dp_random_init=True)
    assert tracker.origin() == rngtrk.Origin("megatron", 1234, ("dp-random-init",), 3, 1, 2, 1, 0, 0, 0, 0, 0)
    with rngtrk.Tracker() as other:
        other.load(tracker.save())
        assert other.origin() == tracker.origin()
    tracker.reset()
    assert tracker.origin() is None


def test_dropout_keeps_where_the_bernoulli_mask_keeps(tracker):
    x = numpy.arange(1, 10001, dtype=numpy.float32)
    mask = rngtrk.sample(STATE, x.size, first=5, dist="bernoulli", dtype="u8", p=0.8)
    out = rngtrk.dropout(STATE, x, p=0.8, first=5)
    assert numpy.array_equal(out, numpy.where(mask == 1, x * numpy.float32(1 / 0.8), 0).astype(numpy.float32))
    # In place, and on the tracker (which advances as a draw of x.size would).
    y = x.copy()
    assert rngtrk.dropout(STATE, y, out=y, p=0.8, first=5) is y and numpy.array_equal(y, out)
    tracker.add("a", 5)
    with tracker.fork("a"):
        before = tracker.active_state()
        got = tracker.dropout(x, p=0.5)
        after = tracker.active_state()
    assert numpy.array_equal(got, rngtrk.dropout(before, x, p=0.5))
    assert after.offset - before.offset == rngtrk.offset_increment(x.size, dist="bernoulli", dtype="u8", p=0.5)
    with pytest.raises(rngtrk.InvalidArgumentError, match="dropout takes f32, f16 or bf16 data, not dtype f64"):
        rngtrk.dropout(STATE, x.astype(numpy.float64), p=0.5)
    with pytest.raises(rngtrk.InvalidArgumentError, match="bernoulli needs"):
        rngtrk.dropout(STATE, x, p=1.5)


def test_dtype_sizes():
    assert [rngtrk.dtype_size(d) for d in ("u8", "u32", "u64", "f16", "bf16", "f32", "f64")] == [1, 4, 8, 2, 2, 4, 8]


def test_cuda_calls_refuse_host_memory_before_anything_runs():
    out = numpy.empty(8, dtype=numpy.float32)
    with pytest.raises(TypeError, match="host memory"):
        rngtrk.cuda_sample(STATE, out)
    with pytest.raises(TypeError, match="CUDA array"):
        rngtrk.cuda_sample(STATE, [0.0] * 8)
    with pytest.raises(TypeError, match="required"):
        rngtrk.cuda_sample(STATE, None)
    if not rngtrk.cuda_available():
        assert isinstance(rngtrk.cuda_available(), bool)


# -- torch CPU tensors (Debian's python3-torch) ----------------------------------

torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian: python3-torch): tensor outputs not run")

TORCH_DTYPES = {"u8": torch.uint8, "f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
                "f64": torch.float64}


@pytest.mark.parametrize("layout", ["stateless", "nvfuser", "torch-eager-cuda"])
@pytest.mark.parametrize("dist, dtype", [("uniform", "f32"), ("uniform", "f64"), ("uniform", "f16"),
                                         ("uniform", "bf16"), ("normal", "f32"), ("bernoulli", "u8")])
def test_a_torch_cpu_tensor_is_filled_in_place_with_the_numpy_bits(layout, dist, dtype):
    n = 1037
    tensor = torch.empty(n, dtype=TORCH_DTYPES[dtype])
    pointer = tensor.data_ptr()
    got = rngtrk.sample(STATE, n, first=3, out=tensor, layout=layout, dist=dist)  # dtype from the tensor
    assert got is tensor and tensor.data_ptr() == pointer
    want = rngtrk.sample(STATE, n, first=3, layout=layout, dist=dist, dtype=dtype)
    bits = tensor.view(torch.int16) if dtype == "bf16" else tensor
    assert bits.numpy().tobytes() == want.tobytes()


def test_slices_tracker_draws_and_the_stream_functions_take_tensors(tracker):
    box = torch.empty(3, 5, dtype=torch.float32)
    rngtrk.sample_slice(STATE, (8, 9), (2, 4), (3, 5), out=box, dist="normal")
    assert numpy.array_equal(box.numpy(), rngtrk.sample_slice(STATE, (8, 9), (2, 4), (3, 5), dist="normal"))
    words = torch.empty(64, dtype=torch.int32).view(torch.uint8)  # 256 bytes, then as u8
    assert rngtrk.sample(STATE, 256, out=words, dist="bernoulli", p=0.3) is words
    floats = torch.empty(100)
    assert numpy.array_equal(rngtrk.uniform_f32(STATE, 100, out=floats).numpy(), rngtrk.uniform_f32(STATE, 100))
    tracker.add("a", 9)
    with tracker.fork("a"):
        drawn_from = tracker.active_state()
        tracker.sample(100, out=floats)
    assert numpy.array_equal(floats.numpy(), rngtrk.sample(drawn_from, 100))
    x = torch.arange(1, 101, dtype=torch.float32)
    y = torch.empty_like(x)
    rngtrk.dropout(STATE, x, out=y, p=0.9)
    assert numpy.array_equal(y.numpy(), rngtrk.dropout(STATE, x.numpy(), p=0.9))


@pytest.mark.parametrize("make_out, error, words", [
    (lambda: torch.empty(16, 16)[:, 0], rngtrk.InvalidArgumentError, "C-contiguous"),
    (lambda: torch.empty(16).t().expand(2, 16), rngtrk.InvalidArgumentError, "C-contiguous"),
    (lambda: torch.empty(16, requires_grad=True), rngtrk.InvalidArgumentError, "requires grad"),
    (lambda: torch.empty(16, dtype=torch.float64), TypeError, "f64, but the call makes f32"),
    (lambda: torch.empty(15), rngtrk.InvalidArgumentError, "15 elements but count is 16"),
    (lambda: torch.empty(16, dtype=torch.complex64), TypeError, "none of rngtrk's dtypes"),
])
def test_bad_tensors_are_refused_naming_the_problem(make_out, error, words):
    with pytest.raises(error, match=words):
        rngtrk.sample(STATE, 16, dtype="f32", out=make_out())


def test_a_cpu_tensor_is_not_device_memory():
    with pytest.raises(TypeError, match="host memory"):
        rngtrk.cuda_sample(STATE, torch.empty(8))
