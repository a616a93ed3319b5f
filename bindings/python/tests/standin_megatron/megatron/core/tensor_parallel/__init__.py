# SPDX-License-Identifier: Apache-2.0
"""Stand-in: the package re-exports names of .random at import time."""
from .random import checkpoint, get_cuda_rng_tracker, model_parallel_cuda_manual_seed  # noqa: F401
