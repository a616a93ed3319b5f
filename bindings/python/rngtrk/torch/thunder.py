"""Lightning Thunder's random prims as functions over rngtrk, so that a
recompute in the backward pass can regenerate a dropout mask from the saved
(seed, offset) on either device.

* get_and_update_rng_state(): the (seed, offset) to draw from, taken from
  a tracker's active state, which advances by 4 — what one nvFuser
  uniform_philox call consumes (rngtrk.offset_increment with the nvfuser
  layout).  With seed and offset given it is the pure update: it returns
  them and the state after, touching no tracker.
* uniform_philox(shape, low, high, seed=, offset=, dtype=, device=):
  nvFuser's layout (the "nvfuser" layout of docs/streams.md), the same bits
  on CPU and CUDA.
"""
from ..state import PhiloxState
from ._ops import rand
from ._tracker import RngtrkStatesTracker
from .megatron import get_cuda_rng_tracker as get_rng_state_tracker

NVFUSER_INCREMENT = 4  # one uniform_philox call, whatever its shape


def get_and_update_rng_state(seed=None, offset=None, *, tracker=None):
    """(seed, offset) to draw from, with the tracker's active state moved
    past it; or, given seed and offset, ((seed, offset), (seed, offset + 4))."""
    if seed is not None or offset is not None:
        if seed is None or offset is None:
            raise TypeError("get_and_update_rng_state takes both seed and offset, or neither")
        state = PhiloxState(seed, offset)  # checks the ranges
        return (state.seed, state.offset), (state.seed, state.offset + NVFUSER_INCREMENT)
    tracker = tracker if tracker is not None else get_rng_state_tracker()
    if isinstance(tracker, RngtrkStatesTracker):
        state = tracker.peek()
        tracker.consume(NVFUSER_INCREMENT)
    else:
        state = tracker.advance(NVFUSER_INCREMENT)
    return state.seed, state.offset


def uniform_philox(shape, low=0.0, high=1.0, *, seed, offset, dtype=None, device="cpu"):
    """nvFuser's uniform_philox: a tensor of `shape` uniform in [low, high)
    for (seed, offset), in nvFuser's element layout."""
    import torch
    return rand(tuple(shape), state=PhiloxState(seed, offset), dtype=dtype or torch.float32, device=device,
                layout="nvfuser", low=low, high=high)
