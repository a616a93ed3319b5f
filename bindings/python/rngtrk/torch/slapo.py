# SPDX-License-Identifier: Apache-2.0
"""slapo's random-state interface (slapo/random.py, awslabs/slapo at
b80534a2), backed by rngtrk (docs/pytorch.md, "slapo"):

    import rngtrk.torch.slapo
    rngtrk.torch.slapo.install()       # one call: slapo now uses rngtrk
    seed = slapo.set_random_seed(2013, dp_rank, pp_rank, tp_rank)

The same names as slapo.random: CudaRNGStatesTracker, the process tracker
_CUDA_RNG_STATE_TRACKER and get_cuda_rng_tracker(), _set_cuda_rng_state,
model_parallel_cuda_manual_seed(seed, tp_rank, always_enable_tp_seed),
is_random_seed_set and set_random_seed.  The seeds are slapo's, computed by
rngtrk's "slapo" policy (core/seed_policy.cpp): seed + 100 pp + 10 dp for
the rank (Python's random, numpy and torch.manual_seed take it) and
"model-parallel-rng" = that + 2718 + tp, which the default CUDA generator
takes too with always_enable_tp_seed.  The tracker records the rank, so a
checkpoint of another rank is refused on load.

The tracker is rngtrk.torch's (rngtrk.torch._tracker: forks on torch's CUDA
generator, rngtrk's rules) with slapo's behaviour where slapo differs from
Megatron-LM: fork() of a name it does not hold raises slapo's RuntimeError
("... Did you call 'set_random_seed'?"), as SeedNotSetError, which is also
rngtrk's UnknownNameError.  slapo keeps its own tracker, apart from
Megatron-LM's, and so does this module.

One difference, on purpose (docs/pytorch.md): on CPU-only torch the
tracker is seeded too (slapo seeds it only when a GPU is present), with
forks moving rngtrk's active state, which rngtrk.torch's ops draw from when
given tracker=get_cuda_rng_tracker().  set_states keeps any value, as
slapo does (rngtrk.torch._tracker says how).
"""
import random
import sys

import torch

from ..errors import InvalidArgumentError, UnknownNameError
from ..tracker import Tracker
from ._generators import cuda_ready
from . import _slapo_install
from ._tracker import RngtrkStatesTracker, set_cuda_rng_state

_MODEL_PARALLEL_RNG_TRACKER_NAME = "model-parallel-rng"


class SeedNotSetError(UnknownNameError, RuntimeError):
    """fork() of a name the tracker does not hold: the RuntimeError slapo
    raises, and rngtrk's UnknownNameError."""


class CudaRNGStatesTracker(RngtrkStatesTracker):
    """slapo's CudaRNGStatesTracker over rngtrk (module text).  `tracker`
    (keyword, rngtrk's): the rngtrk.Tracker to hold the states."""

    def __init__(self, *, tracker=None):
        super().__init__(graph_safe=False, tracker=tracker)

    def _not_added(self, name, error):
        return SeedNotSetError(f"cuda rng state {name} is not added. Did you call 'set_random_seed'?", error.code)


# The process tracker.  install() moves it into slapo.random's globals, and
# this module reads it there from then on, so both reach one tracker.
_CUDA_RNG_STATE_TRACKER = CudaRNGStatesTracker()
_home = globals()
_last_installed = _CUDA_RNG_STATE_TRACKER  # what install() put in slapo's global (a reload of slapo wipes it)


def get_cuda_rng_tracker():
    """The process tracker."""
    return _home["_CUDA_RNG_STATE_TRACKER"]


def _set_cuda_rng_state(new_state, device=-1):
    """Sets the CUDA generator of `device` (-1: the current one; an index,
    "cuda:N" or a torch.device) to a 16-byte state, uncloned, as slapo's
    does.  On CPU-only torch it sets the process tracker's generator."""
    set_cuda_rng_state(get_cuda_rng_tracker, new_state, device)


def _checked(seed, tp_rank, always_enable_tp_seed, pp_rank=0, dp_rank=0):
    """The slapo policy's seeding of (tp, pp, dp), done on a scratch tracker
    (a bad argument raises here, before anything changes): (the seed_rank
    keywords, the default seed, the tensor-parallel seed)."""
    rank = dict(tp=tp_rank, pp=pp_rank, dp=dp_rank, always_enable_tp_seed=bool(always_enable_tp_seed))
    scratch = Tracker()
    scratch.seed_rank("slapo", seed, **rank)
    return rank, scratch.get_default().seed, scratch.get_state(_MODEL_PARALLEL_RNG_TRACKER_NAME).seed


def _seed_tracker(seed, checked):
    """Resets the process tracker and seeds it (and the CUDA generator, with
    the default seed) as _checked computed."""
    rank, default_seed, _ = checked
    tracker = get_cuda_rng_tracker()
    tracker.reset()
    if cuda_ready():
        torch.cuda.manual_seed(default_seed)
    tracker.seed_rank("slapo", seed, **rank)


def model_parallel_cuda_manual_seed(seed, tp_rank, always_enable_tp_seed):
    """slapo's model_parallel_cuda_manual_seed: resets the process tracker,
    seeds the default generator with seed (or, with always_enable_tp_seed,
    the tensor-parallel seed) and adds "model-parallel-rng" = seed + 2718 +
    tp_rank.  Returns the tensor-parallel seed."""
    checked = _checked(seed, tp_rank, always_enable_tp_seed)
    _seed_tracker(seed, checked)
    return checked[2]


def is_random_seed_set():
    """Whether the process tracker holds a named state."""
    return bool(get_cuda_rng_tracker().get_states())


def set_random_seed(seed=2013, dp_rank=None, pp_rank=None, tp_rank=None, always_enable_tp_seed=False):
    """slapo's set_random_seed: seed + 100 pp_rank + 10 dp_rank seeds
    Python's random, numpy (if installed) and torch; with a tp_rank, the
    process tracker too (on CPU-only torch as well).  Returns the rank's
    seed.  The tracker records (seed, tp, pp, dp) as its origin."""
    pp, dp = pp_rank or 0, dp_rank or 0
    checked = None if tp_rank is None else _checked(seed, tp_rank, always_enable_tp_seed, pp, dp)
    rank_seed = _checked(seed, 0, False, pp, dp)[1]  # the policy's seed of the rank
    try:
        import numpy
    except ImportError:
        numpy = None
    if numpy is not None and rank_seed >= 2 ** 32:  # numpy's limit, checked before anything is seeded
        raise InvalidArgumentError(f"the rank's seed {rank_seed} is past numpy's 2**32 - 1")
    random.seed(rank_seed)
    if numpy is not None:
        numpy.random.seed(rank_seed)
    torch.manual_seed(rank_seed)
    if checked is not None:
        _seed_tracker(seed, checked)
    return rank_seed


_INSTALLER = _slapo_install.installer(sys.modules[__name__])


def install():
    """Makes every slapo call site use this module's tracker and functions
    (rngtrk.torch._slapo_install); before or after slapo is imported; a
    second call does nothing.  Returns True if it installed now."""
    return _INSTALLER.install()


def uninstall():
    """Undoes install(); the process tracker stays in slapo.random's
    globals, so every name reaches one tracker.  Returns True if it was
    installed."""
    return _INSTALLER.uninstall()


def installed():
    """Whether install() is in effect."""
    return _INSTALLER.installed


__all__ = [
    "CudaRNGStatesTracker", "SeedNotSetError", "get_cuda_rng_tracker", "model_parallel_cuda_manual_seed",
    "is_random_seed_set", "set_random_seed", "install", "uninstall", "installed",
]
