# SPDX-License-Identifier: Apache-2.0
"""Stand-in for megatron.core.parallel_state's rank getters (rngtrk's
tests): set_ranks() sets what they return; None means "not initialised"."""
_RANKS = {}


def set_ranks(**ranks):
    _RANKS.clear()
    _RANKS.update(ranks)


def get_tensor_model_parallel_rank():
    if "tp" not in _RANKS:
        raise AssertionError("tensor model parallel group is not initialized")
    return _RANKS["tp"]


def get_tensor_model_parallel_world_size():
    return _RANKS.get("tp_size", 1)


def get_tensor_model_parallel_group():
    return None


def get_expert_model_parallel_rank():
    return _RANKS.get("ep", 0)


def get_expert_tensor_parallel_rank():
    return _RANKS.get("etp")


def get_gtp_weight_remat_rank():
    return _RANKS.get("gtp", 0)


def get_gtp_weight_remat_world_size():
    return _RANKS.get("gtp_size", 0)


def get_expert_gtp_weight_remat_rank():
    return _RANKS.get("egtp", 0)


def get_expert_gtp_weight_remat_world_size():
    return _RANKS.get("egtp_size", 0)
