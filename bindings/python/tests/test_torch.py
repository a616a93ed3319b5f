"""rngtrk.torch and the torch-eager-cuda layout against real PyTorch on a
GPU.  They run where torch and a CUDA device are present (the device
machines) and skip, saying so, elsewhere."""
import pytest

import rngtrk

torch = pytest.importorskip("torch", reason="PyTorch is not installed here (no PyPI): rngtrk.torch not exercised")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: torch interop not exercised", allow_module_level=True)


def _state():
    return rngtrk.PhiloxState.from_bytes(torch.cuda.get_rng_state().numpy())


@pytest.mark.parametrize("dtype, name", [(torch.float32, "f32"), (torch.float64, "f64")])
@pytest.mark.parametrize("seed, n", [(0, 8), (1234, 5_000_000), (2**40 + 7, 70_000_001)])
def test_torch_rand_is_the_eager_layout(dtype, name, seed, n):
    torch.cuda.manual_seed(seed)
    torch.rand(13, device="cuda")  # a first op moves the offset
    before = _state()
    got = torch.rand(n, device="cuda", dtype=dtype).cpu().numpy()
    props = torch.cuda.get_device_properties(0)
    params = dict(layout="torch-eager-cuda", dtype=name, sm_count=props.multi_processor_count,
                  max_threads_per_sm=props.max_threads_per_multi_processor)
    want = rngtrk.sample(before, n, **params)
    assert got.tobytes() == want.tobytes()
    assert _state().offset == before.offset + rngtrk.offset_increment(n, **params)


def test_state_bytes_after_manual_seed():
    torch.cuda.manual_seed(4242)
    assert _state() == rngtrk.PhiloxState(4242, 0)


def test_fork_behaves_like_the_upstream_tracker_on_a_real_dropout():
    from rngtrk.torch import CudaRNGStatesTracker

    x = torch.ones(1 << 16, device="cuda")
    # The upstream behaviour, written out: seed a generator state, swap it in.
    torch.cuda.manual_seed(99)
    outside = torch.cuda.get_rng_state()
    torch.cuda.manual_seed(1234 + 2718)
    named = torch.cuda.get_rng_state()
    torch.cuda.set_rng_state(outside)
    torch.cuda.set_rng_state(named)
    want = torch.nn.functional.dropout(x, 0.1)
    torch.cuda.set_rng_state(outside)
    want_outside = torch.rand(4, device="cuda")
    # The same with rngtrk.torch.
    torch.cuda.manual_seed(99)
    tracker = CudaRNGStatesTracker()
    tracker.add("model-parallel-rng", 1234 + 2718)
    with tracker.fork():
        got = torch.nn.functional.dropout(x, 0.1)
    assert torch.equal(got, want)
    assert torch.equal(torch.rand(4, device="cuda"), want_outside)
