# SPDX-License-Identifier: Apache-2.0
"""PhiloxState: an immutable (seed, offset) pair and its 16-byte form.

The 16 bytes are seed (u64, little-endian) then offset (u64, LE): the
layout of torch.cuda.get_rng_state().  Encoding and decoding go through the
library's codec (rngtrk_state_to_bytes / rngtrk_state_from_bytes), so there
is one definition for every language.
"""
import operator

from ._library import ffi, lib
from .errors import check, invalid

STATE_BYTES = lib.RNGTRK_STATE_BYTES
_U64_LIMIT = 1 << 64


def _u64(value, what):
    if type(value) is int and 0 <= value < _U64_LIMIT:  # the common case, fast
        return value
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an int, not bool")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an int, not {type(value).__name__}") from None
    if not 0 <= number < _U64_LIMIT:
        raise invalid(f"{what} {number} is outside [0, 2**64)")
    return number


def _sixteen_bytes(data):
    """The 16 bytes of `data`: bytes, bytearray, memoryview, or anything numpy
    turns into a uint8 array of 16 elements (a numpy array, a CPU
    torch.ByteTensor from torch.cuda.get_rng_state(), ...)."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        view = memoryview(data)
        if view.itemsize != 1:
            raise invalid(f"a state needs a buffer of bytes, not of {view.itemsize}-byte items "
                          f"(format {view.format!r})")
        raw = view.tobytes()
    elif hasattr(data, "__array__") or type(data).__module__ == "numpy":
        import numpy

        array = numpy.asarray(data)
        if array.dtype != numpy.uint8:
            raise invalid(f"a state array must have dtype uint8, not {array.dtype}")
        if array.size != STATE_BYTES:
            raise invalid(f"a state array must have {STATE_BYTES} elements, not {array.size}")
        raw = array.tobytes()
    else:
        raise TypeError("a state must be bytes, bytearray, memoryview or a uint8 array, "
                        f"not {type(data).__name__}")
    if len(raw) != STATE_BYTES:
        raise invalid(f"a state is {STATE_BYTES} bytes, not {len(raw)}")
    return raw


class PhiloxState(tuple):
    """A Philox4x32-10 state: `seed` and `offset`, both unsigned 64-bit.

    `offset` counts 32-bit outputs, as PyTorch's does; the tracker and the
    generation functions require it to be a multiple of 4.  A named tuple
    (seed, offset): immutable, hashable, unpackable, and equal to another
    state (or tuple) with the same fields."""

    __slots__ = ()

    def __new__(cls, seed, offset=0):
        return tuple.__new__(cls, (_u64(seed, "seed"), _u64(offset, "offset")))

    seed = property(operator.itemgetter(0), doc="the key, lo32/hi32 as Philox's two key words")
    offset = property(operator.itemgetter(1), doc="the stream position, in 32-bit outputs")

    def __repr__(self):
        return f"PhiloxState(seed={self[0]}, offset={self[1]})"

    def __getnewargs__(self):
        return tuple(self)

    def to_bytes(self):
        """The 16-byte form: seed u64 LE, then offset u64 LE."""
        out = ffi.new("uint8_t[16]")
        check(lib.rngtrk_state_to_bytes(self._as_c(), out))
        return bytes(ffi.buffer(out))

    @classmethod
    def from_bytes(cls, data):
        """Reads the 16-byte form from bytes, bytearray, memoryview or a numpy
        uint8 array of 16 elements (e.g. torch.cuda.get_rng_state())."""
        out = ffi.new("rngtrk_philox_state *")
        check(lib.rngtrk_state_from_bytes(_sixteen_bytes(data), out))
        return cls._from_c(out)

    @classmethod
    def _from_address(cls, address):
        """Reads the 16-byte form from memory at `address` (a CPU tensor's
        data_ptr(), say), through the library's codec, with no copy."""
        out = ffi.new("rngtrk_philox_state *")
        check(lib.rngtrk_state_from_bytes(ffi.cast("const uint8_t *", address), out))
        return cls._from_c(out)

    def advanced(self, increment):
        """This state moved past `increment` 32-bit outputs, rounded up to a
        whole block of 4: what a draw of that many outputs does to it.
        Raises InvalidArgumentError (offset not a multiple of 4) or
        RngtrkOverflowError (the offset would pass 2^64 - 1)."""
        out = ffi.new("rngtrk_philox_state *")
        check(lib.rngtrk_state_advance(self._as_c(), _u64(increment, "increment"), out))
        return PhiloxState._from_c(out)

    # Conversions to and from the C struct, for the rest of the binding.
    def _as_c(self):
        return ffi.new("rngtrk_philox_state *", self)

    @classmethod
    def _from_c(cls, c_state):
        return tuple.__new__(cls, (c_state.seed, c_state.offset))


def as_state(value):
    """A PhiloxState from a PhiloxState or from its 16-byte form."""
    return value if isinstance(value, PhiloxState) else PhiloxState.from_bytes(value)
