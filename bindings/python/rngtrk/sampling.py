# SPDX-License-Identifier: Apache-2.0
"""Sampling: distributions, dtypes and stream layouts (docs/streams.md), on
the CPU and on CUDA devices.

    rngtrk.sample(state, 1000, layout="stateless", dist="normal", dtype="f32", mean=0, std=0.02)
    rngtrk.sample_slice(state, (4096, 1024), (1024, 0), (1024, 1024), dist="uniform", dtype="f16")
    rngtrk.sample(state, x.numel(), out=x)                 # fill a torch CPU tensor in place
    rngtrk.cuda_sample(state, y)                           # fill a torch CUDA tensor (or CuPy array)

Outputs (buffers.py): a new numpy array of the dtype (f16 as
numpy.float16, bf16 as its uint16 bits: numpy has no bfloat16), or `out=`
any numpy array or CPU tensor with __dlpack__, written in place without a
copy; the CUDA calls write into device memory of any object with
__cuda_array_interface__ or a CUDA __dlpack__, on `stream` (default:
torch's or CuPy's current stream for their arrays, else the default
stream).  Every value is a pure function of (seed, offset, element index),
so a range equals the same range of a longer call, and a slice equals the
same box of the whole tensor, on the CPU and the GPU alike.
"""
from ._library import ffi, lib
from ._names import DISTRIBUTION, DTYPE, LAYOUT, dtype_size
from .buffers import device_buffer, host_buffer, pointer
from .errors import check, invalid
from .generation import host_output
from .state import _u64, as_state

# {name: value} of every layout, distribution and dtype, as the library
# names them (read from it at import: _names.py); an unknown name is the
# library's InvalidArgumentError.
LAYOUTS = LAYOUT.values
DISTRIBUTIONS = DISTRIBUTION.values
DTYPES = DTYPE.values
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
    check(lib.rngtrk_sample_spec_init(spec, ffi.sizeof("rngtrk_sample_spec"), LAYOUT.value(layout),
                                      DISTRIBUTION.value(dist), DTYPE.value(dtype)))
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


def resolve_dtype(out, dtype):
    """The dtype of a call: the one given, else the output's (a torch
    float16 or bfloat16 tensor says which), else f32."""
    if dtype is not None:
        return dtype
    if out is None:
        return "f32"
    found = _dtype_of(out)
    return found if found in DTYPES else "f32"


def _dtype_of(out):
    """rngtrk's name for the output's dtype, or None."""
    name = str(getattr(out, "dtype", ""))
    names = {"uint8": "u8", "torch.uint8": "u8", "uint32": "u32", "torch.uint32": "u32", "uint64": "u64",
             "torch.uint64": "u64", "float16": "f16", "torch.float16": "f16", "torch.bfloat16": "bf16",
             "float32": "f32", "torch.float32": "f32", "float64": "f64", "torch.float64": "f64"}
    return names.get(name)


def shapes(global_shape, start, local_shape):
    """(ndim, the three C arrays, box element count, box shape) of a slice."""
    dims = [tuple(_u64(v, name) for v in values)
            for values, name in ((global_shape, "global_shape"), (start, "start"), (local_shape, "local_shape"))]
    if not len(dims[0]) == len(dims[1]) == len(dims[2]):
        raise invalid("global_shape, start and local_shape need the same number of dimensions")
    count = 1
    for n in dims[2]:
        count *= n
    return len(dims[0]), [ffi.new("uint64_t[]", d or (0,)) for d in dims], count, dims[2]


def sample(state, count, first=0, out=None, *, layout="stateless", dist="uniform", dtype=None, **params):
    """Elements [first, first + count) of the tensor (layout, dist, dtype,
    params: low/high, mean/std, p, sm_count, max_threads_per_sm, numel,
    threads) for `state` (a PhiloxState or its 16 bytes)."""
    state = as_state(state)
    dtype = resolve_dtype(out, dtype)
    spec = spec_for("sample", layout, dist, dtype, params)
    first = _u64(first, "first")
    result, buffer = host_output(count, out, dtype)
    check(lib.rngtrk_sample(state._as_c(), spec, first, buffer.count, pointer(buffer),
                            buffer.count * dtype_size(dtype)))
    return result


def sample_slice(state, global_shape, start, local_shape, out=None, *, layout="stateless", dist="uniform",
                 dtype=None, **params):
    """The box [start, start + local_shape) of a row-major tensor of
    global_shape, shaped local_shape: the same bits as cutting it out of
    the whole tensor."""
    state = as_state(state)
    dtype = resolve_dtype(out, dtype)
    spec = spec_for("sample_slice", layout, dist, dtype, params)
    ndim, c_dims, count, box = shapes(global_shape, start, local_shape)
    result, buffer = host_output(count, out, dtype)
    check(lib.rngtrk_sample_slice(state._as_c(), spec, ndim, c_dims[0], c_dims[1], c_dims[2], pointer(buffer),
                                  buffer.count * dtype_size(dtype)))
    return result.reshape(box) if out is None else result


