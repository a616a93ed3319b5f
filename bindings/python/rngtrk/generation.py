# SPDX-License-Identifier: Apache-2.0
"""The stream of a state, into numpy arrays or CPU tensors, without copies.

Element g of the stream of a state (seed, offset) is word g % 4 of
Philox4x32-10(key = (lo32(seed), hi32(seed)), counter = (lo32(b), hi32(b), 0, 0)),
b = offset/4 + g/4: a pure function of (seed, offset, g), so any slice
[first, first + count) equals the same slice of the whole stream.  The
library writes straight into the output's memory (buffers.py: a numpy
array, or any CPU object with __dlpack__ such as a torch tensor); the GIL
is released while it runs.
"""
from ._library import ffi, lib
from .buffers import host_buffer, new_host_array
from .errors import check, invalid
from .state import _u64, as_state

# The C element type each stream function writes.
_C_TYPES = {"u32": "uint32_t *", "f32": "float *"}


def host_output(count, out, dtype):
    """(result, buffer): `out` checked for `count` elements of `dtype`, or a
    fresh 1-d numpy array when `out` is None."""
    count = _u64(count, "count")
    if out is None:
        out = new_host_array(count, dtype)
    return out, host_buffer(out, count, dtype)


def fill(c_function, dtype, state, first, buffer):
    """Runs a stream function of the library into a checked host buffer."""
    target = ffi.cast(_C_TYPES[dtype], buffer.pointer) if buffer.count else ffi.NULL
    status = c_function(ffi.new("rngtrk_philox_state *", as_state(state)), first, buffer.count, target)
    if status:
        check(status)


def random_u32(state, count, first=0, out=None):
    """Elements first .. first+count-1 of the stream of `state` (a PhiloxState
    or its 16 bytes) as uint32.  Written into `out` when given (a
    C-contiguous, writable uint32 numpy array or CPU tensor of `count`
    elements, any shape), else into a new 1-d array; returns it.  Raises
    InvalidArgumentError (offset not a multiple of 4, bad `out`), TypeError
    (wrong dtype or kind of object) or RngtrkOverflowError (first + count >
    2**64)."""
    first = _u64(first, "first")
    result, buffer = host_output(count, out, "u32")
    fill(lib.rngtrk_random_u32, "u32", state, first, buffer)
    return result


def uniform_f32(state, count, first=0, out=None):
    """Like random_u32, as float32: (w & 0xFFFFFF) * 2**-24 for each stream
    word w, in [0, 1) and exact on every platform."""
    first = _u64(first, "first")
    result, buffer = host_output(count, out, "f32")
    fill(lib.rngtrk_uniform_f32, "f32", state, first, buffer)
    return result


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
