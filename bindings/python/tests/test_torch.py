# SPDX-License-Identifier: Apache-2.0
"""rngtrk.torch and the torch-eager-cuda layout against real PyTorch on a
GPU: torch.rand and Tensor.uniform_ after torch.manual_seed equal the
layout's values computed on the CPU, the 16-byte CUDA generator state is
rngtrk's state codec, and the tracker forks around a real dropout.  They run
where torch and a CUDA device are present (the GPU machines) and skip,
saying so, elsewhere."""
import importlib
import random

import numpy
import pytest

import rngtrk

torch = pytest.importorskip("torch", reason="PyTorch is not installed here: torch interop not exercised")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: torch's CUDA generator not exercised", allow_module_level=True)

DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.bfloat16: "bf16"}


def _state():
    return rngtrk.PhiloxState.from_bytes(torch.cuda.get_rng_state().numpy())


def _device_geometry():
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return dict(sm_count=props.multi_processor_count, max_threads_per_sm=props.max_threads_per_multi_processor)


def _as_numpy_bits(tensor):
    """The tensor's bytes, as numpy can hold them (bf16 as its uint16 bits)."""
    t = tensor.cpu()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return t.numpy().tobytes()


def _mismatch_report(got, want, itemsize):
    kind = {1: numpy.uint8, 2: numpy.uint16, 4: numpy.uint32, 8: numpy.uint64}[itemsize]
    a, b = numpy.frombuffer(got, kind), numpy.frombuffer(want, kind)
    bad = numpy.flatnonzero(a != b)
    return (f"{bad.size} of {a.size} elements differ, first at {bad[:5].tolist()}: "
            f"torch {a[bad[:5]].tolist()} rngtrk {b[bad[:5]].tolist()} (bits)")


