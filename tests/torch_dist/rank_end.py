# SPDX-License-Identifier: Apache-2.0
"""How every rank of the torch.distributed jobs here ends: past its last
barrier, with its output flushed, and without tearing its gloo process
groups down.

Why not dist.destroy_process_group(): torch's gloo teardown can deadlock.
ProcessGroupGloo's destructor joins its worker threads while the caller
holds the GIL, and a worker may at that moment be freeing the last
collective's tensors, whose Python objects need the GIL to go (seen on
torch 2.6 in trixie, about one train phase of tests/torch_dist/job.py in
five on a 2-core machine: a rank stuck in ~ProcessGroupGloo, a worker in
PyObjectSlot::maybe_destroy_pyobj).  The jobs test rngtrk, not torch's
teardown; once every rank has passed the final barrier there is nothing
left to exchange, and the process leaving closes its sockets."""
import os
import sys


def end_rank(status=0):
    """Flushes this rank's output and exits with `status` at once (no
    interpreter teardown, so no process-group destructor)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
