# SPDX-License-Identifier: Apache-2.0
"""Stand-in slapo.primitives.tensor_parallel: forks through an early-bound getter."""
from ..random import get_cuda_rng_tracker


def tracker_seen_by_tensor_parallel():
    return get_cuda_rng_tracker()


def fork_default():
    """The fork slapo's tensor-parallel dropout opens."""
    return get_cuda_rng_tracker().fork()
