# SPDX-License-Identifier: Apache-2.0
"""rngtrk.torch.megatron.install() against a stand-in Megatron-LM
(tests/standin_megatron: our own code, binding the RNG names the ways
Megatron-LM's modules do at import time).  After install(), before or after
the import, every call site reaches the one rngtrk tracker, and a dropout
reached through an early-bound name inside Megatron's checkpoint() redraws
the same mask in backward; without it (or with the one-attribute swap the
docs used to give) Megatron's fork misses rngtrk's draws, and, where
torch's RNG state does not carry rngtrk's, the recompute draws another
mask."""
import os
import sys

import pytest

import rngtrk
from conftest import STANDINS, forget_modules, import_standin

torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
import rngtrk.torch as rt  # noqa: E402  (after the skip)
import rngtrk.torch.megatron as m  # noqa: E402

pytestmark = pytest.mark.usefixtures("fresh_torch_trackers")


def import_megatron():
    """(random, tensor_parallel, layers, attention, mixer) of the stand-in Megatron-LM."""
    return import_standin("standin_megatron", "megatron.core.tensor_parallel.random", "megatron.core.tensor_parallel",
                          "megatron.core.tensor_parallel.layers", "megatron.core.transformer.attention",
                          "megatron.core.ssm.mixer")


def every_call_site(modules):
    random, tensor_parallel, layers, attention, mixer = modules
    return {"random": random.get_cuda_rng_tracker(), "package": tensor_parallel.get_cuda_rng_tracker(),
            "layers": layers.tracker_seen_by_layers(), "mixer": mixer.tracker_seen_by_mixer()}


@pytest.mark.parametrize("install_first", [True, False], ids=["install-then-import", "import-then-install"])
def test_every_call_site_reaches_the_one_rngtrk_tracker(install_first):
    if install_first:
        assert m.install() and m.installed()
        modules = import_megatron()
    else:
        modules = import_megatron()
        original_seed = modules[0].model_parallel_cuda_manual_seed  # bound before install, as elsewhere
        assert m.install()
    random = modules[0]
    assert not m.install(), "a second install does nothing"
    if install_first:
        original_seed = random.model_parallel_cuda_manual_seed
    seen = every_call_site(modules)
    ours = m.get_cuda_rng_tracker()
    assert all(t is ours for t in seen.values()), seen
    assert isinstance(ours, m.CudaRNGStatesTracker)
    assert isinstance(ours, random.CudaRNGStatesTracker), "Megatron's isinstance checks accept it"
    # Megatron's own seeding function, reached through a name bound before
    # install() (or ours, if installed first): rngtrk trackers, Megatron's seeds.
    original_seed(77, tp_rank=1, ep_rank=0, etp_rank=0, force_reset_rng=True)
    after = every_call_site(modules)
    assert len({id(t) for t in after.values()}) == 1 and isinstance(after["layers"], m.CudaRNGStatesTracker)
    assert {k: rt.state_of(v).seed for k, v in after["layers"].get_states().items()} == \
        {"data-parallel-rng": 77, "model-parallel-rng": 77 + 2718 + 1, "expert-parallel-rng": 77 + 1024}
    # Names imported from the module now are rngtrk's.
    from megatron.core.tensor_parallel.random import get_cuda_rng_tracker, model_parallel_cuda_manual_seed
    assert get_cuda_rng_tracker is m.get_cuda_rng_tracker
    assert model_parallel_cuda_manual_seed is m.model_parallel_cuda_manual_seed


def test_a_tracker_megatron_made_before_install_is_carried_over():
    random = import_megatron()[0]
    random.model_parallel_cuda_manual_seed(5, tp_rank=2)
    megatrons = random.get_cuda_rng_tracker()
    assert type(megatrons).__module__ == random.__name__
    m.install()
    ours = random.get_cuda_rng_tracker()
    assert isinstance(ours, m.CudaRNGStatesTracker) and ours.is_initialized()
    assert [(k, rt.state_of(v)) for k, v in ours.get_states().items()] == \
        [(k, rt.state_of(v)) for k, v in megatrons.get_states().items()]


def test_a_tracker_seeded_before_megatrons_import_passes_megatrons_isinstance_checks():
    """README order: install(), seed, then Megatron is imported."""
    m.install()
    m.model_parallel_cuda_manual_seed(5, tp_rank=0, ep_rank=0, etp_rank=0)
    seeded = m.get_cuda_rng_tracker()
    forget_modules("megatron")
    sys.path.insert(0, os.path.join(STANDINS, "standin_megatron"))
    import megatron.core.tensor_parallel.random as random  # patched as it is imported
    from rngtrk.torch._megatron_install import INSTALLER
    megatrons_class = INSTALLER.originals(random.__name__)["CudaRNGStatesTracker"]
    assert megatrons_class.__module__ == random.__name__ and megatrons_class is not random.CudaRNGStatesTracker
    assert random.get_cuda_rng_tracker() is seeded
    assert isinstance(seeded, megatrons_class), "the process tracker was given the bridged class"
    assert dict(random.get_all_rng_states()) and isinstance(seeded, m.CudaRNGStatesTracker)


