# SPDX-License-Identifier: Apache-2.0
"""The shared vectors of tests/vectors/rngtrk_vectors.txt, through Python."""
import struct

import numpy

import rngtrk
from rngtrk import PhiloxState

from conftest import vector_path


def records(kind):
    with open(vector_path("rngtrk_vectors.txt")) as f:
        for line in f:
            fields = line.split()
            if fields and fields[0] == kind:
                yield fields[1:]


def test_philox_vectors():
    cases = list(records("philox"))
    assert len(cases) >= 64
    for fields in cases:
        words = [int(w, 16) for w in fields]
        assert rngtrk.philox4x32_10(words[0:4], words[4:6]) == tuple(words[6:10])


def test_u32_stream_vectors_whole_and_sliced():
    cases = list(records("u32"))
    assert len(cases) >= 16
    for fields in cases:
        seed, offset, first, count = map(int, fields[:4])
        expected = numpy.array([int(w, 16) for w in fields[4:]], dtype=numpy.uint32)
        state = PhiloxState(seed, offset)
        assert numpy.array_equal(rngtrk.random_u32(state, count, first), expected)
        assert numpy.array_equal(rngtrk.random_u32(state.to_bytes(), count, first), expected)
        for cut in range(count + 1):  # any slice equals the same slice of the whole
            head = rngtrk.random_u32(state, cut, first)
            tail = rngtrk.random_u32(state, count - cut, first + cut)
            assert numpy.array_equal(numpy.concatenate([head, tail]), expected)


def test_f32_stream_vectors():
    cases = list(records("f32"))
    assert len(cases) >= 16
    for fields in cases:
        seed, offset, first, count = map(int, fields[:4])
        expected_bits = [int(b, 16) for b in fields[4:]]
        values = rngtrk.uniform_f32(PhiloxState(seed, offset), count, first)
        assert values.dtype == numpy.float32
        assert list(values.view(numpy.uint32)) == expected_bits
        assert all(0.0 <= v < 1.0 for v in values)
        # uniform_f32 is (w & 0xFFFFFF) * 2^-24 of the u32 stream.
        words = rngtrk.random_u32(PhiloxState(seed, offset), count, first)
        assert [struct.unpack("<I", struct.pack("<f", (w & 0xFFFFFF) / 16777216.0))[0]
                for w in words.tolist()] == expected_bits
