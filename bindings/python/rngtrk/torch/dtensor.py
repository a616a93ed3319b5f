# SPDX-License-Identifier: Apache-2.0
"""PyTorch DTensor's offset-based RNG tracker over rngtrk, and random
DTensors whose full tensor is the same for any mesh and placements.

OffsetBasedRNGTracker has PyTorch's interface (torch/distributed/tensor/
_random.py, pytorch 0175565d, the torch 2.11 line): the constructor
`(device_mesh, run_state_sync=True)` (and the older `(device_type)` form,
a string), `distribute_region_enabled`, `_manual_seed(seed)`,
`_compute_rng_offsets(spec)`, `_calc_shard_linear_idx(coord, size)` and
the context manager `_distribute_region(spec, generator=None)` that
DTensor's dispatcher and factory functions enter around a random op, with
one DTensorSpec (`.mesh`, `.placements`, `.shape`).

Where the state lives is PyTorch's: the device's default CUDA generator,
or `generator` when one is given.  The region points torch's CUDA
generator at this rank's pre-op offset (inside torch.random.fork_rng, so
the op draws there) and afterwards moves the generator (or `generator`) to
the post-op offset: old offset + the tensor's element count rounded up to
4, the same on every rank, so consecutive ops never share numbers.  The
offsets come from rngtrk_dtensor_offsets: rule "torch" is PyTorch's
arithmetic (`_compute_rng_offsets`), so DTensor's own random ops draw
PyTorch's values; rule "exact" chunks a dim sharded twice by its true size.
Without a CUDA device (CPU-only torch, where PyTorch refuses to make the
tracker) the tracker keeps the state itself, `rng_states["parallel-rng"]`,
and the region yields the PhiloxState this rank draws from (for
rngtrk.torch's ops, state=...).  (Some downstream copies of this tracker,
hyper_parallel's core/random.py for one, advance by the number of devices
in the mesh instead; whenever a tensor has more elements than the mesh has
devices, the next op then draws numbers the previous one used.
docs/pytorch.md shows it.)

install() puts this class in DTensor's random module (the class
DTensor's dispatcher constructs lazily, a subclass of PyTorch's, so its
isinstance checks hold) and replaces a tracker PyTorch made (carrying over
the state an older torch kept in it).  DTensor's random ops then take their
offsets from it: the dispatcher enters _distribute_region, or (the newest
eager CUDA path, without a generator) asks _compute_rng_offsets for the
increments.  torch.distributed.tensor.random.manual_seed makes the tracker
lazily and seeds torch's generator (older releases: the tracker's
_manual_seed), which the tracker reads.

distribute_rand / distribute_randn build a DTensor (torch >= 2.4) from each
rank's box of the unsharded tensor (rngtrk.torch.rand_slice), so
`full_tensor()` is the same for every mesh and every Shard/Replicate
placement.
"""
import contextlib

import torch

from ..distributed import dtensor_local_box, dtensor_offsets
from ..errors import InvalidArgumentError, invalid
from ..state import PhiloxState
from ._generators import cuda_ready, default_generator, read_generator, state_of, state_tensor, write_generator
from ._cpu_mesh_random import DrawFrom
from ._install import Installer, ModulePatch, bridge
from ._ops import rand_slice, randn_slice

PARALLEL_RNG = "parallel-rng"  # the name PyTorch's older trackers keep their state under


class SpecMismatchError(InvalidArgumentError, IndexError):
    """A DTensorSpec whose mesh or placements do not fit its tensor (a
    placement's dim past the tensor's, more placements than mesh dims): the
    IndexError PyTorch's offset arithmetic raises, and rngtrk's
    InvalidArgumentError, naming the problem."""


class TrackerStateError(InvalidArgumentError, RuntimeError):
    """PyTorch's RuntimeError for a state name the tracker does not have,
    or a rank outside the mesh."""


def placement_code(p):
    """rngtrk's "S<dim>" / "R" / "P" for a torch placement object or a code.
    A _StridedShard (FSDP2 over tensor parallelism; it has a split_factor)
    shards its dim, as PyTorch's offset arithmetic counts it; its first
    shard's size is taken as Shard's, which is the same whenever the dim
    divides evenly."""
    if isinstance(p, str):
        return p
    if isinstance(p, tuple) and len(p) == 2 and p[0] == "S":
        return f"S{int(p[1])}"
    if hasattr(p, "split_factor") and hasattr(p, "dim"):
        return f"S{p.dim}"
    if hasattr(p, "is_shard") and p.is_shard():
        return f"S{p.dim}"
    if hasattr(p, "is_replicate") and p.is_replicate():
        return "R"
    if hasattr(p, "is_partial") and p.is_partial():
        return "P"
    raise invalid(f"placement {p!r} is not Shard(dim), Replicate(), Partial() or 'S<dim>'/'R'/'P'")


