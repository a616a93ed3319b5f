# SPDX-License-Identifier: Apache-2.0
"""Random ops on torch tensors whose values do not depend on the device or
the sharding: every element is rngtrk's pure function of (seed, offset,
element index), so a CPU tensor, a CUDA tensor and any box of a sharded
tensor hold the same bits (PyTorch's own CPU and CUDA generators differ,
and DTensor's values change with the sharding: pytorch#168058).

Where the numbers come from:

* `state=` a PhiloxState (or its 16 bytes): drawn from it, nothing advances;
* otherwise from `tracker=` (default: the process tracker,
  rngtrk.torch.megatron.get_cuda_rng_tracker()): a drop-in tracker's
  generator (torch's CUDA generator, or rngtrk's active state on CPU-only
  torch: rngtrk.torch._tracker), or a plain rngtrk.Tracker's active state,
  which advances by exactly what the draw consumes
  (rngtrk.offset_increment), and only once the tensor is filled: a refused
  call leaves the tracker as it was.

CPU tensors are filled by the C library in place (no copy); CUDA tensors
by its CUDA kernels on torch's current stream.  16-bit floats are made as
f16/bf16 directly (the library defines them; normal's are its f32 values
rounded to nearest even, as torch's .to() rounds).
"""
from math import copysign

import torch

from ..errors import invalid
from ._kernels import (
    FLOAT_DTYPES, NO_GEOMETRY, Spec, draw_from_state, draw_from_tracker, kept, numel, spec_of, state_drawer,
)
from ._generators import state_of, state_pointer
from ._rng_state_hook import settle
from ._dropout import dropout_from_state, dropout_from_tracker
from ._torch_ops import (
    draw_untraceable, dropout_op, dropout_untraceable, register, sample_op, traceable_state, tracing,
    tracker_dropout_op, tracker_sample_op, transforming,
)
from .megatron import get_cuda_rng_tracker

_GEOMETRY = ("sm_count", "max_threads_per_sm")


def _size(size):
    """A shape from rand(2, 3), rand((2, 3)) or rand(torch.Size([2, 3]))."""
    if len(size) == 1 and type(size[0]) is int and size[0] >= 0:  # rand(n): the common case, fast
        return size
    if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)):
        size = tuple(size[0])
    for n in size:
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:  # (an int subclass other than bool is a size)
            raise invalid(f"sizes are non-negative integers, not {n!r}")
    return tuple(size)


_DEVICES = {}  # the torch.device of each device string a call named


def _device(device):
    if isinstance(device, torch.device):
        return device
    found = _DEVICES.get(device) if isinstance(device, str) else None
    if found is None:
        found = torch.device(device)
        if isinstance(device, str) and len(_DEVICES) < 64:
            _DEVICES[device] = found
    return found


# An eager call of a kind seen before skips every check: rand(16) in a
# training loop is a dict lookup and the library call.  Kept per kind: the
# call's own arguments (sizes as given, torch dtype, device, layout, the two
# parameters and each one's sign: -0.0 == 0.0, but a mean of -0.0 gives
# other bits) -> what the checks made of them (the Spec with its library
# spec, the shape, the torch.device, and its state_drawer).  Only calls without geometry or tracker are kept:
# the process tracker's draws (the hot path) and draws from a `state=`,
# whose state is not part of the kind (state_of checks each).
_PLANS = {}


def _again(size, dist, dtype, device, layout, a, b, state=None):
    """(the draw, None) when this call's kind was seen before: from
    `state`, or else the process tracker, with no check of the kind; else
    (None, its key), the key None when torch traces the caller or an
    argument cannot be a key (the checks then say what is wrong)."""
    if tracing():
        return None, None
    for n in size[0] if len(size) == 1 and type(size[0]) in (tuple, torch.Size) else size:
        if type(n) is not int:  # (not a bool, equal to an int as a key: the checks refuse it)
            return None, None
    if type(a) not in _NUMBERS or type(b) not in _NUMBERS:  # (a tensor could change under its key)
        return None, None
    if type(device) not in _DEVICE_KINDS:  # (False == 0 == 0.0, device 0's key: the checks refuse the others)
        return None, None
    key = (size, dist, dtype, device, layout, a, b, copysign(1.0, a), copysign(1.0, b))  # (-0.0 == 0.0 as a key)
    try:
        plan = _PLANS.get(key)
    except TypeError:  # an unhashable argument: the checks take it
        return None, None
    if plan is None:
        return None, key
    if state is not None:
        return plan[3](state_pointer(state)), None
    tracker = get_cuda_rng_tracker()
    settle()  # a recompute that raised is over: its tracker is put back first
    register(tracker)
    return draw_from_tracker(tracker, plan[0], plan[1], None, plan[2]), None


