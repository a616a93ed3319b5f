# SPDX-License-Identifier: Apache-2.0
"""Where a draw becomes a tensor: the one place that fills a torch tensor
from a state (CPU tensors in place through the C library, CUDA tensors
through its kernels on torch's current stream), and where a draw from a
tracker reads the state to start from and then moves the tracker.

rngtrk.torch's ops (_ops) call these directly in eager mode, and through
the torch operators of _torch_ops when torch traces them (torch.compile,
torch.export): the operators' implementations are these functions too, so
both ways give the same bits.

A draw is described by a `Spec` (layout, distribution, dtype, the two
distribution parameters and the torch-eager-cuda launch geometry) and the
tensor's shape, or, for a box of a larger tensor, the box: (global shape,
start, local shape).

The eager path is a few attribute reads and one C call, as a torch
extension op is (docs/pytorch.md, "Cost per call"): a torch tensor's
memory is its data_ptr() (no DLPack capsule), a CUDA launch goes on the
raw current stream, and what depends only on the kinds of a call (the C
sample spec, a draw's offset increment) is made once and kept.
"""
import math

import torch

from .._library import ffi, lib
from ..errors import RngtrkOverflowError, check
from .._names import DTYPE
from ..sampling import make_spec
from ..state import PhiloxState
from ..tracker import Tracker

# The torch dtype of each rngtrk dtype rngtrk.torch makes.
TORCH_DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16,
                "u8": torch.uint8}
# The floating dtypes uniform and normal draws come in, by torch dtype
# (normal f16/bf16: the f32 value rounded to nearest even, as torch's .to() rounds).
FLOAT_DTYPES = {torch_dtype: name for name, torch_dtype in TORCH_DTYPES.items() if torch_dtype.is_floating_point}
# Each distribution's two parameters, as sampling.py names them.
_PARAMETERS = {"uniform": ("low", "high"), "normal": ("mean", "std"), "bernoulli": ("p", None)}
NO_GEOMETRY = -1  # sm_count / max_threads_per_sm not given: the library's default
_KEPT = 512       # the most kinds of draw kept per cache (a model draws a handful of kinds and shapes)


class Spec:
    """What to draw, in the plain values the torch operators carry.  (A
    plain class: torch.compile traces it on every torch, which is not true
    of typing.NamedTuple.)  `c` is the library's checked sample spec, once
    c_spec has made it."""
    __slots__ = ("layout", "dist", "dtype", "a", "b", "sm_count", "max_threads_per_sm", "c")

    def __init__(self, layout, dist, dtype, a, b, sm_count=NO_GEOMETRY, max_threads_per_sm=NO_GEOMETRY):
        self.layout, self.dist, self.dtype, self.a, self.b = layout, dist, dtype, a, b
        self.sm_count, self.max_threads_per_sm = sm_count, max_threads_per_sm
        self.c = None

    def params(self):
        """The keyword parameters of rngtrk.sample and friends."""
        first, second = _PARAMETERS[self.dist]
        params = {first: self.a}
        if second is not None:
            params[second] = self.b
        return {**params, **self.geometry()}

    def geometry(self):
        return {name: value for name, value in (("sm_count", self.sm_count),
                                                ("max_threads_per_sm", self.max_threads_per_sm))
                if value != NO_GEOMETRY}

    def key(self):
        """What tells two specs apart: every field, and the sign of a zero
        parameter (negative_zero)."""
        a, b = self.a, self.b
        return (self.layout, self.dist, self.dtype, a, b, self.sm_count, self.max_threads_per_sm,
                negative_zero(a), negative_zero(b))


def negative_zero(value):
    """Whether a parameter is -0.0: equal to 0.0 as a key, but a mean of
    -0.0 gives other bits."""
    return value == 0 and math.copysign(1.0, value) < 0


_SPECS = {}        # Spec.key() -> a Spec whose `c` is made
_INCREMENTS = {}   # (Spec.key(), numel) -> the offset increment


def kept(cache, key, make):
    """cache[key] = make(), the cache emptied when it holds _KEPT kinds."""
    value = make()  # (make() raises for a refused kind: nothing is kept)
    if len(cache) >= _KEPT:
        cache.clear()
    cache[key] = value
    return value


