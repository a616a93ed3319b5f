"""rngtrk.torch: a TransformerEngine / Megatron-LM compatible CUDA RNG tracker
backed by rngtrk, for PyTorch.

    from rngtrk.torch import get_rng_state_tracker
    tracker = get_rng_state_tracker()
    tracker.add("model-parallel-rng", 1234 + 2718 + tp_rank)
    with tracker.fork():                  # torch's CUDA generator now runs
        x = torch.nn.functional.dropout(x, 0.1)   # on the named state
    # te.distributed.checkpoint(..., get_rng_state_tracker=get_rng_state_tracker)

`fork(name)` saves the CUDA default generator's 16-byte state, sets it to
the named state, runs the body, stores what the body consumed back into the
named state and restores the generator: the upstream trackers' behaviour,
with rngtrk's rules (distinct seeds, all-or-nothing set_states, checkpoints
every language reads).  `get_states` returns CPU ByteTensors of 16 bytes,
like torch.cuda.get_rng_state().  PyTorch is imported when this module is.
"""
import contextlib

import torch

from .state import PhiloxState
from .tracker import DEFAULT_FORK_NAME, Tracker


def _to_tensor(state):
    return torch.frombuffer(bytearray(state.to_bytes()), dtype=torch.uint8)


class CudaRNGStatesTracker:
    """TransformerEngine's CudaRNGStatesTracker interface over an rngtrk.Tracker."""

    def __init__(self):
        self.tracker = Tracker()

    def is_initialized(self):
        return self.tracker.is_initialized()

    def reset(self):
        self.tracker.reset()

    def add(self, name, seed):
        self.tracker.add(name, seed)

    def get_states(self):
        return {name: _to_tensor(PhiloxState.from_bytes(raw)) for name, raw in self.tracker.get_states().items()}

    def set_states(self, states):
        self.tracker.set_states({name: PhiloxState.from_bytes(t.cpu().numpy()) for name, t in states.items()})

    @contextlib.contextmanager
    def fork(self, name=DEFAULT_FORK_NAME):
        outside = torch.cuda.get_rng_state()
        with self.tracker.fork(name):
            torch.cuda.set_rng_state(_to_tensor(self.tracker.get_state(name)))
            try:
                yield
            finally:
                # What the body's kernels consumed goes back into the state.
                self.tracker.set_state(name, PhiloxState.from_bytes(torch.cuda.get_rng_state().numpy()))
                torch.cuda.set_rng_state(outside)


_TRACKER = None


def get_rng_state_tracker():
    """The process's tracker (what TransformerEngine's checkpoint() calls)."""
    global _TRACKER
    if _TRACKER is None:
        _TRACKER = CudaRNGStatesTracker()
    return _TRACKER
