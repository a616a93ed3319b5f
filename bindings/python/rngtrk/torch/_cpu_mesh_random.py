# SPDX-License-Identifier: Apache-2.0
"""DTensor's random ops on a CPU mesh, drawn by rngtrk (rngtrk.torch.dtensor).

On a CUDA mesh DTensor's tracker points torch's CUDA generator, a Philox
counter, at this rank's offset for the op, so replicas draw the same
numbers and shards draw disjoint ones.  torch's CPU generator is a
Mersenne Twister with no offset to point, so PyTorch refuses CPU meshes
(torch 2.6) or lets each rank draw from its own generator (2.14), and a
Replicate() random tensor then differs between ranks.  Inside the
tracker's region on a CPU mesh, `DrawFrom(state)` takes the op instead:
a TorchDispatchMode that fills the op's CPU tensor with rngtrk's stateless
layout from this rank's pre-op state — the same offsets as on CUDA, the
same rule, so replicas are equal and shards disjoint (for Shard(0) the full
tensor is the unsharded draw).  DTensor's offsets count elements, and a
float64 value takes two of rngtrk's 32-bit numbers, so for a float64 draw
the op's distances from the region's start are doubled (`words`): shards
stay disjoint, and the region ends that much further on.  The ops DTensor treats as random (its
dispatcher's list, torch 2.6 to 2.14): rand, randn, rand_like, randn_like,
uniform_, normal_, bernoulli (a tensor of probabilities), bernoulli_ (a
float p, or a tensor of them) and native_dropout.  The randint family and
the other distributions have no rngtrk form: they are refused, naming the
op, rather than drawn from each rank's own generator.
"""
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ..errors import invalid
from ._kernels import FLOAT_DTYPES, Spec, draw_from_state, increment

aten = torch.ops.aten
LAYOUT = "stateless"


class UnsupportedOnCpuMeshError(NotImplementedError):
    """A random op DTensor runs that rngtrk cannot draw on a CPU mesh."""


class DrawFrom(TorchDispatchMode):
    """Draws torch's random ops on CPU tensors from `state` (a PhiloxState),
    moving on after each draw, for the duration of a `with` block.  `origin`
    is the region's start offset: a float64 draw doubles the distance from
    it (module text), and `words` (1 or 2) then says by how much the region
    scales its end."""

    def __init__(self, state, origin=None):
        super().__init__()
        self.state = state
        self.origin = state.offset if origin is None else origin
        self.words = 1

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        handler = _HANDLERS.get(func)
        if handler is not None:
            kwargs.pop("generator", None)  # DTensor's region, not a generator, says where to draw
            return handler(self, *args, **kwargs)
        if func.overloadpacket in _REFUSED:
            raise UnsupportedOnCpuMeshError(f"rngtrk.torch.dtensor: {func} on a CPU mesh has no rngtrk form; "
                                            "rngtrk draws rand, randn, uniform_, normal_, bernoulli and dropout there")
        return func(*args, **kwargs)

    def draw(self, dist, dtype, a, b, shape):
        """`shape` values of `dist` as `dtype`, from the state, which moves on."""
        if dtype not in FLOAT_DTYPES:
            raise invalid(f"rngtrk.torch.dtensor draws {', '.join(str(d) for d in FLOAT_DTYPES)}, not {dtype}")
        rng_dtype = FLOAT_DTYPES[dtype]
        if rng_dtype == "f64" and self.words == 1:
            self.words = 2
            self.state = self.state.advanced(self.state.offset - self.origin)  # origin + 2 * distance
        spec = Spec(LAYOUT, dist, "u8" if dist == "bernoulli" else rng_dtype, a, b)
        out = draw_from_state(self.state, spec, tuple(shape), None, "cpu")
        self.state = self.state.advanced(increment(spec, tuple(shape)))
        return out


def _fill(target, values):
    target.copy_(values)
    return target


def _arg(args, kwargs, index, name, default):
    """Argument `index` of an aten call, given by position or by name."""
    return args[index] if len(args) > index else kwargs.get(name, default)


def _uniform_(mode, self, *args, **kwargs):
    low, high = _arg(args, kwargs, 0, "from", 0.0), _arg(args, kwargs, 1, "to", 1.0)
    return _fill(self, mode.draw("uniform", self.dtype, low, high, self.shape))


def _normal_(mode, self, *args, **kwargs):
    mean, std = _arg(args, kwargs, 0, "mean", 0.0), _arg(args, kwargs, 1, "std", 1.0)
    return _fill(self, mode.draw("normal", self.dtype, mean, std, self.shape))


def _rand(mode, size, **kwargs):
    return mode.draw("uniform", kwargs.get("dtype") or torch.get_default_dtype(), 0.0, 1.0, size)


def _randn(mode, size, **kwargs):
    return mode.draw("normal", kwargs.get("dtype") or torch.get_default_dtype(), 0.0, 1.0, size)


def _rand_like(mode, self, **kwargs):
    return mode.draw("uniform", kwargs.get("dtype") or self.dtype, 0.0, 1.0, self.shape)


def _randn_like(mode, self, **kwargs):
    return mode.draw("normal", kwargs.get("dtype") or self.dtype, 0.0, 1.0, self.shape)


def _bernoulli_(mode, self, *args, **kwargs):
    """bernoulli_(p): a float p, or a tensor of probabilities (1 where a
    uniform draw is below it)."""
    p = _arg(args, kwargs, 0, "p", 0.5)
    if isinstance(p, torch.Tensor):
        return _fill(self, mode.draw("uniform", torch.float32, 0.0, 1.0, self.shape) < p)
    return _fill(self, mode.draw("bernoulli", torch.float32, float(p), 0.0, self.shape))


def _bernoulli(mode, self, **_):
    """bernoulli(self): 1 where a uniform draw is below self's probability."""
    return (mode.draw("uniform", torch.float32, 0.0, 1.0, self.shape) < self).to(self.dtype)


def _native_dropout(mode, input, p, train=None):
    """aten.native_dropout: (input * mask * 1/(1-p), mask), the mask kept
    with probability 1 - p; with train False (input, all kept)."""
    if train is False or p == 0.0:
        return input.clone(), torch.ones_like(input, dtype=torch.bool)
    if p == 1.0:
        return torch.zeros_like(input), torch.zeros_like(input, dtype=torch.bool)
    mask = mode.draw("bernoulli", torch.float32, 1.0 - p, 0.0, input.shape).to(torch.bool)
    return input * mask * (1.0 / (1.0 - p)), mask


_HANDLERS = {
    aten.uniform_.default: _uniform_, aten.normal_.default: _normal_,
    aten.rand.default: _rand, aten.rand.generator: _rand, aten.randn.default: _randn, aten.randn.generator: _randn,
    aten.rand_like.default: _rand_like, aten.randn_like.default: _randn_like,
    aten.bernoulli_.float: _bernoulli_, aten.bernoulli_.Tensor: _bernoulli_,
    aten.bernoulli.default: _bernoulli, aten.native_dropout.default: _native_dropout,
}
_REFUSED = {aten.randint_like, aten.randint, aten.random_, aten.exponential_, aten.geometric_, aten.log_normal_,
            aten.cauchy_, aten.randperm, aten.multinomial, aten.poisson}
