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
start, local shape)."""
import torch

from ..errors import RngtrkOverflowError
from ..sampling import cuda_sample, cuda_sample_slice, offset_increment, sample, sample_slice
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


class Spec:
    """What to draw, in the plain values the torch operators carry.  (A
    plain class: torch.compile traces it on every torch, which is not true
    of typing.NamedTuple.)"""
    __slots__ = ("layout", "dist", "dtype", "a", "b", "sm_count", "max_threads_per_sm")

    def __init__(self, layout, dist, dtype, a, b, sm_count=NO_GEOMETRY, max_threads_per_sm=NO_GEOMETRY):
        self.layout, self.dist, self.dtype, self.a, self.b = layout, dist, dtype, a, b
        self.sm_count, self.max_threads_per_sm = sm_count, max_threads_per_sm

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


def numel(shape, what="the tensor"):
    """The element count of `shape`; a count past 64 bits is refused (an
    element index must fit)."""
    n = 1
    for extent in shape:  # (not math.prod: torch.compile traces this loop on every torch)
        n *= extent
    if n >= 1 << 64:
        raise RngtrkOverflowError(f"{what} {tuple(shape)} has {n} elements: element indices must fit in 64 bits")
    return n


def new_output(shape, spec, device):
    return torch.empty(shape, dtype=TORCH_DTYPES[spec.dtype], device=device)


def fill(out, state, spec, box=None):
    """Fills `out` (CPU or CUDA) with `spec`'s elements drawn from `state`:
    the whole tensor, or the box (global_shape, start, local_shape) of it."""
    params = dict(layout=spec.layout, dist=spec.dist, dtype=spec.dtype, **spec.params())
    if out.device.type == "cuda":
        if box is None:
            cuda_sample(state, out, **params)
        else:
            cuda_sample_slice(state, *box, out, **params)
    elif out.device.type == "cpu":
        if box is None:
            sample(state, out.numel(), out=out, **params)
        else:
            sample_slice(state, *box, out=out, **params)
    else:
        raise TypeError(f"rngtrk.torch fills CPU and CUDA tensors, not {out.device.type} ones")
    return out


def draw_from_state(state, spec, shape, box, device):
    """A new tensor of `shape` (the box's local shape for a slice) drawn
    from `state`, which nothing advances."""
    return fill(new_output(shape, spec, device), state, spec, box)


def increment(spec, whole_shape):
    """How far a tracker moves for a draw of a tensor of `whole_shape` (a
    slice moves it by the whole tensor's increment, the same on every rank)."""
    return offset_increment(numel(whole_shape), layout=spec.layout, dist=spec.dist, dtype=spec.dtype,
                            **spec.geometry())


def source(tracker):
    """(the state a draw from `tracker` starts from, the function that then
    moves the tracker past an increment).  A plain rngtrk.Tracker draws from
    its active state; rngtrk.torch's drop-in trackers from their generator
    (their peek() and consume())."""
    if isinstance(tracker, Tracker):
        return tracker.active_state(), tracker.advance
    return tracker.peek(), tracker.consume


def draw_from_tracker(tracker, spec, shape, box, device):
    """draw_from_state from the tracker's state, then the tracker moves, once
    the tensor is filled: a refused draw leaves it as it was."""
    step = increment(spec, box[0] if box is not None else shape)  # a refused spec or size: nothing read
    start, commit = source(tracker)
    out = draw_from_state(start, spec, shape, box, device)
    commit(step)
    return out
