# SPDX-License-Identifier: Apache-2.0
"""Lightning Thunder's random prims with Thunder's conventions
(thunder/core/prims.py and thunder/executors/torchex.py, Lightning-AI/
lightning-thunder at 1e22aacb), over rngtrk: a dropout that Thunder
recomputes in the backward pass from a saved (seed, offset) gets the same
mask on either device.

* get_and_update_rng_state(seed, offset, device) reads torch's CUDA
  generator of `device` and moves it on, as Thunder's torch executor does:
  it returns (seed, offset) with the offset in nvFuser's units (torch's
  generator offset // 4) and leaves the generator at (offset + 1) * 4 in
  torch's units.  From (42, 0), three calls return (42, 0), (42, 1),
  (42, 2) and leave the generator at offset 12.  The seed and offset
  arguments only order the calls (Thunder chains them so): they must be
  given together or not at all, and their values are not read.  The seed
  comes back as Thunder reads it, the 8 bytes as a signed int64.
  On CPU-only torch rngtrk plays the CUDA generator: rngtrk.torch's
  process tracker's (its active state there), or the `tracker` keyword's (a
  drop-in tracker's generator; a plain rngtrk.Tracker's active state, moved
  on by 4), which may also be given where torch has CUDA.  A CPU device
  where torch has CUDA is refused, as Thunder refuses it
  (ThunderDeviceError, a NotImplementedError).
* uniform_philox(shape, minval=0.0, maxval=1.0, *, device, dtype, seed,
  offset) takes Thunder's offset (nvFuser's units, what
  get_and_update_rng_state returns) and gives nvFuser's values: the
  "nvfuser" layout of docs/streams.md at torch offset 4 * offset, the same
  bits on CPU and CUDA.  executor="torch" gives what Thunder's torch
  executor gives instead (torch.ops.rngprims.philox_rand: torch.rand's
  values, the "torch-eager-cuda" layout with the launch geometry of the
  GPU drawn on (on the CPU: an H100's), with the offset in torch's units,
  a multiple of 4, as that executor requires).

Refusals name the problem and change nothing: seed and offset not given
together, minval >= maxval (ThunderArgumentError, Thunder's RuntimeError
and rngtrk's InvalidArgumentError); a seed outside int64 or uint64 or an
offset whose torch offset does not fit Thunder's int64
(ThunderRangeError, also OverflowError).
"""
import torch

from ..errors import InvalidArgumentError, RngtrkOverflowError, UnavailableError
from ..state import PhiloxState
from ._generators import cuda_ready, default_generator, read_generator, write_generator
from ._ops import rand
from ._tracker import RngtrkStatesTracker
from .megatron import get_cuda_rng_tracker

NVFUSER_UNIT = 4          # torch generator offsets per nvFuser offset (nvFuser's "divide offset by 4")
_INT64_MAX = 2 ** 63 - 1  # Thunder reads the seed and offset as int64
_U64 = 2 ** 64


class ThunderArgumentError(InvalidArgumentError, RuntimeError):
    """A call Thunder's checks refuse (its RuntimeError), and rngtrk's
    InvalidArgumentError."""


class ThunderDeviceError(UnavailableError, NotImplementedError):
    """A CPU device where torch has CUDA generators: Thunder's
    NotImplementedError, and rngtrk's UnavailableError."""


class ThunderRangeError(RngtrkOverflowError, RuntimeError):
    """A seed or offset past what Thunder (int64) or torch (uint64) holds."""


def _torch_device(device):
    """A torch.device for `device`: a torch.device, "cpu"/"cuda[:N]", a CUDA
    index, or Thunder's Device (which has .devicetype and .index)."""
    if isinstance(device, (str, torch.device)):
        return torch.device(device)
    if isinstance(device, int):
        return torch.device("cuda", device)
    if "CUDA" not in str(getattr(device, "devicetype", "")).upper():
        return torch.device("cpu")
    index = getattr(device, "index", None)
    return torch.device("cuda") if index is None else torch.device("cuda", index)


