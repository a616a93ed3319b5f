# SPDX-License-Identifier: Apache-2.0
"""Every Tracker method and error path.  After each failure the tracker is
compared with a snapshot taken before: a failed call changes nothing."""
import threading

import pytest

import rngtrk
from rngtrk import PhiloxState

from conftest import snapshot

M64 = (1 << 64) - 1


@pytest.fixture
def megatron(tracker):
    tracker.manual_seed(1234)
    tracker.add("data-parallel-rng", 1234)
    tracker.add("model-parallel-rng", 1234 + 2718 + 3)
    return tracker


def test_a_new_tracker_is_empty_with_default_zero(tracker):
    assert len(tracker) == 0 and tracker.names() == [] and not tracker.is_initialized()
    assert tracker.get_default() == PhiloxState(0, 0) == tracker.active_state()
    assert tracker.fork_depth == 0 and tracker.get_states() == {}


def test_add_registers_named_states_in_order(megatron):
    assert megatron.names() == ["data-parallel-rng", "model-parallel-rng"] == list(megatron)
    assert len(megatron) == 2 and megatron.is_initialized()
    assert "model-parallel-rng" in megatron and "nope" not in megatron
    assert 5 not in megatron and "" not in megatron and "a\0b" not in megatron and "\ud800" not in megatron
    assert megatron.get_state("model-parallel-rng") == PhiloxState(3955, 0)


@pytest.mark.parametrize("name, seed, error", [
    ("data-parallel-rng", 99, rngtrk.DuplicateNameError),
    ("other", 3955, rngtrk.DuplicateSeedError),
    ("", 99, rngtrk.InvalidArgumentError),
    ("x" * 256, 99, rngtrk.InvalidArgumentError),
    ("a\0b", 99, rngtrk.InvalidArgumentError),
    ("\udc80", 99, rngtrk.InvalidArgumentError),
    ("ok", -1, rngtrk.InvalidArgumentError),
    ("ok", 1 << 64, rngtrk.InvalidArgumentError),
    (b"bytes", 99, TypeError),
    ("ok", "99", TypeError),
])
def test_add_errors_change_nothing(megatron, name, seed, error):
    before = snapshot(megatron)
    with pytest.raises(error):
        megatron.add(name, seed)
    assert snapshot(megatron) == before


def test_a_failed_add_burns_no_seed(tracker):
    tracker.add("a", 1)
    with pytest.raises(rngtrk.DuplicateNameError):
        tracker.add("a", 2)
    tracker.add("b", 2)  # TransformerEngine would refuse: it records seed 2 before failing
    assert tracker.names() == ["a", "b"]


def test_names_up_to_255_utf8_bytes(tracker):
    name = "é" * 127 + "x"  # 255 bytes
    tracker.add(name, 1)
    assert tracker.names() == [name]
    with pytest.raises(rngtrk.InvalidArgumentError):
        tracker.add("é" * 128, 2)  # 256 bytes


def test_fork_draws_from_the_named_state_and_restores(megatron):
    megatron.advance(8)
    with megatron.fork() as inside:  # the default name is "model-parallel-rng"
        assert inside is megatron
        assert megatron.fork_depth == 1
        assert megatron.active_state() == PhiloxState(3955, 0)
        assert megatron.advance(10) == PhiloxState(3955, 0)
        assert megatron.get_state("model-parallel-rng") == PhiloxState(3955, 12)  # live value
    assert megatron.fork_depth == 0
    assert megatron.active_state() == PhiloxState(1234, 8)
    assert megatron.get_state("model-parallel-rng") == PhiloxState(3955, 12)


def test_fork_restores_when_the_body_raises(megatron):
    with pytest.raises(ZeroDivisionError):
        with megatron.fork("data-parallel-rng"):
            megatron.advance(4)
            1 / 0
    assert megatron.fork_depth == 0
    assert megatron.active_state() == PhiloxState(1234, 0)
    assert megatron.get_state("data-parallel-rng") == PhiloxState(1234, 4)


def test_forks_nest(megatron):
    with megatron.fork("model-parallel-rng"):
        with megatron.fork("data-parallel-rng"):
            assert megatron.fork_depth == 2
            megatron.advance(1)
        assert megatron.active_state() == PhiloxState(3955, 0)
    assert megatron.get_state("data-parallel-rng") == PhiloxState(1234, 4)


