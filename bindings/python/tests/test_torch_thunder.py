# SPDX-License-Identifier: Apache-2.0
"""rngtrk.torch.thunder: Lightning Thunder's conventions (lightning-thunder
at 1e22aacb): get_and_update_rng_state(seed, offset, device) with offsets
in nvFuser's units and the generator moved to (offset + 1) * 4, and
uniform_philox taking Thunder's offset, against rngtrk's layouts sampled
through the C library.  CPU-only torch here: rngtrk plays the CUDA
generator (the process tracker's); test_torch.py checks torch's own CUDA
generator and torch.ops.rngprims.philox_rand on a GPU."""
import numpy
import pytest

import rngtrk

torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
import rngtrk.torch as rt  # noqa: E402  (after the skip)
from rngtrk.torch import thunder  # noqa: E402

pytestmark = pytest.mark.usefixtures("fresh_torch_trackers")


def test_three_calls_from_42_0_count_in_nvfuser_units():
    tracker = rt.get_rng_state_tracker()
    tracker.set_generator_state(rngtrk.PhiloxState(42, 0))
    first = thunder.get_and_update_rng_state(None, None, "cuda")
    second = thunder.get_and_update_rng_state(*first, "cuda")  # chained, as Thunder's trace does
    third = thunder.get_and_update_rng_state(*second, "cuda")
    assert [first, second, third] == [(42, 0), (42, 1), (42, 2)]
    assert tracker.generator_state() == rngtrk.PhiloxState(42, 12)


def test_a_plain_tracker_and_a_seed_past_int64():
    plain = rngtrk.Tracker()
    plain.set_default(rngtrk.PhiloxState(2 ** 64 - 1, 8))
    assert thunder.get_and_update_rng_state(tracker=plain) == (-1, 2), "Thunder reads the seed as int64"
    assert plain.active_state() == rngtrk.PhiloxState(2 ** 64 - 1, 12)
    signed = thunder.uniform_philox((8,), device="cpu", dtype=torch.float32, seed=-1, offset=2)
    unsigned = thunder.uniform_philox((8,), device="cpu", dtype=torch.float32, seed=2 ** 64 - 1, offset=2)
    assert torch.equal(signed, unsigned)


def test_seed_and_offset_go_in_pairs_and_a_refusal_changes_nothing():
    tracker = rt.get_rng_state_tracker()
    tracker.set_generator_state(rngtrk.PhiloxState(7, 4))
    with pytest.raises(RuntimeError, match="in pair") as caught:
        thunder.get_and_update_rng_state(7, None, "cuda")
    assert isinstance(caught.value, rngtrk.InvalidArgumentError)
    assert tracker.generator_state() == rngtrk.PhiloxState(7, 4)


@pytest.mark.parametrize("dtype,rng_dtype", [(torch.float32, "f32"), (torch.float64, "f64"), (torch.float16, "f16")])
@pytest.mark.parametrize("offset", [0, 1, 5])
def test_uniform_philox_is_nvfusers_layout_at_four_times_the_offset(dtype, rng_dtype, offset):
    shape = (3, 5, 7)
    got = thunder.uniform_philox(shape, device="cpu", dtype=dtype, seed=1234, offset=offset)
    want = rngtrk.sample(rngtrk.PhiloxState(1234, 4 * offset), 105, layout="nvfuser", dtype=rng_dtype)
    assert got.shape == shape and got.dtype == dtype
    assert numpy.array_equal(got.reshape(-1).numpy(), want)


def test_uniform_philox_bounds_are_low_plus_u_times_range():
    got = thunder.uniform_philox((64,), 2.0, 3.5, device="cpu", dtype=torch.float32, seed=9, offset=3)
    u = rngtrk.sample(rngtrk.PhiloxState(9, 12), 64, layout="nvfuser", dtype="f32")
    want = numpy.float32(2.0) + u * numpy.float32(1.5)  # two roundings in float (docs/streams.md)
    assert numpy.array_equal(got.numpy(), want) and float(got.min()) >= 2.0


def test_a_mask_drawn_in_forward_is_regenerated_from_the_saved_pair():
    rt.get_rng_state_tracker().set_generator_state(rngtrk.PhiloxState(5, 0))
    seed, offset = thunder.get_and_update_rng_state()
    forward = thunder.uniform_philox((16, 16), device="cpu", dtype=torch.float32, seed=seed, offset=offset) < 0.9
    thunder.get_and_update_rng_state(seed, offset)  # another op draws in between
    again = thunder.uniform_philox((16, 16), device="cpu", dtype=torch.float32, seed=seed, offset=offset) < 0.9
    assert torch.equal(forward, again)
    other = thunder.uniform_philox((16, 16), device="cpu", dtype=torch.float32, seed=seed, offset=offset + 1) < 0.9
    assert not torch.equal(forward, other)


def test_the_torch_executor_form_takes_torch_units():
    got = thunder.uniform_philox((300,), device="cpu", dtype=torch.float32, seed=3, offset=8, executor="torch")
    want = rngtrk.sample(rngtrk.PhiloxState(3, 8), 300, layout="torch-eager-cuda", dtype="f32")
    assert numpy.array_equal(got.numpy(), want)
    with pytest.raises(RuntimeError, match="multiple of 4"):
        thunder.uniform_philox((4,), device="cpu", dtype=torch.float32, seed=3, offset=1, executor="torch")


@pytest.mark.parametrize("kwargs,error", [
    (dict(offset=(2 ** 63 - 1) // 4 + 1), OverflowError),
    (dict(offset=-1), OverflowError),
    (dict(seed=2 ** 64), OverflowError),
    (dict(seed=-2 ** 63 - 1), OverflowError),
    (dict(minval=1.0, maxval=1.0), RuntimeError),
    (dict(executor="nvfuserx"), RuntimeError),
    (dict(offset=1.5), TypeError),
    (dict(offset=1.5, executor="torch"), TypeError),
])
def test_bad_arguments_raise_named_errors(kwargs, error):
    args = dict(device="cpu", dtype=torch.float32, seed=1, offset=0)
    args.update(kwargs)
    with pytest.raises(error):
        thunder.uniform_philox((4,), **args)


def test_the_largest_offset_is_taken():
    largest = (2 ** 63 - 1) // 4
    got = thunder.uniform_philox((4,), device="cpu", dtype=torch.float32, seed=1, offset=largest)
    assert numpy.array_equal(got.numpy(), rngtrk.sample(rngtrk.PhiloxState(1, 4 * largest), 4, layout="nvfuser"))
