# SPDX-License-Identifier: Apache-2.0
"""Stand-in: binds the getter from the package at import time."""
from megatron.core.tensor_parallel import get_cuda_rng_tracker


def tracker_seen_by_mixer():
    return get_cuda_rng_tracker()