def test_fork_errors(megatron):
    before = snapshot(megatron)
    with pytest.raises(rngtrk.UnknownNameError):
        with megatron.fork("missing"):
            pass
    with pytest.raises(KeyError):
        with megatron.fork("missing"):
            pass
    assert snapshot(megatron) == before
    with megatron.fork("model-parallel-rng"):
        inside = snapshot(megatron)
        for call in (megatron.reset, lambda: megatron.set_states({}), lambda: megatron.load(megatron.save())):
            with pytest.raises(rngtrk.ForkOrderError):
                call()
            assert snapshot(megatron) == inside
        # What Megatron-LM allows inside a fork: add, and set_states keeping the open fork's name.
        megatron.add("new", 77)
        megatron.set_states({"model-parallel-rng": PhiloxState(3955, 40), "new": PhiloxState(77, 0)})
        assert megatron.active_state() == PhiloxState(3955, 40) and megatron.fork_depth == 1


def test_forking_an_open_name_continues_its_one_stream(megatron):
    # Megatron-LM's test_double_fork: a, b, a again, then out; every name
    # draws what one uninterrupted stream of it gives, and no number twice.
    megatron.set_ledger("raise")  # a range of a seed handed out twice would raise
    drawn = {"model-parallel-rng": [], "data-parallel-rng": []}

    def draw(name):
        assert megatron.active_state().seed == megatron.get_state(name).seed
        drawn[name].extend(megatron.random_u32(8).tolist())

    with megatron.fork("model-parallel-rng"):
        draw("model-parallel-rng")
        with megatron.fork("data-parallel-rng"):
            draw("data-parallel-rng")
            with megatron.fork("model-parallel-rng"):  # already open
                assert megatron.fork_depth == 3
                draw("model-parallel-rng")
            draw("data-parallel-rng")
        draw("model-parallel-rng")
    assert megatron.fork_depth == 0
    for name, words in drawn.items():
        whole = rngtrk.random_u32(PhiloxState(megatron.get_state(name).seed, 0), len(words)).tolist()
        assert words == whole, name
    assert megatron.get_state("model-parallel-rng") == PhiloxState(3955, 24)
    assert megatron.get_state("data-parallel-rng") == PhiloxState(1234, 16)


def test_restore_out_of_order_is_refused_and_reported(megatron):
    outer = megatron.fork("model-parallel-rng")
    inner = megatron.fork("data-parallel-rng")
    outer.__enter__()
    inner.__enter__()
    with pytest.raises(rngtrk.ForkOrderError):
        outer.__exit__(None, None, None)
    assert megatron.fork_depth == 2
    inner.__exit__(None, None, None)
    outer.__exit__(None, None, None)
    assert megatron.fork_depth == 0


def test_a_restore_error_during_an_exception_keeps_the_body_error_as_context(megatron):
    outer = megatron.fork("model-parallel-rng")
    with pytest.raises(rngtrk.ForkOrderError) as raised:
        with outer:
            megatron.fork("data-parallel-rng").__enter__()  # left open: the restore must fail
            raise ZeroDivisionError
    assert isinstance(raised.value.__context__, ZeroDivisionError)


def test_get_states_is_a_fresh_snapshot(megatron):
    states = megatron.get_states()
    assert states == {"data-parallel-rng": PhiloxState(1234, 0).to_bytes(),
                      "model-parallel-rng": PhiloxState(3955, 0).to_bytes()}
    assert all(type(v) is bytes and len(v) == 16 for v in states.values())
    with megatron.fork():
        megatron.advance(100)
    assert states["model-parallel-rng"] == PhiloxState(3955, 0).to_bytes()
    assert megatron.get_states() is not megatron.get_states()
    assert megatron.get_states()["model-parallel-rng"] == PhiloxState(3955, 100).to_bytes()


def test_set_states_round_trips_get_states_and_keeps_the_default(megatron):
    saved = megatron.get_states()
    megatron.advance(40)
    with megatron.fork():
        megatron.advance(8)
    megatron.set_states(saved)
    assert megatron.get_states() == saved
    assert megatron.get_default() == PhiloxState(1234, 40)