def dropout_dtype(x, out, dtype):
    """The data dtype of a dropout: `dtype` when given, else x's (numpy or
    torch float32, float16, torch bfloat16), else out's, else f32.  bf16
    bits in a numpy uint16 array need dtype="bf16"; a dtype dropout does not
    take is the library's InvalidArgumentError."""
    if dtype is not None:
        return dtype
    bits = False  # 16-bit integers seen: f16 or bf16 bits, unless the other array says which
    for array in (x, out):
        if array is None:
            continue
        found = _dtype_of(array)
        if found is not None:
            return found
        bits = bits or str(getattr(array, "dtype", "")) in ("uint16", "int16", "torch.int16", "torch.uint16")
    if bits:
        raise TypeError("dropout: 16-bit integers hold f16 or bf16 bits: say which with dtype='bf16' or 'f16'")
    return "f32"


def dropout_args(caller, x, out, p, layout, device=False, stream=None, dtype="f32", params=None, count=None):
    """(spec, source buffer, result, target buffer) of a dropout call over
    data of `dtype` (the spec: BERNOULLI with p, the dtype the data's);
    `count`, when given, is the element count x and out must have."""
    spec = spec_for(caller, layout, "bernoulli", "u8", {"p": p, **(params or {})})
    spec.dtype = DTYPE.value(dtype)
    if device:
        source = device_buffer(x, count, dtype, "x", writable=False, stream=stream)
        if out is None:
            raise TypeError(f"{caller}: out is required (the CUDA calls do not allocate; out=x works in place)")
        target = device_buffer(out, source.count, dtype, "out", stream=stream)
        return spec, source, out, target
    source = host_buffer(x, count, dtype, "x", writable=False)
    result, target = host_output(source.count, out, dtype)
    return spec, source, result, target


def dropout(state, x, out=None, *, p, first=0, layout="stateless", dtype=None, **params):
    """Dropout of the values `x` (a numpy array or CPU tensor of f32, f16 or
    bf16: numpy float32 or float16, uint16 bits with dtype="bf16", torch
    float32, float16 or bfloat16) as elements [first, first + x.size) of a
    tensor, as torch's x * mask * scale computes it: out = x * scale where
    the element is kept (keep probability `p`; scale = 1/p in the data's
    dtype), else x * 0 (-0 for a negative, NaN for NaN).  `params`: the
    torch-eager-cuda geometry (sm_count, max_threads_per_sm, numel) and
    threads.  `out` defaults to a new 1-d array; out=x works in place."""
    state = as_state(state)
    dtype = dropout_dtype(x, out, dtype)
    spec, source, result, target = dropout_args("dropout", x, out, p, layout, dtype=dtype,
                                                params=params)
    check(lib.rngtrk_dropout(state._as_c(), spec, _u64(first, "first"), source.count, pointer(source),
                             pointer(target), target.count * dtype_size(dtype)))
    return result


def dropout_slice(state, global_shape, start, x, out=None, *, p, layout="stateless", dtype=None, **params):
    """Dropout of this rank's box `x` (shape local_shape) of a row-major
    tensor of global_shape at `start`: the same values as the box of the
    whole tensor's dropout (see dropout).  `out` defaults to a new array of
    x's shape; out=x works in place."""
    state = as_state(state)
    dtype = dropout_dtype(x, out, dtype)
    ndim, c_dims, count, box = shapes(global_shape, start, tuple(getattr(x, "shape", ())))
    spec, source, result, target = dropout_args("dropout_slice", x, out, p, layout, dtype=dtype,
                                                params=params, count=count)
    check(lib.rngtrk_dropout_slice(state._as_c(), spec, ndim, c_dims[0], c_dims[1], c_dims[2], pointer(source),
                                   pointer(target), target.count * dtype_size(dtype)))
    return result.reshape(box) if out is None else result


def offset_increment(numel, *, layout="stateless", dist="uniform", dtype="f32", **params):
    """How far a tracker moves when it draws a tensor of `numel` elements."""
    out = ffi.new("uint64_t *")
    check(lib.rngtrk_sample_offset_increment(spec_for("offset_increment", layout, dist, dtype, params),
                                             _u64(numel, "numel"), out))
    return out[0]


def cpu_path():
    """The CPU code path in use: "scalar", "avx2" or "avx512"."""
    return ffi.string(lib.rngtrk_cpu_path()).decode("ascii")


# -- CUDA ---------------------------------------------------------------------------

def cuda_available():
    """Whether the CUDA calls can run here (a device, and a library built
    with CUDA); rngtrk.last_error() is not needed: the reason is raised by
    the calls themselves as UnavailableError."""
    return lib.rngtrk_cuda_available() == lib.RNGTRK_OK


def _stream(buffer):
    return ffi.cast("void *", buffer.stream or 0)