_NUMBERS = (float, int)
_DEVICE_KINDS = (str, int, torch.device)


def _draw(shape, dist, rng_dtype, device, state, tracker, layout, a, b, geometry, box=None, key=None):
    """The core of every op: a tensor of `shape` (the box's, for a slice)
    drawn as elements of the tensor box[0] (or `shape`): from `state`, or
    from `tracker` (default: the process tracker), which moves once the
    tensor is filled.  While torch traces the caller, through the torch
    operators of _torch_ops (the same functions underneath).  `key`: the
    call's kind, kept (_PLANS) once its checks pass."""
    numel(box[0] if box is not None else shape)  # a tensor past 2^64 elements: refused before anything
    device = _device(device)
    sm_count = geometry.get("sm_count", NO_GEOMETRY) if geometry else NO_GEOMETRY
    max_threads_per_sm = geometry.get("max_threads_per_sm", NO_GEOMETRY) if geometry else NO_GEOMETRY
    if tracing():
        spec = Spec(layout, dist, rng_dtype, float(a), float(b), sm_count, max_threads_per_sm)
        if state is not None:
            if traceable_state(state) or not torch.compiler.is_compiling():
                return sample_op(state, spec, shape, box, device)
            return draw_untraceable(state, spec, shape, box, device)
        return tracker_sample_op(tracker if tracker is not None else get_cuda_rng_tracker(), spec, shape, box,
                                 device)
    # Eager: the kind of draw checked (and its library spec made) once, then the C call.
    spec = spec_of(layout, dist, rng_dtype, float(a), float(b), sm_count, max_threads_per_sm)
    if key is not None and box is None and not geometry and tracker is None:
        kept(_PLANS, key, lambda: (spec, shape, device, state_drawer(spec, shape, device)))
    if state is not None:
        return draw_from_state(state_of(state), spec, shape, box, device)
    if tracker is None:
        tracker = get_cuda_rng_tracker()  # the process tracker
    settle()  # a recompute that raised is over: its tracker is put back first
    register(tracker)
    return draw_from_tracker(tracker, spec, shape, box, device)


def _float_dtype(dtype, op):
    if dtype not in FLOAT_DTYPES:
        raise TypeError(f"rngtrk.torch.{op} makes {', '.join(str(d) for d in FLOAT_DTYPES)}, not {dtype}")
    return FLOAT_DTYPES[dtype]


def _geometry(kw, op):
    for key in kw:
        if key not in _GEOMETRY:
            raise TypeError(f"rngtrk.torch.{op}() got an unexpected keyword argument {key!r}")
    return kw


def rand(*size, state=None, tracker=None, dtype=torch.float32, device="cpu", layout="stateless", low=0.0, high=1.0,
         **geometry):
    """Uniform values in [low, high): torch.rand's shape and dtype (f32,
    f64, f16, bf16), the same bits on every device.  `sm_count` and
    `max_threads_per_sm` set the torch-eager-cuda layout's GPU (default:
    an H100's 132 and 2048, on every device, so that CPU and CUDA agree)."""
    if not geometry and tracker is None:
        again, key = _again(size, "uniform", dtype, device, layout, low, high, state)
        if again is not None:
            return again
    else:
        key = None
    shape = _size(size)
    rng_dtype = _float_dtype(dtype, "rand")
    return _draw(shape, "uniform", rng_dtype, device, state, tracker, layout, low, high, _geometry(geometry, "rand"),
                 key=key)