def _as_signed(value):
    return value - _U64 if value > _INT64_MAX else value


def _torch_seed(seed):
    """Thunder's seed (int64, or torch's uint64) as torch's uint64."""
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int, not {type(seed).__name__}")
    if not -2 ** 63 <= seed < _U64:
        raise ThunderRangeError(f"seed {seed} is outside int64 and uint64")
    return seed % _U64


def _torch_offset(offset, unit):
    if not isinstance(offset, int) or isinstance(offset, bool):
        raise TypeError(f"offset must be an int, not {type(offset).__name__}")
    if offset < 0 or offset * unit > _INT64_MAX:
        raise ThunderRangeError(f"offset {offset} is outside [0, {_INT64_MAX // unit}]: its torch offset "
                                f"{offset} * {unit} must fit Thunder's int64")
    return offset * unit


def _after_draw(state):
    """The state after Thunder's draw: the next whole nvFuser unit (Thunder's
    rule, which also takes offsets that are not multiples of 4)."""
    return PhiloxState(state.seed, (state.offset // NVFUSER_UNIT + 1) * NVFUSER_UNIT)


def get_and_update_rng_state(seed=None, offset=None, device="cuda", *, tracker=None):
    """(seed, offset in nvFuser units) of the generator of `device`, which
    moves on to (offset + 1) * 4 in torch units (module text)."""
    if (seed is None) != (offset is None):
        raise ThunderArgumentError("seed and offset must be given in pair, or both left out")
    if tracker is None and cuda_ready():
        device = _torch_device(device)
        if device.type != "cuda":
            raise ThunderDeviceError("get_and_update_rng_state is supported for CUDA only (pass tracker= for "
                                     "rngtrk's generator)")
        generator = default_generator(device)
        state = read_generator(generator)
        write_generator(generator, _after_draw(state))
        return _as_signed(state.seed), state.offset // NVFUSER_UNIT
    if tracker is None:  # CPU-only torch: the process tracker plays the CUDA generator
        tracker = get_cuda_rng_tracker()
    if isinstance(tracker, RngtrkStatesTracker):
        state = tracker.generator_state()
        tracker.set_generator_state(_after_draw(state))
    else:  # a plain rngtrk.Tracker: its active state, moved on by 4 (its offsets are multiples of 4)
        state = tracker.advance(NVFUSER_UNIT)
    return _as_signed(state.seed), state.offset // NVFUSER_UNIT


def uniform_philox(shape, minval=0.0, maxval=1.0, *, device, dtype, seed, offset, executor="nvfuser"):
    """Uniform values in [minval, maxval) of `shape` for Thunder's (seed,
    offset): nvFuser's (default) or, with executor="torch", Thunder's torch
    executor's (module text)."""
    if executor not in ("nvfuser", "torch"):
        raise ThunderArgumentError(f"executor must be 'nvfuser' or 'torch', not {executor!r}")
    if not minval < maxval:
        raise ThunderArgumentError(f"`minval` must be less than `maxval`, but got {minval} and {maxval}")
    torch_seed = _torch_seed(seed)
    if executor == "torch":
        torch_offset = _torch_offset(offset, 1)
        if torch_offset % NVFUSER_UNIT:
            raise ThunderArgumentError(f"Thunder's torch executor takes offsets in torch's units, a multiple of 4, "
                                       f"not {offset}")
        state, layout = PhiloxState(torch_seed, torch_offset), "torch-eager-cuda"
    else:
        state, layout = PhiloxState(torch_seed, _torch_offset(offset, NVFUSER_UNIT)), "nvfuser"
    device = _torch_device(device)
    geometry = {}
    if layout == "torch-eager-cuda" and device.type == "cuda":
        # torch.rand's launch depends on the GPU: take this one's, as philox_rand does.
        props = torch.cuda.get_device_properties(device)
        geometry = dict(sm_count=props.multi_processor_count,
                        max_threads_per_sm=props.max_threads_per_multi_processor)
    return rand(tuple(shape), state=state, dtype=dtype, device=device, layout=layout, low=minval, high=maxval,
                **geometry)