def spec_of(layout, dist, dtype, a, b, sm_count=NO_GEOMETRY, max_threads_per_sm=NO_GEOMETRY):
    """The Spec of these values with its library spec made (its names
    checked by the library: an unknown layout, distribution or dtype raises
    its error before anything is drawn; the parameters' values are the
    library's to refuse when it draws), one object per kind of draw."""
    spec = Spec(layout, dist, dtype, a, b, sm_count, max_threads_per_sm)
    key = spec.key()
    found = _SPECS.get(key)
    if found is None:
        spec.c = make_spec(layout, dist, dtype, **spec.params())
        found = kept(_SPECS, key, lambda: spec)
    return found


def c_spec(spec):
    """The library's sample spec of `spec`."""
    c = spec.c
    if c is None:
        c = spec.c = spec_of(spec.layout, spec.dist, spec.dtype, spec.a, spec.b, spec.sm_count,
                             spec.max_threads_per_sm).c
    return c


def numel(shape, what="the tensor"):
    """The element count of `shape`; a count past 64 bits is refused (an
    element index must fit)."""
    n = 1
    for extent in shape:  # (not math.prod: torch.compile traces this loop on every torch)
        n *= extent
    if n >= 1 << 64:
        raise RngtrkOverflowError(f"{what} {tuple(shape)} has {n} elements: element indices must fit in 64 bits")
    return n


def increment(spec, whole_shape):
    """How far a tracker moves for a draw of a tensor of `whole_shape` (a
    slice moves it by the whole tensor's increment, the same on every rank):
    the library's rngtrk_sample_offset_increment, kept per kind and size."""
    count = numel(whole_shape)
    key = (spec.key(), count)
    found = _INCREMENTS.get(key)
    if found is None:
        def ask():
            out = ffi.new("uint64_t *")
            check(lib.rngtrk_sample_offset_increment(c_spec(spec), count, out))
            return out[0]
        found = kept(_INCREMENTS, key, ask)
    return found


def new_output(shape, spec, device):
    if shape:  # (sizes as arguments: torch parses them faster than a tuple, 1.0 us against 1.5 on torch 2.14)
        return torch.empty(*shape, dtype=TORCH_DTYPES[spec.dtype], device=device)
    return torch.empty(shape, dtype=TORCH_DTYPES[spec.dtype], device=device)


_VOID_P = ffi.typeof("void *")
_cast = ffi.cast
_tracker_sample = lib.rngtrk_tracker_sample


def _memory(tensor, count):
    """(pointer, bytes) of a contiguous tensor of `count` elements this
    module made or checked."""
    return (ffi.cast(_VOID_P, tensor.data_ptr()) if count else ffi.NULL), count * tensor.element_size()


def _box_arrays(box):
    """(ndim, global, start, local) as the C slice calls take them."""
    return (len(box[0]),) + tuple(ffi.new("uint64_t[]", list(dims) or [0]) for dims in box)


if hasattr(torch._C, "_cuda_getCurrentRawStream"):
    def raw_stream(device):
        """The cudaStream_t of torch's current stream on `device`, as an int."""
        return torch._C._cuda_getCurrentRawStream(device.index)
else:  # (a torch without the raw form)
    def raw_stream(device):
        return torch.cuda.current_stream(device).cuda_stream


def _c_state(state):
    return ffi.new("rngtrk_philox_state *", state)


def _library_call(calls, tensor, state_c, spec_c, count, box, buffers):
    """One of the library's calls for `tensor`'s device: `calls` is (CPU
    range, CPU box, CUDA range, CUDA box), `state_c` the library's state
    struct, `buffers` the pointer and capacity arguments that follow the
    range or the box (a CUDA call then takes torch's current stream of the
    tensor's device)."""
    if tensor.is_cuda:
        index = tensor.device.index
        if index != torch.cuda.current_device():  # the library launches on the current device
            with torch.cuda.device(index):
                return _library_call(calls, tensor, state_c, spec_c, count, box, buffers)
        whole, sliced = calls[2], calls[3]
        stream = (ffi.cast(_VOID_P, raw_stream(tensor.device)),)
    elif tensor.is_cpu:
        whole, sliced = calls[0], calls[1]
        stream = ()
    else:
        raise TypeError(f"rngtrk.torch fills CPU and CUDA tensors, not {tensor.device.type} ones")
    if box is None:
        status = whole(state_c, spec_c, 0, count, *buffers, *stream)
    else:
        status = sliced(state_c, spec_c, *_box_arrays(box), *buffers, *stream)
    if status:
        check(status)