def randn(*size, state=None, tracker=None, dtype=torch.float32, device="cpu", layout="stateless", mean=0.0, std=1.0,
          **geometry):
    """Normal values (Box-Muller): f32 and f64 as drawn; f16 and bf16 are
    the f32 values rounded to the dtype."""
    if not geometry and tracker is None:
        again, key = _again(size, "normal", dtype, device, layout, mean, std, state)
        if again is not None:
            return again
    else:
        key = None
    shape = _size(size)
    geometry = _geometry(geometry, "randn")
    rng_dtype = _float_dtype(dtype, "randn")
    return _draw(shape, "normal", rng_dtype, device, state, tracker, layout, mean, std, geometry, key=key)


def _check_p(p, op):
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise invalid(f"rngtrk.torch.{op}: p must be a number from 0 to 1, not {p!r}")
    return float(p)


def bernoulli(*size, p=0.5, state=None, tracker=None, dtype=torch.uint8, device="cpu", layout="stateless",
              **geometry):
    """1 with probability p, else 0, as uint8 (or converted to `dtype`,
    e.g. torch.bool or a float type)."""
    mask, key = _again(size, "bernoulli", "u8", device, layout, p, 0.0, state) \
        if not geometry and tracker is None and not isinstance(p, bool) else (None, None)
    if mask is None:
        mask = _draw(_size(size), "bernoulli", "u8", device, state, tracker, layout, _check_p(p, "bernoulli"), 0.0,
                     _geometry(geometry, "bernoulli"), key=key)
    return mask if dtype == torch.uint8 else mask.to(dtype)


def _dropout(x, keep, inplace, state, tracker, layout, geometry, box=None):
    """The core of dropout and dropout_slice: x * (mask * scale), the mask
    drawn with keep probability `keep` (the box's part of the whole
    tensor's mask, for a slice), scale 1 / keep rounded to x's dtype, from
    `state` or from `tracker` (default: the process tracker), which moves
    past the mask.  In one pass, and nothing saved for backward but the
    state (_dropout); while torch traces the caller, through the torch
    operators of _torch_ops.  (A box's size is checked by _box; a tensor's
    fits its 64-bit sizes.)"""
    sm_count = geometry.get("sm_count", NO_GEOMETRY) if geometry else NO_GEOMETRY
    max_threads_per_sm = geometry.get("max_threads_per_sm", NO_GEOMETRY) if geometry else NO_GEOMETRY
    if tracing():
        spec = Spec(layout, "bernoulli", "u8", keep, 0.0, sm_count, max_threads_per_sm)
        if transforming():  # torch.func: the mask, then one multiply (the mask kept, as torch.func keeps it)
            mask = _draw(box[2] if box is not None else tuple(x.shape), "bernoulli", "u8", x.device, state, tracker,
                         layout, keep, 0.0, geometry, box)
            kept = mask.to(x.dtype) * torch.tensor(1.0 / keep, dtype=x.dtype, device=x.device)
            return x.mul_(kept) if inplace else x * kept
        if state is not None:
            if traceable_state(state) or not torch.compiler.is_compiling():
                out = dropout_op(x, state, spec, box)
            else:
                out = dropout_untraceable(x, state, spec, box)
        else:
            out = tracker_dropout_op(tracker if tracker is not None else get_cuda_rng_tracker(), x, spec, box)
        return x.copy_(out) if inplace else out
    spec = spec_of(layout, "bernoulli", "u8", keep, 0.0, sm_count, max_threads_per_sm)
    if state is not None:
        return dropout_from_state(x, state_of(state), spec, box, inplace)
    if tracker is None:
        tracker = get_cuda_rng_tracker()  # the process tracker
    settle()  # a recompute that raised is over: its tracker is put back first
    register(tracker)
    return dropout_from_tracker(x, tracker, spec, box, inplace)[0]


def _check_dropout_input(x, inplace, op):
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"rngtrk.torch.{op} takes a tensor, not {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"rngtrk.torch.{op} takes a floating-point tensor, not {x.dtype}")
    if inplace and x.requires_grad:
        raise invalid(f"rngtrk.torch.{op}(inplace=True) cannot write a tensor that requires grad")


