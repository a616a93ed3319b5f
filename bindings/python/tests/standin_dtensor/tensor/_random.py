# SPDX-License-Identifier: Apache-2.0
"""Stand-in torch.distributed.tensor._random (README.md)."""
import torch

_rng_tracker = None


class Shard:
    def __init__(self, dim):
        self.dim = dim

    def is_shard(self):
        return True

    def is_replicate(self):
        return False


class Replicate:
    def is_shard(self):
        return False

    def is_replicate(self):
        return True


class Mesh:
    def __init__(self, shape, coordinate, device_type="cuda"):
        self.shape, self._coordinate, self.device_type = tuple(shape), coordinate, device_type

    def get_coordinate(self):
        return self._coordinate


class Spec:
    def __init__(self, mesh, placements, shape):
        self.mesh, self.placements, self.shape = mesh, tuple(placements), torch.Size(shape)


class OffsetBasedRNGTracker:
    """PyTorch's class as far as construction goes: no CPU device."""

    def __init__(self, device_mesh, run_state_sync=True):
        if device_mesh.device_type == "cpu":
            raise RuntimeError("OffsetBasedRNGTracker requires the presence of CUDA/CUDA-like/XPU device")


def manual_seed(seed, device_mesh):
    """As PyTorch's at 24dc060a: a tracker made lazily without a state sync,
    then seeded through it (the newest, 0175565d, calls torch.manual_seed
    instead, which the tracker reads on CUDA)."""
    global _rng_tracker
    if not _rng_tracker:
        _rng_tracker = OffsetBasedRNGTracker(device_mesh, run_state_sync=False)
    if device_mesh.get_coordinate() is None:
        raise RuntimeError("manual_seed requires the current rank to be a part of the device mesh")
    _rng_tracker._manual_seed(seed)


def random_op(spec, draw):
    """The dispatcher's random-op path: the tracker made lazily from the
    module's class, one region per op; `draw(state)` is the op."""
    global _rng_tracker
    if not _rng_tracker:
        _rng_tracker = OffsetBasedRNGTracker(spec.mesh)
    with _rng_tracker._distribute_region(spec) as state:
        return draw(state)