_SAMPLE_CALLS = (lib.rngtrk_sample, lib.rngtrk_sample_slice, lib.rngtrk_cuda_sample, lib.rngtrk_cuda_sample_slice)
_DROPOUT_CALLS = (lib.rngtrk_dropout, lib.rngtrk_dropout_slice, lib.rngtrk_cuda_dropout, lib.rngtrk_cuda_dropout_slice)


def fill(out, state, spec, box=None):
    """Fills `out` (a contiguous CPU or CUDA tensor of spec's dtype) with
    `spec`'s elements drawn from `state`: the whole tensor, or the box
    (global_shape, start, local_shape) of it."""
    count = out.numel()
    _library_call(_SAMPLE_CALLS, out, _c_state(state), c_spec(spec), count, box, _memory(out, count))
    return out


def draw_from_state(state, spec, shape, box, device):
    """A new tensor of `shape` (the box's local shape for a slice) drawn
    from `state`, which nothing advances."""
    return fill(new_output(shape, spec, device), state, spec, box)


_sample = lib.rngtrk_sample


def state_drawer(spec, shape, device):
    """draw(state_c): draw_from_state of a whole tensor of `shape` from the
    library's state struct `state_c` (_generators.state_pointer), for a
    kind of draw seen before (rngtrk.torch._ops): everything but the state
    worked out once, so a CPU draw is torch.empty and the library's call
    (the per-call cost of `state=`)."""
    count = numel(shape)
    dtype = TORCH_DTYPES[spec.dtype]
    size = count * torch.empty((), dtype=dtype).element_size()
    spec_c = c_spec(spec)
    if device.type != "cpu":
        def draw(state_c):
            out = new_output(shape, spec, device)
            _library_call(_SAMPLE_CALLS, out, state_c, spec_c, count, None, _memory(out, count))
            return out
        return draw
    empty, cast, void_p, sample, null = torch.empty, _cast, _VOID_P, _sample, ffi.NULL

    def draw_on_cpu(state_c):
        out = empty(shape, dtype=dtype, device=device)
        status = sample(state_c, spec_c, 0, count, cast(void_p, out.data_ptr()) if count else null, size)
        if status:
            check(status)
        return out
    return draw_on_cpu


# -- dropout in one pass ---------------------------------------------------------------

# The data dtypes the library's dropout takes in one pass (rngtrk_dropout:
# x * (keep ? 1/p rounded to the dtype : 0), computed in float, rounded once).
DROPOUT_DTYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}
_DROPOUT_SPECS = {}  # (mask Spec.key(), data dtype name) -> the library's dropout spec


def _dropout_c_spec(mask_spec, data_dtype):
    """The library's dropout spec: `mask_spec`'s (bernoulli, p = the keep
    probability), its dtype the data's."""
    key = (mask_spec.key(), data_dtype)
    found = _DROPOUT_SPECS.get(key)
    if found is None:
        def make():
            spec = ffi.new("rngtrk_sample_spec *")
            ffi.buffer(spec)[:] = ffi.buffer(c_spec(mask_spec))
            spec.dtype = DTYPE.value(data_dtype)
            return spec
        found = kept(_DROPOUT_SPECS, key, make)
    return found