def dropout(x, p=0.5, training=True, inplace=False, *, state=None, tracker=None, layout="stateless", **geometry):
    """torch.nn.functional.dropout's semantics (p = the probability of
    zeroing; kept values scaled by 1 / (1 - p)) with rngtrk's mask: the same
    mask on CPU and CUDA for the same state.  Differentiable through x; in
    one pass (f32, f16, bf16), and backward draws the mask again from its
    state instead of keeping it."""
    _check_dropout_input(x, inplace, "dropout")
    p = _check_p(p, "dropout")
    _geometry(geometry, "dropout")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x.zero_() if inplace else torch.zeros_like(x)
    return _dropout(x, 1.0 - p, inplace, state, tracker, layout, geometry)


def rand_like(x, **kwargs):
    """rand with x's shape, dtype and device."""
    return rand(tuple(x.shape), **{"dtype": x.dtype, "device": x.device, **kwargs})


def randn_like(x, **kwargs):
    """randn with x's shape, dtype and device."""
    return randn(tuple(x.shape), **{"dtype": x.dtype, "device": x.device, **kwargs})


def bernoulli_like(x, p=0.5, **kwargs):
    """bernoulli with x's shape and device, as x's dtype unless given."""
    return bernoulli(tuple(x.shape), p=p, **{"dtype": x.dtype, "device": x.device, **kwargs})


# -- sharded forms: one box of the unsharded tensor ---------------------------------


def _box(global_shape, start, local_shape):
    box = tuple(tuple(int(v) for v in dims) for dims in (global_shape, start, local_shape))
    if not len(box[0]) == len(box[1]) == len(box[2]):
        raise invalid("global_shape, start and local_shape need the same number of dimensions")
    numel(box[0], "global_shape")
    return box


def rand_slice(global_shape, start, local_shape, *, state=None, tracker=None, dtype=torch.float32, device="cpu",
               layout="stateless", low=0.0, high=1.0, **geometry):
    """The box [start, start + local_shape) of rand(global_shape): every
    rank draws only its own box, and the boxes are exactly the slices of the
    unsharded tensor.  A tracker advances by the whole tensor's increment,
    the same on every rank."""
    box = _box(global_shape, start, local_shape)
    rng_dtype = _float_dtype(dtype, "rand_slice")
    return _draw(box[2], "uniform", rng_dtype, device, state, tracker, layout, low, high,
                 _geometry(geometry, "rand_slice"), box=box)


def randn_slice(global_shape, start, local_shape, *, state=None, tracker=None, dtype=torch.float32, device="cpu",
                layout="stateless", mean=0.0, std=1.0, **geometry):
    """The box of randn(global_shape) (f16/bf16: the f32 values rounded)."""
    box = _box(global_shape, start, local_shape)
    geometry = _geometry(geometry, "randn_slice")
    rng_dtype = _float_dtype(dtype, "randn_slice")
    return _draw(box[2], "normal", rng_dtype, device, state, tracker, layout, mean, std, geometry, box=box)


def bernoulli_slice(global_shape, start, local_shape, *, p=0.5, state=None, tracker=None, dtype=torch.uint8,
                    device="cpu", layout="stateless", **geometry):
    """The box of bernoulli(global_shape, p=p)."""
    box = _box(global_shape, start, local_shape)
    mask = _draw(box[2], "bernoulli", "u8", device, state, tracker, layout, _check_p(p, "bernoulli_slice"), 0.0,
                 _geometry(geometry, "bernoulli_slice"), box=box)
    return mask if dtype == torch.uint8 else mask.to(dtype)


def dropout_slice(x, global_shape, start, p=0.5, training=True, inplace=False, *, state=None, tracker=None,
                  layout="stateless", **geometry):
    """Dropout of this rank's box `x` of a tensor of `global_shape` at
    `start`: the box of the unsharded tensor's dropout."""
    _check_dropout_input(x, inplace, "dropout_slice")
    p = _check_p(p, "dropout_slice")
    _geometry(geometry, "dropout_slice")
    box = _box(global_shape, start, tuple(x.shape))
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x.zero_() if inplace else torch.zeros_like(x)
    return _dropout(x, 1.0 - p, inplace, state, tracker, layout, geometry, box)
