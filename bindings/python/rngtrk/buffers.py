# SPDX-License-Identifier: Apache-2.0
"""Where the library writes: numpy arrays, DLPack tensors and CUDA arrays,
all without a copy.

A buffer is accepted from
- a numpy array (host memory);
- any object with ``__dlpack__`` (a torch tensor on the CPU or a GPU, a
  CuPy array, JAX, ...): its DLPack capsule is read for the pointer, the
  device, the dtype and the strides;
- any object with ``__cuda_array_interface__`` (CuPy, Numba, torch CUDA
  tensors).

It must be C-contiguous, writable (for outputs), of the requested dtype and
element count, and on the device the call expects.  A mistake raises
TypeError (a wrong kind of object, dtype or device) or InvalidArgumentError
(a ValueError: shape, contiguity, read-only) that names the problem.  bf16
has no numpy dtype: a numpy output of bf16 holds its uint16 bits, while a
torch ``bfloat16`` tensor is taken as it is.
"""
import ctypes
import sys
from collections import namedtuple

from ._library import ffi
from ._names import dtype_size
from .errors import RngtrkOverflowError, invalid

# rngtrk dtype -> numpy dtype name (element sizes are the library's: dtype_size)
NUMPY_OF = {"u8": "uint8", "u32": "uint32", "u64": "uint64", "f16": "float16", "bf16": "uint16",
            "f32": "float32", "f64": "float64"}

# DLPack type codes (dlpack.h): kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4.
_DLPACK_DTYPES = {(1, 8): "u8", (1, 32): "u32", (1, 64): "u64", (2, 16): "f16", (4, 16): "bf16", (2, 32): "f32",
                  (2, 64): "f64", (0, 64): "i64"}
# Bit patterns of 16-bit floats may also come as (u)int16 buffers.
_BITS16 = {(0, 16), (1, 16)}
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13

# __array_interface__/__cuda_array_interface__ typestr -> rngtrk dtype.
_TYPESTR = {"|u1": "u8", "<u4": "u32", "<u8": "u64", "<f2": "f16", "<f4": "f32", "<f8": "f64", "<i8": "i64"}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

# A checked buffer: `pointer` (an int), element `count`, `dtype`, `device`
# ("cpu" or "cuda"), `stream` (a CUDA stream the producer names, or None),
# and `keep`, what must stay alive while the library uses the memory.
Buffer = namedtuple("Buffer", "pointer count dtype device stream keep")


def _contiguous(shape, strides):
    """Whether strides (in elements, or None) describe a C-contiguous layout."""
    if strides is None:
        return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _count(shape):
    n = 1
    for size in shape:
        n *= size
    return n


def _from_dlpack(obj, what, stream):
    """(pointer, shape, dtype, device, stream) of an object with __dlpack__."""
    device_type = None
    if hasattr(obj, "__dlpack_device__"):
        device_type = obj.__dlpack_device__()[0]
    # A CUDA producer orders its pending work before the consumer's stream
    # (DLPack: 1 is the legacy default stream; 0 is not allowed).
    capsule = obj.__dlpack__(stream=stream or 1) if device_type == _DL_CUDA else obj.__dlpack__()
    tensor = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    # The capsule (not renamed: not consumed) frees the producer's
    # DLManagedTensor when it is collected; `obj` owns the memory.
    ndim = tensor.ndim
    shape = tuple(tensor.shape[i] for i in range(ndim))
    strides = tuple(tensor.strides[i] for i in range(ndim)) if tensor.strides else None
    code = (tensor.dtype.code, tensor.dtype.bits)
    if tensor.dtype.lanes != 1:
        raise TypeError(f"{what}: vector dtypes (lanes {tensor.dtype.lanes}) are not supported")
    dtype = _DLPACK_DTYPES.get(code, "bits16" if code in _BITS16 else None)
    if dtype is None:
        raise TypeError(f"{what}: DLPack dtype (code {code[0]}, {code[1]} bits) is none of rngtrk's dtypes")
    if not _contiguous(shape, strides):
        raise invalid(f"{what} is not C-contiguous (make it .contiguous() or pass a fresh tensor)")
    device = {_DL_CPU: "cpu", _DL_CUDA_HOST: "cpu", _DL_CUDA: "cuda", _DL_CUDA_MANAGED: "cuda"}.get(
        tensor.device.device_type)
    if device is None:
        raise TypeError(f"{what} is on DLPack device type {tensor.device.device_type}, neither the CPU nor CUDA")
    return (tensor.data or 0) + tensor.byte_offset, shape, dtype, device, capsule


