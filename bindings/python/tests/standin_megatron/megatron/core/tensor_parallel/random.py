# SPDX-License-Identifier: Apache-2.0
"""Stand-in for megatron/core/tensor_parallel/random.py (rngtrk's tests):
the module-global process tracker, a getter and a factory that read it at
call time, a tracker class of its own, and a checkpoint that saves and
restores every random state through this module's functions."""
import contextlib

import torch

_MODEL_PARALLEL_RNG_TRACKER_NAME = "model-parallel-rng"
_CUDA_RNG_STATE_TRACKER = None
_CUDA_RNG_STATE_TRACKER_INITIALIZED = False


class CudaRNGStatesTracker:
    """The stand-in's own tracker: named (seed, offset) pairs as 16-byte
    tensors; a fork checks the name and nothing else (on CPU-only torch
    there is no CUDA generator to swap)."""

    def __init__(self, use_cudagraphable_rng=False, is_inference_rng_tracker=False):
        self.use_cudagraphable_rng = use_cudagraphable_rng
        self.is_inference_rng_tracker = is_inference_rng_tracker
        self.reset()

    def reset(self):
        self.states_ = {}
        self._is_initialized = False

    def is_initialized(self):
        return self._is_initialized

    def add(self, name, seed):
        if name in self.states_:
            raise Exception(f"state {name} exists")
        self.states_[name] = torch.tensor(list(seed.to_bytes(8, "little")) + [0] * 8, dtype=torch.uint8)
        self._is_initialized = True

    def get_states(self):
        return dict(self.states_)

    def set_states(self, states):
        self.states_ = states
        self._is_initialized = True

    @contextlib.contextmanager
    def fork(self, name=_MODEL_PARALLEL_RNG_TRACKER_NAME):
        if name not in self.states_:
            raise Exception(f"state {name} is not added")
        yield


def initialize_rng_tracker(use_te_rng_tracker=False, inference_rng_tracker=False, use_cudagraphable_rng=False,
                           force_reset=False):
    global _CUDA_RNG_STATE_TRACKER, _CUDA_RNG_STATE_TRACKER_INITIALIZED
    if force_reset:
        _CUDA_RNG_STATE_TRACKER, _CUDA_RNG_STATE_TRACKER_INITIALIZED = None, False
    if _CUDA_RNG_STATE_TRACKER_INITIALIZED:
        return
    if use_te_rng_tracker:
        from megatron.core.extensions.transformer_engine import TECudaRNGStatesTracker
        _CUDA_RNG_STATE_TRACKER = TECudaRNGStatesTracker(is_inference_rng_tracker=inference_rng_tracker)
    else:
        _CUDA_RNG_STATE_TRACKER = CudaRNGStatesTracker(use_cudagraphable_rng=use_cudagraphable_rng,
                                                       is_inference_rng_tracker=inference_rng_tracker)
    _CUDA_RNG_STATE_TRACKER_INITIALIZED = True


def get_cuda_rng_tracker(use_te_rng_tracker=False, inference_rng_tracker=False, use_cudagraphable_rng=False):
    initialize_rng_tracker(use_te_rng_tracker, inference_rng_tracker, use_cudagraphable_rng)
    return _CUDA_RNG_STATE_TRACKER


def model_parallel_cuda_manual_seed(seed, te_rng_tracker=False, inference_rng_tracker=False,
                                    use_cudagraphable_rng=False, tp_rank=0, ep_rank=0, etp_rank=0,
                                    gtp_remat_rank=None, egtp_remat_rank=None, force_reset_rng=False,
                                    gtp_remat_world_size=None, egtp_remat_world_size=None):
    initialize_rng_tracker(te_rng_tracker, inference_rng_tracker, use_cudagraphable_rng, force_reset=force_reset_rng)
    _CUDA_RNG_STATE_TRACKER.reset()
    _CUDA_RNG_STATE_TRACKER.add("data-parallel-rng", seed)
    _CUDA_RNG_STATE_TRACKER.add(_MODEL_PARALLEL_RNG_TRACKER_NAME, seed + 2718 + tp_rank)
    _CUDA_RNG_STATE_TRACKER.add("expert-parallel-rng", seed + 1024 + 100 * ep_rank + etp_rank)


def _get_all_rng_states():
    return torch.get_rng_state(), None, get_cuda_rng_tracker().get_states()


def _set_all_rng_states(cpu_rng_state, cuda_rng_state, cuda_rng_state_tracker):
    torch.set_rng_state(cpu_rng_state)
    get_cuda_rng_tracker().set_states(cuda_rng_state_tracker)


@contextlib.contextmanager
def _fork_rng():
    current = _get_all_rng_states()
    try:
        yield
    finally:
        _set_all_rng_states(*current)


class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_function, distribute_saved_activations, *args):
        ctx.run_function = run_function
        ctx.rng_states = _get_all_rng_states()
        with torch.no_grad():
            outputs = run_function(*args)
        ctx.save_for_backward(*args)
        return outputs

    @staticmethod
    def backward(ctx, *grads):
        inputs = [t.detach().requires_grad_(t.requires_grad) for t in ctx.saved_tensors]
        with _fork_rng():
            _set_all_rng_states(*ctx.rng_states)
            with torch.enable_grad():
                outputs = ctx.run_function(*inputs)
        torch.autograd.backward(outputs, grads)
        return (None, None) + tuple(t.grad for t in inputs)


def checkpoint(function, distribute_saved_activations, *args):
    return CheckpointFunction.apply(function, distribute_saved_activations, *args)
