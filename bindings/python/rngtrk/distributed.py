# SPDX-License-Identifier: Apache-2.0
"""Distributed helpers (docs/distributed.md): DTensor boxes and offsets.

Placements are strings, one per mesh dimension: "S<dim>" (Shard), "R"
(Replicate) or "P" (Partial, which random ops treat like Replicate).
"""
from collections import namedtuple

from ._library import ffi, lib
from ._names import POLICY
from .errors import check, invalid
from .state import PhiloxState, _u64, as_state

# The library's names, so that no list is kept here: POLICIES maps a name to
# its rngtrk_seed_policy value, POLICY_NAMES back, and FLAG_NAMES pairs each
# known RNGTRK_SEED_* bit with its name.
POLICIES = POLICY.values
POLICY_NAMES = POLICY.names
FLAG_NAMES = tuple((1 << i, ffi.string(lib.rngtrk_seed_flag_name(1 << i)).decode("ascii"))
                   for i in range(32) if lib.rngtrk_seed_flag_name(1 << i) != ffi.NULL)

# Who a tracker's states belong to: the seeding policy's name, the base
# seed, the flags' names (a tuple, the library's names) and every coordinate
# the policies use; a remat axis that is off reads 0 and 0.
Origin = namedtuple("Origin", "policy seed flags tp pp dp ep etp gtp_remat gtp_remat_size egtp_remat egtp_remat_size")


def policy_value(policy):
    """The rngtrk_seed_policy of the name `policy`; for another name the
    library's InvalidArgumentError, whose message names the policies."""
    return POLICY.value(policy)


def origin_of(handle):
    """The Origin of a live tracker handle, or None."""
    origin = ffi.new("rngtrk_origin *")
    check(lib.rngtrk_origin_init(origin, ffi.sizeof("rngtrk_origin")))
    check(lib.rngtrk_tracker_get_origin(handle, origin))
    if not origin.present:
        return None
    return Origin(POLICY_NAMES.get(origin.policy, str(origin.policy)), origin.seed,
                  tuple(name for bit, name in FLAG_NAMES if origin.flags & bit),
                  origin.tp, origin.pp, origin.dp, origin.ep, origin.etp,
                  origin.gtp_remat, origin.gtp_remat_size, origin.egtp_remat, origin.egtp_remat_size)


def fold_in(state, d):
    """fold_in(state, d): a new state derived from `state` and the integer
    `d`: the words of Philox4x32-10(key(seed), counter = offset / 4 + d).
    One step of PyTorch's stateless fold_in (rngtrk.torch.key_from_state;
    docs/pytorch.md, "PyTorch's stateless keys")."""
    out = ffi.new("rngtrk_philox_state *")
    check(lib.rngtrk_fold_in(as_state(state)._as_c(), _u64(d, "d"), out))
    return PhiloxState(out.seed, out.offset)


def _placements(placements):
    out = ffi.new("rngtrk_placement[]", len(placements))
    for i, p in enumerate(placements):
        if p == "R":
            out[i].kind = lib.RNGTRK_PLACEMENT_REPLICATE
        elif p == "P":
            out[i].kind = lib.RNGTRK_PLACEMENT_PARTIAL
        elif isinstance(p, str) and p[:1] == "S" and p[1:].isdigit():
            out[i].kind, out[i].dim = lib.RNGTRK_PLACEMENT_SHARD, int(p[1:])
        else:
            raise invalid(f"placement {p!r} is not 'S<dim>', 'R' or 'P'")
    return out


def _mesh_args(mesh_shape, coord, placements, global_shape):
    mesh = [_u64(v, "mesh_shape") for v in mesh_shape]
    crd = [_u64(v, "coord") for v in coord]
    if not (len(mesh) == len(crd) == len(placements)):
        raise invalid("mesh_shape, coord and placements need one entry per mesh dimension")
    shape = [_u64(v, "global_shape") for v in global_shape]
    return (len(mesh), ffi.new("uint64_t[]", mesh), ffi.new("uint64_t[]", crd), _placements(placements),
            len(shape), ffi.new("uint64_t[]", shape or [0]))


def dtensor_local_box(mesh_shape, coord, placements, global_shape):
    """(start, local_shape) of this rank's box, as DTensor cuts it."""
    args = _mesh_args(mesh_shape, coord, placements, global_shape)
    n = args[4]
    start, local = ffi.new("uint64_t[]", max(n, 1)), ffi.new("uint64_t[]", max(n, 1))
    check(lib.rngtrk_dtensor_local_box(*args, start, local))
    return tuple(start[0:n]), tuple(local[0:n])


def dtensor_offsets(mesh_shape, coord, placements, global_shape, offset=0, rule="torch"):
    """(pre, post): PyTorch OffsetBasedRNGTracker's offsets around a random
    op; rule "torch" (upstream) or "exact" (a dim sharded twice chunked twice)."""
    rules = {"torch": lib.RNGTRK_OFFSET_RULE_TORCH, "exact": lib.RNGTRK_OFFSET_RULE_EXACT}
    if rule not in rules:
        raise invalid(f"rule must be 'torch' or 'exact', not {rule!r}")
    pre, post = ffi.new("uint64_t *"), ffi.new("uint64_t *")
    check(lib.rngtrk_dtensor_offsets(*_mesh_args(mesh_shape, coord, placements, global_shape),
                                     _u64(offset, "offset"), rules[rule], pre, post))
    return pre[0], post[0]
