# SPDX-License-Identifier: Apache-2.0
"""Stand-in: reaches the getter through the package attribute, and drops
out attention probabilities inside a checkpoint, in a fork."""
import rngtrk.torch as rt
from megatron.core import tensor_parallel


def attention_dropout(probs, p):
    with tensor_parallel.get_cuda_rng_tracker().fork():
        return rt.dropout(probs, p=p)


def checkpointed_attention_dropout(probs, p):
    return tensor_parallel.checkpoint(lambda x: attention_dropout(x, p) * 2.0, False, probs)
