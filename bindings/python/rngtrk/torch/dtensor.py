"""PyTorch DTensor's offset-based RNG tracker over rngtrk, and random
DTensors whose full tensor is the same for any mesh and placements.

OffsetBasedRNGTracker keeps upstream's interface: `distribute_region_enabled`,
`_manual_seed(parallel_seed)` and the `_distribute_region(device_mesh,
placements, global_shape, generator=None)` context manager.  Its pre- and
post-op offsets come from rngtrk_dtensor_offsets (rule "torch", upstream's
arithmetic byte for byte, or "exact").  The region yields the PhiloxState
this rank draws from (for rngtrk.torch's ops, state=...); on CUDA it also
points torch's CUDA generator there, as upstream does, so torch's own ops in
the region draw from it.  On exit the offset moves to the post-op offset:
offset + the tensor's element count rounded up to 4, the same on every
rank, so consecutive ops never share numbers.  (Some downstream copies of
this tracker, hyper_parallel's core/random.py for one, advance by the
number of devices in the mesh instead; whenever a tensor has more elements
than the mesh has devices, the next op then draws numbers the previous one
used.  docs/pytorch.md shows it.)

distribute_rand / distribute_randn build a DTensor (torch >= 2.4) from each
rank's box of the unsharded tensor (rngtrk.torch.rand_slice), so
`full_tensor()` is the same for every mesh and every Shard/Replicate
placement.
"""
import contextlib

import torch

from ..distributed import dtensor_local_box, dtensor_offsets
from ..errors import invalid
from ..state import PhiloxState
from ._ops import rand_slice, randn_slice
from ._generators import state_of, state_tensor


def placement_code(p):
    """rngtrk's "S<dim>" / "R" / "P" for a torch placement object or a code."""
    if isinstance(p, str):
        return p
    if isinstance(p, tuple) and len(p) == 2 and p[0] == "S":
        return f"S{int(p[1])}"
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
        raise invalid("this rank is not in the device mesh")
    return tuple(device_mesh.shape), tuple(coord)


class OffsetBasedRNGTracker:
    """PyTorch DTensor's OffsetBasedRNGTracker with rngtrk's offsets (module text)."""

    def __init__(self, device_type="cuda", *, rule="torch", seed=0):
        if rule not in ("torch", "exact"):
            raise invalid(f"rule must be 'torch' or 'exact', not {rule!r}")
        self.device_type = device_type
        self.rule = rule
        self.distribute_region_enabled = True
        self.state = PhiloxState(seed, 0)  # upstream's "parallel-rng"

    def _manual_seed(self, parallel_seed):
        self.state = PhiloxState(parallel_seed, 0)

    def get_offset(self):
        return self.state.offset

    def set_offset(self, offset):
        self.state = PhiloxState(self.state.seed, offset)

    @contextlib.contextmanager
    def _distribute_region(self, device_mesh, placements, global_shape, generator=None):
        """The region of one random op on a DTensor of `global_shape`:
        yields the state this rank draws from; moves the offset to the
        post-op offset afterwards (also if the body raises).  With
        `generator` (a CUDA torch.Generator), its state is used and updated
        instead of this tracker's."""
        start = state_of(generator) if generator is not None else self.state
        if not self.distribute_region_enabled:
            yield start
            return
        mesh_shape, coord = mesh_layout(device_mesh)
        codes = [placement_code(p) for p in placements]
        pre, post = dtensor_offsets(mesh_shape, coord, codes, tuple(global_shape), start.offset, self.rule)
        here = PhiloxState(start.seed, pre)
        swap = self.device_type == "cuda" and torch.cuda.is_available()
        try:
            if swap:
                with torch.random.fork_rng(devices=[torch.cuda.current_device()]):
                    torch.cuda.set_rng_state(state_tensor(here))
                    yield here
            else:
                yield here
        finally:
            after = PhiloxState(start.seed, post)
            if generator is not None:
                generator.set_state(state_tensor(after))
            else:
                self.state = after


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
