# SPDX-License-Identifier: Apache-2.0
"""Stand-in slapo.random: a process tracker in a module global, read at
call time; states are 16-byte CPU tensors (seed, offset)."""
import contextlib

import torch


def _state(seed):
    return torch.tensor([seed, 0], dtype=torch.int64).view(torch.uint8).clone()


def _set_cuda_rng_state(new_state, device=-1):
    """The stand-in has no CUDA generator to set."""


class CudaRNGStatesTracker:
    def __init__(self):
        self.states_ = {}
        self.seeds_ = set()

    def reset(self):
        self.states_, self.seeds_ = {}, set()

    def get_states(self):
        return dict(self.states_)

    def set_states(self, states):
        self.states_ = states

    def add(self, name, seed):
        if seed in self.seeds_ or name in self.states_:
            raise Exception(f"{name} or {seed} in use")
        self.seeds_.add(seed)
        self.states_[name] = _state(seed)

    @contextlib.contextmanager
    def fork(self, name="model-parallel-rng"):
        if name not in self.states_:
            raise RuntimeError(f"{name} not added")
        yield


_CUDA_RNG_STATE_TRACKER = CudaRNGStatesTracker()


def get_cuda_rng_tracker():
    return _CUDA_RNG_STATE_TRACKER


def model_parallel_cuda_manual_seed(seed, tp_rank, always_enable_tp_seed):
    tp_seed = seed + 2718 + tp_rank
    _CUDA_RNG_STATE_TRACKER.reset()
    _CUDA_RNG_STATE_TRACKER.add("model-parallel-rng", tp_seed)
    return tp_seed


def is_random_seed_set():
    return bool(_CUDA_RNG_STATE_TRACKER.get_states())


def set_random_seed(seed=2013, dp_rank=None, pp_rank=None, tp_rank=None, always_enable_tp_seed=False):
    seed += 100 * (pp_rank or 0) + 10 * (dp_rank or 0)
    torch.manual_seed(seed)
    if tp_rank is not None:
        model_parallel_cuda_manual_seed(seed, tp_rank, always_enable_tp_seed)
    return seed
