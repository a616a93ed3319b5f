"""Generation into numpy arrays, without copies.

Element g of the stream of a state (seed, offset) is word g % 4 of
Philox4x32-10(key = (lo32(seed), hi32(seed)), counter = (lo32(b), hi32(b), 0, 0)),
b = offset/4 + g/4: a pure function of (seed, offset, g), so any slice
[first, first + count) equals the same slice of the whole stream.  The
library writes straight into the array's memory (ffi.from_buffer); the GIL
is released while it runs.
"""
import sys

from ._library import ffi, lib
from .errors import RngtrkOverflowError, check, invalid
from .state import _u64, as_state

# numpy dtypes by name, made on first use so `import rngtrk` works without
# numpy; and the cffi array type of the two the stream functions write.
_DTYPES = {}
_C_TYPES = {"uint32": "uint32_t[]", "float32": "float[]"}


def _numpy():
    try:
        import numpy
    except ImportError:
        raise ImportError("rngtrk: generating numbers needs numpy, which is not installed "
                          "(Debian: apt-get install python3-numpy; or pip install numpy)") from None
    return numpy


def _dtype(kind):
    if kind not in _DTYPES:
        _DTYPES[kind] = _numpy().dtype(kind)
    return _DTYPES[kind]


def output_array(count, out, kind):
    """`out` checked (numpy array of native dtype `kind`, C-contiguous,
    writable, `count` elements), or a new 1-d array of `count` elements."""
    count = _u64(count, "count")
    dtype = _dtype(kind)
    if count > sys.maxsize // dtype.itemsize:
        raise RngtrkOverflowError(f"{count} elements of {kind} do not fit in memory's address range")
    numpy = _numpy()  # already imported by _dtype: a dictionary lookup
    if out is None:
        return numpy.empty(count, dtype=dtype)
    if not isinstance(out, numpy.ndarray):
        raise TypeError(f"out must be a numpy.ndarray of {kind}, not {type(out).__name__}")
    if out.dtype != dtype:
        raise TypeError(f"out must have dtype {kind} (native byte order), not {out.dtype}")
    flags = out.flags
    if not flags.c_contiguous:
        raise invalid("out must be C-contiguous (use numpy.ascontiguousarray or a fresh array)")
    if not flags.writeable:
        raise invalid("out is read-only")
    if out.size != count:
        raise invalid(f"out has {out.size} elements but count is {count}")
    return out


def fill(c_function, kind, state, first, array):
    """Runs a stream function of the library into `array` (checked by
    output_array); returns `array`.  No copy: the library writes into the
    array's own memory."""
    size = array.size
    buffer = ffi.from_buffer(_C_TYPES[kind], array, require_writable=True) if size else ffi.NULL
    status = c_function(ffi.new("rngtrk_philox_state *", as_state(state)), first, size, buffer)
    if status:
        check(status)
    return array


def random_u32(state, count, first=0, out=None):
    """Elements first .. first+count-1 of the stream of `state` (a PhiloxState
    or its 16 bytes) as uint32.  Written into `out` when given (C-contiguous,
    writable uint32 numpy array of `count` elements, any shape), else into a
    new 1-d array; returns the array.  Raises InvalidArgumentError (offset not
    a multiple of 4, bad `out`), TypeError (wrong dtype) or RngtrkOverflowError
    (first + count > 2**64)."""
    first = _u64(first, "first")
    return fill(lib.rngtrk_random_u32, "uint32", state, first, output_array(count, out, "uint32"))


def uniform_f32(state, count, first=0, out=None):
    """Like random_u32, as float32: (w & 0xFFFFFF) * 2**-24 for each stream
    word w, in [0, 1) and exact on every platform."""
    first = _u64(first, "first")
    return fill(lib.rngtrk_uniform_f32, "float32", state, first, output_array(count, out, "float32"))


def philox4x32_10(counter, key):
    """The Philox4x32-10 bijection: 4 uint32 words of counter, 2 of key,
    returns the 4 output words as a tuple of ints."""
    counter, key = tuple(counter), tuple(key)
    if len(counter) != 4 or len(key) != 2:
        raise invalid("philox4x32_10 takes 4 counter words and 2 key words")
    for word in counter + key:
        if not 0 <= word < (1 << 32):
            raise invalid(f"word {word} is outside [0, 2**32)")
    out = ffi.new("uint32_t[4]")
    lib.rngtrk_philox4x32_10(ffi.new("uint32_t[4]", counter), ffi.new("uint32_t[2]", key), out)
    return tuple(out)
