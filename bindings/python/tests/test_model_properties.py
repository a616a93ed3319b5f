# SPDX-License-Identifier: Apache-2.0
"""Property tests: random sequences of tracker calls behave exactly like the
reference model (reference_model.py), including which error each refused
call raises, that refused calls change nothing, and the checkpoint bytes."""
import hypothesis.strategies as st
from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import rngtrk

from reference_model import M64, ModelTracker

NAMES = st.sampled_from(["model-parallel-rng", "data-parallel-rng", "expert-parallel-rng", "a", "b",
                         "é-日本-🎲", "", "x" * 256, "\udc80"])
VALID_NAMES = st.sampled_from(["model-parallel-rng", "data-parallel-rng", "a", "b", "é-日本-🎲"])
SEEDS = st.one_of(st.integers(0, 4), st.just(M64))
OFFSETS = st.one_of(st.integers(0, 3).map(lambda k: 4 * k), st.integers(0, 9), st.just(M64 - 3),
                    st.just(M64 - 7))
INCREMENTS = st.one_of(st.integers(0, 9), st.integers(0, M64), st.just(M64 - 3))


class TrackerMatchesModel(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.tracker = rngtrk.Tracker()
        self.model = ModelTracker()
        self.saved = []  # (bytes, model copy) pairs for load

    def teardown(self):
        self.tracker.close()

    def expect(self, expected_error, call):
        """Runs `call` on the library; it must raise exactly `expected_error`
        (or succeed when that is None), and a refusal must change nothing."""
        before = self.tracker.save(), self.tracker.active_state(), self.tracker.fork_depth
        try:
            result = call()
        except rngtrk.RngtrkError as error:
            assert type(error) is expected_error, (error, expected_error)
            assert error.message
            assert (self.tracker.save(), self.tracker.active_state(), self.tracker.fork_depth) == before
            return None
        assert expected_error is None, f"expected {expected_error.__name__}, the call succeeded"
        return result

    def model_call(self, method, *args):
        """Applies `method` to a copy of the model; keeps the copy only on success."""
        trial = ModelTracker()
        trial.copy_from(self.model)
        error = getattr(trial, method)(*args)
        if error is None:
            self.model = trial
        return error

    @rule(name=NAMES, seed=SEEDS)
    def add(self, name, seed):
        error = self.model_call("add", name, seed)
        self.expect(error, lambda: self.tracker.add(name, seed))

    @rule(name=NAMES)
    def fork(self, name):
        error = self.model_call("fork", name)
        self.expect(error, lambda: self.tracker.fork(name).__enter__())

    @rule(name=NAMES)
    def restore(self, name):
        error = self.model_call("restore", name)
        self.expect(error, lambda: self.tracker.fork(name).__exit__(None, None, None))

    @precondition(lambda self: self.model.forks)
    @rule(which=st.integers(0, 1000))
    def fork_an_open_name(self, which):
        # Megatron-LM's double fork: allowed, and the same stream goes on
        # (the invariant and advance's returned state compare it with the model).
        self.fork(self.model.forks[which % len(self.model.forks)])

    @precondition(lambda self: self.model.forks)
    @rule()
    def restore_innermost(self):
        name = self.model.forks[-1]
        self.restore(name)

    @rule(increment=INCREMENTS)
    def advance(self, increment):
        before = self.model.active()
        error = self.model_call("advance", increment)
        result = self.expect(error, lambda: self.tracker.advance(increment))
        if error is None:
            assert result == rngtrk.PhiloxState(*before)

    @rule(seed=SEEDS)
    def manual_seed(self, seed):
        self.model_call("manual_seed", seed)
        self.expect(None, lambda: self.tracker.manual_seed(seed))

    @rule(seed=SEEDS, offset=OFFSETS)
    def set_default(self, seed, offset):
        error = self.model_call("set_default", seed, offset)
        self.expect(error, lambda: self.tracker.set_default(rngtrk.PhiloxState(seed, offset)))

    @rule(name=NAMES, seed=SEEDS, offset=OFFSETS)
    def set_state(self, name, seed, offset):
        error = self.model_call("set_state", name, seed, offset)
        self.expect(error, lambda: self.tracker.set_state(name, rngtrk.PhiloxState(seed, offset)))

    # A dict cannot hold a name twice (a repeated name is tested in C).
    @rule(entries=st.lists(st.tuples(VALID_NAMES, SEEDS, OFFSETS), max_size=4, unique_by=lambda e: e[0]))
    def set_states(self, entries):
        error = self.model_call("set_states", entries)
        self.expect(error, lambda: self.tracker.set_states(
            {n: rngtrk.PhiloxState(s, o).to_bytes() for n, s, o in entries}))

    @precondition(lambda self: self.model.forks)
    @rule(seeds=st.lists(SEEDS, min_size=4, max_size=4), offsets=st.lists(OFFSETS, min_size=4, max_size=4),
          extra=st.lists(st.tuples(VALID_NAMES, SEEDS, OFFSETS), max_size=2, unique_by=lambda e: e[0]))
    def set_states_keeping_the_open_forks(self, seeds, offsets, extra):
        # Megatron-LM allows set_states inside a fork; the open forks' names stay.
        open_names = list(dict.fromkeys(self.model.forks))
        entries = [(n, s, o) for n, s, o in zip(open_names, seeds, offsets)]
        entries += [e for e in extra if e[0] not in open_names]
        self.set_states(entries)

    @rule()
    def reset(self):
        error = self.model_call("reset")
        self.expect(error, self.tracker.reset)

    @rule()
    def save(self):
        data = self.tracker.save()
        assert data == self.model.checkpoint()
        snapshot = ModelTracker()
        snapshot.copy_from(self.model)
        snapshot.forks = []
        self.saved.append((data, snapshot))

    @precondition(lambda self: self.saved)
    @rule(which=st.integers(0, 1000))
    def load(self, which):
        data, snapshot = self.saved[which % len(self.saved)]
        error = rngtrk.ForkOrderError if self.model.forks else None
        self.expect(error, lambda: self.tracker.load(data))
        if error is None:
            self.model.default, self.model.states = snapshot.default, dict(snapshot.states)

    @invariant()
    def observable_state_matches(self):
        t, m = self.tracker, self.model
        assert t.fork_depth == len(m.forks)
        assert t.active_state() == rngtrk.PhiloxState(*m.active())
        assert t.get_default() == rngtrk.PhiloxState(*m.default)
        assert t.names() == list(m.states)
        assert t.get_states() == {n: rngtrk.PhiloxState(*s).to_bytes() for n, s in m.states.items()}


TrackerMatchesModel.TestCase.settings = settings(
    max_examples=150, stateful_step_count=40, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow])
test_tracker_matches_the_reference_model = TrackerMatchesModel.TestCase