def mesh_layout(device_mesh):
    """(mesh_shape, this rank's coordinate) of a DeviceMesh, or of a
    (mesh_shape, coord) pair."""
    if isinstance(device_mesh, tuple) and len(device_mesh) == 2:
        return tuple(device_mesh[0]), tuple(device_mesh[1])
    coord = device_mesh.get_coordinate()
    if coord is None:
        raise TrackerStateError("this rank is not in the device mesh, so it has no shard to draw")
    return tuple(device_mesh.shape), tuple(coord)


def spec_offsets(spec, offset, rule):
    """(pre, post) around a random op on `spec` (a DTensorSpec: .mesh,
    .placements, .shape) from `offset`; SpecMismatchError if they do not fit."""
    mesh_shape, coord = mesh_layout(spec.mesh)
    codes = [placement_code(p) for p in spec.placements]
    try:  # the C library checks the spec ("Shard(2) of a 2-d tensor", ...)
        return dtensor_offsets(mesh_shape, coord, codes, tuple(spec.shape), offset, rule)
    except InvalidArgumentError as e:
        raise SpecMismatchError(e.message, e.code) from None


def _device_type(device_mesh):
    """The device type of a DeviceMesh or of the older constructor's string."""
    if isinstance(device_mesh, str):
        return device_mesh
    device_type = getattr(device_mesh, "device_type", None)
    if device_type is None:
        raise TypeError(f"OffsetBasedRNGTracker takes a DeviceMesh (or a device type string), "
                        f"not {type(device_mesh).__name__}")
    return device_type