# Sizes through several grid-stride waves: an H100 runs 132 * 2048 threads,
# 4 (f32) or 2 (f64) elements each per wave.
RANDOM = random.Random(20261122)
SIZES = [1, 8, 1023, 5_000_000, 70_000_001] + [RANDOM.randrange(1, 12_000_000) for _ in range(3)]
SEEDS = [0, 1234, 2**40 + 7, 2**64 - 1] + [RANDOM.getrandbits(64) for _ in range(4)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("seed, n", list(zip(SEEDS, SIZES)))
def test_torch_rand_after_manual_seed_is_the_eager_layout(dtype, seed, n):
    torch.manual_seed(seed)
    torch.rand(13, device="cuda")  # a first op moves the offset
    before = _state()
    got = torch.rand(n, device="cuda", dtype=dtype)
    params = dict(layout="torch-eager-cuda", dtype=DTYPES[dtype], **_device_geometry())
    want = rngtrk.sample(before, n, **params)
    assert _as_numpy_bits(got) == want.tobytes(), _mismatch_report(_as_numpy_bits(got), want.tobytes(),
                                                                    want.itemsize)
    assert _state() == rngtrk.PhiloxState(before.seed, before.offset + rngtrk.offset_increment(n, **params))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("low, high", [(0.0, 1.0), (-1.5, 2.25), (3.0, 3.5), (-1e3, 6e4), (0.1, 0.7)])
def test_tensor_uniform_is_the_eager_layout(dtype, low, high):
    seed = random.Random(f"{dtype} {low} {high}").getrandbits(63)
    n = 3_000_017
    torch.manual_seed(seed)
    before = _state()
    got = torch.empty(n, device="cuda", dtype=dtype).uniform_(low, high)
    params = dict(layout="torch-eager-cuda", dtype=DTYPES[dtype], low=low, high=high, **_device_geometry())
    want = rngtrk.sample(before, n, **params)
    assert _as_numpy_bits(got) == want.tobytes(), _mismatch_report(_as_numpy_bits(got), want.tobytes(),
                                                                    want.itemsize)
    assert _state().offset == before.offset + rngtrk.offset_increment(n, **params)


def test_the_cuda_generator_state_is_rngtrks_16_bytes():
    for seed in (0, 4242, 2**63 + 5):
        torch.manual_seed(seed)
        assert bytes(torch.cuda.get_rng_state().numpy()) == rngtrk.PhiloxState(seed, 0).to_bytes()
        torch.rand(1_000_003, device="cuda")
        offset = rngtrk.offset_increment(1_000_003, layout="torch-eager-cuda", **_device_geometry())
        assert bytes(torch.cuda.get_rng_state().numpy()) == rngtrk.PhiloxState(seed, offset).to_bytes()
    # And back: a state rngtrk writes is one torch runs from.
    state = rngtrk.PhiloxState(987654321, 4 * 1000)
    torch.cuda.set_rng_state(torch.frombuffer(bytearray(state.to_bytes()), dtype=torch.uint8))
    got = torch.rand(4096, device="cuda")
    want = rngtrk.sample(state, 4096, layout="torch-eager-cuda", **_device_geometry())
    assert _as_numpy_bits(got) == want.tobytes()


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
    after_named = _state()
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
    # What the dropout consumed went back into the named state.
    assert bytes(tracker.get_states()["model-parallel-rng"].numpy()) == after_named.to_bytes()


# -- rngtrk's own CUDA calls into torch and CuPy arrays ------------------------------

TORCH_OF = {"u8": torch.uint8, "f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
            "f64": torch.float64}


def _bits(tensor):
    t = tensor.cpu()
    return (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().tobytes()


@pytest.mark.parametrize("layout", ["stateless", "nvfuser", "torch-eager-cuda", "triton"])
@pytest.mark.parametrize("dist, dtype", [("uniform", "f32"), ("uniform", "f64"), ("uniform", "f16"),
                                         ("uniform", "bf16"), ("normal", "f32"), ("normal", "f64"),
                                         ("bernoulli", "u8")])
def test_cuda_sample_fills_a_torch_cuda_tensor_with_the_cpu_bits(layout, dist, dtype):
    n, state = 1_000_003, rngtrk.PhiloxState(31337, 4 * 77)
    out = torch.empty(n, dtype=TORCH_OF[dtype], device="cuda")
    assert rngtrk.cuda_sample(state, out, first=5, layout=layout, dist=dist) is out  # dtype from the tensor
    torch.cuda.synchronize()
    assert _bits(out) == rngtrk.sample(state, n, first=5, layout=layout, dist=dist, dtype=dtype).tobytes()


def test_cuda_calls_run_on_torchs_current_stream_and_on_a_given_one():
    state, n = rngtrk.PhiloxState(5, 0), 1 << 22
    want = rngtrk.sample(state, n).tobytes()
    side = torch.cuda.Stream()
    out = torch.zeros(n, device="cuda")
    with torch.cuda.stream(side):
        rngtrk.cuda_sample(state, out)  # torch's current stream: `side`
    side.synchronize()
    assert _bits(out) == want
    other = torch.cuda.Stream()
    out.zero_()
    torch.cuda.synchronize()
    rngtrk.cuda_sample(state, out, stream=other.cuda_stream)
    other.synchronize()
    assert _bits(out) == want


def test_cuda_slices_dropout_and_a_captured_graph():
    state = rngtrk.PhiloxState(77, 8)
    box = torch.empty(11, 20, 50, device="cuda")
    rngtrk.cuda_sample_slice(state, (17, 33, 65), (3, 5, 7), (11, 20, 50), box, dist="normal")
    x = torch.randn(100_001, device="cuda")
    y = torch.empty_like(x)
    rngtrk.cuda_dropout(state, x, y, p=0.8, first=9)
    torch.cuda.synchronize()
    assert _bits(box) == rngtrk.sample_slice(state, (17, 33, 65), (3, 5, 7), (11, 20, 50), dist="normal").tobytes()
    assert _bits(y) == rngtrk.dropout(state, x.cpu().numpy(), p=0.8, first=9).tobytes()
    # A CUDA graph of (graph-safe sample, advance) draws fresh numbers on every replay.
    n = 300_007
    device_state = torch.tensor([2024, 40], dtype=torch.int64, device="cuda")
    out = torch.empty(n, device="cuda")
    increment = rngtrk.offset_increment(n)
    graph, capture_stream = torch.cuda.CUDAGraph(), torch.cuda.Stream()
    with torch.cuda.stream(capture_stream):
        rngtrk.cuda_sample(state, out)  # a warm-up outside the capture loads the kernels
        torch.cuda.synchronize()
        with torch.cuda.graph(graph, stream=capture_stream):
            rngtrk.cuda_sample_graphsafe(device_state, out)
            rngtrk.cuda_advance_graphsafe(device_state, n)
    for replay in range(3):
        graph.replay()
        torch.cuda.synchronize()
        assert _bits(out) == rngtrk.sample(rngtrk.PhiloxState(2024, 40 + replay * increment), n).tobytes()
    assert device_state.tolist() == [2024, 40 + 3 * increment]


def test_cupy_arrays_through_the_cuda_array_interface():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed here")
    state, n = rngtrk.PhiloxState(9, 0), 12345
    for dtype, kind in (("f32", cupy.float32), ("f64", cupy.float64), ("u32", cupy.uint32)):
        out = cupy.empty(n, dtype=kind)
        rngtrk.cuda_sample(state, out, dist="bits" if dtype == "u32" else "uniform")
        cupy.cuda.get_current_stream().synchronize()
        want = rngtrk.sample(state, n, dist="bits" if dtype == "u32" else "uniform", dtype=dtype)
        assert cupy.asnumpy(out).tobytes() == want.tobytes()
    with pytest.raises(rngtrk.InvalidArgumentError, match="C-contiguous"):
        rngtrk.cuda_sample(state, cupy.empty((8, 8), dtype=cupy.float32)[:, 0])


def test_wrong_device_memory_is_refused_naming_the_problem():
    state = rngtrk.PhiloxState(1, 0)
    with pytest.raises(TypeError, match="host memory"):
        rngtrk.cuda_sample(state, torch.empty(8))
    with pytest.raises(TypeError, match="device memory"):
        rngtrk.sample(state, 8, out=torch.empty(8, device="cuda"))
    with pytest.raises(TypeError, match="f64, but the call makes f32"):
        rngtrk.cuda_sample(state, torch.empty(8, dtype=torch.float64, device="cuda"), dtype="f32")


# -- rngtrk.torch on a GPU (issue: PyTorch, for real) ------------------------------------

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import rngtrk.torch as rt  # noqa: E402


def test_graph_safe_fork_in_a_captured_graph_draws_fresh_numbers_on_each_replay():
    if not rt.graph_safe_supported():
        pytest.skip(f"torch {torch.__version__} has no graph-safe generator states (torch >= 2.2)")
    tracker = rt.CudaRNGStatesTracker(use_cudagraphable_rng=True)
    assert tracker.graph_safe
    tracker.add("model-parallel-rng", 4242)
    n = 1 << 16
    out = torch.empty(n, device="cuda")
    graph = torch.cuda.CUDAGraph()
    for generator in tracker.states_.values():  # the live generators (Megatron's get_all_rng_states)
        graph.register_generator_state(generator)
    outside = torch.cuda.get_rng_state()
    with torch.cuda.graph(graph):
        with tracker.fork():
            out.copy_(torch.rand(n, device="cuda"))
    masks, offsets = [], []
    for _ in range(3):
        offsets.append(rt.state_of(tracker.get_states()["model-parallel-rng"]).offset)
        graph.replay()
        torch.cuda.synchronize()
        masks.append(out.clone())
    assert len({m.sum().item() for m in masks}) == 3, "three replays, three different draws"
    for mask, offset in zip(masks, offsets):
        want = rngtrk.sample(rngtrk.PhiloxState(4242, offset), n, layout="torch-eager-cuda", **_device_geometry())
        assert _as_numpy_bits(mask) == want.tobytes()
    step = rngtrk.offset_increment(n, layout="torch-eager-cuda", **_device_geometry())
    assert offsets[1] - offsets[0] == offsets[2] - offsets[1] == step
    assert torch.equal(torch.cuda.get_rng_state(), outside), "the default generator's state is untouched"
    # state_dict reads the generators back: the checkpoint holds the state after 3 replays.
    resumed = rt.CudaRNGStatesTracker()
    resumed.load_state_dict(tracker.state_dict())
    assert resumed.tracker.get_state("model-parallel-rng") == (4242, offsets[2] + step)


OP_CASES = [("rand", torch.float32), ("rand", torch.float64), ("rand", torch.float16), ("rand", torch.bfloat16),
            ("randn", torch.float32), ("randn", torch.float64), ("randn", torch.bfloat16), ("bernoulli", torch.uint8)]


@pytest.mark.parametrize("layout", ["stateless", "nvfuser", "torch-eager-cuda", "triton"])
@pytest.mark.parametrize("op, dtype", OP_CASES)
def test_rngtrk_torch_ops_are_equal_on_cpu_and_cuda(layout, op, dtype):
    state, shape = rngtrk.PhiloxState(77, 12), (333, 1001)
    make = getattr(rt, op)
    kw = {} if op == "bernoulli" else {"dtype": dtype}
    cpu = make(shape, state=state, layout=layout, device="cpu", **kw)
    gpu = make(shape, state=state, layout=layout, device="cuda", **kw)
    assert _bits(gpu) == _bits(cpu)
    box = ((333, 1001), (100, 500), (50, 77))
    slice_make = getattr(rt, op + "_slice")
    cpu_box = slice_make(*box, state=state, layout=layout, device="cpu", **kw)
    gpu_box = slice_make(*box, state=state, layout=layout, device="cuda", **kw)
    assert _bits(gpu_box) == _bits(cpu_box) == _bits(cpu[100:150, 500:577].contiguous())


@pytest.mark.parametrize("layout", ["stateless", "nvfuser", "torch-eager-cuda", "triton"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64], ids=str)
def test_dropout_is_equal_on_cpu_and_cuda_and_differentiable(layout, dtype):
    """One kernel on CUDA (f32, f16, bf16; f64 as mask then multiply), the
    CPU's values bit for bit (NaNs as NaNs: a GPU's multiply writes its own
    NaN), the box of a slice, and backward's redrawn mask."""
    state = rngtrk.PhiloxState(5, 0)
    x = torch.randn(333, 1001, device="cuda", dtype=dtype)
    x[0, :4] = torch.tensor([float("nan"), float("inf"), -0.0, -1.0], dtype=dtype)
    x.requires_grad_()
    y = rt.dropout(x, 0.1, state=state, layout=layout)
    y_cpu = rt.dropout(x.detach().cpu(), 0.1, state=state, layout=layout)
    assert torch.equal(torch.isnan(y.detach()).cpu(), torch.isnan(y_cpu))
    assert _bits(torch.nan_to_num(y.detach())) == _bits(torch.nan_to_num(y_cpu))
    y.sum().backward()
    assert torch.equal((x.grad != 0).cpu(), rt.dropout(torch.ones(333, 1001, dtype=dtype), 0.1, state=state,
                                                       layout=layout) != 0)
    box = ((333, 1001), (100, 500))
    part = rt.dropout_slice(x.detach()[100:150, 500:577].contiguous(), *box, 0.1, state=state, layout=layout)
    assert _bits(torch.nan_to_num(part)) == _bits(torch.nan_to_num(y.detach()[100:150, 500:577].contiguous()))


def test_dropout_keeps_no_mask_on_the_gpu():
    """What a stack of dropouts holds for backward, by torch's own count of
    CUDA memory: F.dropout keeps a byte of mask per element, rngtrk's
    dropout its 16-byte state."""
    x = torch.randn(64, 1024, 1024, device="cuda", requires_grad=True)

    def peak(drop):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        outs = [drop(x, 0.1) for _ in range(4)]
        held = torch.cuda.memory_allocated() - base
        del outs
        return held

    elements = x.numel()
    torch_held, ours_held = peak(torch.nn.functional.dropout), peak(lambda t, p: rt.dropout(t, p))
    assert torch_held >= 4 * elements * (4 + 1), "F.dropout: four outputs and four masks"
    assert ours_held == 4 * elements * 4, "rngtrk: the four outputs alone"


def test_rngtrk_ops_in_a_cuda_fork_share_the_stream_with_torchs_own_ops():
    tracker = rt.CudaRNGStatesTracker()
    tracker.add("model-parallel-rng", 31337)
    geo = _device_geometry()
    with tracker.fork():
        torch.rand(1000, device="cuda")
        mine = rt.rand(500, device="cuda", layout="torch-eager-cuda", tracker=tracker, **geo)
        torch.rand(7, device="cuda")
    first = rngtrk.offset_increment(1000, layout="torch-eager-cuda", **geo)
    second = rngtrk.offset_increment(500, layout="torch-eager-cuda", **geo)
    third = rngtrk.offset_increment(7, layout="torch-eager-cuda", **geo)
    want = rngtrk.sample(rngtrk.PhiloxState(31337, first), 500, layout="torch-eager-cuda", **geo)
    assert _as_numpy_bits(mine) == want.tobytes(), "rngtrk's op drew where torch's first op stopped"
    assert tracker.tracker.get_state("model-parallel-rng") == (31337, first + second + third)


def test_model_parallel_cuda_manual_seed_seeds_the_cuda_generator():
    rt.model_parallel_cuda_manual_seed(1234, tp_rank=1, ep_rank=0, etp_rank=0, force_reset_rng=True)
    assert bytes(torch.cuda.get_rng_state().numpy()) == rngtrk.PhiloxState(1234, 0).to_bytes()
    with rt.get_cuda_rng_tracker().fork():
        assert bytes(torch.cuda.get_rng_state().numpy()) == rngtrk.PhiloxState(1234 + 2718 + 1, 0).to_bytes()


def test_distribute_rand_is_the_same_full_tensor_for_every_mesh_and_placement():
    major, minor = (int(v) for v in torch.__version__.split(".")[:2])
    if (major, minor) < (2, 4):
        pytest.skip(f"torch {torch.__version__} has no public DTensor (torch >= 2.4)")
    here = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "torch_dist")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    # The ranks start directly (launch.py), as every torch.distributed job here: any torch, libuv or not.
    done = subprocess.run([sys.executable, os.path.join(here, "launch.py"), "--nproc", "4", "--", sys.executable,
                           os.path.join(here, "dtensor_job.py")], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:]
    assert "every mesh and placement" in done.stdout


# -- the triton layout against a live Triton kernel ---------------------------------------

try:
    import triton
    import triton.language as tl
except ImportError:  # the test below says so
    triton = None

if triton is not None:
    @triton.jit
    def _triton_draw(out_int, out_rand, seed, offset, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        keep = i < n
        tl.store(out_int + i, tl.randint(seed, offset + i), mask=keep)
        tl.store(out_rand + i, tl.rand(seed, offset + i), mask=keep)


def test_a_triton_kernel_draws_exactly_the_triton_layout():
    if triton is None:
        pytest.skip("Triton is not installed here")
    rng = random.Random(20261123)
    for trial in range(24):
        seed = rng.getrandbits(63)
        offset = 4 * rng.getrandbits(rng.choice([8, 28, 38]))  # 32-bit and 64-bit offset arguments
        n = rng.randrange(1, 20000)
        out_int = torch.empty(n, dtype=torch.int32 if offset + n < 2 ** 31 else torch.int64, device="cuda")
        out_rand = torch.empty(n, dtype=torch.float32, device="cuda")
        _triton_draw[(triton.cdiv(n, 256),)](out_int, out_rand, seed, offset, n, BLOCK=256)
        state = rngtrk.PhiloxState(seed, offset)
        want_int = rngtrk.sample(state, n, layout="triton", dist="bits", dtype="u32")
        want_rand = rngtrk.sample(state, n, layout="triton")
        got_int = (out_int.cpu().numpy().astype(numpy.int64) & 0xFFFFFFFF).astype(numpy.uint32)
        assert numpy.array_equal(got_int, want_int), f"tl.randint, seed {seed} offset {offset}"
        assert _bits(out_rand) == want_rand.tobytes(), f"tl.rand, seed {seed} offset {offset}"
        # rngtrk's own CUDA kernel for the layout gives the same bits.
        mine = torch.empty(n, dtype=torch.float32, device="cuda")
        rngtrk.cuda_sample(state, mine, layout="triton")
        assert torch.equal(mine, out_rand)


# -- the Megatron-LM drop-in on a GPU (rngtrk.torch.megatron) ------------------------------

import rngtrk.torch.megatron as megatron  # noqa: E402


@pytest.mark.parametrize("graph_safe", [False, True])
def test_a_name_forked_inside_its_own_fork_continues_its_stream_on_the_cuda_generator(graph_safe):
    if graph_safe and not rt.graph_safe_supported():
        pytest.skip(f"torch {torch.__version__} has no graph-safe generator states (torch >= 2.2)")
    tracker = megatron.CudaRNGStatesTracker(use_cudagraphable_rng=graph_safe)
    tracker.add("a", 1234)
    tracker.add("b", 5678)
    outside = torch.cuda.get_rng_state()
    nested = {"a": [], "b": []}
    with tracker.fork("a"):
        nested["a"].append(torch.randn(10, device="cuda"))
        with tracker.fork("b"):
            nested["b"].append(torch.randn(10, device="cuda"))
            with tracker.fork("a"):
                nested["a"].append(torch.randn(10, device="cuda"))
            nested["b"].append(rt.rand(10, device="cuda", tracker=tracker))
        nested["a"].append(torch.randn(10, device="cuda"))
    assert torch.equal(torch.cuda.get_rng_state(), outside)
    ends = {k: rt.state_of(v) for k, v in tracker.get_states().items()}
    tracker.reset()
    tracker.add("a", 1234)
    tracker.add("b", 5678)
    with tracker.fork("a"):
        single_a = [torch.randn(10, device="cuda") for _ in range(3)]
    with tracker.fork("b"):
        single_b = [torch.randn(10, device="cuda"), rt.rand(10, device="cuda", tracker=tracker)]
    assert all(torch.equal(x, y) for x, y in zip(nested["a"], single_a))
    assert all(torch.equal(x, y) for x, y in zip(nested["b"], single_b))
    assert {k: rt.state_of(v) for k, v in tracker.get_states().items()} == ends


def test_graph_safe_get_states_are_copies_and_set_states_keeps_the_live_generators():
    if not rt.graph_safe_supported():
        pytest.skip(f"torch {torch.__version__} has no graph-safe generator states (torch >= 2.2)")
    tracker = megatron.CudaRNGStatesTracker(use_cudagraphable_rng=True)
    tracker.add("model-parallel-rng", 77)
    live = tracker.states_["model-parallel-rng"]
    saved = tracker.get_states()
    assert isinstance(saved["model-parallel-rng"], torch.Generator) and saved["model-parallel-rng"] is not live
    with tracker.fork():
        first = torch.rand(100, device="cuda")
    assert rt.state_of(saved["model-parallel-rng"]) == (77, 0), "a saved state is not advanced by later draws"
    tracker.set_states(saved)
    assert tracker.states_["model-parallel-rng"] is live, "set_states copies into the generator graphs registered"
    with tracker.fork():
        assert torch.equal(torch.rand(100, device="cuda"), first)


def test_megatrons_checkpoint_recomputes_torchs_own_cuda_dropout_with_the_same_mask():
    megatron.uninstall()
    megatron.initialize_rng_tracker(use_cudagraphable_rng=rt.graph_safe_supported(), force_reset=True)
    megatron.model_parallel_cuda_manual_seed(5, tp_rank=0, ep_rank=0, etp_rank=0)

    def block(x):
        with megatron.get_cuda_rng_tracker().fork():
            x = torch.nn.functional.dropout(x, 0.5)
        return torch.nn.functional.dropout(x, 0.5)  # outside the fork: the default generator

    x = (torch.rand(4096, device="cuda") + 1).requires_grad_(True)
    y = megatron.checkpoint(block, False, x)
    y.sum().backward()
    assert torch.equal(y != 0, x.grad != 0), "the recompute drew the forward's masks"
    megatron.initialize_rng_tracker(force_reset=True)


# -- Lightning Thunder on torch's CUDA generator ------------------------------------------

def test_thunder_get_and_update_rng_state_moves_torchs_cuda_generator():
    from rngtrk.torch import thunder
    torch.cuda.manual_seed(42)
    calls = [thunder.get_and_update_rng_state(None, None, "cuda")]
    calls += [thunder.get_and_update_rng_state(*calls[-1], "cuda") for _ in range(2)]
    assert calls == [(42, 0), (42, 1), (42, 2)]
    assert _state() == rngtrk.PhiloxState(42, 12)
    torch.cuda.set_rng_state(rt.state_tensor(rngtrk.PhiloxState(2, 8)))  # (torch's CUDA offsets are multiples of 4)
    assert thunder.get_and_update_rng_state(None, None, torch.device("cuda")) == (2, 2)
    assert _state() == rngtrk.PhiloxState(2, 12)


def test_thunder_uniform_philox_on_cuda_equals_the_cpu_and_torchs_philox_rand():
    from rngtrk.torch import thunder
    for dtype in (torch.float32, torch.float16, torch.float64):
        gpu = thunder.uniform_philox((33, 65), device="cuda", dtype=dtype, seed=77, offset=3)
        cpu = thunder.uniform_philox((33, 65), device="cpu", dtype=dtype, seed=77, offset=3)
        assert torch.equal(gpu.cpu(), cpu)
    importlib.import_module("torch._prims.rng_prims")  # registers torch.ops.rngprims (an import would make torch local)
    seed, offset = torch.tensor(77), torch.tensor(12)
    theirs, _ = torch.ops.rngprims.philox_rand((33, 65), seed, offset, None, torch.device("cuda"), torch.float32)
    ours = thunder.uniform_philox((33, 65), device="cuda", dtype=torch.float32, seed=77, offset=12, executor="torch")
    assert torch.equal(ours, theirs), "Thunder's torch executor's values"
