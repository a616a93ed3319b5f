# SPDX-License-Identifier: Apache-2.0
"""The process's own generators, for RNGState(process=True): Python's
`random`, NumPy's global generator (when NumPy imports), torch's CPU
generator and the current CUDA device's default generator — what training
stacks seed per rank and save per rank (Accelerate's random_states_{i}.pkl,
Megatron-LM's rng_state) — read, written, and derived afresh, as bytes.

A generator is (kind, device); device is 0 for every kind (the field is kept
in the table's layout for later kinds).  The CUDA generator is the current
device's, as in Megatron-LM's rng_state: a rank draws on its own device,
and replicas on other local devices (every rank sees every GPU of its node)
hold the same kind of state.  Its state is bytes in the layout of the
process table (docs/checkpoint-format.md, "The DCP process table"):

  python     u32 version (3), 625 u32 (Mersenne Twister words and index),
             u8 has_gauss, f64 gauss_next                       (2513 bytes)
  numpy      624 u32 words, u32 pos, u32 has_gauss, f64 gauss   (2512 bytes)
  torch-cpu  torch's own CPU generator state, as torch lays it out
  cuda       torch.cuda.get_rng_state()'s 16 bytes (seed, offset)

torch's CPU generator is read and written through torch's own functions,
not the torch.get_rng_state() that rngtrk.torch extends
(rngtrk.torch._rng_state_hook), so the bytes are torch's alone.
"""
import functools
import hashlib
import random
import struct

import torch

from ..errors import CorruptCheckpointError
from ._generators import cuda_ready
from ._rng_state_hook import torch_get_rng_state, torch_set_rng_state

KIND_PYTHON, KIND_NUMPY, KIND_TORCH_CPU, KIND_CUDA = 1, 2, 3, 4
KIND_NAMES = {KIND_PYTHON: "python", KIND_NUMPY: "numpy", KIND_TORCH_CPU: "torch-cpu", KIND_CUDA: "cuda"}

_PYTHON = struct.Struct("<I625IBd")


def _python_fields(data):
    """(version, index, has_gauss) of a Python state, without the words."""
    return struct.unpack_from("<I", data, 0)[0], struct.unpack_from("<I", data, 4 + 624 * 4)[0], data[4 + 625 * 4]
_NUMPY = struct.Struct("<624IIId")
_CUDA_BYTES = 16


def name(kind, device):
    """"python", "numpy", "torch-cpu" or "cuda"."""
    return KIND_NAMES.get(kind, f"kind {kind}") if device == 0 else f"kind {kind} device {device}"


def _numpy():
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def present(cuda_carried=False):
    """[(kind, device)] of this process's generators: Python's, NumPy's
    when it imports, torch's CPU generator, and the current CUDA device's
    unless `cuda_carried` (a tracker carries it)."""
    found = [(KIND_PYTHON, 0)]
    if _numpy() is not None:
        found.append((KIND_NUMPY, 0))
    found.append((KIND_TORCH_CPU, 0))
    if cuda_ready() and not cuda_carried:
        found.append((KIND_CUDA, 0))
    return found


def read(kind, device):
    """The state of generator (kind, device) now, as bytes."""
    if kind == KIND_PYTHON:
        version, words, gauss = random.getstate()
        return _PYTHON.pack(version, *words, gauss is not None, 0.0 if gauss is None else gauss)
    if kind == KIND_NUMPY:
        _, words, pos, has_gauss, gauss = _numpy().random.get_state(legacy=True)
        return _NUMPY.pack(*(int(w) for w in words), pos, has_gauss, gauss)
    if kind == KIND_TORCH_CPU:
        return torch_get_rng_state().numpy().tobytes()
    if kind == KIND_CUDA:
        return torch.cuda.get_rng_state().numpy().tobytes()
    raise ValueError(f"unknown generator kind {kind}")


@functools.lru_cache(maxsize=1)
def _sizes():
    """{kind: the length of its state here} (torch's CPU state: this torch's)."""
    return {KIND_PYTHON: _PYTHON.size, KIND_NUMPY: _NUMPY.size, KIND_CUDA: _CUDA_BYTES,
            KIND_TORCH_CPU: torch.default_generator.get_state().numel()}