class OffsetBasedRNGTracker:
    """PyTorch DTensor's OffsetBasedRNGTracker with rngtrk's offsets
    (module text).  `rule` (keyword, rngtrk's): "torch" or "exact";
    default the class's default_rule (install(rule=...) sets it)."""

    default_rule = "torch"

    def __init__(self, device_mesh="cuda", run_state_sync=True, *, rule=None):
        rule = type(self).default_rule if rule is None else rule
        if rule not in ("torch", "exact"):
            raise invalid(f"rule must be 'torch' or 'exact', not {rule!r}")
        self.device_type = _device_type(device_mesh)
        self.device_mesh = None if isinstance(device_mesh, str) else device_mesh
        self.rule = rule
        self._use_distribute_region = True
        self._on_device = self.device_type == "cuda" and cuda_ready()
        # Without a device the tracker keeps the state: seeded from torch's CPU
        # generator's seed (torch.manual_seed is DTensor's manual_seed from
        # torch 2.7 on) and taken afresh after every torch.manual_seed, the
        # same seed again included (install() counts the calls: _SEEDINGS).
        self._seen_seed = self._seeded()
        self._state = PhiloxState(self._seen_seed[0], 0)
        if run_state_sync and torch.distributed.is_available() and torch.distributed.is_initialized():
            self._sync_state()

    # -- PyTorch's attributes --------------------------------------------------------

    @property
    def distribute_region_enabled(self):
        return self._use_distribute_region

    @distribute_region_enabled.setter
    def distribute_region_enabled(self, value):
        self._use_distribute_region = bool(value)

    @property
    def rng_states(self):
        """{"parallel-rng": the state as a 16-byte tensor} (older torch's view)."""
        return {PARALLEL_RNG: state_tensor(self._current())}

    def rng_state_is_sync(self, name):
        return name == PARALLEL_RNG

    def _check_name(self, name):
        if name != PARALLEL_RNG:
            raise TrackerStateError(f"{type(self).__name__} does not have random state for {name}")

    def get_seed(self, name=PARALLEL_RNG):
        self._check_name(name)
        return self._current().seed

    def set_seed(self, name, seed):
        self._check_name(name)
        self._store(PhiloxState(seed, 0))

    def get_offset(self, name=PARALLEL_RNG):
        self._check_name(name)
        return self._current().offset

    def set_offset(self, name, offset):
        self._check_name(name)
        self._store(PhiloxState(self._current().seed, offset))

    def _manual_seed(self, parallel_seed):
        """The state becomes (parallel_seed, 0)."""
        self._store(PhiloxState(parallel_seed, 0))

    def _sync_state(self):
        """Every rank takes rank 0's state, as PyTorch's tracker does when it
        is made (on a CPU mesh over the CPU process group)."""
        if self._on_device:
            state = torch.cuda.get_rng_state().to(f"cuda:{torch.cuda.current_device()}")
            torch.distributed.broadcast(state, 0)
            torch.cuda.set_rng_state(state.cpu())
            return
        state = state_tensor(self._current())
        torch.distributed.broadcast(state, 0)
        self._store(state_of(state, "rank 0's state"))

    def _compute_rng_offsets(self, spec):
        """(start increment, end increment) of a random op on `spec`:
        PyTorch's, or the exact rule's."""
        return spec_offsets(spec, 0, self.rule)

    def _calc_shard_linear_idx(self, shard_coord, shard_size):
        """The row-major index of a shard coordinate (last dim fastest)."""
        index = 0
        for coord, size in zip(shard_coord, shard_size):
            index = index * size + coord
        return index

    @contextlib.contextmanager
    def _distribute_region(self, spec, generator=None):
        """The region of one random op on the DTensor of `spec` (module
        text): yields the state this rank draws from.  As PyTorch's: after
        the body the generator (or this tracker) is at the post-op offset;
        if the body raises it is left as it was; a disabled region yields
        the state and then puts it back, undoing what the body drew."""
        start = state_of(generator, "generator") if generator is not None else self._current()
        if not self._use_distribute_region:
            yield start
            after = start
        else:
            pre, post = spec_offsets(spec, start.offset, self.rule)  # refused before anything changes
            here = PhiloxState(start.seed, pre)
            if self._on_device:
                with torch.random.fork_rng(devices=[torch.cuda.current_device()]):
                    write_generator(default_generator(), here)
                    yield here
                after = PhiloxState(start.seed, post)
            else:  # the op draws from `here` through rngtrk (_cpu_mesh_random)
                with DrawFrom(here, start.offset) as mode:
                    yield here
                after = PhiloxState(start.seed, start.offset + mode.words * (post - start.offset))
        if generator is not None:
            write_generator(generator, after)
        else:
            self._store(after)

    # -- where the state lives -------------------------------------------------------

    def _current(self):
        if self._on_device:
            return read_generator(default_generator())
        seeded = self._seeded()
        if seeded != self._seen_seed:  # torch.manual_seed since: DTensor's seed, offset 0
            self._seen_seed, self._state = seeded, PhiloxState(seeded[0], 0)
        return self._state

    @staticmethod
    def _seeded():
        """(torch's CPU seed, how many torch.manual_seed calls install() has seen)."""
        return torch.initial_seed(), _SEEDINGS[0]

    def _store(self, state):
        if self._on_device:
            write_generator(default_generator(), state)
        else:
            self._seen_seed, self._state = self._seeded(), state

    def __repr__(self):
        where = "torch's CUDA generator" if self._on_device else "its own state"
        return f"<{type(self).__name__} rule={self.rule} on {where}: {self._current()}>"


# -- install(): DTensor's random module -------------------------------------------------

# Where DTensor keeps its tracker: torch >= 2.5, and older releases.
RANDOM_MODULES = ("torch.distributed.tensor._random", "torch.distributed._tensor.random")
_INSTALL = {"rule": "torch"}


def _random_attributes(module):
    ours = bridge(OffsetBasedRNGTracker, module.__dict__.get("OffsetBasedRNGTracker"), "OffsetBasedRNGTracker")
    if _INSTALL["rule"] != ours.default_rule:
        ours = type("OffsetBasedRNGTracker", (ours,), {"default_rule": _INSTALL["rule"], "__module__": __name__,
                                                       "__qualname__": "OffsetBasedRNGTracker"})
    return {"OffsetBasedRNGTracker": ours, "_rng_tracker": _carried_over(module, ours), **_dispatch_attributes(module)}


def _cpu_meshes_too(supported):
    """DTensor's is_rng_supported_mesh, true for CPU meshes too: this
    tracker draws their random ops through rngtrk (_cpu_mesh_random), where
    PyTorch's refuses them (torch 2.6) or lets each rank draw from its own
    CPU generator (2.14)."""
    def is_rng_supported_mesh(device_mesh):
        return getattr(device_mesh, "device_type", None) == "cpu" or supported(device_mesh)
    is_rng_supported_mesh.__wrapped__ = supported
    return is_rng_supported_mesh


def _dispatch_attributes(module):
    """The dispatcher's own copy of is_rng_supported_mesh (imported by name)."""
    if "is_rng_supported_mesh" not in module.__dict__:
        return {}
    return {"is_rng_supported_mesh": _cpu_meshes_too(module.__dict__["is_rng_supported_mesh"])}


