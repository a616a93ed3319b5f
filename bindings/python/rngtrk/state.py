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
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an int, not {type(value).__name__}") from None
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an int, not bool")
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


class PhiloxState:
    """A Philox4x32-10 state: `seed` and `offset`, both unsigned 64-bit.

    `offset` counts 32-bit outputs, as PyTorch's does; the tracker and the
    generation functions require it to be a multiple of 4.  Immutable,
    hashable, and equal to another PhiloxState with the same fields."""

    __slots__ = ("_seed", "_offset")

    def __init__(self, seed, offset=0):
        object.__setattr__(self, "_seed", _u64(seed, "seed"))
        object.__setattr__(self, "_offset", _u64(offset, "offset"))

    @property
    def seed(self):
        return self._seed

    @property
    def offset(self):
        return self._offset

    def __setattr__(self, name, value):
        raise AttributeError("PhiloxState is immutable")

    def __delattr__(self, name):
        raise AttributeError("PhiloxState is immutable")

    def __eq__(self, other):
        if not isinstance(other, PhiloxState):
            return NotImplemented
        return self._seed == other._seed and self._offset == other._offset

    def __hash__(self):
        return hash((PhiloxState, self._seed, self._offset))

    def __repr__(self):
        return f"PhiloxState(seed={self._seed}, offset={self._offset})"

    def __reduce__(self):
        return (PhiloxState, (self._seed, self._offset))

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

    # Conversions to and from the C struct, for the rest of the binding.
    def _as_c(self):
        return ffi.new("rngtrk_philox_state *", (self._seed, self._offset))

    @classmethod
    def _from_c(cls, c_state):
        state = object.__new__(cls)
        object.__setattr__(state, "_seed", c_state.seed)
        object.__setattr__(state, "_offset", c_state.offset)
        return state


def as_state(value):
    """A PhiloxState from a PhiloxState or from its 16-byte form."""
    return value if isinstance(value, PhiloxState) else PhiloxState.from_bytes(value)
