# SPDX-License-Identifier: Apache-2.0
"""One rank of test_torch_dtensor_cpu_mesh.py's job: DTensor's random ops on
a CPU mesh of gloo ranks (started directly, meeting through a FileStore
file), with or without rngtrk.torch.dtensor.install().  Each rank writes
what it saw as JSON (hex bytes of every local tensor, errors by class);
the test compares the ranks.

    python3 dtensor_cpu_job.py RANK WORLD STORE OUT {install,torch}
"""
import json
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "torch_dist"))
from rank_end import end_rank  # noqa: E402 (tests/torch_dist: how every rank job ends)


def hexed(t):
    return t.detach().contiguous().view(torch.uint8).numpy().tobytes().hex()


def main():
    rank, world, store, out, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    import rngtrk.torch.dtensor as rtd
    if mode == "install":
        rtd.install()
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor
    import torch.distributed.tensor as dtensor
    import torch.distributed.tensor._random as dtensor_random
    mesh = init_device_mesh("cpu", (2, world // 2), mesh_dim_names=("dp", "tp"))
    torch.manual_seed(100 + rank)  # each rank's CPU generator differs, as in a job that never synced them
    seen = {}

    def record(name, fn):
        try:
            value = fn()
            seen[name] = hexed(value) if isinstance(value, torch.Tensor) else value
        except Exception as e:  # noqa: BLE001  (the test judges the class)
            seen[name] = {"error": type(e).__name__, "message": str(e)[:300],
                          "not_implemented": isinstance(e, NotImplementedError)}

    def offset():
        tracker = dtensor_random._rng_tracker
        return None if tracker is None else [tracker.get_seed("parallel-rng"), tracker.get_offset("parallel-rng")]

    if mode == "torch":  # what PyTorch does alone: two ops are enough (and others hang on some releases)
        record("rand replicate", lambda: dtensor.rand(4, 6, device_mesh=mesh, placements=[Replicate(), Replicate()]).to_local())
        ones = distribute_tensor(torch.ones(16, 4), mesh, [Replicate(), Replicate()])
        record("dropout replicate", lambda: torch.nn.functional.dropout(ones, 0.5).to_local())
        with open(out, "w") as f:
            json.dump(seen, f)
        dist.barrier()
        end_rank()
    record("manual_seed", lambda: dtensor_random.manual_seed(1234, mesh) or "ok")
    record("offset after seeding", offset)
    record("rand replicate", lambda: dtensor.rand(4, 6, device_mesh=mesh, placements=[Replicate(), Replicate()]).to_local())
    record("offset after rand", offset)
    record("rand shard0 full", lambda: dtensor.rand(8, 6, device_mesh=mesh, placements=[Replicate(), Shard(0)]).full_tensor())
    record("randn shard1 local", lambda: dtensor.randn(4, 8, device_mesh=mesh, placements=[Shard(1), Replicate()]).to_local())
    ones = distribute_tensor(torch.ones(16, 4), mesh, [Replicate(), Replicate()])
    record("dropout replicate", lambda: torch.nn.functional.dropout(ones, 0.5).to_local())
    record("uniform_ replicate", lambda: distribute_tensor(torch.zeros(16), mesh, [Replicate(), Replicate()]).uniform_(-1, 2).to_local())
    record("normal_ shard", lambda: distribute_tensor(torch.zeros(8, 8), mesh, [Shard(0), Shard(1)]).normal_(0, 2).to_local())
    record("bernoulli_ replicate", lambda: distribute_tensor(torch.zeros(32), mesh, [Replicate(), Replicate()]).bernoulli_(0.3).to_local())
    record("rand replicate again", lambda: dtensor.rand(4, 6, device_mesh=mesh, placements=[Replicate(), Replicate()]).to_local())
    record("offset before f64", offset)
    record("rand f64 shard0 full", lambda: dtensor.rand(8, 6, dtype=torch.float64, device_mesh=mesh,
                                                        placements=[Replicate(), Shard(0)]).full_tensor())
    record("offset after f64", offset)

    def reseeded_twice():
        """torch.manual_seed with the seed it already had starts DTensor's stream again."""
        draws = []
        for _ in range(2):
            torch.manual_seed(77)
            draws.append([offset(), hexed(dtensor.rand(4, 6, device_mesh=mesh, placements=[Replicate(), Replicate()])
                                          .to_local()), offset()])
        return draws
    record("reseeded twice", reseeded_twice)
    record("randint refused", lambda: torch.randint_like(distribute_tensor(torch.zeros(8), mesh, [Replicate(), Replicate()]),
                                                         0, 9).to_local())
    record("offset at the end", offset)
    with open(out, "w") as f:
        json.dump(seen, f)
    dist.barrier()
    end_rank()


if __name__ == "__main__":
    main()