def _carried_over(module, cls):
    """A tracker PyTorch made is replaced by ours on the same mesh; the
    state an older torch kept in it ("parallel-rng") comes along."""
    old = module.__dict__.get("_rng_tracker")
    if old is None or isinstance(old, OffsetBasedRNGTracker):
        return old
    mesh = getattr(old, "_device_mesh", None) or getattr(old, "device_mesh", None)
    new = cls(mesh if mesh is not None else getattr(old, "_device_type", "cuda"), run_state_sync=False)
    states = getattr(old, "rng_states", None)
    if isinstance(states, dict) and PARALLEL_RNG in states:
        new._store(state_of(states[PARALLEL_RNG], "parallel-rng"))
    new.distribute_region_enabled = getattr(old, "distribute_region_enabled", True)
    return new


_SEEDINGS = [0]  # torch.manual_seed calls seen while installed


def _counting_manual_seed(module):
    """torch.manual_seed, counted: on torch >= 2.7 it re-seeds DTensor (its
    CUDA generator, offset 0) even with the seed it had, and a CPU mesh's
    tracker, which cannot see a seed that did not change, follows it by
    the count."""
    seed_torch = module.__dict__["manual_seed"]
    seed_torch = getattr(seed_torch, "_rngtrk_counts", seed_torch)  # (a reload of the module: not twice)

    def manual_seed(seed):
        generator = seed_torch(seed)
        _SEEDINGS[0] += 1
        return generator
    manual_seed._rngtrk_counts = seed_torch
    manual_seed.__doc__ = seed_torch.__doc__
    return {"manual_seed": manual_seed}


# Where the dispatcher binds is_rng_supported_mesh by name (torch >= 2.5).
DISPATCH_MODULES = ("torch.distributed.tensor._dispatch",)
INSTALLER = Installer([ModulePatch(name, _random_attributes) for name in RANDOM_MODULES] +
                      [ModulePatch(name, _dispatch_attributes) for name in DISPATCH_MODULES] +
                      [ModulePatch(name, _counting_manual_seed) for name in ("torch", "torch.random")])


def install(rule="torch"):
    """Makes DTensor construct and use this tracker (module text), now or
    when DTensor is imported; a second call does nothing.  `rule` is the
    tracker's offset rule.  Returns True if it installed now."""
    if rule not in ("torch", "exact"):
        raise invalid(f"rule must be 'torch' or 'exact', not {rule!r}")
    if INSTALLER.installed:
        return False
    _INSTALL["rule"] = rule
    return INSTALLER.install()


def uninstall():
    """Puts PyTorch's class and the tracker it had back (none: DTensor makes
    one of its own at its next random op).  Returns True if it was
    installed."""
    return INSTALLER.uninstall()


def installed():
    """Whether install() is in effect."""
    return INSTALLER.installed


def _dtensor_class():
    try:
        from torch.distributed.tensor import DTensor  # torch >= 2.4
    except ImportError as e:
        raise ImportError(f"distribute_rand needs torch >= 2.4 with DTensor (this is torch {torch.__version__})") from e
    return DTensor


def _distribute(make, device_mesh, placements, global_shape, **kwargs):
    DTensor = _dtensor_class()
    codes = [placement_code(p) for p in placements]
    if "P" in codes:
        raise invalid("a random tensor is not Partial: use Shard or Replicate")
    mesh_shape, coord = mesh_layout(device_mesh)
    start, local_shape = dtensor_local_box(mesh_shape, coord, codes, tuple(global_shape))
    device = kwargs.pop("device", device_mesh.device_type)
    local = make(tuple(global_shape), start, local_shape, device=device, **kwargs)
    stride = [1] * len(global_shape)
    for i in range(len(global_shape) - 2, -1, -1):
        stride[i] = stride[i + 1] * global_shape[i + 1]
    return DTensor.from_local(local, device_mesh, list(placements), run_check=False, shape=torch.Size(global_shape),
                              stride=tuple(stride))


def distribute_rand(device_mesh, placements, global_shape, **kwargs):
    """A DTensor of uniform values whose full tensor is rand(global_shape)
    with the same state, for any mesh and Shard/Replicate placements.
    Keywords as rngtrk.torch.rand_slice (state=, tracker=, dtype=, ...);
    every rank must pass the same state or an equal tracker."""
    return _distribute(rand_slice, device_mesh, placements, global_shape, **kwargs)


def distribute_randn(device_mesh, placements, global_shape, **kwargs):
    """distribute_rand for normal values (rngtrk.torch.randn_slice)."""
    return _distribute(randn_slice, device_mesh, placements, global_shape, **kwargs)
