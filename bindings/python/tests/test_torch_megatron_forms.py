# SPDX-License-Identifier: Apache-2.0
"""install() follows the forms of the Megatron-LM it finds, read from that
Megatron's own signatures (rngtrk.torch._megatron_forms): dev's and
core_r0.19.0's model_parallel_cuda_manual_seed, whose 8th parameter is
force_reset_rng (main's is gtp_remat_rank), and dev's four-value
_get_all_rng_states with _set_all_rng_states(..., kind=).  The Megatron
modules here are written in the test (their signatures are Megatron's at
the named commits: main d98e8a64, dev d48bd6b, core_r0.19.0 f8837c04; the
bodies are ours), put in sys.modules as megatron.core.tensor_parallel.random
before install()."""
import sys
import types

import pytest

import rngtrk

torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
import rngtrk.torch.megatron as m  # noqa: E402
from rngtrk.torch._megatron_forms import MegatronFormError  # noqa: E402

pytestmark = pytest.mark.usefixtures("fresh_torch_trackers")

RANDOM = "megatron.core.tensor_parallel.random"

# Each form's functions: the signatures of that Megatron line, bodies that
# must not run (install() replaces them), and a caller written as
# Megatron's own checkpoint code calls them (through the module's globals).
SEED_MAIN = """
def model_parallel_cuda_manual_seed(seed, te_rng_tracker=False, inference_rng_tracker=False,
        use_cudagraphable_rng=False, tp_rank=None, ep_rank=None, etp_rank=None, gtp_remat_rank=None,
        egtp_remat_rank=None, force_reset_rng=False, gtp_remat_world_size=None, egtp_remat_world_size=None):
    raise AssertionError("Megatron's own seeding ran")
"""
SEED_RELEASE = """
def model_parallel_cuda_manual_seed(seed, te_rng_tracker=False, inference_rng_tracker=False,
        use_cudagraphable_rng=False, tp_rank=None, ep_rank=None, etp_rank=None, force_reset_rng=False):
    raise AssertionError("Megatron's own seeding ran")
"""
THREE = """
def _get_all_rng_states():
    raise AssertionError("Megatron's own snapshot ran")

def _set_all_rng_states(cpu_rng_state, cuda_rng_state, cuda_rng_state_tracker):
    raise AssertionError("Megatron's own restore ran")

def around(work):
    cpu, cuda, tracker = _get_all_rng_states()
    work()
    _set_all_rng_states(cpu, cuda, tracker)
"""
TAGGED = """
def _get_all_rng_states():
    raise AssertionError("Megatron's own snapshot ran")

def _set_all_rng_states(cpu_rng_state, cuda_rng_state, cuda_rng_state_tracker, kind="live"):
    raise AssertionError("Megatron's own restore ran")

def around(work):
    cpu, cuda, tracker, kind = _get_all_rng_states()
    work()
    _set_all_rng_states(cpu, cuda, tracker, kind=kind)
"""
FORMS = {"main": SEED_MAIN + THREE, "core_r0.19.0": SEED_RELEASE + THREE, "dev": SEED_RELEASE + TAGGED}


@pytest.fixture
def megatron_of():
    """Puts a Megatron random module of a form in sys.modules; takes it out after."""
    def make(source):
        module = types.ModuleType(RANDOM)
        exec(compile(source, f"<{RANDOM}>", "exec"), module.__dict__)
        sys.modules[RANDOM] = module
        return module
    yield make
    m.uninstall()
    sys.modules.pop(RANDOM, None)


def seeds():
    return {name: rngtrk.torch.state_of(s).seed for name, s in m.get_cuda_rng_tracker().get_states().items()}


@pytest.mark.parametrize("form", ["core_r0.19.0", "dev"])
def test_a_release_callers_positional_force_reset_rng_is_taken_as_such(megatron_of, form):
    random = megatron_of(FORMS[form])
    with pytest.raises(Exception):  # main's order: the 8th argument is a GTP rank
        m.model_parallel_cuda_manual_seed(1234, False, False, False, 1, 0, 0, True)
    assert m.install()
    random.model_parallel_cuda_manual_seed(1234, False, False, False, 0, 0, 0)
    first = m.get_cuda_rng_tracker()
    random.model_parallel_cuda_manual_seed(1234, False, False, False, 1, 0, 0, True)
    assert m.get_cuda_rng_tracker() is not first, "force_reset_rng=True made a new tracker"
    assert seeds()["model-parallel-rng"] == 1234 + 2718 + 1 and seeds()["data-parallel-rng"] == 1234
    random.model_parallel_cuda_manual_seed(1234, False, False, False, 2, 0, 0)
    assert m.get_cuda_rng_tracker() is not first and seeds()["model-parallel-rng"] == 1234 + 2718 + 2
    assert list(random.model_parallel_cuda_manual_seed.__signature__.parameters)[7] == "force_reset_rng"
    with pytest.raises(TypeError):  # a call that form refuses, refused as Megatron would
        random.model_parallel_cuda_manual_seed(1234, gtp_remat_rank=1)


def test_mains_form_is_rngtrks_own_function(megatron_of):
    random = megatron_of(FORMS["main"])
    m.install()
    assert random.model_parallel_cuda_manual_seed is m.model_parallel_cuda_manual_seed
    assert random._get_all_rng_states is m._get_all_rng_states


