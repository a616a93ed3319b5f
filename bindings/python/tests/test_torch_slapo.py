# SPDX-License-Identifier: Apache-2.0
"""rngtrk.torch.slapo: slapo.random's surface and behaviour (slapo at
b80534a2), its seeds computed by rngtrk's slapo policy, and install()
against a stand-in slapo (tests/standin_slapo: our own code, binding
slapo.random's names at import time as slapo's modules do)."""
import inspect
import random
import sys

import pytest

import rngtrk
from conftest import import_standin

torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
import rngtrk.torch as rt  # noqa: E402  (after the skip)
import rngtrk.torch.slapo as s  # noqa: E402

pytestmark = pytest.mark.usefixtures("fresh_torch_trackers")


def seeds(tracker):
    return {name: rt.state_of(state).seed for name, state in tracker.get_states().items()}


def test_the_names_and_signatures_are_slapos():
    for name in ("CudaRNGStatesTracker", "_CUDA_RNG_STATE_TRACKER", "get_cuda_rng_tracker", "_set_cuda_rng_state",
                 "set_random_seed", "model_parallel_cuda_manual_seed", "is_random_seed_set"):
        assert hasattr(s, name), name
    assert str(inspect.signature(s.model_parallel_cuda_manual_seed)) == "(seed, tp_rank, always_enable_tp_seed)"
    assert str(inspect.signature(s.set_random_seed)) == \
        "(seed=2013, dp_rank=None, pp_rank=None, tp_rank=None, always_enable_tp_seed=False)"
    assert str(inspect.signature(s._set_cuda_rng_state)) == "(new_state, device=-1)"
    with pytest.raises(TypeError):
        s.model_parallel_cuda_manual_seed(1, 0)  # the flag is required, as in slapo
    assert s.get_cuda_rng_tracker() is s._CUDA_RNG_STATE_TRACKER
    assert s.get_cuda_rng_tracker() is not rt.get_cuda_rng_tracker(), "slapo keeps its own tracker"


def test_set_random_seed_gives_slapos_seeds_and_records_the_rank():
    assert not s.is_random_seed_set()
    assert s.set_random_seed(2013, 1, 2, 3) == 2223  # 2013 + 100*2 + 10*1
    tracker = s.get_cuda_rng_tracker()
    assert s.is_random_seed_set()
    assert seeds(tracker) == {"model-parallel-rng": 4944}  # 2223 + 2718 + 3
    assert tracker.tracker.get_default().seed == 2223
    assert torch.initial_seed() == 2223
    value = random.random()
    random.seed(2223)
    assert value == random.random(), "Python's random took the rank's seed"
    origin = tracker.tracker.origin()
    assert (origin.policy, origin.seed, origin.tp, origin.pp, origin.dp) == ("slapo", 2013, 3, 2, 1)
    # Without a tp rank the tracker is left alone (slapo's rule).
    assert s.set_random_seed(7) == 7 and seeds(tracker) == {"model-parallel-rng": 4944}


def test_model_parallel_cuda_manual_seed_resets_and_takes_the_flag():
    s.get_cuda_rng_tracker().add("other", 99)
    assert s.model_parallel_cuda_manual_seed(10, 1, False) == 2729
    tracker = s.get_cuda_rng_tracker()
    assert seeds(tracker) == {"model-parallel-rng": 2729} and tracker.tracker.get_default().seed == 10
    assert s.model_parallel_cuda_manual_seed(10, 1, True) == 2729
    assert tracker.tracker.get_default().seed == 2729, "always_enable_tp_seed: the default takes the tp seed"


@pytest.mark.parametrize("call", [lambda: s.model_parallel_cuda_manual_seed(5, -1, False),
                                  lambda: s.set_random_seed(5, tp_rank=2 ** 64),
                                  lambda: s.set_random_seed(-1, tp_rank=0)],
                         ids=["negative-tp", "tp-too-large", "negative-seed"])
def test_bad_ranks_and_seeds_change_nothing(call):
    s.set_random_seed(1, tp_rank=0)
    before = s.get_cuda_rng_tracker().state_dict()
    cpu_before = torch.get_rng_state()
    with pytest.raises(ValueError):
        call()
    assert s.get_cuda_rng_tracker().state_dict() == before
    assert torch.equal(torch.get_rng_state(), cpu_before), "torch was not reseeded by a refused call"


