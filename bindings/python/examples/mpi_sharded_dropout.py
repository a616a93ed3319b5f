# SPDX-License-Identifier: Apache-2.0
"""A dropout mask sharded over MPI ranks, equal to the unsharded one.

    mpirun -np 4 python3 mpi_sharded_dropout.py

Every rank holds the same tracker (the sharding-invariant mode), takes its
box of a 32x40 tensor sharded over the ranks' tensor-parallel dimension
(Shard(1)), and draws only that box.  Rank 0 gathers the boxes and checks
them against the whole mask drawn in one piece; an allgather of digests
shows every tracker advanced alike.
"""
import sys

import numpy
from mpi4py import MPI

import rngtrk

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
shape = (32, 40)

with rngtrk.Tracker() as tracker:
    tracker.manual_seed(1234)
    tracker.add("dropout-rng", 98765)
    start, local = rngtrk.dtensor_local_box((size,), (rank,), ("S1",), shape)
    with tracker.fork("dropout-rng"):
        box = tracker.sample_slice(shape, start, local, dist="bernoulli", dtype="u8", p=0.9)
    boxes = comm.gather((start, box), root=0)
    digests = comm.allgather(tracker.digest())

ok = len(set(digests)) == 1
if rank == 0:
    with rngtrk.Tracker() as single:
        single.manual_seed(1234)
        single.add("dropout-rng", 98765)
        with single.fork("dropout-rng"):
            whole = single.sample(shape[0] * shape[1], dist="bernoulli", dtype="u8", p=0.9).reshape(shape)
    rebuilt = numpy.zeros(shape, dtype=numpy.uint8)
    for (r0, c0), b in boxes:
        rebuilt[r0:r0 + b.shape[0], c0:c0 + b.shape[1]] = b
    same = numpy.array_equal(rebuilt, whole)
    ok = ok and same
    print(f"python/mpi4py on {size} ranks: the gathered mask {'equals' if same else 'DIFFERS FROM'} "
          f"the unsharded one; trackers {'in sync' if len(set(digests)) == 1 else 'OUT OF SYNC'}")
ok = comm.allreduce(ok, op=MPI.LAND)
sys.exit(0 if ok else 1)