@pytest.mark.parametrize("form", ["main", "core_r0.19.0", "dev"])
def test_megatrons_own_callers_unpack_what_their_form_returns(megatron_of, form):
    """A snapshot around work that draws: the draw is undone, in every form."""
    random = megatron_of(FORMS[form])
    m.install()
    m.model_parallel_cuda_manual_seed(7, tp_rank=0, ep_rank=0, etp_rank=0)
    tracker = m.get_cuda_rng_tracker()
    before = tracker.tracker.save()

    def work():
        with tracker.fork():
            rngtrk.torch.rand(8)

    random.around(work)
    assert tracker.tracker.save() == before
    assert len(random._get_all_rng_states()) == (4 if form == "dev" else 3)


def test_devs_tag_and_its_refusal(megatron_of):
    random = megatron_of(FORMS["dev"])
    m.install()
    m.model_parallel_cuda_manual_seed(7, tp_rank=0, ep_rank=0, etp_rank=0)
    cpu, cuda, states, kind = random._get_all_rng_states()
    assert kind == "live", "a tracker that is not graph-safe gives live snapshots, as dev's does"
    torch.rand(3)  # torch's CPU generator moves: a refused restore must not put it back
    before = m.get_cuda_rng_tracker().tracker.save(), torch.get_rng_state()
    with pytest.raises(RuntimeError, match="not graph-safe"):
        random._set_all_rng_states(cpu, cuda, states, kind="cloned")
    after = m.get_cuda_rng_tracker().tracker.save(), torch.get_rng_state()
    assert after[0] == before[0] and torch.equal(after[1], before[1]), "a refused restore changes nothing"
    random._set_all_rng_states(cpu, cuda, states)  # kind defaults to "live", dev's pre-tag convention
    assert torch.equal(torch.get_rng_state(), cpu)


@pytest.mark.parametrize("refusal", ["capture", "names"])
def test_devs_cloned_snapshot_refusals_under_a_graph_safe_tracker(megatron_of, monkeypatch, refusal):
    """A graph-safe tracker and a capture stood in for (no GPU here): a
    cloned snapshot restored inside a capture, or with other names, is
    refused with nothing changed, as dev refuses it."""
    import rngtrk.torch._megatron_forms as forms
    random = megatron_of(FORMS["dev"])
    m.install()
    m.model_parallel_cuda_manual_seed(7, tp_rank=0, ep_rank=0, etp_rank=0)
    monkeypatch.setattr(m, "is_graph_safe_cuda_rng_tracker", lambda tracker: True)
    cpu, cuda, states, kind = random._get_all_rng_states()
    assert kind == "cloned", "graph-safe, outside a capture: a cloned snapshot"
    if refusal == "capture":
        monkeypatch.setattr(forms, "capturing", lambda: True)
        match = "inside a CUDA graph capture"
    else:
        states = {**states, "another-rng": states["data-parallel-rng"]}
        match = "names changed"
    before = m.get_cuda_rng_tracker().tracker.save(), torch.get_rng_state()
    with pytest.raises(RuntimeError, match=match):
        random._set_all_rng_states(cpu, cuda, states, kind=kind)
    after = m.get_cuda_rng_tracker().tracker.save(), torch.get_rng_state()
    assert after[0] == before[0] and torch.equal(after[1], before[1])


def test_an_unknown_form_met_at_megatrons_import_fails_that_import_and_uninstalls(tmp_path):
    """install() before Megatron's import: the form is read when Megatron
    arrives; an unknown one fails that import once, naming it, and leaves
    nothing installed, so the next import is Megatron's own."""
    package = tmp_path / "megatron" / "core" / "tensor_parallel"
    package.mkdir(parents=True)
    for folder in (tmp_path / "megatron", tmp_path / "megatron" / "core", package):
        (folder / "__init__.py").write_text("")
    (package / "random.py").write_text("def model_parallel_cuda_manual_seed(seed, pipeline_rank=None):\n"
                                       "    return 'megatron'\n")
    sys.path.insert(0, str(tmp_path))
    try:
        assert m.install()
        with pytest.raises(MegatronFormError, match="pipeline_rank"):
            import megatron.core.tensor_parallel.random  # noqa: F401
        assert not m.installed()
        import megatron.core.tensor_parallel.random as random
        assert random.model_parallel_cuda_manual_seed(1) == "megatron"
    finally:
        sys.path.remove(str(tmp_path))


@pytest.mark.parametrize("source, named", [
    ("def model_parallel_cuda_manual_seed(seed, pipeline_rank=None):\n    pass\n", "pipeline_rank"),
    ("def model_parallel_cuda_manual_seed(seed, *ranks):\n    pass\n", "ranks"),
    ("def _set_all_rng_states(cpu_rng_state, cuda_rng_state, states, mode=None):\n    pass\n", "_set_all_rng_states"),
])
def test_a_form_install_does_not_know_is_refused_and_nothing_is_installed(megatron_of, source, named):
    random = megatron_of(source)
    before = dict(random.__dict__)
    with pytest.raises(MegatronFormError, match=named) as raised:
        m.install()
    assert isinstance(raised.value, TypeError) and isinstance(raised.value, rngtrk.UnavailableError)
    assert "nothing was installed" in str(raised.value) and "Megatron-LM's" in str(raised.value)
    assert not m.installed() and random.__dict__ == before