def test_fork_before_seeding_raises_slapos_runtime_error():
    tracker = s.CudaRNGStatesTracker()
    fork = tracker.fork()  # nothing happens until entered, as upstream
    with pytest.raises(RuntimeError, match="Did you call 'set_random_seed'") as caught:
        with fork:
            pass
    assert isinstance(caught.value, rngtrk.UnknownNameError) and isinstance(caught.value, s.SeedNotSetError)
    assert tracker._open == [], "a refused fork leaves nothing open"


def test_tracker_rules_match_slapos():
    tracker = s.CudaRNGStatesTracker()
    tracker.add("state2", 1111)
    with pytest.raises(Exception):
        tracker.add("state3", 1111)
    with pytest.raises(Exception):
        tracker.add("state2", 111)
    assert rt.state_of(tracker.get_states()["state2"]) == rngtrk.PhiloxState(1111, 0)
    assert torch.equal(tracker.states_["state2"], tracker.get_states()["state2"])
    assert tracker.seeds_ == {1111}
    tracker.reset()
    assert not tracker.get_states()
    tracker.set_states({"a": rt.state_tensor(rngtrk.PhiloxState(3, 8))})
    assert rt.state_of(tracker.get_states()["a"]) == rngtrk.PhiloxState(3, 8)


def test_set_cuda_rng_state_sets_the_generator():
    s.model_parallel_cuda_manual_seed(4, 0, False)
    s._set_cuda_rng_state(rt.state_tensor(rngtrk.PhiloxState(4, 40)))
    assert s.get_cuda_rng_tracker().generator_state() == rngtrk.PhiloxState(4, 40)
    with pytest.raises(TypeError):
        s._set_cuda_rng_state(1234)


def test_forks_draw_the_named_stream_for_rngtrk_ops():
    s.set_random_seed(2013, tp_rank=1)
    tracker = s.get_cuda_rng_tracker()
    with tracker.fork():
        inside = rt.rand(6, tracker=tracker)
    expected = rt.rand(6, state=rngtrk.PhiloxState(2013 + 2718 + 1, 0))
    assert torch.equal(inside, expected)
    assert rt.state_of(tracker.get_states()["model-parallel-rng"]).offset == rngtrk.offset_increment(6)


# -- install() against the stand-in slapo -------------------------------------------------

def import_slapo():
    """(slapo, slapo.random, slapo.checkpoint, slapo.primitives.tensor_parallel, slapo.verify) of the stand-in."""
    return import_standin("standin_slapo", "slapo", "slapo.random", "slapo.checkpoint",
                          "slapo.primitives.tensor_parallel", "slapo.verify")


def call_sites(modules):
    slapo, srandom, checkpoint, tensor_parallel, _ = modules
    return {"package": slapo.get_cuda_rng_tracker(), "random": srandom.get_cuda_rng_tracker(),
            "global": srandom._CUDA_RNG_STATE_TRACKER, "checkpoint": checkpoint.tracker_seen_by_checkpoint(),
            "tensor_parallel": tensor_parallel.tracker_seen_by_tensor_parallel()}


@pytest.mark.parametrize("install_first", [True, False], ids=["install-then-import", "import-then-install"])
def test_install_reaches_every_slapo_call_site(install_first):
    if install_first:
        assert s.install() and s.installed()
        modules = import_slapo()
    else:
        modules = import_slapo()
        assert s.install()
    assert not s.install(), "a second install does nothing"
    slapo, srandom, checkpoint, tensor_parallel, verify = modules
    ours = s.get_cuda_rng_tracker()
    assert all(t is ours for t in call_sites(modules).values()), call_sites(modules)
    # Each module that imported slapo.random's functions by name now holds ours.
    for module in (slapo, checkpoint, tensor_parallel, verify):
        for name in ("get_cuda_rng_tracker", "model_parallel_cuda_manual_seed", "is_random_seed_set",
                     "set_random_seed", "_set_cuda_rng_state"):
            if name in vars(module):
                assert vars(module)[name] is getattr(s, name), (module.__name__, name)
    assert sum(name in vars(m) for m in (slapo, checkpoint, tensor_parallel, verify)
               for name in ("get_cuda_rng_tracker", "set_random_seed", "is_random_seed_set")) >= 4
    assert isinstance(ours, srandom.CudaRNGStatesTracker), "slapo's isinstance checks accept it"
    assert isinstance(srandom.CudaRNGStatesTracker(), s.CudaRNGStatesTracker)
    # slapo's seeding reached through an early-bound name (verify's) seeds ours.
    assert verify.seed_for_verification(2013) == 2013 and not slapo.is_random_seed_set()
    assert slapo.set_random_seed(2013, 1, 2, 3) == 2223 and seeds(ours) == {"model-parallel-rng": 4944}
    assert checkpoint.is_random_seed_set() and checkpoint._set_cuda_rng_state is s._set_cuda_rng_state
    with pytest.raises(RuntimeError, match="set_random_seed"):
        with srandom.CudaRNGStatesTracker().fork():
            pass
    with tensor_parallel.fork_default():
        assert ours._open == ["model-parallel-rng"]
    assert checkpoint.states_saved_for_recompute().keys() == {"model-parallel-rng"}


