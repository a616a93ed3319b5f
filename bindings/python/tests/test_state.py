# SPDX-License-Identifier: Apache-2.0
"""PhiloxState: an immutable value with the 16-byte layout of torch.cuda.get_rng_state()."""
import pickle

import numpy
import pytest

import rngtrk
from rngtrk import PhiloxState

from conftest import vector_path

M64 = (1 << 64) - 1


def state_vectors():
    with open(vector_path("rngtrk_vectors.txt")) as f:
        for line in f:
            fields = line.split()
            if fields and fields[0] == "state":
                yield int(fields[1]), int(fields[2]), bytes.fromhex(fields[3])


def test_shared_vectors_encode_and_decode():
    vectors = list(state_vectors())
    assert len(vectors) >= 8
    for seed, offset, raw in vectors:
        assert PhiloxState(seed, offset).to_bytes() == raw
        assert PhiloxState.from_bytes(raw) == PhiloxState(seed, offset)


def test_layout_is_seed_then_offset_little_endian():
    raw = PhiloxState(0x0102030405060708, 0x1112131415161718).to_bytes()
    assert raw == bytes.fromhex("0807060504030201" "1817161514131211")


@pytest.mark.parametrize("make", [bytes, bytearray, memoryview,
                                  lambda b: numpy.frombuffer(b, dtype=numpy.uint8),
                                  lambda b: numpy.frombuffer(b, dtype=numpy.uint8).reshape(4, 4)])
def test_from_bytes_accepts_every_bytes_like_form(make):
    raw = PhiloxState(123456789, 4096).to_bytes()
    assert PhiloxState.from_bytes(make(raw)) == PhiloxState(123456789, 4096)


def test_from_bytes_accepts_non_contiguous_numpy_views_and_array_likes():
    raw = PhiloxState(5, 8).to_bytes()
    doubled = numpy.frombuffer(bytes(b for pair in zip(raw, raw) for b in pair), dtype=numpy.uint8)
    assert PhiloxState.from_bytes(doubled[::2]) == PhiloxState(5, 8)

    class TensorLike:  # what a CPU torch.ByteTensor offers
        def __array__(self, dtype=None):
            return numpy.frombuffer(raw, dtype=numpy.uint8)

    assert PhiloxState.from_bytes(TensorLike()) == PhiloxState(5, 8)


@pytest.mark.parametrize("bad, error", [
    (b"\0" * 15, rngtrk.InvalidArgumentError), (b"\0" * 17, rngtrk.InvalidArgumentError),
    (numpy.zeros(16, dtype=numpy.int64), rngtrk.InvalidArgumentError),
    (numpy.zeros(15, dtype=numpy.uint8), rngtrk.InvalidArgumentError),
    (memoryview(numpy.zeros(4, dtype=numpy.uint32)), rngtrk.InvalidArgumentError),
    ("0" * 16, TypeError), (16, TypeError), (None, TypeError),
])
def test_from_bytes_refuses_anything_else(bad, error):
    with pytest.raises(error):
        PhiloxState.from_bytes(bad)


def test_fields_are_checked():
    assert PhiloxState(M64, M64) == PhiloxState(M64, M64)
    assert PhiloxState(7) == PhiloxState(7, 0)
    for seed, offset in [(-1, 0), (0, -1), (1 << 64, 0), (0, 1 << 64)]:
        with pytest.raises(rngtrk.InvalidArgumentError):
            PhiloxState(seed, offset)
    for bad in [1.5, "3", None, True]:
        with pytest.raises(TypeError):
            PhiloxState(bad, 0)
    assert PhiloxState(numpy.uint64(M64), numpy.int32(4)) == PhiloxState(M64, 4)


def test_immutable_hashable_and_picklable():
    state = PhiloxState(1, 4)
    with pytest.raises(AttributeError):
        state.seed = 2
    with pytest.raises(AttributeError):
        state.offset = 8
    with pytest.raises(AttributeError):
        del state.seed
    assert state.seed == 1 and state.offset == 4
    assert {PhiloxState(1, 4): "x"}[state] == "x"
    assert state != PhiloxState(1, 8)
    seed, offset = state  # a named tuple
    assert (seed, offset) == (1, 4) == state
    assert pickle.loads(pickle.dumps(state)) == state
    assert repr(state) == "PhiloxState(seed=1, offset=4)"


def test_advanced_is_the_trackers_advance_and_refuses_as_it_does():
    import random
    rng = random.Random(5)
    for i in range(100):
        state = rngtrk.PhiloxState(rng.getrandbits(64), rng.getrandbits(50) * 4)
        increment = i if i < 12 else rng.getrandbits(40)
        t = rngtrk.Tracker()
        t.set_default(state)
        t.advance(increment)
        assert state.advanced(increment) == t.get_default()
    top = rngtrk.PhiloxState(1, 2**64 - 8)
    assert top.advanced(4).offset == 2**64 - 4
    with pytest.raises(rngtrk.RngtrkOverflowError):
        top.advanced(5)
    with pytest.raises(rngtrk.InvalidArgumentError):
        rngtrk.PhiloxState(1, 6).advanced(4)
