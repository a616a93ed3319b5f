# SPDX-License-Identifier: Apache-2.0
"""Sampling through Python: the shared sample vectors, slices, the tracker."""
import numpy
import pytest

import rngtrk
from rngtrk import PhiloxState

from conftest import vector_path


def sample_lines():
    with open(vector_path("sample_vectors.txt")) as f:
        return [line.split() for line in f if line.startswith("sample ")]


def test_every_shared_sample_vector():
    lines = sample_lines()
    assert len(lines) >= 150
    widths = {"u8": "<u1", "u32": "<u4", "u64": "<u8", "f16": "<u2", "bf16": "<u2", "f32": "<u4", "f64": "<u8"}
    for f in lines:
        layout, dist, dtype = f[1], f[2], f[3]
        seed, offset, first, count = (int(v) for v in f[4:8])
        a, b = float(f[8]), float(f[9])
        sm, threads, numel = (int(v) for v in f[10:13])
        params = {"uniform": {"low": a, "high": b}, "normal": {"mean": a, "std": b},
                  "bernoulli": {"p": a}}.get(dist, {})
        got = rngtrk.sample(PhiloxState(seed, offset), count, first, layout=layout, dist=dist, dtype=dtype,
                            sm_count=sm, max_threads_per_sm=threads, numel=numel, **params)
        bits = [int(v) for v in got.view(widths[dtype])]
        assert bits == [int(h, 16) for h in f[13:]], " ".join(f[:8])


def test_increments_match_the_vectors():
    with open(vector_path("sample_vectors.txt")) as f:
        for line in f:
            if line.startswith("increment "):
                _, layout, dist, dtype, numel, expected = line.split()
                assert rngtrk.offset_increment(int(numel), layout=layout, dist=dist, dtype=dtype) == int(expected)


def test_slices_are_cuts_of_the_whole_tensor():
    state = PhiloxState(9, 16)
    whole = rngtrk.sample(state, 6 * 7 * 5, dist="normal", dtype="f64").reshape(6, 7, 5)
    box = rngtrk.sample_slice(state, (6, 7, 5), (1, 2, 0), (4, 3, 5), dist="normal", dtype="f64")
    assert box.shape == (4, 3, 5)
    assert numpy.array_equal(box, whole[1:5, 2:5, 0:5])
    out = numpy.empty((4, 3, 5))
    assert rngtrk.sample_slice(state, (6, 7, 5), (1, 2, 0), (4, 3, 5), out, dist="normal", dtype="f64") is out
    assert numpy.array_equal(out, box)


def test_the_tracker_draws_and_advances(tracker):
    tracker.manual_seed(3)
    mask = tracker.sample(1000, dist="bernoulli", dtype="u8", p=0.9)
    assert mask.dtype == numpy.uint8 and 850 < mask.sum() < 950
    assert tracker.active_state() == PhiloxState(3, 1000)
    halves = tracker.sample(10, dtype="f16")
    assert halves.dtype == numpy.float16 and (halves < 1).all()
    assert numpy.array_equal(halves, rngtrk.sample(PhiloxState(3, 1000), 10, dtype="f16"))


@pytest.mark.parametrize("layout", ["stateless", "nvfuser", "torch-eager-cuda", "triton"])
def test_normal_half_types_are_the_f32_values_rounded(layout):
    # What randn in f32 followed by numpy's astype(float16) and torch's
    # .to(bfloat16) gives (both round to nearest even), for the same draws.
    state = PhiloxState(2030, 44)
    params = dict(layout=layout, dist="normal", mean=0.25, std=3.0, sm_count=2, max_threads_per_sm=512, numel=9000)
    want = rngtrk.sample(state, 7001, 17, dtype="f32", **params)
    half = rngtrk.sample(state, 7001, 17, dtype="f16", **params)
    assert half.dtype == numpy.float16
    assert half.view("<u2").tolist() == want.astype(numpy.float16).view("<u2").tolist()
    assert rngtrk.offset_increment(9000, layout=layout, dist="normal", dtype="f16") == \
        rngtrk.offset_increment(9000, layout=layout, dist="normal", dtype="f32")
    bf16 = rngtrk.sample(state, 7001, 17, dtype="bf16", **params)
    assert bf16.dtype == numpy.uint16  # bf16 bits: numpy has no bfloat16
    torch = pytest.importorskip("torch", reason="PyTorch is not installed here: bf16 not compared with torch's rounding")
    rounded = torch.from_numpy(want).to(torch.bfloat16).view(torch.int16).numpy().view("<u2")
    assert bf16.tolist() == rounded.tolist()


def test_torch_eager_cuda_is_torch_rand():
    # torch.manual_seed(0); torch.rand(4, device="cuda") prints 0.3990, 0.5167, 0.0249, 0.9401.
    got = rngtrk.sample(PhiloxState(0, 0), 4, layout="torch-eager-cuda")
    assert numpy.allclose(got, [0.3990, 0.5167, 0.0249, 0.9401], atol=5e-5)


def test_errors():
    state = PhiloxState(1, 0)
    with pytest.raises(rngtrk.InvalidArgumentError, match="unknown layout"):
        rngtrk.sample(state, 4, layout="jax")
    with pytest.raises(rngtrk.InvalidArgumentError, match="does not make dtype"):
        rngtrk.sample(state, 4, dist="normal", dtype="u32")
    with pytest.raises(rngtrk.InvalidArgumentError, match="does not apply"):
        rngtrk.sample(state, 4, dist="uniform", mean=1.0)
    with pytest.raises(rngtrk.InvalidArgumentError, match="low <= high"):
        rngtrk.sample(state, 4, low=2.0, high=1.0)
    with pytest.raises(TypeError, match="float32"):
        rngtrk.sample(state, 4, dtype="f32", out=numpy.empty(4, dtype=numpy.float64))
    # Without dtype=, the output's dtype decides.
    assert rngtrk.sample(state, 4, out=numpy.empty(4, dtype=numpy.float64)).tobytes() == \
        rngtrk.sample(state, 4, dtype="f64").tobytes()
    assert rngtrk.cpu_path() in ("scalar", "avx2", "avx512")
