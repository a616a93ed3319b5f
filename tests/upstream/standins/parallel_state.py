# SPDX-License-Identifier: Apache-2.0
"""Stand-in for megatron.core.parallel_state (rngtrk's harness, not
Megatron's code): the rank getters the RNG code reads, for the process
layout test_utilities.Utils sets up.  With one process, this process is
rank 0 of every group; under torch.distributed.run with gloo, Utils makes
real tensor-parallel groups of consecutive ranks, as Megatron orders them."""
import torch

_STATE = {}


def _set(**values):
    _STATE.clear()
    _STATE.update(values)


def is_initialized():
    return bool(_STATE)


def model_parallel_is_initialized():
    return bool(_STATE)


def destroy_model_parallel():
    _STATE.clear()


def _need(key):
    if key not in _STATE:
        raise AssertionError("model parallel group is not initialized (rngtrk's stand-in parallel_state)")
    return _STATE[key]


def get_tensor_model_parallel_rank():
    return _need("tp_rank")


def get_tensor_model_parallel_world_size():
    return _need("tp_size")


def get_tensor_model_parallel_group(check_initialized=True):
    return _STATE.get("tp_group")


def get_pipeline_model_parallel_rank():
    return _need("pp_rank")


def get_data_parallel_rank(*args, **kwargs):
    return _need("dp_rank")


def get_expert_model_parallel_rank():
    return _STATE.get("ep_rank", 0)


def get_expert_tensor_parallel_rank():
    return _STATE.get("tp_rank")  # Megatron: the tensor-parallel rank when there is no expert-TP group


def get_gtp_weight_remat_rank():
    return 0


def get_gtp_weight_remat_world_size():
    return 0


def get_expert_gtp_weight_remat_rank():
    return 0


def get_expert_gtp_weight_remat_world_size():
    return 0


def _world():
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_world_size(), torch.distributed.get_rank()
    return 1, 0
