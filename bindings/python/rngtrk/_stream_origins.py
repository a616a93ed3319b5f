# SPDX-License-Identifier: Apache-2.0
"""What each state of a seeded tracker is: its stream's origin.

A tracker seeded by a policy (Tracker.seed_rank) records its origin: the
policy, its flags, the base seed and the rank's coordinates.  Each state it
holds is one stream of the job, and which ranks hold that same stream (its
replicas) follows from the coordinates that state's seed depends on: the
data-parallel state of every tensor-parallel rank of a stage is one stream,
the tensor-parallel state of each tensor-parallel rank another.  Two ranks
hold one stream when their states have the same name, seed, policy, flags,
base seed and the same values of those coordinates; a state with the same
name and seed but another origin is another stream that only shares a seed
number (Megatron's expert seed of pipeline stage 1 and expert rank 0 equals
that of stage 0 and expert rank 1).

Which coordinates a seed depends on is the library's rule
(core/seed_policy.cpp).  It is learnt here as `rngtrk seeds` learns it
(docs/distributed.md): by seeding probe ranks that differ in one coordinate
and seeing which seeds move (_depends).  Nothing here restates a formula.
"""
import functools
from collections import namedtuple

from .distributed import FLAG_NAMES, POLICIES
from .errors import InvalidArgumentError
from .state import PhiloxState
from .tracker import Tracker

# The coordinates a seed may depend on, in the order of the DCP stream
# table's fields (docs/checkpoint-format.md).  A remat axis's group size is
# not among them: two ranks whose remat groups differ only in size hold the
# same streams (docs/distributed.md).
AXES = ("tp", "pp", "dp", "ep", "etp", "gtp_remat", "egtp_remat")
_GROUP_SIZE = {"gtp_remat": "gtp_remat_size", "egtp_remat": "egtp_remat_size"}

# A state's stream origin.  policy: the rngtrk_seed_policy value; flags: the
# RNGTRK_SEED_* bits; seed: the policy's base seed; depends: bit i set when
# the state's seed depends on AXES[i]; coordinates: the seven values, each 0
# where the seed does not depend on it.
StreamOrigin = namedtuple("StreamOrigin", "policy flags seed depends coordinates")

DEFAULT = None  # the default state's key in stream_origins()


def _flag_bits(names):
    return sum(bit for bit, name in FLAG_NAMES if name in names)


def _seeds(origin, **changed):
    """{name: seed} of the states `origin` seeds (the default under DEFAULT),
    with the coordinates in `changed` replaced."""
    rank = {axis: getattr(origin, axis) for axis in AXES + tuple(_GROUP_SIZE.values())}
    rank.update(changed)
    with Tracker() as probe:
        probe.seed_rank(origin.policy, origin.seed, dp_random_init="dp-random-init" in origin.flags,
                        always_enable_tp_seed="always-enable-tp-seed" in origin.flags, **rank)
        seeds = {name: PhiloxState.from_bytes(raw).seed for name, raw in probe.get_states().items()}
        seeds[DEFAULT] = probe.get_default().seed
    return seeds


def _depends(origin):
    """{name: the bits of the coordinates its seed depends on}, learnt at the
    first rank, every coordinate 0 (the remat group sizes kept), by moving
    one coordinate to 1: the same answer on every rank of a job, whatever
    its own coordinates.  Where even that seed passes 2^64 - 1 (a base seed
    within a few thousand of it), no rank of any job with that base seed
    has another value there (the policies' seeds only grow with a
    coordinate), so no state is recorded as depending on it.  A remat axis
    without its group (size below 2) is off."""
    zero = dict.fromkeys(AXES, 0)
    at_zero = _seeds(origin, **zero)
    depends = dict.fromkeys(at_zero, 0)
    for index, axis in enumerate(AXES):
        size = _GROUP_SIZE.get(axis)
        if size is not None and getattr(origin, size) < 2:
            continue
        try:
            moved = _seeds(origin, **dict(zero, **{axis: 1}))
        except InvalidArgumentError:  # the policy's seed passes 2^64 - 1 there
            continue
        for name, seed in moved.items():
            if name in depends and seed != at_zero[name]:
                depends[name] |= 1 << index
    return depends


@functools.lru_cache(maxsize=64)
def stream_origins(origin):
    """{name: (seed, StreamOrigin)} for every state the rngtrk.Origin
    `origin` seeds, the default state under DEFAULT."""
    at_origin = _seeds(origin)
    depends = _depends(origin)
    policy, flags = POLICIES[origin.policy], _flag_bits(origin.flags)
    return {name: (seed, StreamOrigin(policy, flags, origin.seed, depends[name],
                                      tuple(getattr(origin, axis) if depends[name] >> i & 1 else 0
                                            for i, axis in enumerate(AXES))))
            for name, seed in at_origin.items()}


def stream_origin(origin, name, seed):
    """The StreamOrigin of the state `name` (DEFAULT: the default state)
    with `seed` on a tracker of rngtrk.Origin `origin` (None: no origin), or
    None when the policy did not give it that seed (a state the caller added
    or set: nothing is known of its replicas)."""
    if origin is None:
        return None
    found = stream_origins(origin).get(name)
    return found[1] if found is not None and found[0] == seed else None
