# SPDX-License-Identifier: Apache-2.0
"""Generation into numpy arrays: in place, checked, and advancing the tracker."""
import numpy
import pytest

import rngtrk
from rngtrk import PhiloxState

STATE = PhiloxState(42, 8)


def test_out_is_filled_in_place_without_a_copy():
    out = numpy.zeros(1000, dtype=numpy.uint32)
    address = out.ctypes.data
    result = rngtrk.random_u32(STATE, 1000, out=out)
    assert result is out and out.ctypes.data == address
    assert numpy.array_equal(out, rngtrk.random_u32(STATE, 1000))
    assert numpy.count_nonzero(out) > 990


def test_out_may_have_any_shape_when_c_contiguous():
    out = numpy.empty((10, 3, 7), dtype=numpy.float32)
    rngtrk.uniform_f32(STATE, out.size, first=5, out=out)
    assert numpy.array_equal(out.ravel(), rngtrk.uniform_f32(STATE, 210, first=5))
    big = numpy.empty((4, 8), dtype=numpy.uint32)
    rngtrk.random_u32(STATE, 8, out=big[1])  # a contiguous row of a larger array
    assert numpy.array_equal(big[1], rngtrk.random_u32(STATE, 8))


@pytest.mark.parametrize("out, error, words", [
    (numpy.empty(4, dtype=numpy.int32), TypeError, "dtype uint32"),
    (numpy.empty(4, dtype=numpy.float32), TypeError, "dtype uint32"),
    (numpy.empty(4, dtype=">u4"), TypeError, "native byte order"),
    (numpy.empty(8, dtype=numpy.uint32)[::2], rngtrk.InvalidArgumentError, "C-contiguous"),
    (numpy.empty((4, 4), dtype=numpy.uint32).T[0], rngtrk.InvalidArgumentError, "C-contiguous"),
    (numpy.empty(5, dtype=numpy.uint32), rngtrk.InvalidArgumentError, "5 elements but count is 4"),
    ([0, 0, 0, 0], TypeError, "numpy array or a CPU tensor"),
    (bytearray(16), TypeError, "numpy array or a CPU tensor"),
])
def test_bad_out_arrays_are_refused_clearly(out, error, words):
    with pytest.raises(error, match=words):
        rngtrk.random_u32(STATE, 4, out=out)


def test_read_only_out_is_refused():
    out = numpy.zeros(4, dtype=numpy.uint32)
    out.flags.writeable = False
    with pytest.raises(rngtrk.InvalidArgumentError, match="read-only"):
        rngtrk.random_u32(STATE, 4, out=out)
    assert not out.any()


def test_float_out_must_be_float32():
    with pytest.raises(TypeError, match="float32"):
        rngtrk.uniform_f32(STATE, 4, out=numpy.empty(4, dtype=numpy.float64))


def test_stream_errors():
    with pytest.raises(rngtrk.InvalidArgumentError, match="multiple of 4"):
        rngtrk.random_u32(PhiloxState(1, 2), 4)
    with pytest.raises(rngtrk.RngtrkOverflowError):
        rngtrk.random_u32(STATE, 2, first=(1 << 64) - 1)
    assert rngtrk.random_u32(STATE, 1, first=(1 << 64) - 1).shape == (1,)  # the last index
    with pytest.raises(rngtrk.InvalidArgumentError):
        rngtrk.random_u32(STATE, -1)
    with pytest.raises(rngtrk.InvalidArgumentError):
        rngtrk.uniform_f32(STATE, 1, first=-1)
    with pytest.raises(TypeError):
        rngtrk.random_u32(STATE, 2.0)
    with pytest.raises(TypeError):
        rngtrk.random_u32((42, 8), 2)


def test_zero_elements():
    assert rngtrk.random_u32(STATE, 0).shape == (0,)
    assert rngtrk.uniform_f32(STATE, 0, out=numpy.empty(0, dtype=numpy.float32)).shape == (0,)


def test_philox_argument_checks():
    with pytest.raises(rngtrk.InvalidArgumentError):
        rngtrk.philox4x32_10([0, 0, 0], [0, 0])
    with pytest.raises(rngtrk.InvalidArgumentError):
        rngtrk.philox4x32_10([0, 0, 0, 1 << 32], [0, 0])


def test_tracker_draws_come_from_the_active_state_and_advance_it(tracker):
    tracker.manual_seed(7)
    tracker.add("model-parallel-rng", 2725)
    with tracker.fork():
        first = tracker.random_u32(10)
        second = tracker.uniform_f32(3)
        assert tracker.active_state() == PhiloxState(2725, 16)
    assert numpy.array_equal(first, rngtrk.random_u32(PhiloxState(2725, 0), 10))
    assert numpy.array_equal(second, rngtrk.uniform_f32(PhiloxState(2725, 12), 3))
    out = numpy.empty((2, 2), dtype=numpy.float32)
    assert tracker.uniform_f32(4, out=out) is out
    assert tracker.active_state() == PhiloxState(7, 4)
    assert numpy.array_equal(out.ravel(), rngtrk.uniform_f32(PhiloxState(7, 0), 4))


def test_a_bad_out_does_not_move_the_tracker(tracker):
    tracker.manual_seed(7)
    with pytest.raises(TypeError):
        tracker.random_u32(4, out=numpy.empty(4, dtype=numpy.int64))
    with pytest.raises(rngtrk.InvalidArgumentError):
        tracker.uniform_f32(4, out=numpy.empty(3, dtype=numpy.float32))
    assert tracker.active_state() == PhiloxState(7, 0)


def test_large_draws_match_their_slices():
    whole = rngtrk.random_u32(STATE, 1 << 20)
    assert numpy.array_equal(whole[123457:123457 + 999], rngtrk.random_u32(STATE, 999, first=123457))
    # Roughly uniform: each of 16 buckets holds 1/16 of the words, within 1%.
    counts = numpy.bincount(whole >> 28, minlength=16)
    assert numpy.all(numpy.abs(counts / len(whole) - 1 / 16) < 0.01)
