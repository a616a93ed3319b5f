# SPDX-License-Identifier: Apache-2.0
"""Stand-in slapo.checkpoint: binds the tracker getter at import."""
from .random import _set_cuda_rng_state, get_cuda_rng_tracker, is_random_seed_set  # noqa: F401


def tracker_seen_by_checkpoint():
    return get_cuda_rng_tracker()


def states_saved_for_recompute():
    """What slapo's checkpoint saves before a forward (if seeded)."""
    return get_cuda_rng_tracker().get_states() if is_random_seed_set() else None
