# SPDX-License-Identifier: Apache-2.0
"""On 4 ranks (gloo, CPU; torch >= 2.4): rngtrk.torch.dtensor.distribute_rand
and distribute_randn build DTensors whose full_tensor() equals the
unsharded rand/randn with the same state, on 1-d and 2-d meshes with every
mix of Shard and Replicate, uneven shards included.  Run by
bindings/python/tests/test_torch.py on the GPU machine (the only one with a
torch that has DTensor); any failure raises.
"""
import os
import sys

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, Shard

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python"))
import rngtrk  # noqa: E402
import rngtrk.torch as rt  # noqa: E402
from rngtrk.torch.dtensor import distribute_rand, distribute_randn  # noqa: E402
from rank_end import end_rank  # noqa: E402 (this folder)

dist.init_process_group("gloo")
state = rngtrk.PhiloxState(2026, 8)
shape = (10, 7)
whole_u = rt.rand(shape, state=state)
whole_n = rt.randn(shape, state=state)
cases = [((4,), [Shard(0)]), ((4,), [Shard(1)]), ((4,), [Replicate()]), ((2, 2), [Shard(0), Shard(1)]),
         ((2, 2), [Shard(1), Replicate()]), ((2, 2), [Shard(0), Shard(0)]), ((2, 2), [Replicate(), Shard(1)])]
for mesh_shape, placements in cases:
    mesh = init_device_mesh("cpu", mesh_shape)
    u = distribute_rand(mesh, placements, shape, state=state)
    n = distribute_randn(mesh, placements, shape, state=state)
    assert torch.equal(u.full_tensor(), whole_u), (mesh_shape, placements)
    assert torch.equal(n.full_tensor(), whole_n), (mesh_shape, placements)
dist.barrier()
if dist.get_rank() == 0:
    print(f"DTensor: the same full tensor for every mesh and placement ({len(cases)} cases)", flush=True)
end_rank()
