# SPDX-License-Identifier: Apache-2.0
"""rngtrk.torch: rngtrk for PyTorch users (docs/pytorch.md).

* Drop-ins for Megatron-LM's and TransformerEngine's RNG trackers:
  rngtrk.torch.megatron (Megatron-LM's tensor_parallel.random interface,
  and install(), which puts Megatron itself on rngtrk trackers at every
  call site) and rngtrk.torch.te (TransformerEngine's CudaRNGStatesTracker
  and get_rng_state_tracker).

      import rngtrk.torch.megatron
      rngtrk.torch.megatron.install()       # one call: Megatron now uses rngtrk

  The names below are rngtrk.torch.megatron's, for code that imports them
  from here.
* Random ops with the same bits on every device and every sharding: rand,
  randn, bernoulli, dropout, their *_like forms, and the sharded
  rand_slice, randn_slice, bernoulli_slice, dropout_slice.
* Other frameworks' interfaces: rngtrk.torch.slapo (slapo.random, and
  install()), rngtrk.torch.dtensor (PyTorch's OffsetBasedRNGTracker, its
  install(), and a random DTensor that is the same for any mesh),
  rngtrk.torch.thunder (Lightning Thunder's get_and_update_rng_state and
  uniform_philox, in Thunder's offset units).

* torch 2: the random ops are torch operators (torch.compile, torch.export,
  torch.func: _torch_ops); importing rngtrk.torch makes torch.get_rng_state /
  set_rng_state carry rngtrk's states, so torch.utils.checkpoint replays
  rngtrk's draws (_rng_state_hook); rngtrk.torch.dcp (imported on its own:
  it needs torch.distributed.checkpoint) keeps every rank's streams in DCP,
  rngtrk.torch.accelerate puts them, and the process's own generators,
  in Hugging Face Accelerate's save_state / load_state, and
  rngtrk.torch.lightning in the Lightning Trainer's checkpoints.

Imports on CPU-only torch (Debian's python3-torch): there a fork makes the
named state active for rngtrk.torch's ops, and torch's own generators are
left alone.
"""
from . import _rng_state_hook
from ._generators import graph_safe_supported, state_of, state_tensor
from ._keys import key_from_state, state_from_key
from ._ops import (
    bernoulli, bernoulli_like, bernoulli_slice, dropout, dropout_slice, rand, rand_like, rand_slice, randn,
    randn_like, randn_slice,
)
from ._tracker import CHECKPOINT_KEY
from .megatron import CudaRNGStatesTracker, get_cuda_rng_tracker, model_parallel_cuda_manual_seed

get_rng_state_tracker = get_cuda_rng_tracker  # TransformerEngine's name for the getter it takes

_rng_state_hook.install()  # torch's RNG state carries rngtrk's: checkpoint recomputes replay (docs/pytorch.md)

__all__ = [
    "CudaRNGStatesTracker", "get_rng_state_tracker", "get_cuda_rng_tracker", "model_parallel_cuda_manual_seed",
    "graph_safe_supported", "state_tensor", "state_of", "key_from_state", "state_from_key", "CHECKPOINT_KEY",
    "rand", "randn", "bernoulli", "dropout", "rand_like", "randn_like", "bernoulli_like",
    "rand_slice", "randn_slice", "bernoulli_slice", "dropout_slice",
]
