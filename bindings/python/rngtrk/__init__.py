# SPDX-License-Identifier: Apache-2.0
"""rngtrk: named Philox4x32-10 random-number states for distributed training.

The Python face of librngtrk, opened with cffi in out-of-line ABI mode (no
compiler at install or import time, and no declarations parsed at import):
the very same shared object C and Rust use.

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
from ._names import dtype_size
from .checkpoint_json import describe as describe_checkpoint, file_to_json as checkpoint_file_to_json
from .checkpoint_json import to_json as checkpoint_to_json
from .errors import (
    BufferTooSmallError, CorruptCheckpointError, DuplicateNameError, DuplicateSeedError,
    ForkOrderError, InternalError, InvalidArgumentError, RngtrkError, RngtrkMemoryError,
    RngtrkOverflowError, UnavailableError, UnknownNameError, UnsupportedVersionError, WrongRankError,
    RngtrkIOError, status_string, StreamReuseError, ReplayMismatchError,
)
from .distributed import Origin, dtensor_local_box, dtensor_offsets, fold_in
from .generation import philox4x32_10, random_u32, uniform_f32
from .sampling import (
    cpu_path, cuda_advance_graphsafe, cuda_available, cuda_dropout, cuda_dropout_slice, cuda_sample,
    cuda_sample_graphsafe, cuda_sample_slice, dropout, dropout_slice, offset_increment, sample, sample_slice,
)
from .state import STATE_BYTES, PhiloxState
from .tracker import DEFAULT_FORK_NAME, LedgerOverlap, Tracker

__version__ = ".".join(map(str, HEADER_VERSION))


def version_number():
    """The loaded library's version, MAJOR*10000 + MINOR*100 + PATCH."""
    return _lib.rngtrk_version_number()


def version_string():
    """The loaded library's version, "MAJOR.MINOR.PATCH"."""
    return _ffi.string(_lib.rngtrk_version_string()).decode("ascii")


__all__ = [
    # states, trackers and checkpoints
    "PhiloxState", "STATE_BYTES", "Tracker", "DEFAULT_FORK_NAME", "Origin", "checkpoint_to_json",
    "checkpoint_file_to_json", "describe_checkpoint",
    # generation on the CPU
    "philox4x32_10", "random_u32", "uniform_f32", "sample", "sample_slice", "dropout", "dropout_slice",
    "offset_increment", "dtype_size", "cpu_path",
    # generation on CUDA devices
    "cuda_available", "cuda_sample", "cuda_sample_slice", "cuda_dropout", "cuda_dropout_slice",
    "cuda_sample_graphsafe", "cuda_advance_graphsafe",
    # distributed training
    "fold_in", "dtensor_offsets", "dtensor_local_box",
    # errors
    "RngtrkError", "InvalidArgumentError", "DuplicateNameError", "DuplicateSeedError", "UnknownNameError",
    "ForkOrderError", "BufferTooSmallError", "CorruptCheckpointError", "UnsupportedVersionError",
    "RngtrkOverflowError", "RngtrkMemoryError", "UnavailableError", "InternalError", "WrongRankError",
    "RngtrkIOError", "StreamReuseError", "ReplayMismatchError", "status_string", "LedgerOverlap",
    # the library
    "library_path", "version_number", "version_string",
]
