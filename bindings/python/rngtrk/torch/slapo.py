"""slapo's seeding interface (slapo/random.py) over rngtrk's slapo policy:

    from rngtrk.torch.slapo import set_random_seed, get_cuda_rng_tracker
    seed = set_random_seed(2013, dp_rank, pp_rank, tp_rank)

The formulas are slapo's: seed + 100 pp + 10 dp for the rank's seed
(Python's random, numpy and torch.manual_seed take it), and
"model-parallel-rng" = seed + 2718 + tp, which the default CUDA generator
takes too with always_enable_tp_seed.  One difference, on purpose: slapo
seeds the tracker only when a GPU is present; here the rngtrk tracker is
seeded on CPU-only torch too, so rngtrk.torch's ops work there.
"""
import random

import torch

from ._generators import cuda_ready
from .megatron import get_cuda_rng_tracker as get_rng_state_tracker

MODEL_PARALLEL_RNG = "model-parallel-rng"


def get_cuda_rng_tracker():
    """The process tracker (shared with rngtrk.torch.get_rng_state_tracker)."""
    return get_rng_state_tracker()


def model_parallel_cuda_manual_seed(seed, tp_rank, always_enable_tp_seed=False):
    """slapo's model_parallel_cuda_manual_seed: resets the tracker, adds
    "model-parallel-rng" = seed + 2718 + tp_rank, seeds the default state
    (and the CUDA generator) with that seed when always_enable_tp_seed, else
    with `seed`.  Returns the tensor-parallel seed."""
    tracker = get_rng_state_tracker()
    tracker.seed_rank("slapo", seed, tp=tp_rank, always_enable_tp_seed=always_enable_tp_seed)
    tp_seed = tracker.tracker.get_state(MODEL_PARALLEL_RNG).seed
    if cuda_ready():
        torch.cuda.manual_seed(tp_seed if always_enable_tp_seed else seed)
    return tp_seed


def is_random_seed_set():
    """Whether the tracker holds a named state (slapo's test)."""
    return get_rng_state_tracker().is_initialized()


def set_random_seed(seed=2013, dp_rank=None, pp_rank=None, tp_rank=None, always_enable_tp_seed=False):
    """slapo's set_random_seed: seed + 100 pp_rank + 10 dp_rank seeds
    Python's random, numpy (if installed) and torch; with a tp_rank, the
    tracker too.  Returns the rank's seed."""
    if pp_rank is not None:
        seed += 100 * pp_rank
    if dp_rank is not None:
        seed += 10 * dp_rank
    random.seed(seed)
    try:
        import numpy
        numpy.random.seed(seed)
    except ImportError:
        pass
    torch.manual_seed(seed)
    if tp_rank is not None:
        model_parallel_cuda_manual_seed(seed, tp_rank, always_enable_tp_seed)
    return seed