def check(kind, device, data, where):
    """CorruptCheckpointError naming `where` unless `data` is a state of
    that kind's layout (torch's CPU bytes: as long as this torch's)."""
    sizes = _sizes()
    if kind not in sizes:
        raise CorruptCheckpointError(f"{where}: unknown generator kind {kind}")
    if device != 0:
        raise CorruptCheckpointError(f"{where}: {name(kind, 0)} has device 0, not {device}")
    if len(data) != sizes[kind]:
        raise CorruptCheckpointError(f"{where}: a {name(kind, device)} state is {sizes[kind]} bytes here, not "
                                     f"{len(data)}")
    if kind == KIND_PYTHON:
        version, index, has_gauss = _python_fields(data)
        if version != 3 or has_gauss > 1 or index > 624:
            raise CorruptCheckpointError(f"{where}: not a state of Python's random (version {version}, index "
                                         f"{index})")
    elif kind == KIND_NUMPY:
        pos, has_gauss = struct.unpack_from("<II", data, 624 * 4)
        if pos > 624 or has_gauss > 1:
            raise CorruptCheckpointError(f"{where}: not a state of NumPy's MT19937 (pos {pos})")
    elif kind == KIND_CUDA and struct.unpack_from("<Q", data, 8)[0] % 4:
        raise CorruptCheckpointError(f"{where}: a CUDA generator's offset is a multiple of 4")


def write(kind, device, data):
    """Sets generator (kind, device) to `data` (checked beforehand)."""
    if kind == KIND_PYTHON:
        version, *words, has_gauss, gauss = _PYTHON.unpack(data)
        random.setstate((version, tuple(words), gauss if has_gauss else None))
    elif kind == KIND_NUMPY:
        *words, pos, has_gauss, gauss = _NUMPY.unpack(data)
        numpy = _numpy()
        numpy.random.set_state(("MT19937", numpy.array(words, dtype=numpy.uint32), pos, has_gauss, gauss))
    elif kind == KIND_TORCH_CPU:
        torch_set_rng_state(torch.frombuffer(bytearray(data), dtype=torch.uint8))
    elif kind == KIND_CUDA:
        torch.cuda.set_rng_state(torch.frombuffer(bytearray(data), dtype=torch.uint8))


def validate(kind, device, data, where):
    """CorruptCheckpointError naming `where` unless the generator's own
    setter takes `data`, tried on a scratch generator (torch's CPU
    generator refuses a Mersenne Twister state that check() cannot see is
    wrong): what a load does for every state before it writes any."""
    check(kind, device, data, where)
    try:
        if kind == KIND_PYTHON:
            version, *words, has_gauss, gauss = _PYTHON.unpack(data)
            random.Random().setstate((version, tuple(words), gauss if has_gauss else None))
        elif kind == KIND_NUMPY:
            *words, pos, has_gauss, gauss = _NUMPY.unpack(data)
            numpy = _numpy()
            numpy.random.RandomState().set_state(("MT19937", numpy.array(words, dtype=numpy.uint32), pos,
                                                   has_gauss, gauss))
        elif kind == KIND_TORCH_CPU:
            torch.Generator().set_state(torch.frombuffer(bytearray(data), dtype=torch.uint8))
    except (ValueError, TypeError, RuntimeError) as e:
        raise CorruptCheckpointError(f"{where}: {name(kind, device)} refuses the state ({e})") from None


def derived(origin, key, kind, device):
    """The state a generator the checkpoint lacks starts from with
    on_missing="fresh": seeded from SHA-256(origin, the key's bytes, the
    generator's name, "python", "numpy", "torch-cpu" or "cuda") — origin being the SHA-256 of the process table
    read, so the same on every rank — never from an unseeded default, and
    another key or generator gives another seed.  Python's random takes
    the whole digest as its integer seed, NumPy its eight 32-bit words
    (little-endian) as the seed array, torch's CPU generator and a CUDA
    generator its first 8 bytes as a u64 seed (a CUDA state at offset 0).
    Returns the state as bytes, in read()'s layout."""
    digest = hashlib.sha256(origin + b"\0" + key + b"\0" + name(kind, device).encode()).digest()
    seed64 = int.from_bytes(digest[:8], "little")
    if kind == KIND_PYTHON:
        version, words, gauss = random.Random(int.from_bytes(digest, "little")).getstate()
        return _PYTHON.pack(version, *words, gauss is not None, 0.0 if gauss is None else gauss)
    if kind == KIND_NUMPY:
        numpy = _numpy()
        _, words, pos, has_gauss, gauss = numpy.random.RandomState(
            numpy.frombuffer(digest, dtype="<u4")).get_state(legacy=True)
        return _NUMPY.pack(*(int(w) for w in words), pos, has_gauss, gauss)
    if kind == KIND_TORCH_CPU:
        return torch.Generator().manual_seed(seed64).get_state().numpy().tobytes()
    return struct.pack("<QQ", seed64, 0)
