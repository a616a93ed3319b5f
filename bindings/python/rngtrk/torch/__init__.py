"""rngtrk.torch: rngtrk for PyTorch users (docs/pytorch.md).

* A drop-in for Megatron-LM's and TransformerEngine's RNG tracker:
  CudaRNGStatesTracker (add, fork, get_states, set_states, reset,
  is_initialized, state_dict, load_state_dict; graph-safe mode),
  get_rng_state_tracker / get_cuda_rng_tracker, and
  model_parallel_cuda_manual_seed with Megatron-LM's formulas.

      from rngtrk.torch import get_cuda_rng_tracker, model_parallel_cuda_manual_seed
      model_parallel_cuda_manual_seed(1234, tp_rank=tp_rank)
      with get_cuda_rng_tracker().fork():              # "model-parallel-rng"
          x = torch.nn.functional.dropout(x, 0.1)      # CUDA: torch's own op on the named state
          y = rngtrk.torch.dropout(y, 0.1)             # any device: rngtrk's mask

* Random ops with the same bits on every device and every sharding: rand,
  randn, bernoulli, dropout, their *_like forms, and the sharded
  rand_slice, randn_slice, bernoulli_slice, dropout_slice.
* Other frameworks' interfaces: rngtrk.torch.slapo (set_random_seed),
  rngtrk.torch.dtensor (OffsetBasedRNGTracker, and a random DTensor that
  is the same for any mesh), rngtrk.torch.thunder (Lightning Thunder's
  get_and_update_rng_state and nvFuser's uniform_philox).

Imports on CPU-only torch (Debian's python3-torch): there a fork makes the
named state active for rngtrk.torch's ops, and torch's own generators are
left alone.
"""
from ._ops import (
    bernoulli, bernoulli_like, bernoulli_slice, dropout, dropout_slice, rand, rand_like, rand_slice, randn,
    randn_like, randn_slice,
)
from ._tracker import (
    CHECKPOINT_KEY, CudaRNGStatesTracker, get_cuda_rng_tracker, get_rng_state_tracker, graph_safe_supported,
    model_parallel_cuda_manual_seed, state_of, state_tensor,
)

__all__ = [
    "CudaRNGStatesTracker", "get_rng_state_tracker", "get_cuda_rng_tracker", "model_parallel_cuda_manual_seed",
    "graph_safe_supported", "state_tensor", "state_of", "CHECKPOINT_KEY",
    "rand", "randn", "bernoulli", "dropout", "rand_like", "randn_like", "bernoulli_like",
    "rand_slice", "randn_slice", "bernoulli_slice", "dropout_slice",
]