def _from_cuda_array_interface(obj, what, writable):
    cai = obj.__cuda_array_interface__
    shape = tuple(cai["shape"])
    pointer, readonly = cai["data"]
    if writable and readonly:
        raise invalid(f"{what} is read-only")
    dtype = _TYPESTR.get(cai["typestr"], "bits16" if cai["typestr"] in ("<u2", "<i2") else None)
    if dtype is None:
        raise TypeError(f"{what}: typestr {cai['typestr']!r} is none of rngtrk's dtypes")
    strides = cai.get("strides")
    item = int(cai["typestr"][2:])  # an element's bytes: "<f4" has 4
    if strides is not None and not _contiguous(shape, tuple(s // item for s in strides)):
        raise invalid(f"{what} is not C-contiguous")
    return pointer or 0, shape, dtype, cai.get("stream")


def _is_torch(obj):
    return type(obj).__module__.split(".")[0] == "torch"


def default_stream(obj):
    """The stream a CUDA call on `obj` launches on when none is given:
    torch's (or CuPy's) current stream for their arrays, else 0 (NULL, the
    default stream)."""
    module = type(obj).__module__.split(".")[0]
    if module == "torch" and getattr(obj, "is_cuda", False):
        import torch
        return torch.cuda.current_stream(obj.device).cuda_stream
    if module == "cupy":
        import cupy
        return cupy.cuda.get_current_stream().ptr
    return 0


def _check_dtype(found, dtype, what):
    if found == dtype or (found == "bits16" and dtype in ("f16", "bf16")) or (found == "i64" and dtype == "u64"):
        return
    if found == "u16" or found == "bits16":
        found = "16-bit integers"
    raise TypeError(f"{what} has dtype {found}, but the call makes {dtype}")


def device_buffer(obj, count, dtype, what="out", writable=True, stream=None):
    """A CUDA buffer of `count` elements of `dtype` (None: any of rngtrk's;
    count None: any), for the CUDA calls."""
    if obj is None:
        raise TypeError(f"{what} is required: the CUDA calls write into device memory you allocate")
    if _is_torch(obj) and getattr(obj, "requires_grad", False) and writable:
        raise invalid(f"{what} requires grad: a random fill is not differentiable (pass a tensor that does not)")
    if _is_torch(obj) and not obj.is_cuda or type(obj).__module__.split(".")[0] == "numpy":
        raise TypeError(f"{what} is in host memory, but the CUDA calls need device memory "
                        f"(a torch CUDA tensor, a CuPy array, ...)")
    chosen = stream if stream is not None else default_stream(obj)
    if hasattr(obj, "__dlpack__") and (_is_torch(obj) or not hasattr(obj, "__cuda_array_interface__")):
        pointer, shape, found, device, keep = _from_dlpack(obj, what, chosen)
        if device != "cuda":
            raise TypeError(f"{what} is in host memory, but the CUDA calls need device memory (move it with .cuda())")
        producer_stream = None
    elif hasattr(obj, "__cuda_array_interface__"):
        pointer, shape, found, producer_stream = _from_cuda_array_interface(obj, what, writable)
        keep = None
    else:
        raise TypeError(f"{what} must be a CUDA array (__cuda_array_interface__ or a CUDA __dlpack__), "
                        f"not {type(obj).__name__}")
    dtype, n = _checked(found, shape, dtype, count, what)
    if stream is None and producer_stream not in (None, 1, 2):
        chosen = producer_stream  # the CUDA array interface names the producer's stream
    return Buffer(pointer, n, dtype, "cuda", chosen, (obj, keep))


def _checked(found, shape, dtype, count, what):
    """(dtype, element count) of a tensor found to hold `found` elements of
    `shape`: the dtype must be the call's (or becomes the call's), the
    count the call's."""
    if dtype is not None:
        _check_dtype(found, dtype, what)
    else:
        dtype = found
    n = _count(shape)
    if count is not None and n != count:
        raise invalid(f"{what} has {_elements(n)} but count is {count}")
    return dtype, n


def _elements(n):
    """"1 element", "5 elements"."""
    return f"{n} element" if n == 1 else f"{n} elements"


def host_buffer(obj, count, dtype, what="out", writable=True):
    """A host buffer of `count` elements of `dtype` (None: any), from a numpy
    array or a CPU __dlpack__ object (a torch CPU tensor)."""
    np = _numpy()
    if isinstance(obj, np.ndarray):
        expected = np.dtype(NUMPY_OF[dtype]) if dtype is not None else None
        if expected is not None and obj.dtype != expected:
            raise TypeError(f"{what} must have dtype {expected} (native byte order) for {dtype}, not {obj.dtype}")
        if dtype is None:
            dtype = {v: k for k, v in NUMPY_OF.items() if k != "bf16"}.get(obj.dtype.name)
            if dtype is None:
                raise TypeError(f"{what} has dtype {obj.dtype}, none of rngtrk's")
        if not obj.flags.c_contiguous:
            raise invalid(f"{what} must be C-contiguous (use numpy.ascontiguousarray or a fresh array)")
        if writable and not obj.flags.writeable:
            raise invalid(f"{what} is read-only")
        if count is not None and obj.size != count:
            raise invalid(f"{what} has {_elements(obj.size)} but count is {count}")
        pointer = int(ffi.cast("uintptr_t", ffi.from_buffer(obj, require_writable=writable))) if obj.size else 0
        return Buffer(pointer, obj.size, dtype, "cpu", None, obj)
    if hasattr(obj, "__dlpack__"):
        if _is_torch(obj) and writable and getattr(obj, "requires_grad", False):
            raise invalid(f"{what} requires grad: a random fill is not differentiable (pass a tensor that does not)")
        pointer, shape, found, device, keep = _from_dlpack(obj, what, None)
        if device != "cpu":
            raise TypeError(f"{what} is in device memory; use the rngtrk.cuda_* calls for it")
        dtype, n = _checked(found, shape, dtype, count, what)
        return Buffer(pointer, n, dtype, "cpu", None, (obj, keep))
    raise TypeError(f"{what} must be a numpy array or a CPU tensor with __dlpack__, not {type(obj).__name__}")


def new_host_array(count, dtype):
    """A fresh 1-d numpy array of `count` elements of `dtype`."""
    np = _numpy()
    item = dtype_size(dtype)
    if count > sys.maxsize // item:
        raise RngtrkOverflowError(f"{count} elements of {dtype} do not fit in memory's address range")
    return np.empty(count, dtype=NUMPY_OF[dtype])


def pointer(buffer):
    """The buffer's address as a cffi void* (NULL for an empty one)."""
    return ffi.cast("void *", buffer.pointer) if buffer.count else ffi.NULL


def _numpy():
    try:
        import numpy
    except ImportError:
        raise ImportError("rngtrk: generating numbers needs numpy, which is not installed "
                          "(Debian: apt-get install python3-numpy; or pip install numpy)") from None
    return numpy
