# SPDX-License-Identifier: Apache-2.0
"""Exceptions: one class per rngtrk_status code, rooted at RngtrkError.

Each exception carries `.code` (the status value) and `.message` (the
library's rngtrk_last_error() text, copied at once, or the binding's own
words when the binding refuses an argument before calling C).  Where a
built-in class says the same thing, the class also derives from it, so
`except KeyError` catches an unknown name and `except ValueError` a bad
argument, as Python users expect.
"""
from ._library import ffi, lib

# {status code: the class raised for it}: each class below that sets its own
# `code` enters itself (RngtrkError.__init_subclass__), so the class is the
# one place that pairs a status with its exception.
ERROR_CLASSES = {}


class RngtrkError(Exception):
    """Base class of every error librngtrk reports."""

    code = None  # the rngtrk_status value; set on each subclass

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Only a class that names a status itself: subclasses that refine one
        # (rngtrk.torch's, with upstream's built-in bases) leave it to theirs.
        if "code" in vars(cls):
            if cls.code in ERROR_CLASSES:
                raise TypeError(f"{cls.__name__}: status {cls.code} is {ERROR_CLASSES[cls.code].__name__}'s")
            ERROR_CLASSES[cls.code] = cls

    def __init__(self, message, code=None):
        if code is not None:
            self.code = code
        self.message = message
        super().__init__(message)

    def __str__(self):
        # KeyError would otherwise print the repr() of the message.  The
        # status is named once: some messages already start with it.
        if self.code is None:
            return self.message
        what = status_string(self.code)
        return self.message if self.message.startswith(what) else f"{what}: {self.message}"

    def __reduce__(self):
        return (_rebuild, (type(self), self.message, self.code))


def _rebuild(cls, message, code):
    return cls(message, code)


class InvalidArgumentError(RngtrkError, ValueError):
    """RNGTRK_E_INVALID_ARGUMENT: a bad name, an offset that is not a
    multiple of 4, a value out of range, a closed tracker, ..."""
    code = lib.RNGTRK_E_INVALID_ARGUMENT


class DuplicateNameError(RngtrkError, ValueError):
    """RNGTRK_E_DUPLICATE_NAME: a named state with that name exists."""
    code = lib.RNGTRK_E_DUPLICATE_NAME


class DuplicateSeedError(RngtrkError, ValueError):
    """RNGTRK_E_DUPLICATE_SEED: another named state already uses that seed."""
    code = lib.RNGTRK_E_DUPLICATE_SEED


class UnknownNameError(RngtrkError, KeyError):
    """RNGTRK_E_UNKNOWN_NAME: no named state has that name."""
    code = lib.RNGTRK_E_UNKNOWN_NAME


class ForkOrderError(RngtrkError, RuntimeError):
    """RNGTRK_E_FORK_ORDER: a restore of a fork that is not the innermost
    open one (or with none open), reset or load while a fork is open, or a
    set_states that would drop an open fork's state.  Forking a name that is
    already open, add, and set_states keeping the open forks' names are
    allowed inside forks (as in Megatron-LM)."""
    code = lib.RNGTRK_E_FORK_ORDER


class BufferTooSmallError(RngtrkError, ValueError):
    """RNGTRK_E_BUFFER_TOO_SMALL: an output buffer cannot hold the result."""
    code = lib.RNGTRK_E_BUFFER_TOO_SMALL


class CorruptCheckpointError(RngtrkError, ValueError):
    """RNGTRK_E_CORRUPT: checkpoint bytes are damaged or malformed."""
    code = lib.RNGTRK_E_CORRUPT


class UnsupportedVersionError(RngtrkError, ValueError):
    """RNGTRK_E_UNSUPPORTED_VERSION: a checkpoint format version this library
    does not read."""
    code = lib.RNGTRK_E_UNSUPPORTED_VERSION


class RngtrkOverflowError(RngtrkError, OverflowError):
    """RNGTRK_E_OVERFLOW: an offset, index or size would pass its range."""
    code = lib.RNGTRK_E_OVERFLOW


class RngtrkMemoryError(RngtrkError, MemoryError):
    """RNGTRK_E_OUT_OF_MEMORY: an allocation failed."""
    code = lib.RNGTRK_E_OUT_OF_MEMORY


class UnavailableError(RngtrkError, RuntimeError):
    """RNGTRK_E_UNAVAILABLE: the feature is not available here (e.g. no GPU)."""
    code = lib.RNGTRK_E_UNAVAILABLE


class InternalError(RngtrkError, RuntimeError):
    """RNGTRK_E_INTERNAL: a bug in rngtrk; please report it."""
    code = lib.RNGTRK_E_INTERNAL


class WrongRankError(RngtrkError, ValueError):
    """RNGTRK_E_WRONG_RANK: the checkpoint was written by a rank whose
    streams differ from this tracker's (load with any_rank=True to take it)."""
    code = lib.RNGTRK_E_WRONG_RANK


class RngtrkIOError(RngtrkError, OSError):
    """RNGTRK_E_IO: a checkpoint file could not be read or written."""
    code = lib.RNGTRK_E_IO


class StreamReuseError(RngtrkError, RuntimeError):
    """RNGTRK_E_STREAM_REUSE: the ledger refused a reservation whose numbers
    were handed out already (the message names both ranges)."""
    code = lib.RNGTRK_E_STREAM_REUSE


class ReplayMismatchError(RngtrkError, RuntimeError):
    """RNGTRK_E_REPLAY_MISMATCH: a replayed recomputation drew differently
    from the forward (expected and actual in the message)."""
    code = lib.RNGTRK_E_REPLAY_MISMATCH


def status_string(code):
    """The library's fixed description of a status code."""
    return ffi.string(lib.rngtrk_status_string(code)).decode("utf-8")


def error_for(code, message):
    """The exception for status `code` (RngtrkError itself for a code this
    binding does not know, which a newer library might return)."""
    return ERROR_CLASSES.get(code, RngtrkError)(message, code)


def check(status):
    """Raises the exception for a failed call; the message is copied right
    away, before any other call can replace it."""
    if status != 0:
        raise error_for(status, ffi.string(lib.rngtrk_last_error()).decode("utf-8", "replace"))


def invalid(message):
    """An InvalidArgumentError raised by the binding itself."""
    return InvalidArgumentError(message)
