# SPDX-License-Identifier: Apache-2.0
"""The reservation ledger from Python: reuse raised or recorded, a replay
that matches passes and one that does not raises, the context managers."""
import pytest

import rngtrk


def seeded():
    t = rngtrk.Tracker()
    t.manual_seed(1234)
    t.add("model-parallel-rng", 3952)
    return t


def test_reuse_raises_in_raise_mode_and_changes_nothing():
    t = seeded()
    with t.ledger("raise"):
        old = t.get_states()
        with t.fork():
            t.uniform_f32(100)
        t.set_states(old)  # a stale snapshot
        before = (t.save(), t.active_state())
        with pytest.raises(rngtrk.StreamReuseError, match=r"model-parallel-rng.*\[0, 100\).*reservation #0"):
            with t.fork():
                t.uniform_f32(8)
        assert (t.save(), t.active_state()) == before
    with t.fork():
        t.uniform_f32(8)  # the ledger is off again after the block


def test_record_mode_lists_overlaps():
    t = seeded()
    t.set_ledger("record")
    t.advance(64)
    t.set_default(rngtrk.PhiloxState(1234, 32))
    t.advance(8)
    [o] = t.ledger_overlaps()
    assert (o.name, o.seed, o.earlier_begin, o.earlier_end, o.later_begin, o.later_end) == ("", 1234, 0, 64, 32, 40)
    assert (o.earlier_sequence, o.later_sequence) == (0, 1)
    with pytest.raises(rngtrk.InvalidArgumentError, match="ledger mode"):
        t.set_ledger("loud")


def test_a_faithful_replay_passes_and_a_divergent_one_raises():
    t = seeded()
    t.set_ledger("raise")
    start = (t.get_default(), t.get_states())
    m = t.mark()
    with t.fork():
        t.sample(4096, dist="bernoulli", dtype="u8", p=0.9)
    t.advance(100)
    t.mark()
    after = (t.get_default(), t.get_states())
    for divergent in (False, True):
        t.set_default(start[0])
        t.set_states(start[1])
        if divergent:
            with pytest.raises(rngtrk.ReplayMismatchError, match="expected state 'model-parallel-rng'"):
                with t.replay(m):
                    with t.fork():
                        t.sample(4097, dist="bernoulli", dtype="u8", p=0.9)
        else:
            with t.replay(m):
                with t.fork():
                    t.sample(4096, dist="bernoulli", dtype="u8", p=0.9)
                t.advance(100)
        t.set_default(after[0])
        t.set_states(after[1])
    # A replay that draws less fails at its end.
    t.set_default(start[0])
    t.set_states(start[1])
    with pytest.raises(rngtrk.ReplayMismatchError, match="made 1 reservations, the forward made 2"):
        with t.replay(m):
            with t.fork():
                t.sample(4096, dist="bernoulli", dtype="u8", p=0.9)
    with pytest.raises(rngtrk.InvalidArgumentError, match="not a mark"):
        with t.replay(m + 99):
            pass


def test_a_position_ends_no_region_and_a_prefix_replay_may_stop_early_but_not_differ():
    t = seeded()
    t.set_ledger("raise")
    start = (t.get_default(), t.get_states())
    m = t.mark()
    with t.fork():
        t.advance(4096)
    p = t.ledger_position()
    assert p == m + 1
    t.advance(100)
    assert t.ledger_position() == p + 1
    middle_default = rngtrk.PhiloxState(1234, 0)
    # The position ended no region: m's region holds both draws.
    t.set_default(start[0])
    t.set_states(start[1])
    with pytest.raises(rngtrk.ReplayMismatchError, match="made 1 reservations, the forward made 2"):
        with t.replay(m):
            with t.fork():
                t.advance(4096)
    # A prefix replay from m may stop after the first draw...
    t.set_default(start[0])
    t.set_states(start[1])
    with t.replay_prefix(m):
        with t.fork():
            t.advance(4096)
    # ... and from p holds the second; a draw that differs raises.
    t.set_default(middle_default)
    with pytest.raises(rngtrk.ReplayMismatchError, match=r"expected state '\(default\)' seed 1234 offsets \[0, 100\)"):
        with t.replay_prefix(p):
            t.advance(104)
    with pytest.raises(rngtrk.InvalidArgumentError, match="past the ledger's position"):
        with t.replay_prefix(p + 5):
            pass
    off = rngtrk.Tracker()
    with pytest.raises(rngtrk.InvalidArgumentError, match="the ledger is off"):
        off.ledger_position()