def test_set_states_accepts_bytes_and_philox_states_and_replaces_the_set(megatron):
    megatron.set_states({"b": PhiloxState(2, 8), "a": PhiloxState(1, 0).to_bytes(),
                         "c": bytearray(PhiloxState(3, 4).to_bytes())})
    assert megatron.names() == ["b", "a", "c"]
    assert megatron.get_state("c") == PhiloxState(3, 4)
    megatron.set_states({})
    assert len(megatron) == 0


@pytest.mark.parametrize("states, error", [
    ({"a": PhiloxState(1, 0), "b": PhiloxState(1, 4)}, rngtrk.DuplicateSeedError),
    ({"a": PhiloxState(1, 2)}, rngtrk.InvalidArgumentError),
    ({"a": PhiloxState(1, 0), "": PhiloxState(2, 0)}, rngtrk.InvalidArgumentError),
    ({"a": b"short"}, rngtrk.InvalidArgumentError),
    ({"a": 5}, TypeError),
    ([("a", PhiloxState(1, 0))], TypeError),
])
def test_set_states_is_all_or_nothing(megatron, states, error):
    before = snapshot(megatron)
    with pytest.raises(error):
        megatron.set_states(states)
    assert snapshot(megatron) == before


def test_reset_drops_everything(megatron):
    megatron.advance(4)
    megatron.reset()
    assert len(megatron) == 0 and megatron.get_default() == PhiloxState(0, 0)
    megatron.add("data-parallel-rng", 3955)  # names and seeds are free again


def test_manual_seed_sets_the_default_even_inside_a_fork(megatron):
    with megatron.fork():
        megatron.manual_seed(77)
        assert megatron.active_state() == PhiloxState(3955, 0)
    assert megatron.active_state() == PhiloxState(77, 0)
    with pytest.raises(rngtrk.InvalidArgumentError):
        megatron.manual_seed(-5)


def test_advance_rounds_up_to_multiples_of_4_and_returns_the_state_before(tracker):
    tracker.manual_seed(9)
    assert tracker.advance(0) == PhiloxState(9, 0)
    assert tracker.advance(1) == PhiloxState(9, 0)
    assert tracker.advance(4) == PhiloxState(9, 4)
    assert tracker.advance(5) == PhiloxState(9, 8)
    assert tracker.active_state() == PhiloxState(9, 16)


def test_advance_overflow_changes_nothing(tracker):
    tracker.set_default(PhiloxState(9, M64 - 7))
    before = snapshot(tracker)
    with pytest.raises(rngtrk.RngtrkOverflowError):
        tracker.advance(9)
    with pytest.raises(OverflowError):
        tracker.advance(M64)
    assert snapshot(tracker) == before
    assert tracker.advance(4) == PhiloxState(9, M64 - 7)
    assert tracker.active_state() == PhiloxState(9, M64 - 3)  # the last offset there is
    with pytest.raises(rngtrk.RngtrkOverflowError):
        tracker.advance(1)
    with pytest.raises(rngtrk.InvalidArgumentError):
        tracker.advance(-1)


def test_get_and_set_state(megatron):
    megatron.set_state("data-parallel-rng", PhiloxState(1234, 400))
    assert megatron.get_state("data-parallel-rng") == PhiloxState(1234, 400)
    megatron.set_state("data-parallel-rng", PhiloxState(5, 8).to_bytes())
    assert megatron.get_state("data-parallel-rng") == PhiloxState(5, 8)
    with megatron.fork():
        megatron.set_state("model-parallel-rng", PhiloxState(3955, 64))  # allowed while forked
        assert megatron.active_state() == PhiloxState(3955, 64)
    before = snapshot(megatron)
    for name, state, error in [("missing", PhiloxState(1, 0), rngtrk.UnknownNameError),
                               ("data-parallel-rng", PhiloxState(3955, 0), rngtrk.DuplicateSeedError),
                               ("data-parallel-rng", PhiloxState(5, 6), rngtrk.InvalidArgumentError),
                               ("data-parallel-rng", "xx", TypeError)]:
        with pytest.raises(error):
            megatron.set_state(name, state)
        assert snapshot(megatron) == before
    with pytest.raises(rngtrk.UnknownNameError):
        megatron.get_state("missing")
    with pytest.raises(rngtrk.InvalidArgumentError):
        megatron.get_state("")


