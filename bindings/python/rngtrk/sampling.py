"""Sampling: distributions, dtypes and stream layouts (docs/streams.md).

    rngtrk.sample(state, 1000, layout="stateless", dist="normal", dtype="f32", mean=0, std=0.02)
    rngtrk.sample_slice(state, (4096, 1024), (1024, 0), (1024, 1024), dist="uniform", dtype="f16")

Arrays come back as numpy arrays of the dtype (f16 as numpy.float16, bf16
as uint16 bit patterns: numpy has no bfloat16); `out=` fills an array in
place.  Every value is a pure function of (seed, offset, element index), so
a range equals the same range of a longer call, and a slice equals the
same box of the whole tensor.
"""
from ._library import ffi, lib
from .errors import check, invalid
from .generation import output_array
from .state import _u64, as_state

LAYOUTS = {"stateless": lib.RNGTRK_LAYOUT_STATELESS, "nvfuser": lib.RNGTRK_LAYOUT_NVFUSER,
           "torch-eager-cuda": lib.RNGTRK_LAYOUT_TORCH_EAGER_CUDA}
DISTRIBUTIONS = {"bits": lib.RNGTRK_DIST_BITS, "uniform": lib.RNGTRK_DIST_UNIFORM,
                 "normal": lib.RNGTRK_DIST_NORMAL, "bernoulli": lib.RNGTRK_DIST_BERNOULLI}
DTYPES = {"u8": lib.RNGTRK_DTYPE_U8, "u32": lib.RNGTRK_DTYPE_U32, "u64": lib.RNGTRK_DTYPE_U64,
          "f16": lib.RNGTRK_DTYPE_F16, "bf16": lib.RNGTRK_DTYPE_BF16, "f32": lib.RNGTRK_DTYPE_F32,
          "f64": lib.RNGTRK_DTYPE_F64}
# numpy dtype of each (bf16 has none: its bits as uint16).
NUMPY_DTYPES = {"u8": "uint8", "u32": "uint32", "u64": "uint64", "f16": "float16", "bf16": "uint16",
                "f32": "float32", "f64": "float64"}


def _pick(table, value, what):
    try:
        return table[value]
    except (KeyError, TypeError):
        raise invalid(f"unknown {what} {value!r}; one of {', '.join(table)}") from None


# The keyword parameters every sampling call takes (docs/streams.md).
SPEC_PARAMETERS = ("low", "high", "mean", "std", "p", "sm_count", "max_threads_per_sm", "numel", "threads")


def spec_for(caller, layout, dist, dtype, params):
    """make_spec for the public function `caller`: an unknown keyword is a
    TypeError naming `caller`, as Python names the function it was given to."""
    for name in params:
        if name not in SPEC_PARAMETERS:
            raise TypeError(f"{caller}() got an unexpected keyword argument {name!r} "
                            f"(sampling parameters: {', '.join(SPEC_PARAMETERS)})")
    return make_spec(layout, dist, dtype, **params)


def make_spec(layout="stateless", dist="uniform", dtype="f32", *, low=None, high=None, mean=None, std=None,
              p=None, sm_count=None, max_threads_per_sm=None, numel=0, threads=1):
    """A filled rngtrk_sample_spec (cffi struct) for these choices."""
    spec = ffi.new("rngtrk_sample_spec *")
    check(lib.rngtrk_sample_spec_init(spec, ffi.sizeof("rngtrk_sample_spec"), _pick(LAYOUTS, layout, "layout"),
                                      _pick(DISTRIBUTIONS, dist, "distribution"), _pick(DTYPES, dtype, "dtype")))
    params = {"uniform": (low, high), "normal": (mean, std), "bernoulli": (p, None)}.get(dist, (None, None))
    for given, name in ((low, "low"), (high, "high"), (mean, "mean"), (std, "std"), (p, "p")):
        if given is not None and given not in params:
            raise invalid(f"{name} does not apply to the {dist} distribution")
    if params[0] is not None:
        spec.param_a = float(params[0])
    if params[1] is not None:
        spec.param_b = float(params[1])
    if sm_count is not None:
        spec.sm_count = _u64(sm_count, "sm_count")
    if max_threads_per_sm is not None:
        spec.max_threads_per_sm = _u64(max_threads_per_sm, "max_threads_per_sm")
    spec.numel = _u64(numel, "numel")
    spec.threads = _u64(threads, "threads")
    return spec


def _output(count, out, dtype):
    return output_array(count, out, NUMPY_DTYPES[dtype])


def _buffer(array):
    return ffi.from_buffer(array, require_writable=True) if array.size else ffi.NULL


def sample(state, count, first=0, out=None, *, layout="stateless", dist="uniform", dtype="f32", **params):
    """Elements [first, first + count) of the tensor (layout, dist, dtype,
    params: low/high, mean/std, p, sm_count, max_threads_per_sm, numel,
    threads) for `state` (a PhiloxState or its 16 bytes)."""
    state = as_state(state)
    spec = spec_for("sample", layout, dist, dtype, params)
    count, first = _u64(count, "count"), _u64(first, "first")
    array = _output(count, out, dtype)
    check(lib.rngtrk_sample(state._as_c(), spec, first, count, _buffer(array), array.nbytes))
    return array


def sample_slice(state, global_shape, start, local_shape, out=None, *, layout="stateless", dist="uniform",
                 dtype="f32", **params):
    """The box [start, start + local_shape) of a row-major tensor of
    global_shape, shaped local_shape: the same bits as cutting it out of
    the whole tensor."""
    state = as_state(state)
    spec = spec_for("sample_slice", layout, dist, dtype, params)
    dims = [tuple(_u64(v, name) for v in values)
            for values, name in ((global_shape, "global_shape"), (start, "start"), (local_shape, "local_shape"))]
    if not len(dims[0]) == len(dims[1]) == len(dims[2]):
        raise invalid("global_shape, start and local_shape need the same number of dimensions")
    count = 1
    for n in dims[2]:
        count *= n
    array = _output(count, None if out is None else out.reshape(-1) if out.flags.c_contiguous else out, dtype)
    c_dims = [ffi.new("uint64_t[]", d) for d in dims]
    check(lib.rngtrk_sample_slice(state._as_c(), spec, len(dims[0]), c_dims[0], c_dims[1], c_dims[2],
                                  _buffer(array), array.nbytes))
    return (out if out is not None else array.reshape(dims[2]))


def offset_increment(numel, *, layout="stateless", dist="uniform", dtype="f32", **params):
    """How far a tracker moves when it draws a tensor of `numel` elements."""
    out = ffi.new("uint64_t *")
    check(lib.rngtrk_sample_offset_increment(spec_for("offset_increment", layout, dist, dtype, params), _u64(numel, "numel"),
                                             out))
    return out[0]


def cpu_path():
    """The CPU code path in use: "scalar", "avx2" or "avx512"."""
    return ffi.string(lib.rngtrk_cpu_path()).decode("ascii")
