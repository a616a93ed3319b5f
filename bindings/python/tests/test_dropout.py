# SPDX-License-Identifier: Apache-2.0
"""rngtrk.dropout, dropout_slice, cuda_dropout and cuda_dropout_slice over
f32, f16 and bf16 data: against the C functions called directly, against
numpy's float16 arithmetic and against torch's own x * mask * scale (the
formula rngtrk.torch computes today), slices against the box of the whole
tensor's dropout, torch tensors through DLPack, in place, and the refusals.
The CUDA calls run where torch sees a GPU; elsewhere their refusals."""
import numpy
import pytest

import rngtrk
from rngtrk import PhiloxState
from rngtrk._library import ffi, lib

LAYOUTS = ("stateless", "nvfuser", "torch-eager-cuda", "triton")
GEOMETRY = {"sm_count": 3, "max_threads_per_sm": 512}  # torch-eager-cuda: T = 768, several slabs
STATE = PhiloxState(0x0123456789ABCDEF, 4 * (2**32 - 3))  # stateless and triton counters cross 2^32


def data(dtype, n, seed=0):
    """n values of every kind: NaN, infinities, signed zeros, subnormals,
    values that overflow once scaled, ordinary ones; bf16 as uint16 bits."""
    rng = numpy.random.default_rng(seed)
    values = (rng.integers(-10000, 10000, n) / 97).astype(numpy.float32)
    special = numpy.array([numpy.nan, -numpy.nan, numpy.inf, -numpy.inf, 0.0, -0.0, 1e-40, 6e-8, 65000, -3e38],
                          dtype=numpy.float32)
    values[::7] = special[rng.integers(0, len(special), len(values[::7]))]
    if dtype == "f32":
        return values
    if dtype == "f16":
        with numpy.errstate(over="ignore"):
            return values.astype(numpy.float16)
    return bf16_bits(values)


