# SPDX-License-Identifier: Apache-2.0
"""The CUDA-generator paths of rngtrk.torch's thunder, dtensor and slapo
modules and of the values set_states keeps, run on CPU-only torch under
tests/upstream/cuda_emulation.py (a CPU stand-in of torch's default CUDA
generator: state only, no kernels).
Run by test_torch_emulated_cuda.py in a process of its own, since the
emulation replaces torch.cuda's functions for the whole process."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tests", "upstream"))
sys.path.insert(0, os.path.join(HERE, ".."))  # this checkout's rngtrk
import cuda_emulation  # noqa: E402

GENERATOR = cuda_emulation.emulate()  # before rngtrk.torch reads torch.cuda

import pytest  # noqa: E402
import torch  # noqa: E402

import rngtrk  # noqa: E402
import rngtrk.torch as rt  # noqa: E402
from rngtrk.torch import dtensor, slapo, thunder  # noqa: E402


def generator_state():
    return rt.state_of(GENERATOR.get_state())


def thunder_on_the_cuda_generator():
    torch.cuda.manual_seed(42)
    calls = [thunder.get_and_update_rng_state(None, None, "cuda")]
    calls.append(thunder.get_and_update_rng_state(*calls[-1], "cuda:0"))
    calls.append(thunder.get_and_update_rng_state(*calls[-1], torch.device("cuda", 0)))
    assert calls == [(42, 0), (42, 1), (42, 2)], calls
    assert generator_state() == rngtrk.PhiloxState(42, 12)
    torch.cuda.set_rng_state(rt.state_tensor(rngtrk.PhiloxState(2, 10)))
    assert thunder.get_and_update_rng_state(None, None, 0) == (2, 2)
    assert generator_state() == rngtrk.PhiloxState(2, 12)
    with pytest.raises(NotImplementedError, match="CUDA only"):
        thunder.get_and_update_rng_state(None, None, "cpu")
    assert generator_state() == rngtrk.PhiloxState(2, 12), "a refused call moves nothing"
    plain = rngtrk.Tracker()
    assert thunder.get_and_update_rng_state(None, None, "cpu", tracker=plain) == (0, 0)
    assert generator_state() == rngtrk.PhiloxState(2, 12)


def dtensor_on_the_cuda_generator():
    r_spec = type("Spec", (), {})
    mesh = ((2,), (1,))
    spec = r_spec()
    spec.mesh, spec.placements, spec.shape = mesh, ["S0"], (8,)
    tracker = dtensor.OffsetBasedRNGTracker("cuda")
    tracker._manual_seed(5)
    assert generator_state() == rngtrk.PhiloxState(5, 0), "_manual_seed seeds torch's generator"
    with tracker._distribute_region(spec) as state:
        assert state == (5, 4) and generator_state() == rngtrk.PhiloxState(5, 4), "the op draws at the pre-op offset"
        torch.cuda.set_rng_state(rt.state_tensor(rngtrk.PhiloxState(5, 8)))  # what the op drew
    assert generator_state() == rngtrk.PhiloxState(5, 8) and tracker.get_offset() == 8
    with pytest.raises(ZeroDivisionError):
        with tracker._distribute_region(spec):
            1 / 0
    assert generator_state() == rngtrk.PhiloxState(5, 8), "a body that raises moves nothing"
    tracker.distribute_region_enabled = False
    with tracker._distribute_region(spec):
        torch.cuda.set_rng_state(rt.state_tensor(rngtrk.PhiloxState(5, 100)))
    assert generator_state() == rngtrk.PhiloxState(5, 8), "a disabled region puts the state back"


def slapo_on_the_cuda_generator():
    assert slapo.model_parallel_cuda_manual_seed(10, 1, True) == 2729
    assert torch.cuda.initial_seed() == 2729, "always_enable_tp_seed: the CUDA generator takes the tp seed"
    slapo.set_random_seed(123, tp_rank=0)
    assert torch.cuda.initial_seed() == 123
    with slapo.get_cuda_rng_tracker().fork():
        assert torch.cuda.initial_seed() == 123 + 2718
    assert torch.cuda.initial_seed() == 123
    slapo._set_cuda_rng_state(rt.state_tensor(rngtrk.PhiloxState(9, 16)), "cuda:0")
    assert generator_state() == rngtrk.PhiloxState(9, 16)


def kept_values_on_the_cuda_generator():
    """set_states keeps a value that is not a state (test_torch_kept_values.py);
    on the CUDA generator a fork of it raises before the generator moves."""
    from rngtrk.torch._tracker import NotAStateError
    for tracker in (rt.CudaRNGStatesTracker(), slapo.CudaRNGStatesTracker()):
        torch.cuda.set_rng_state(rt.state_tensor(rngtrk.PhiloxState(5, 8)))
        tracker.set_states({"a": rngtrk.PhiloxState(77, 0), "state1": 1234})
        assert tracker.get_states()["state1"] == 1234
        with pytest.raises(NotAStateError, match="'state1'"):
            with tracker.fork("state1"):
                pass
        assert generator_state() == rngtrk.PhiloxState(5, 8), "a refused fork moves nothing"
        with tracker.fork("a"):
            assert generator_state() == rngtrk.PhiloxState(77, 0)
            torch.cuda.set_rng_state(rt.state_tensor(rngtrk.PhiloxState(77, 4)))  # a draw of 4
        assert generator_state() == rngtrk.PhiloxState(5, 8)
        assert rt.state_of(tracker.get_states()["a"]) == (77, 4) and tracker.get_states()["state1"] == 1234


if __name__ == "__main__":
    for check in (thunder_on_the_cuda_generator, dtensor_on_the_cuda_generator, slapo_on_the_cuda_generator,
                  kept_values_on_the_cuda_generator):
        check()
        print(f"ok {check.__name__}")
