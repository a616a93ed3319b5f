# SPDX-License-Identifier: Apache-2.0
"""The triton layout against an independent numpy implementation of
Philox4x32-10 and of Triton's uint_to_uniform_float (vectorised, written
from python/triton/language/random.py), on random seeds, offsets (32- and
64-bit counters) and ranges; and the layout's bookkeeping from Python."""
import random

import numpy
import pytest

import rngtrk

M32 = numpy.uint64(0xFFFFFFFF)


def philox_numpy(counter, seed):
    """Philox4x32-10 of counters (lo32 c, hi32 c, 0, 0), c a uint64 array."""
    c0 = counter & M32
    c1 = counter >> numpy.uint64(32)
    c2 = numpy.zeros_like(counter)
    c3 = numpy.zeros_like(counter)
    k0 = numpy.full_like(counter, seed & 0xFFFFFFFF)
    k1 = numpy.full_like(counter, seed >> 32)
    for _ in range(10):
        p0 = numpy.uint64(0xD2511F53) * c0
        p1 = numpy.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = (((p1 >> numpy.uint64(32)) ^ c1 ^ k0) & M32, p1 & M32,
                          ((p0 >> numpy.uint64(32)) ^ c3 ^ k1) & M32, p0 & M32)
        k0 = (k0 + numpy.uint64(0x9E3779B9)) & M32
        k1 = (k1 + numpy.uint64(0xBB67AE85)) & M32
    return c0.astype(numpy.uint32), c1.astype(numpy.uint32)


def uint_to_uniform_float(w):
    x = w.view(numpy.int32).astype(numpy.int64)
    x = numpy.where(x < 0, -x - 1, x)
    return x.astype(numpy.float32) * numpy.float32(4.6566127342e-10)


@pytest.mark.parametrize("trial", range(8))
def test_bits_and_uniform_equal_an_independent_numpy_reference(trial):
    rng = random.Random(trial)
    seed = rng.getrandbits(64)
    offset = 4 * rng.getrandbits(rng.choice([10, 30, 33, 50]))
    first, n = rng.randrange(0, 100), rng.randrange(1, 5000)
    counters = numpy.arange(n, dtype=numpy.uint64) + numpy.uint64(offset + first)
    w0, w1 = philox_numpy(counters, seed)
    state = rngtrk.PhiloxState(seed, offset)
    assert numpy.array_equal(rngtrk.sample(state, n, first, layout="triton", dist="bits", dtype="u32"), w0)
    u64 = rngtrk.sample(state, n, first, layout="triton", dist="bits", dtype="u64")
    assert numpy.array_equal(u64, (w0.astype(numpy.uint64) << numpy.uint64(32)) | w1.astype(numpy.uint64))
    got = rngtrk.sample(state, n, first, layout="triton")
    assert numpy.array_equal(got.view(numpy.uint32), uint_to_uniform_float(w0).view(numpy.uint32))
    mask = rngtrk.sample(state, n, first, layout="triton", dist="bernoulli", dtype="u8", p=0.3)
    assert numpy.array_equal(mask, (uint_to_uniform_float(w0) < numpy.float32(0.3)).astype(numpy.uint8))


def test_increment_is_the_count_rounded_up_and_big_counters_are_refused():
    assert rngtrk.offset_increment(5, layout="triton") == 8
    assert rngtrk.offset_increment(8, layout="triton") == 8
    t = rngtrk.Tracker()
    t.set_default(rngtrk.PhiloxState(1, 2 ** 63 - 4))
    with pytest.raises(rngtrk.RngtrkOverflowError, match="2\\^63"):
        t.sample(8, layout="triton")
    assert t.active_state() == (1, 2 ** 63 - 4), "a refused draw moves nothing"
    t.sample(4, layout="triton")
    assert t.active_state() == (1, 2 ** 63)