def bf16_bits(values):
    """float32 -> bfloat16 bits, nearest even (NaN: quiet, sign kept)."""
    bits = values.astype(numpy.float32).view(numpy.uint32).astype(numpy.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(numpy.uint16)
    nan = numpy.isnan(values)
    rounded[nan] = ((bits[nan] >> 16) | 0x40).astype(numpy.uint16)
    return rounded


def as_float(dtype, x):
    if dtype == "bf16":
        return (x.astype(numpy.uint32) << 16).view(numpy.float32)
    return x.astype(numpy.float32)


def same(dtype, want, got):
    """Bit for bit, except that any NaN equals any NaN (numpy's and torch's
    conversions keep other NaN payloads than rngtrk's; the values agree)."""
    a, b = as_float(dtype, numpy.asarray(want)), as_float(dtype, numpy.asarray(got))
    both_nan = numpy.isnan(a) & numpy.isnan(b)
    width = numpy.uint32 if dtype == "f32" else numpy.uint16
    bits_equal = numpy.asarray(want).view(width) == numpy.asarray(got).view(width)
    return bool(numpy.all(both_nan | bits_equal))


def c_dropout(state, x, dtype, p, first, layout, **geometry):
    """rngtrk_dropout called directly through cffi."""
    spec = rngtrk.sampling.make_spec(layout, "bernoulli", "u8", p=p, **geometry)
    spec.dtype = rngtrk.sampling.DTYPES[dtype]
    out = numpy.empty_like(x)
    status = lib.rngtrk_dropout(ffi.new("rngtrk_philox_state *", (state.seed, state.offset)), spec, first, x.size,
                                ffi.from_buffer(x), ffi.from_buffer(out, require_writable=True), out.nbytes)
    assert status == 0, ffi.string(lib.rngtrk_last_error())
    return out


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("p", [0.8, 0.3, 1e-5, 1.0, 0.0])
def test_dropout_is_the_c_functions_and_the_mask_times_the_scale(layout, dtype, p):
    x = data(dtype, 3001, seed=int(p * 1000))
    extra = dict(GEOMETRY, numel=5000) if layout == "torch-eager-cuda" else {}
    got = rngtrk.dropout(STATE, x, p=p, first=17, layout=layout, dtype="bf16" if dtype == "bf16" else None, **extra)
    assert got.dtype == x.dtype and got.shape == x.shape
    assert got.tobytes() == c_dropout(STATE, x, dtype, p, 17, layout, **extra).tobytes()
    mask = rngtrk.sample(STATE, x.size, first=17, layout=layout, dist="bernoulli", dtype="u8", p=p, **extra)
    if dtype != "bf16":  # numpy's own float16: the product in float32, rounded once
        with numpy.errstate(over="ignore", invalid="ignore"):
            scale = numpy.float32(numpy.inf if p == 0 else 1.0 / p)  # the double rounded to float
            if dtype == "f16":
                scale = numpy.float32(numpy.float16(scale))  # then to the dtype
            kept = numpy.where(mask == 1, scale, numpy.float32(0))
            want = (x.astype(numpy.float32) * kept).astype(x.dtype)
        assert same(dtype, want, got)
    # In place.
    y = x.copy()
    assert rngtrk.dropout(STATE, y, out=y, p=p, first=17, layout=layout, dtype=dtype, **extra) is y
    assert y.tobytes() == got.tobytes()


def test_dropped_negatives_are_minus_zero_and_nan_stays_nan():
    x = numpy.array([-2.5, numpy.nan, 3.0, -0.0] * 250, dtype=numpy.float16)
    mask = rngtrk.sample(STATE, x.size, dist="bernoulli", dtype="u8", p=0.5)
    out = rngtrk.dropout(STATE, x, p=0.5)
    dropped = mask == 0
    assert numpy.all(numpy.isnan(out[numpy.isnan(x)]))
    finite = dropped & ~numpy.isnan(x)
    assert numpy.all(out[finite] == 0) and numpy.array_equal(numpy.signbit(out[finite]), numpy.signbit(x[finite]))
    assert numpy.array_equal(out[(mask == 1) & ~numpy.isnan(x)], x[(mask == 1) & ~numpy.isnan(x)] * 2)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_a_slice_is_the_box_of_the_whole_tensors_dropout(layout, dtype):
    shape, start, box = (7, 9, 11), (2, 1, 3), (4, 6, 5)
    whole_in = data(dtype, 7 * 9 * 11, seed=3).reshape(shape)
    extra = dict(GEOMETRY) if layout == "torch-eager-cuda" else {}
    whole = rngtrk.dropout(STATE, whole_in, p=0.6, layout=layout, dtype=dtype, numel=whole_in.size, **extra)
    cut = tuple(slice(s, s + n) for s, n in zip(start, box))
    x = numpy.ascontiguousarray(whole_in[cut])
    got = rngtrk.dropout_slice(STATE, shape, start, x, p=0.6, layout=layout, dtype=dtype, **extra)
    assert got.shape == box
    assert got.tobytes() == numpy.ascontiguousarray(whole.reshape(shape)[cut]).tobytes()
    y = x.copy()
    assert rngtrk.dropout_slice(STATE, shape, start, y, out=y, p=0.6, layout=layout, dtype=dtype, **extra) is y
    assert y.tobytes() == got.tobytes()


def test_refusals_name_the_problem():
    x = numpy.ones(8, dtype=numpy.float32)
    with pytest.raises(rngtrk.InvalidArgumentError, match="bernoulli needs"):
        rngtrk.dropout(STATE, x, p=1.5)
    with pytest.raises(rngtrk.InvalidArgumentError, match="not dtype f64"):  # the library's rule
        rngtrk.dropout(STATE, x.astype(numpy.float64), p=0.5)
    with pytest.raises(TypeError, match="dtype='bf16'"):
        rngtrk.dropout(STATE, x.view(numpy.uint16), p=0.5)
    bits = numpy.arange(8, dtype=numpy.uint16)  # bf16 bits, the output saying which
    torch = pytest.importorskip("torch")
    got = rngtrk.dropout(STATE, bits, out=torch.empty(8, dtype=torch.bfloat16), p=0.5)
    assert got.view(torch.int16).numpy().tobytes() == rngtrk.dropout(STATE, bits, p=0.5, dtype="bf16").tobytes()
    with pytest.raises(TypeError, match="float32"):
        rngtrk.dropout(STATE, x, out=numpy.empty(8, dtype=numpy.float16), p=0.5, dtype="f32")
    with pytest.raises(rngtrk.InvalidArgumentError, match="7 elements but count is 8"):
        rngtrk.dropout(STATE, x, out=numpy.empty(7, dtype=numpy.float32), p=0.5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'size'"):
        rngtrk.dropout(STATE, x, p=0.5, size=8)
    with pytest.raises(rngtrk.InvalidArgumentError, match="mean does not apply"):
        rngtrk.dropout(STATE, x, p=0.5, mean=1.0)
    with pytest.raises(rngtrk.InvalidArgumentError, match="outside"):
        rngtrk.dropout_slice(STATE, (4, 4), (3, 0), x.reshape(2, 4), p=0.5)
    with pytest.raises(rngtrk.InvalidArgumentError, match="same number of dimensions"):
        rngtrk.dropout_slice(STATE, (4, 4), (0,), x.reshape(2, 4), p=0.5)
    with pytest.raises(rngtrk.InvalidArgumentError, match="multiple of 4"):
        rngtrk.dropout(PhiloxState(1, 2), x, p=0.5)
    with pytest.raises(TypeError, match="host memory"):
        rngtrk.cuda_dropout(STATE, x, x, p=0.5)
    with pytest.raises(TypeError, match="host memory"):
        rngtrk.cuda_dropout_slice(STATE, (4, 4), (0, 0), x.reshape(2, 4), x.reshape(2, 4), p=0.5)
    assert rngtrk.dropout(STATE, numpy.empty(0, dtype=numpy.float16), p=0.5).size == 0


# -- torch tensors: torch's own x * mask * scale is the oracle ----------------------

torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian: python3-torch): tensor tests not run")

TORCH = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def torch_formula(x, mask, p):
    """What rngtrk.torch's dropout computes (p the keep probability):
    x * (mask.to(dtype) * tensor(1 / p, dtype))."""
    scale = torch.tensor(1.0 / p, dtype=x.dtype)
    return x * (torch.from_numpy(mask).to(x.dtype) * scale)


def bits_of(t):
    return t.view(torch.int16).numpy().view(numpy.uint16) if t.dtype == torch.bfloat16 else t.numpy()


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("p", [0.9, 0.37, 0.5])
def test_torch_tensors_give_torchs_own_formula(layout, dtype, p):
    values = torch.from_numpy(as_float(dtype, data(dtype, 2049, seed=5)).copy())
    x = values.to(TORCH[dtype])
    y = torch.empty_like(x)
    extra = dict(GEOMETRY) if layout == "torch-eager-cuda" else {}
    assert rngtrk.dropout(STATE, x, out=y, p=p, first=3, layout=layout, numel=3000, **extra) is y  # dtype from x
    mask = rngtrk.sample(STATE, x.numel(), first=3, layout=layout, dist="bernoulli", dtype="u8", p=p, numel=3000,
                         **extra)
    assert same(dtype, bits_of(torch_formula(x, mask, p)), bits_of(y))
    # A box of a 2-d tensor, shaped as x.
    box = torch.empty(3, 5, dtype=TORCH[dtype])
    got = rngtrk.dropout_slice(STATE, (6, 8), (2, 1), x[:15].reshape(3, 5).contiguous(), out=box, p=p, layout=layout,
                               **extra)
    assert got is box


@pytest.mark.skipif(not (rngtrk.cuda_available() and torch.cuda.is_available()), reason="no GPU: CUDA calls not run")
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_cuda_dropout_equals_the_cpu(layout, dtype):
    values = torch.from_numpy(as_float(dtype, data(dtype, 100003, seed=8)).copy())
    x = values.to(TORCH[dtype])
    want = rngtrk.dropout(STATE, x, out=torch.empty_like(x), p=0.7, first=5, layout=layout, **GEOMETRY)
    d = x.cuda()
    y = torch.empty_like(d)
    rngtrk.cuda_dropout(STATE, d, y, p=0.7, first=5, layout=layout, **GEOMETRY)
    torch.cuda.synchronize()
    assert same(dtype, bits_of(want), bits_of(y.cpu()))
    rngtrk.cuda_dropout(STATE, d, d, p=0.7, first=5, layout=layout, **GEOMETRY)  # in place
    torch.cuda.synchronize()
    assert same(dtype, bits_of(want), bits_of(d.cpu()))
    box_in = x[:60].reshape(3, 4, 5).contiguous()
    box_want = rngtrk.dropout_slice(STATE, (5, 6, 7), (1, 2, 2), box_in, out=torch.empty_like(box_in), p=0.7,
                                    layout=layout, **GEOMETRY)
    box_out = torch.empty_like(box_in).cuda()
    rngtrk.cuda_dropout_slice(STATE, (5, 6, 7), (1, 2, 2), box_in.cuda(), box_out, p=0.7, layout=layout, **GEOMETRY)
    torch.cuda.synchronize()
    assert same(dtype, bits_of(box_want), bits_of(box_out.cpu()))