def dropout_into(out, x, state, mask_spec, box=None):
    """out = the dropout of `x` (contiguous, CPU or CUDA; `out` may be `x`)
    with the keep mask `mask_spec` draws from `state`: x * (mask * scale),
    scale = 1 / keep probability rounded to x's dtype; the whole tensor, or
    the box (global_shape, start, local_shape) of it.  f32, f16 and bf16 in
    one pass of the library (one kernel on CUDA); other float dtypes (f64)
    as the mask, then one multiply."""
    name = DROPOUT_DTYPES.get(x.dtype)
    if name is None:
        mask = draw_from_state(state, mask_spec, tuple(x.shape), box, x.device)
        scale = torch.tensor(1.0 / mask_spec.a, dtype=x.dtype, device=x.device)
        return torch.mul(x, mask.to(x.dtype) * scale, out=out)
    count = x.numel()
    source = _cast(_VOID_P, x.data_ptr()) if count else ffi.NULL
    _library_call(_DROPOUT_CALLS, x, _c_state(state), _dropout_c_spec(mask_spec, name), count, box,
                  (source,) + _memory(out, count))
    return out


def c_tracker_of(tracker):
    """The rngtrk.Tracker whose active state a draw from `tracker` starts
    from: a plain one itself, a drop-in's own on CPU-only torch; None when
    that is torch's CUDA generator (a drop-in tracker with CUDA)."""
    if isinstance(tracker, Tracker):
        return tracker
    return None if tracker._cuda else tracker.tracker


def reserved(tracker, step, make):
    """make(start) for a draw of `step` numbers starting at the tracker's
    state, which then moves past them.  On an rngtrk tracker all of it under
    the tracker's lock (one draw at a time, as its own calls: two threads
    never draw the same numbers), with the room for `step` checked before
    anything is made, so a refused draw changes nothing; on torch's CUDA
    generator through the drop-in's peek() and consume()."""
    c_tracker = c_tracker_of(tracker)
    if c_tracker is None:
        start = tracker.peek()
        start.advanced(step)  # (the room: RngtrkOverflowError before anything is made)
        made = make(start)
        tracker.consume(step)
        return made
    with c_tracker._lock:
        handle = c_tracker._handle
        if handle is None:
            c_tracker._live()  # raises: the tracker is closed
        scratch = c_tracker._scratch  # (the tracker's out-parameter, used under its lock)
        status = lib.rngtrk_tracker_active_state(handle, scratch)
        if status:
            check(status)
        start = tuple.__new__(PhiloxState, (scratch.seed, scratch.offset))  # (the library's values: no checks)
        start.advanced(step)
        made = make(start)
        status = lib.rngtrk_tracker_advance(handle, step, scratch)
        if status:
            check(status)
    return made


def draw_from_tracker(tracker, spec, shape, box, device):
    """draw_from_state from the tracker's state, then the tracker moves, once
    the tensor is filled: a refused draw leaves it as it was."""
    c_tracker = c_tracker_of(tracker)
    out = new_output(shape, spec, device)
    if c_tracker is not None and out.is_cpu:
        # One library call reads the active state, fills and advances it
        # (by the whole tensor's increment; a refused draw moves nothing),
        # under the tracker's lock as Tracker's own calls (written out: the
        # hot path of every CPU draw).
        count = out.numel()
        pointer = _cast(_VOID_P, out.data_ptr()) if count else ffi.NULL
        capacity = count * out.element_size()
        spec_c = spec.c if spec.c is not None else c_spec(spec)
        with c_tracker._lock:
            handle = c_tracker._handle
            if handle is None:
                c_tracker._live()  # raises: the tracker is closed
            if box is None:
                status = _tracker_sample(handle, spec_c, count, pointer, capacity, ffi.NULL)
            else:
                status = lib.rngtrk_tracker_sample_slice(handle, spec_c, *_box_arrays(box), pointer, capacity,
                                                         ffi.NULL)
        if status:
            check(status)
        return out
    step = increment(spec, box[0] if box is not None else shape)  # a refused spec or size: nothing read
    return reserved(tracker, step, lambda start: fill(out, start, spec, box))


__all__ = ["TORCH_DTYPES", "FLOAT_DTYPES", "NO_GEOMETRY", "Spec", "spec_of", "c_spec", "numel", "increment", "new_output",
           "fill", "draw_from_state", "draw_from_tracker", "c_tracker_of", "reserved", "raw_stream", "DROPOUT_DTYPES",
           "dropout_into", "negative_zero"]
