# SPDX-License-Identifier: Apache-2.0
"""The rank behind Megatron-LM's training seed, for the origin a tracker
records (rngtrk.torch.dcp keys streams by it: docs/pytorch.md).

Megatron-LM's training setup, megatron.training.initialize._set_random_seed
(main d98e8a64, dev d48bd6b, core_r0.19.0 f8837c04), and Megatron-Bridge's,
megatron.bridge.training.initialize._set_random_seed (067f987d, which takes
the groups as one keyword-only pg_collection and reads pp and dp from its .pp
and .dp, not from parallel_state), give pipeline stage pp
the seed seed_ + 100 pp, adds 10 dp with data-parallel random init, and hands
that sum to model_parallel_cuda_manual_seed.  The sum alone cannot say which
rank it came from: (pp 1, dp 0) and (pp 0, dp 10) give the same.  install()
wraps Megatron's own _set_random_seed, which still does all it does, so that
during the call rngtrk.torch.megatron's model_parallel_cuda_manual_seed knows
the base seed and the true pp and dp (read as Megatron reads them: from the
groups passed, else megatron.core.parallel_state).  It then seeds with rngtrk's
megatron policy from those, which gives the same states, and records them.

Only when the policy's seed for those coordinates equals the sum Megatron
passed (asked of the library, which owns the formula): a Megatron whose
arithmetic differs is seeded from the sum, as without install(), and no
number changes either way.
"""
import functools
import inspect
import threading

from ..tracker import Tracker

_calls = threading.local()  # .stage: (base seed, pp, dp, random init) during a wrapped call


def wrap(theirs):
    """Megatron's _set_random_seed, telling the seeding inside it the rank."""
    try:
        signature = inspect.signature(theirs)
    except (TypeError, ValueError):
        return theirs

    @functools.wraps(theirs)
    def _set_random_seed(*args, **kwargs):
        outer = getattr(_calls, "stage", None)
        _calls.stage = _stage(signature, args, kwargs)
        try:
            return theirs(*args, **kwargs)
        finally:
            _calls.stage = outer
    _set_random_seed.__rngtrk_wrapped__ = theirs
    return _set_random_seed


def _stage(signature, args, kwargs):
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return None  # Megatron's own call raises its own error
    bound.apply_defaults()
    given = bound.arguments
    seed = given.get("seed_")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed <= 0:
        return None
    random_init = bool(given.get("data_parallel_random_init", False))
    groups = given.get("pg_collection")  # Megatron-Bridge's: its groups, .pp and .dp, are where it reads the ranks
    pp_group = getattr(groups, "pp", None) if groups is not None else given.get("pp_group")
    dp_group = getattr(groups, "dp", None) if groups is not None else given.get("dp_group")
    pp = _rank(pp_group, "get_pipeline_model_parallel_rank")
    dp = _rank(dp_group, "get_data_parallel_rank") if random_init else 0
    if pp is None or dp is None:
        return None
    return seed, pp, dp, random_init


def _rank(group, getter):
    """The rank in `group`, else megatron.core.parallel_state's, else None."""
    try:
        if group is not None:
            import torch.distributed as dist
            rank = dist.get_rank(group)
            return rank if isinstance(rank, int) and rank >= 0 else None  # -1: not in the group
        from megatron.core import parallel_state
        rank = getattr(parallel_state, getter)()
        return rank if isinstance(rank, int) and rank >= 0 else None
    except Exception:  # no group, no parallel state: Megatron's own call says why
        return None


def training_seed(seed):
    """(base seed, {"pp", "dp", "dp_random_init"}) for rngtrk's megatron
    policy, for model_parallel_cuda_manual_seed(seed) called inside a
    wrapped _set_random_seed whose sum is `seed`; else (seed, {})."""
    stage = getattr(_calls, "stage", None)
    if stage is None:
        return seed, {}
    base, pp, dp, random_init = stage
    rank = {"pp": pp, "dp": dp, "dp_random_init": random_init}
    with Tracker() as probe:
        try:
            probe.seed_rank("megatron", base, **rank)
        except Exception:  # a coordinate the policy refuses: seeded from the sum
            return seed, {}
        if probe.get_default().seed != seed:
            return seed, {}
    return base, rank