def test_a_tracker_slapo_seeded_before_install_is_carried_over_and_uninstall_keeps_one_tracker():
    slapo, srandom, checkpoint, tensor_parallel, verify = modules = import_slapo()
    original_seed = srandom.model_parallel_cuda_manual_seed
    original_seed(5, 2, False)
    theirs = srandom.get_cuda_rng_tracker().get_states()
    assert s.install()
    ours = srandom.get_cuda_rng_tracker()
    assert isinstance(ours, s.CudaRNGStatesTracker)
    assert {k: rt.state_of(v) for k, v in ours.get_states().items()} == \
        {k: rt.state_of(v) for k, v in theirs.items()}
    assert s.uninstall() and not s.installed()
    assert srandom.get_cuda_rng_tracker is not s.get_cuda_rng_tracker, "slapo's functions are back"
    assert all(t is ours for t in call_sites(modules).values()), "one tracker, also after uninstall"
    original_seed(6, 0, False)  # slapo's own function seeds the same tracker
    assert seeds(s.get_cuda_rng_tracker()) == {"model-parallel-rng": 6 + 2718}


def test_a_reload_of_slapo_random_after_install_keeps_the_one_seeded_tracker():
    import importlib
    slapo, srandom, checkpoint, tensor_parallel, verify = modules = import_slapo()
    assert s.install()
    slapo.set_random_seed(2013, tp_rank=1)
    ours = s.get_cuda_rng_tracker()
    importlib.reload(srandom)
    assert srandom.get_cuda_rng_tracker() is ours and srandom._CUDA_RNG_STATE_TRACKER is ours
    assert seeds(ours) == {"model-parallel-rng": 2013 + 2718 + 1}
    assert slapo.set_random_seed(7, tp_rank=0) == 7 and seeds(ours) == {"model-parallel-rng": 7 + 2718}
    assert checkpoint.tracker_seen_by_checkpoint() is ours


def test_an_install_that_cannot_carry_over_installs_nothing():
    srandom = import_slapo()[1]
    twice = {"a": rt.state_tensor(rngtrk.PhiloxState(7, 0)), "b": rt.state_tensor(rngtrk.PhiloxState(7, 4))}
    srandom.get_cuda_rng_tracker().set_states(twice)  # slapo stores anything; rngtrk's seeds are distinct
    original = srandom.get_cuda_rng_tracker
    with pytest.raises(rngtrk.DuplicateSeedError):
        s.install()
    assert not s.installed() and srandom.get_cuda_rng_tracker is original
    kept = srandom._CUDA_RNG_STATE_TRACKER.get_states()
    assert {name: rt.state_of(value) for name, value in kept.items()} == {"a": (7, 0), "b": (7, 4)}


def test_install_carries_over_a_value_that_is_not_a_state():
    srandom = import_slapo()[1]
    srandom.get_cuda_rng_tracker().set_states({"state1": 1234})  # slapo stores anything, and so does rngtrk
    s.install()
    assert srandom.get_cuda_rng_tracker().get_states() == {"state1": 1234}


def test_a_seed_numpy_cannot_take_is_refused_before_anything_is_seeded():
    before = random.getstate()
    with pytest.raises(ValueError, match="numpy"):
        s.set_random_seed(2 ** 32, tp_rank=0)
    assert random.getstate() == before and not s.is_random_seed_set()
    with pytest.raises(ValueError, match="past 2\\^64"):
        s.set_random_seed(2 ** 64 - 1, pp_rank=1)  # slapo's sum is never wrapped


def test_a_reload_of_the_module_keeps_its_install():
    import importlib
    assert s.install()
    finders = len(sys.meta_path)
    importlib.reload(s)
    assert s.installed() and not s.install(), "the same installer: installed, and a second install does nothing"
    assert len(sys.meta_path) == finders
    assert s.uninstall() and not s.installed()

