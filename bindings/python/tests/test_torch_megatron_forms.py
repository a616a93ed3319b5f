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
    random.model_parallel_cuda_manual_seed(1234, False, False, False, 1, 0, 0, True)
    assert seeds()["model-parallel-rng"] == 1234 + 2718 + 1 and seeds()["data-parallel-rng"] == 1234
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
    before = m.get_cuda_rng_tracker().tracker.save()
    with pytest.raises(RuntimeError, match="not graph-safe"):
        random._set_all_rng_states(cpu, cuda, states, kind="cloned")
    assert m.get_cuda_rng_tracker().tracker.save() == before, "a refused restore changes nothing"
    random._set_all_rng_states(cpu, cuda, states)  # kind defaults to "live", dev's pre-tag convention


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
