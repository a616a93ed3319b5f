"""rngtrk: named Philox4x32-10 random-number states for distributed training.

The Python face of librngtrk, opened with cffi in ABI mode (no compiler at
install or import time): the very same shared object C and Rust use.

    import rngtrk
    with rngtrk.Tracker() as tracker:
        tracker.manual_seed(1234)
        tracker.add("model-parallel-rng", 1234 + 2718)
        with tracker.fork():                      # "model-parallel-rng"
            mask = tracker.uniform_f32(4096)      # draws and advances the state
        checkpoint = tracker.save()

The tracker's method names and behaviour follow TransformerEngine's and
Megatron-LM's CudaRNGStatesTracker (add, fork, get_states, set_states,
reset), with their defects fixed; docs/tracker.md has the rules.
"""
from ._library import HEADER_VERSION, ffi as _ffi, lib as _lib, library_path
from .checkpoint_json import describe as describe_checkpoint, file_to_json as checkpoint_file_to_json
from .checkpoint_json import to_json as checkpoint_to_json
from .errors import (
    BufferTooSmallError, CorruptCheckpointError, DuplicateNameError, DuplicateSeedError,
    ForkOrderError, InternalError, InvalidArgumentError, RngtrkError, RngtrkMemoryError,
    RngtrkOverflowError, UnavailableError, UnknownNameError, UnsupportedVersionError, WrongRankError,
    RngtrkIOError, status_string,
)
from .distributed import Origin, dtensor_local_box, dtensor_offsets, fold_in
from .generation import philox4x32_10, random_u32, uniform_f32
from .sampling import (
    cpu_path, cuda_advance_graphsafe, cuda_available, cuda_dropout, cuda_sample, cuda_sample_graphsafe,
    cuda_sample_slice, dropout, dtype_size, offset_increment, sample, sample_slice,
)
from .state import STATE_BYTES, PhiloxState
from .tracker import DEFAULT_FORK_NAME, Tracker

__version__ = ".".join(map(str, HEADER_VERSION))


def version_number():
    """The loaded library's version, MAJOR*10000 + MINOR*100 + PATCH."""
    return _lib.rngtrk_version_number()


def version_string():
    """The loaded library's version, "MAJOR.MINOR.PATCH"."""
    return _ffi.string(_lib.rngtrk_version_string()).decode("ascii")


__all__ = [
    "BufferTooSmallError", "CorruptCheckpointError", "DEFAULT_FORK_NAME", "DuplicateNameError",
    "DuplicateSeedError", "ForkOrderError", "InternalError", "InvalidArgumentError", "PhiloxState",
    "RngtrkError", "RngtrkMemoryError", "RngtrkOverflowError", "STATE_BYTES", "Tracker",
    "UnavailableError", "UnknownNameError", "UnsupportedVersionError", "checkpoint_to_json",
    "describe_checkpoint", "library_path", "WrongRankError", "RngtrkIOError", "dtensor_local_box", "dtensor_offsets", "philox4x32_10", "random_u32", "status_string",
    "uniform_f32", "version_number", "version_string", "sample", "sample_slice", "offset_increment", "cpu_path",
    "Origin", "fold_in", "dropout", "dtype_size", "cuda_available", "cuda_sample", "cuda_sample_slice", "cuda_dropout",
    "cuda_sample_graphsafe", "cuda_advance_graphsafe", "checkpoint_file_to_json",
]
