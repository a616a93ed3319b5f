# SPDX-License-Identifier: Apache-2.0
"""Stand-in slapo package: re-exports names of .random, as slapo's does."""
from .random import get_cuda_rng_tracker, is_random_seed_set, set_random_seed  # noqa: F401
from . import checkpoint, verify  # noqa: F401
from .primitives import tensor_parallel  # noqa: F401
