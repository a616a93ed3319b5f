# SPDX-License-Identifier: Apache-2.0
"""Stand-in for megatron.core.utils (rngtrk's harness): the few helpers
megatron/core/tensor_parallel/random.py and utils.py import.  Megatron's own
module imports its checkpointing stack, which needs torch >= 2.0."""
import torch


def is_te_min_version(version, check_equality=True):
    return False  # no TransformerEngine in the harness


def is_torch_min_version(version, check_equality=True):
    def parts(v):
        return tuple(int(p) for p in v.split("+")[0].split(".")[:2] if p.isdigit())
    have, want = parts(torch.__version__), parts(version)
    return have >= want if check_equality else have > want


def divide(numerator, denominator):
    if numerator % denominator:
        raise AssertionError(f"{numerator} is not divisible by {denominator}")
    return numerator // denominator


def get_tensor_model_parallel_group_if_none(tp_group, is_expert=False, check_initialized=True):
    if tp_group is not None:
        return tp_group
    from megatron.core import parallel_state
    return parallel_state.get_tensor_model_parallel_group()


def safely_set_viewless_tensor_data(tensor, new_data_tensor):
    if tensor._base is not None:
        raise AssertionError("the tensor is a view")
    tensor.data = new_data_tensor