def cuda_sample(state, out, first=0, *, stream=None, layout="stateless", dist="uniform", dtype=None, **params):
    """Fills the device array `out` (__cuda_array_interface__ or a CUDA
    __dlpack__: torch CUDA tensors, CuPy) with elements [first, first +
    out.size) of the tensor, on `stream` (a cudaStream_t as an int; default:
    torch's or CuPy's current stream for their arrays).  Asynchronous: the
    values are there when the stream has run.  Returns `out`."""
    state = as_state(state)
    dtype = resolve_dtype(out, dtype)
    spec = spec_for("cuda_sample", layout, dist, dtype, params)
    buffer = device_buffer(out, None, dtype, "out", stream=stream)
    check(lib.rngtrk_cuda_sample(state._as_c(), spec, _u64(first, "first"), buffer.count, pointer(buffer),
                                 buffer.count * dtype_size(dtype), _stream(buffer)))
    return out


def cuda_sample_slice(state, global_shape, start, local_shape, out, *, stream=None, layout="stateless",
                      dist="uniform", dtype=None, **params):
    """sample_slice into the device array `out` (local_shape's elements)."""
    state = as_state(state)
    dtype = resolve_dtype(out, dtype)
    spec = spec_for("cuda_sample_slice", layout, dist, dtype, params)
    ndim, c_dims, count, _ = shapes(global_shape, start, local_shape)
    buffer = device_buffer(out, count, dtype, "out", stream=stream)
    check(lib.rngtrk_cuda_sample_slice(state._as_c(), spec, ndim, c_dims[0], c_dims[1], c_dims[2], pointer(buffer),
                                       buffer.count * dtype_size(dtype), _stream(buffer)))
    return out


def cuda_dropout(state, x, out, *, p, first=0, layout="stateless", stream=None, dtype=None, **params):
    """dropout on device arrays `x` and `out` (f32, f16 or bf16; out=x works
    in place), in one kernel on `stream`.  Returns `out`."""
    state = as_state(state)
    dtype = dropout_dtype(x, out, dtype)
    spec, source, result, target = dropout_args("cuda_dropout", x, out, p, layout, device=True, stream=stream,
                                                dtype=dtype, params=params)
    check(lib.rngtrk_cuda_dropout(state._as_c(), spec, _u64(first, "first"), source.count, pointer(source),
                                  pointer(target), target.count * dtype_size(dtype), _stream(target)))
    return result


def cuda_dropout_slice(state, global_shape, start, x, out, *, p, layout="stateless", stream=None, dtype=None,
                       **params):
    """dropout_slice on device arrays `x` and `out` (x's shape is the box's),
    in one kernel on `stream`.  Returns `out`."""
    state = as_state(state)
    dtype = dropout_dtype(x, out, dtype)
    ndim, c_dims, count, _ = shapes(global_shape, start, tuple(getattr(x, "shape", ())))
    spec, source, result, target = dropout_args("cuda_dropout_slice", x, out, p, layout, device=True, stream=stream,
                                                dtype=dtype, params=params,
                                                count=count)
    check(lib.rngtrk_cuda_dropout_slice(state._as_c(), spec, ndim, c_dims[0], c_dims[1], c_dims[2],
                                        pointer(source), pointer(target), target.count * dtype_size(dtype),
                                        _stream(target)))
    return result


def _device_state(device_state, stream):
    """Two 64-bit integers (seed, offset) in device memory: a torch int64
    tensor of 2 elements on the device, a CuPy uint64 array, ..."""
    return device_buffer(device_state, 2, "u64", "device_state", stream=stream)


def cuda_sample_graphsafe(device_state, out, first=0, *, stream=None, layout="stateless", dist="uniform",
                          dtype=None, **params):
    """cuda_sample whose kernel reads (seed, offset) from `device_state` (2
    64-bit integers in device memory) when it runs: captured in a CUDA
    graph, every replay draws from the current state.  Pair it with
    cuda_advance_graphsafe in the same capture."""
    dtype = resolve_dtype(out, dtype)
    spec = spec_for("cuda_sample_graphsafe", layout, dist, dtype, params)
    buffer = device_buffer(out, None, dtype, "out", stream=stream)
    state = _device_state(device_state, buffer.stream if stream is None else stream)
    check(lib.rngtrk_cuda_sample_graphsafe(ffi.cast("uint64_t *", state.pointer), spec, _u64(first, "first"),
                                           buffer.count, pointer(buffer), buffer.count * dtype_size(dtype),
                                           _stream(buffer)))
    return out


def cuda_advance_graphsafe(device_state, increment, *, stream=None):
    """Adds `increment` rounded up to a multiple of 4 to device_state[1] on
    the device, in stream order."""
    state = _device_state(device_state, stream)
    check(lib.rngtrk_cuda_advance_graphsafe(ffi.cast("uint64_t *", state.pointer), _u64(increment, "increment"),
                                            _stream(state)))