def test_uninstall_puts_megatron_back_and_keeps_one_tracker():
    modules = import_megatron()
    random, tensor_parallel, layers = modules[0], modules[1], modules[2]
    originals = random.get_cuda_rng_tracker, random.CudaRNGStatesTracker, tensor_parallel.get_cuda_rng_tracker
    m.install()
    from megatron.core.tensor_parallel.random import get_cuda_rng_tracker as bound_while_installed
    m.model_parallel_cuda_manual_seed(9, tp_rank=0, ep_rank=0, etp_rank=0)
    tracker = m.get_cuda_rng_tracker()
    with tracker.fork():
        rt.rand(100)
    assert m.uninstall() and not m.installed() and not m.uninstall()
    assert (random.get_cuda_rng_tracker, random.CudaRNGStatesTracker, tensor_parallel.get_cuda_rng_tracker) == \
        originals
    # One tracker, whichever name reaches it: Megatron's own, ours bound while installed, ours now.
    assert random.get_cuda_rng_tracker() is tracker and layers.tracker_seen_by_layers() is tracker
    assert bound_while_installed() is tracker and m.get_cuda_rng_tracker() is tracker
    assert tracker.tracker.get_state("model-parallel-rng") == (9 + 2718, 100)
    # New trackers are Megatron's again, and still one for every name.
    random.initialize_rng_tracker(force_reset=True)
    theirs = random.get_cuda_rng_tracker()
    assert type(theirs) is random.CudaRNGStatesTracker and bound_while_installed() is theirs
    assert m.install(), "and it installs again"
    assert isinstance(random.get_cuda_rng_tracker(), m.CudaRNGStatesTracker)


def test_a_reloaded_megatron_module_is_patched_again():
    import importlib
    random = import_megatron()[0]
    m.install()
    importlib.reload(random)
    assert random.get_cuda_rng_tracker is m.get_cuda_rng_tracker and m.installed()
    m.uninstall()
    importlib.reload(random)
    assert random.get_cuda_rng_tracker is not m.get_cuda_rng_tracker, "after uninstall a reload is Megatron's"


def recompute_mask(attention, p=0.5):
    """The mask of a dropout drawn through attention's early-bound name
    inside Megatron's checkpoint(): the forward's (from the output) and the
    recompute's (from the gradient, 2 / (1 - p) where kept)."""
    probs = torch.rand(64, 64) + 0.5  # no zeros of its own
    x = probs.clone().requires_grad_(True)
    y = attention.checkpointed_attention_dropout(x, p)
    y.sum().backward()
    return y != 0, x.grad != 0


def seed_everything(random):
    random.model_parallel_cuda_manual_seed(1234, tp_rank=0, ep_rank=0, etp_rank=0, force_reset_rng=True)
    m.model_parallel_cuda_manual_seed(1234, tp_rank=0, ep_rank=0, etp_rank=0, force_reset_rng=True)


def test_a_recomputed_dropout_reached_through_an_early_bound_name_redraws_the_same_mask():
    modules = import_megatron()
    m.install()
    seed_everything(modules[0])
    forward, recomputed = recompute_mask(modules[3])
    assert 0.3 < forward.float().mean().item() < 0.7
    assert torch.equal(forward, recomputed)


@pytest.mark.parametrize("swap", ["none", "rebind-one-attribute"])
def test_without_install_the_fork_misses_rngtrks_draws_and_torch_alone_recomputes_another_mask(swap):
    """The failure install() exists to prevent (and proof that the test
    above can fail): two live trackers.  Megatron's fork then swaps its own
    tracker, not the one the dropout draws from, so the dropout draws
    another stream than the one install() gives it.  torch's RNG state
    carries rngtrk's states (rngtrk.torch._rng_state_hook), so Megatron's
    checkpoint, which saves it, still replays the mask; without that, as
    torch does alone, the recompute draws another mask too."""
    from rngtrk.torch import _rng_state_hook
    modules = import_megatron()
    if swap == "rebind-one-attribute":  # what docs/pytorch.md told users before
        modules[0].get_cuda_rng_tracker = rt.get_cuda_rng_tracker
    _rng_state_hook.uninstall()
    try:
        seed_everything(modules[0])
        forward, recomputed = recompute_mask(modules[3])
    finally:
        _rng_state_hook.install()
    assert not torch.equal(forward, recomputed), "torch alone: the recompute draws another mask"
    seed_everything(modules[0])
    forward, recomputed = recompute_mask(modules[3])
    assert torch.equal(forward, recomputed), "torch's RNG state carries rngtrk's: the recompute replays"
    m.install()  # (last: afterwards Megatron's module globals hold rngtrk's tracker)
    try:
        seed_everything(modules[0])
        forked, _ = recompute_mask(modules[3])
    finally:
        m.uninstall()
    assert not torch.equal(forward, forked), "without install() the dropout missed the model-parallel fork"


def test_megatrons_te_tracker_class_becomes_rngtrks_and_stays_tes():
    sys.path.insert(0, os.path.join(STANDINS, "standin_te"))
    forget_modules("transformer_engine", "rngtrk.torch.te")
    random = import_megatron()[0]
    import transformer_engine.pytorch.distributed as te_distributed
    from megatron.core.extensions import transformer_engine as extension
    megatrons_te_class = extension.TECudaRNGStatesTracker
    m.install()
    random.initialize_rng_tracker(use_te_rng_tracker=True, force_reset=True)  # Megatron's, through its module
    tracker = random.get_cuda_rng_tracker()
    from rngtrk.torch import te
    assert isinstance(tracker, te.CudaRNGStatesTracker) and tracker.is_inference_rng_tracker is False
    assert isinstance(tracker, megatrons_te_class) and isinstance(tracker, te_distributed.CudaRNGStatesTracker), \
        "Megatron's and TransformerEngine's isinstance checks accept it"
    assert m.is_graph_safe_cuda_rng_tracker(tracker) == tracker.graph_safe
    tracker.add("model-parallel-rng", 42)
    with pytest.raises(RuntimeError):
        tracker.add("model-parallel-rng", 43)
    with pytest.raises(KeyError):
        with tracker.fork("other"):
            pass
    m.uninstall()
    assert extension.TECudaRNGStatesTracker is megatrons_te_class and random.get_cuda_rng_tracker() is tracker
    forget_modules("rngtrk.torch.te")