def test_default_state_get_and_set(tracker):
    tracker.set_default(PhiloxState(11, 44))
    assert tracker.get_default() == PhiloxState(11, 44) == tracker.active_state()
    tracker.set_default(PhiloxState(12, 0).to_bytes())
    assert tracker.get_default() == PhiloxState(12, 0)
    with pytest.raises(rngtrk.InvalidArgumentError):
        tracker.set_default(PhiloxState(12, 3))
    assert tracker.get_default() == PhiloxState(12, 0)


def test_save_and_load_round_trip_into_a_new_tracker(megatron):
    with megatron.fork():
        megatron.advance(37)
    data = megatron.save()
    assert type(data) is bytes and data[:8] == b"RNGTRKCK"
    with rngtrk.Tracker() as resumed:
        resumed.load(data)
        assert resumed.save() == data
        assert resumed.get_states() == megatron.get_states()
        assert resumed.get_default() == megatron.get_default()
        resumed.load(bytearray(data))
        resumed.load(memoryview(data))


def test_load_refuses_non_bytes_and_non_contiguous_buffers(tracker):
    import numpy
    with pytest.raises(TypeError):
        tracker.load("RNGTRKCK")
    with pytest.raises(rngtrk.InvalidArgumentError):
        tracker.load(numpy.zeros(100, dtype=numpy.uint8)[::2])
    with pytest.raises(rngtrk.CorruptCheckpointError):
        tracker.load(b"")


def test_close_is_idempotent_and_later_calls_raise(tracker):
    t = rngtrk.Tracker()
    t.add("a", 1)
    t.close()
    t.close()
    assert t.closed and repr(t) == "<rngtrk.Tracker closed>"
    for call in (lambda: t.add("b", 2), t.names, t.save, t.active_state, lambda: len(t),
                 lambda: t.fork("a").__enter__(), lambda: "a" in t):
        with pytest.raises(rngtrk.InvalidArgumentError, match="closed"):
            call()


def test_with_closes_the_tracker():
    with rngtrk.Tracker() as t:
        t.add("a", 1)
        assert not t.closed
    assert t.closed


def test_repr_shows_the_states(megatron):
    assert repr(megatron) == ("<rngtrk.Tracker default=PhiloxState(seed=1234, offset=0) "
                              "names=['data-parallel-rng', 'model-parallel-rng']>")


def test_one_tracker_shared_by_threads_stays_consistent(tracker):
    tracker.manual_seed(3)
    reserved = []

    def work():
        mine = [tracker.advance(4).offset for _ in range(5000)]
        reserved.extend(mine)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert tracker.active_state() == PhiloxState(3, 4 * 20000)
    assert sorted(reserved) == list(range(0, 4 * 20000, 4))  # every reservation distinct


def test_tracker_module_imports_at_the_top():
    # tracker.py's imports (sampling, distributed, ...) break no import cycle,
    # so none is hidden inside a function.
    import ast
    import inspect

    import rngtrk.tracker
    tree = ast.parse(inspect.getsource(rngtrk.tracker))
    inner = [(node.name, sub.lineno) for node in ast.walk(tree)
             if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
             for sub in ast.walk(node) if isinstance(sub, (ast.Import, ast.ImportFrom))]
    assert inner == []


def test_every_call_on_a_closed_tracker_is_refused_by_name():
    t = rngtrk.Tracker()
    t.add("a", 1)
    t.close()
    for call in (t.reset, lambda: t.manual_seed(1), lambda: t.set_state("a", PhiloxState(1, 0)),
                 lambda: t.set_default(PhiloxState(1, 0)), lambda: t.fork_depth, lambda: t.set_states({}),
                 lambda: t.seed_rank("megatron", 1), lambda: t.set_ledger("off"), t.mark, t.digest,
                 lambda: t.fork("a").__exit__(None, None, None), lambda: t.dropout(numpy_f32(4), p=0.5)):
        with pytest.raises(rngtrk.InvalidArgumentError, match="the tracker is closed"):
            call()


def numpy_f32(n):
    import numpy
    return numpy.ones(n, dtype=numpy.float32)
