# SPDX-License-Identifier: Apache-2.0
"""Where torch keeps a CUDA generator's state, and the 16-byte form of a state.

Every drop-in tracker reads and writes PyTorch's CUDA generators through
these few functions, so the conversions between torch's objects (a
16-byte CPU ByteTensor, a torch.Generator) and rngtrk's PhiloxState live in
one place.
"""
import sys

import torch

from .._library import ffi
from ..errors import InvalidArgumentError, UnavailableError
from ..state import STATE_BYTES, PhiloxState


class StateFormatError(InvalidArgumentError, RuntimeError):
    """A state tensor that is not 16 uint8 values (torch raises RuntimeError
    for such a generator state; this is also rngtrk's InvalidArgumentError)."""


class GraphSafeUnavailableError(UnavailableError, AssertionError):
    """Graph-safe generator states asked of a torch that has none (torch
    < 2.2): the AssertionError Megatron-LM raises, and rngtrk's
    UnavailableError."""


class NoCudaError(UnavailableError, AssertionError):
    """A CUDA generator asked of a torch without CUDA: the AssertionError
    torch raises ("Torch not compiled with CUDA enabled"), and rngtrk's
    UnavailableError."""


def cuda_ready():
    """Whether torch can run CUDA ops here (False on CPU-only torch)."""
    return torch.cuda.is_available()


def graph_safe_api():
    """Whether this torch has graph-safe generator states (torch >= 2.2).
    (Not CUDAGraph.register_generator_state: torch 2.14 deprecated it, a
    no-op that warns at every call, and a CPU-only build lacks it.)"""
    return (hasattr(torch.Generator, "graphsafe_set_state") and hasattr(torch.Generator, "graphsafe_get_state")
            and hasattr(torch.Generator, "clone_state"))


def why_no_cuda():
    """Why torch cannot run CUDA ops here, in words: no CUDA build, or no
    device."""
    if not torch.backends.cuda.is_built():
        return f"this torch ({torch.__version__}) is built without CUDA"
    count = torch.cuda.device_count()
    if count == 0:
        return f"this torch ({torch.__version__}, CUDA {torch.version.cuda}) sees no CUDA device"
    return f"this torch ({torch.__version__}) cannot use its {count} CUDA device(s)"


def graph_safe_supported():
    """Whether graph-safe states can be used here: the API and a device."""
    return cuda_ready() and graph_safe_api()


def capturing():
    """Whether the current CUDA stream is capturing a graph (torch refuses
    to copy or set a generator's state then)."""
    return cuda_ready() and torch.cuda.is_current_stream_capturing()


def require_cuda(what):
    if not cuda_ready():
        raise NoCudaError(f"{what} needs a CUDA device: {why_no_cuda()}")


def default_generator(device=None):
    """torch's default CUDA generator of `device` (an index, "cuda[:N]", a
    torch.device, or None/-1 for the current device)."""
    if device is None or device == -1:
        generators = torch.cuda.default_generators
        if generators:  # CUDA is initialised: the current device's, with no more checks (every fork and draw asks)
            return generators[torch.cuda.current_device()]
    require_cuda("torch's CUDA generator")
    if device is None or device == -1:
        index = None
    elif isinstance(device, int):
        index = device
    else:
        index = torch.device(device).index
    torch.cuda.init()  # default_generators is empty until CUDA is initialised
    return torch.cuda.default_generators[torch.cuda.current_device() if index is None else index]


def state_tensor(state):
    """A PhiloxState as torch.cuda.get_rng_state()'s 16-byte CPU ByteTensor."""
    return torch.frombuffer(bytearray(state.to_bytes()), dtype=torch.uint8)


def state_of(value, what="state"):
    """A PhiloxState from a 16-byte uint8 tensor, bytes, a PhiloxState or a
    torch.Generator (its get_state()).  Anything else is a TypeError, a
    tensor of another size or dtype a StateFormatError, both naming `what`."""
    if isinstance(value, PhiloxState):
        return value
    if isinstance(value, torch.Generator):
        value = value.get_state()
    if isinstance(value, torch.Tensor):
        if value.dtype != torch.uint8 or value.numel() != STATE_BYTES:
            raise StateFormatError(f"{what}: a state tensor is {STATE_BYTES} uint8 values "
                                   f"(torch.cuda.get_rng_state()), not {value.numel()} of {value.dtype}")
        if value.is_cpu and value.is_contiguous():  # read where it lies (the per-call cost of state=)
            return PhiloxState._from_address(value.data_ptr())
        return PhiloxState.from_bytes(value.detach().cpu().contiguous().numpy().tobytes())
    if isinstance(value, (bytes, bytearray, memoryview)):
        return PhiloxState.from_bytes(value)
    raise TypeError(f"{what} is a {type(value).__name__}: a state is a 16-byte uint8 tensor "
                    "(torch.cuda.get_rng_state()), a torch.Generator, 16 bytes or a PhiloxState")


_STATE_P = ffi.typeof("rngtrk_philox_state *")
# The library's struct is two u64 in the machine's order: on a
# little-endian machine that is the 16-byte form itself.
_BYTES_ARE_THE_STRUCT = sys.byteorder == "little" and ffi.sizeof("rngtrk_philox_state") == STATE_BYTES


def state_pointer(value, what="state"):
    """The library's `rngtrk_philox_state *` of what state_of takes, valid
    while `value` lives: a CPU state tensor's own 16 bytes where they are
    the struct (a little-endian machine, contiguous, 8-byte aligned), with
    nothing read or copied in Python (a draw's per-call cost); else a new
    struct of state_of(value)."""
    if type(value) is PhiloxState:
        return ffi.new(_STATE_P, value)
    if (_BYTES_ARE_THE_STRUCT and type(value) is torch.Tensor and value.dtype is torch.uint8 and value.is_cpu
            and value.numel() == STATE_BYTES and value.is_contiguous()):
        address = value.data_ptr()
        if address % 8 == 0:
            return ffi.cast(_STATE_P, address)
    return ffi.new(_STATE_P, state_of(value, what))


def read_generator(generator):
    """The PhiloxState a CUDA torch.Generator holds now: its seed and offset
    as two ints where torch has Generator.get_offset (2.1 and later; no
    state tensor is made: every fork and draw reads it), else from
    get_state()."""
    get_offset = getattr(generator, "get_offset", None)
    if get_offset is not None:
        return PhiloxState(generator.initial_seed(), get_offset())
    return PhiloxState.from_bytes(generator.get_state().numpy().tobytes())


def write_generator(generator, state):
    """Sets a CUDA torch.Generator to `state`: manual_seed and set_offset
    where torch has them (what set_state does with a state tensor, without
    making one), else set_state (which copies the 16 bytes)."""
    set_offset = getattr(generator, "set_offset", None)
    if set_offset is not None:
        generator.manual_seed(state[0])
        set_offset(state[1])
    else:
        generator.set_state(state_tensor(state))


def advance_generator(generator, state, increment):
    """Moves a CUDA torch.Generator that holds `state` past `increment`
    outputs (rounded up to 4, as PhiloxState.advanced): only its offset
    changes."""
    after = state.advanced(increment)
    set_offset = getattr(generator, "set_offset", None)
    if set_offset is not None:
        set_offset(after[1])
    else:
        write_generator(generator, after)


def new_generator(state):
    """A CUDA torch.Generator of the current device holding `state`."""
    generator = torch.Generator(device=f"cuda:{torch.cuda.current_device()}")
    write_generator(generator, state)
    return generator
