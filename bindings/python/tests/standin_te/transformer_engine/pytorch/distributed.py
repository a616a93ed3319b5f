# SPDX-License-Identifier: Apache-2.0
"""Stand-in for transformer_engine/pytorch/distributed.py (rngtrk's tests)."""
_ALL_ACTIVE_RNG_STATES = {}


def get_all_rng_states():
    return _ALL_ACTIVE_RNG_STATES


def set_all_rng_states(states):
    global _ALL_ACTIVE_RNG_STATES
    _ALL_ACTIVE_RNG_STATES = states


class CudaRNGStatesTracker:
    """TE checks isinstance against it; it keeps states as given."""

    def __init__(self):
        self.states_ = {}

    def get_states(self):
        return dict(self.states_)

    def set_states(self, states):
        self.states_ = states
        set_all_rng_states(self.states_)
