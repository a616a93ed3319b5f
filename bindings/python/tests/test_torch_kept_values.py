# SPDX-License-Identifier: Apache-2.0
"""set_states keeps any value, as upstream's trackers store it (Megatron-LM,
TransformerEngine and slapo keep the mapping they are given): get_states
and states_ return a value that is not a state as it was given, and only
its use fails, with NotAStateError naming the stream (a fork, a save).
Megatron-LM's own test_cuda_rng_states_tracker sets {"state1": 1234} and
reads it back.  The CUDA-generator path: emulated_cuda_checks.py."""
import pytest

import rngtrk

torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
import rngtrk.torch as rt  # noqa: E402  (after the skip)
from rngtrk.torch import slapo, te  # noqa: E402
from rngtrk.torch._tracker import NotAStateError  # noqa: E402
from rngtrk.torch.checkpoint import capture_all, restore_all  # noqa: E402

pytestmark = pytest.mark.usefixtures("fresh_torch_trackers")

FLAVOURS = {"megatron": rt.CudaRNGStatesTracker, "te": te.CudaRNGStatesTracker, "slapo": slapo.CudaRNGStatesTracker}


@pytest.fixture(params=sorted(FLAVOURS))
def tracker(request):
    return FLAVOURS[request.param]()


def test_megatron_lms_own_sequence(tracker):
    """test_cuda_rng_states_tracker's steps, up to its CUDA part."""
    tracker.set_states({"state1": 1234})
    assert tracker.get_states()["state1"] == 1234
    assert tracker.is_initialized()
    tracker.reset()
    assert tracker.get_states() == {}
    tracker.add("state2", 1111)
    with pytest.raises(Exception):
        tracker.add("state3", 1111)
    with pytest.raises(Exception):
        tracker.add("state2", 111)
    assert tracker.get_states()["state2"] is not None


def test_a_kept_value_is_returned_as_given_in_its_place():
    t = rt.CudaRNGStatesTracker()
    marker = object()
    t.set_states({"a": rngtrk.PhiloxState(5, 4), "odd": marker, "short": torch.zeros(8, dtype=torch.uint8),
                  "b": rngtrk.PhiloxState(6, 0)})
    states = t.get_states()
    assert list(states) == ["a", "odd", "short", "b"]
    assert states["odd"] is marker and states["short"].numel() == 8
    assert rt.state_of(states["a"]) == (5, 4) and rt.state_of(states["b"]) == (6, 0)
    assert list(t.states_) == ["a", "odd", "short", "b"] and t.states_["odd"] is marker and "odd" in t.states_
    assert len(t.states_) == 4
    t.add("c", 9)  # after set_states' names
    assert list(t.get_states()) == ["a", "odd", "short", "b", "c"]
    assert t.tracker.names() == ["a", "b", "c"], "the rngtrk tracker holds the states alone"


def test_using_a_kept_value_raises_naming_the_stream_and_changes_nothing(tracker):
    tracker.set_states({"good": rngtrk.PhiloxState(3, 0), "state1": 1234})
    before = tracker.tracker.save()
    with pytest.raises(NotAStateError, match="fork of cuda rng state 'state1': set_states gave it an int") as raised:
        with tracker.fork("state1"):
            pass
    assert isinstance(raised.value, rngtrk.InvalidArgumentError) and isinstance(raised.value, TypeError)
    with pytest.raises(NotAStateError, match="state_dict .* 'state1'"):
        tracker.state_dict()
    with pytest.raises(rngtrk.DuplicateNameError, match="state1 already exists"):
        tracker.add("state1", 77)
    assert tracker.tracker.save() == before and tracker.tracker.fork_depth == 0
    with tracker.fork("good"):  # the states beside it work
        rt.rand(4, tracker=tracker)
    assert tracker.get_states()["state1"] == 1234


def test_a_refused_set_states_keeps_what_was_kept():
    t = rt.CudaRNGStatesTracker()
    t.set_states({"state1": 1234, "a": rngtrk.PhiloxState(1, 0)})
    with pytest.raises(rngtrk.DuplicateSeedError):
        t.set_states({"x": rngtrk.PhiloxState(7, 0), "y": rngtrk.PhiloxState(7, 4), "z": "not a state"})
    assert list(t.get_states()) == ["state1", "a"] and t.get_states()["state1"] == 1234


@pytest.mark.parametrize("replace", ["set_states", "reset", "load_state_dict", "seed_rank"])
def test_what_replaces_the_states_drops_the_kept_values(replace):
    t = rt.CudaRNGStatesTracker()
    saved = rt.CudaRNGStatesTracker()
    saved.add("m", 5)
    checkpoint = saved.state_dict()
    t.set_states({"state1": 1234})
    if replace == "set_states":
        t.set_states({"m": rngtrk.PhiloxState(5, 0)})
    elif replace == "reset":
        t.reset()
    elif replace == "load_state_dict":
        t.load_state_dict(checkpoint)
    else:
        t.seed_rank("megatron", 1234, tp=0)
    assert "state1" not in t.get_states() and "state1" not in t.states_
    t.state_dict()  # a save works again
    t.add("state1", 4242)


def test_megatron_checkpoint_functions_carry_a_kept_value():
    """_get_all_rng_states / _set_all_rng_states (capture_all / restore_all)
    hand back what was set, as upstream's dict does."""
    t = rt.CudaRNGStatesTracker()
    t.set_states({"state1": 1234, "a": rngtrk.PhiloxState(1, 0)})
    saved = capture_all(t)
    t.reset()
    restore_all(t, *saved)
    assert t.get_states()["state1"] == 1234 and rt.state_of(t.get_states()["a"]) == (1, 0)


def test_torch_get_rng_state_round_trip_keeps_a_kept_value():
    """torch.get_rng_state()/set_rng_state() carry the process tracker's
    states (_rng_state_hook): a kept value comes back with them."""
    t = rt.get_cuda_rng_tracker()
    t.set_states({"state1": 1234, "a": rngtrk.PhiloxState(1, 0)})
    cpu = torch.get_rng_state()
    t.set_states({"a": rngtrk.PhiloxState(1, 8)})
    torch.set_rng_state(cpu)
    assert t.get_states()["state1"] == 1234 and rt.state_of(t.get_states()["a"]) == (1, 0)


def test_a_graph_safe_round_trip_during_a_capture_keeps_a_kept_value(monkeypatch):
    """During a CUDA graph capture get_states() hands out the live
    generators and the kept values; set_states takes the same back (as
    Megatron's checkpoint does around a captured region).  The capture and
    the graph-safe generators are stood in for (no GPU here)."""
    import rngtrk.torch._tracker as tracker_module
    t = rt.CudaRNGStatesTracker()
    t.set_states({"a": rngtrk.PhiloxState(1, 0), "state1": 1234})
    live = torch.Generator()
    t._graph_safe, t._generators = True, {"a": live}
    monkeypatch.setattr(tracker_module, "capturing", lambda: True)
    states = t.get_states()
    assert states == {"a": live, "state1": 1234}
    t.set_states(states)
    assert t._generators == {"a": live} and t.get_states()["state1"] == 1234
    with pytest.raises(NotAStateError, match="'state1'"):
        with t.fork("state1"):
            pass


def test_set_states_refuses_a_value_that_is_not_a_state_for_the_open_fork():
    t = rt.CudaRNGStatesTracker()
    t.add("a", 1)
    before = t.tracker.save()
    with t.fork("a"):
        with pytest.raises(rngtrk.ForkOrderError, match="open fork 'a' a value that is not a state"):
            t.set_states({"a": 1234})
    assert t.tracker.save() == before and t.get_states().keys() == {"a"}

