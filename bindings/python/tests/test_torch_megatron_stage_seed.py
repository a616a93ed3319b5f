# SPDX-License-Identifier: Apache-2.0
"""install() wraps Megatron-LM's training setup, megatron.training.initialize
._set_random_seed, so that the tracker it seeds records the base seed and
the rank's true pipeline and data-parallel ranks (rngtrk.torch
._megatron_stage_seed; rngtrk.torch.dcp keys streams by that record).

The Megatron modules here are written in the test: _set_random_seed has
main's signature (d98e8a64; dev d48bd6b and core_r0.19.0 f8837c04 lack the
remat groups) and a body of ours that does what Megatron's does with the
seed (stage pp: seed + 100 pp, plus 10 dp with data-parallel random init,
handed to tensor_parallel.model_parallel_cuda_manual_seed)."""
import sys
import types

import pytest

import rngtrk

torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
import rngtrk.torch.megatron as m  # noqa: E402
from rngtrk._stream_origins import stream_origin  # noqa: E402

pytestmark = pytest.mark.usefixtures("fresh_torch_trackers")

TRAINING = "megatron.training.initialize"
STATE = "megatron.core.parallel_state"
SET_RANDOM_SEED = """
def _set_random_seed(seed_, data_parallel_random_init=False, te_rng_tracker=False, inference_rng_tracker=False,
                     use_cudagraphable_rng=False, pp_group=None, dp_group=None, tp_group=None, ep_group=None,
                     etp_group=None, gtp_remat_group=None, egtp_remat_group=None):
    if seed_ is None or seed_ <= 0:
        raise ValueError("Seed ({}) should be a positive integer.".format(seed_))
    seed = seed_ + STAGE_STEP * mpu.get_pipeline_model_parallel_rank()
    if data_parallel_random_init:
        seed = seed + 10 * mpu.get_data_parallel_rank()
    torch.manual_seed(seed)
    tensor_parallel.model_parallel_cuda_manual_seed(seed, te_rng_tracker, inference_rng_tracker,
                                                    use_cudagraphable_rng, tp_rank=TP, ep_rank=EP, etp_rank=0)
"""


@pytest.fixture
def training():
    """Megatron's parallel state and training setup in sys.modules (rank
    coordinates settable on the returned namespace); taken out after."""
    saved = {name: sys.modules.get(name) for name in (TRAINING, STATE, "megatron", "megatron.core",
                                                        "megatron.training")}
    rank = types.SimpleNamespace(pp=0, dp=0)
    state = types.ModuleType(STATE)
    state.get_pipeline_model_parallel_rank = lambda: rank.pp
    state.get_data_parallel_rank = lambda: rank.dp
    module = types.ModuleType(TRAINING)
    module.__dict__.update(mpu=state, torch=torch, tensor_parallel=m, STAGE_STEP=100, TP=1, EP=1)
    exec(compile(SET_RANDOM_SEED, f"<{TRAINING}>", "exec"), module.__dict__)
    sys.modules[STATE], sys.modules[TRAINING] = state, module
    for package in ("megatron", "megatron.core", "megatron.training"):
        sys.modules[package] = types.ModuleType(package)
    sys.modules["megatron.core"].parallel_state = state
    rank.module = module
    yield rank
    m.uninstall()
    for name, value in saved.items():
        if value is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = value


def seeded(rank, pp, dp, random_init=True):
    rank.pp, rank.dp = pp, dp
    rank.module._set_random_seed(1234, data_parallel_random_init=random_init)
    tracker = m.get_cuda_rng_tracker()
    return tracker.tracker.get_states(), tracker.tracker.origin()


def test_the_tracker_records_the_true_stage_and_data_parallel_rank(training):
    original = training.module._set_random_seed
    m.install()
    assert training.module._set_random_seed is not original
    # (pp 1, dp 0) and (pp 0, dp 10): one seed sum, 1334, the same states ...
    states_a, origin_a = seeded(training, pp=1, dp=0)
    states_b, origin_b = seeded(training, pp=0, dp=10)
    assert states_a == states_b
    # ... but each tracker says which rank it is
    assert (origin_a.seed, origin_a.pp, origin_a.dp, origin_a.flags) == (1234, 1, 0, ("dp-random-init",))
    assert (origin_b.seed, origin_b.pp, origin_b.dp) == (1234, 0, 10)
    seed = rngtrk.PhiloxState.from_bytes(states_a["data-parallel-rng"]).seed
    assert stream_origin(origin_a, "data-parallel-rng", seed) != stream_origin(origin_b, "data-parallel-rng", seed)
    m.uninstall()
    assert training.module._set_random_seed is original


def test_the_states_are_those_of_megatrons_sum(training):
    """Wrapped or not, the same states to the bit; unwrapped, the origin
    holds the sum as its base seed (and cannot tell the ranks apart)."""
    m.install()
    wrapped, _ = seeded(training, pp=2, dp=3)
    m.uninstall()
    plain, origin = seeded(training, pp=2, dp=3)
    assert wrapped == plain
    assert (origin.seed, origin.pp, origin.dp) == (1234 + 200 + 30, 0, 0)
    m.install()
    no_random_init, origin = seeded(training, pp=2, dp=3, random_init=False)
    assert (origin.seed, origin.pp, origin.dp, origin.flags) == (1234, 2, 0, ())
    assert rngtrk.PhiloxState.from_bytes(no_random_init["data-parallel-rng"]).seed == 1234 + 200


def test_a_megatron_with_other_arithmetic_is_seeded_from_its_sum(training):
    training.module.STAGE_STEP = 1000  # not rngtrk's megatron policy: nothing is guessed
    m.install()
    states, origin = seeded(training, pp=1, dp=0)
    assert (origin.seed, origin.pp) == (1234 + 1000, 0)
    assert rngtrk.PhiloxState.from_bytes(states["data-parallel-rng"]).seed == 2234


def test_megatrons_own_errors_are_its_own(training):
    m.install()
    with pytest.raises(ValueError, match="positive integer"):
        training.module._set_random_seed(0)
    training.pp = None  # parallel state not initialised: Megatron's arithmetic fails, not rngtrk
    with pytest.raises(TypeError):
        training.module._set_random_seed(1234)


# Megatron-Bridge's training setup (NVIDIA-NeMo/Megatron-Bridge 067f987d,
# src/megatron/bridge/training/initialize.py): the same arithmetic, with the
# groups in one keyword-only pg_collection whose .pp and .dp it reads the
# ranks from through torch.distributed.  The body is ours; the signature is
# Bridge's.
BRIDGE = "megatron.bridge.training.initialize"
BRIDGE_SET_RANDOM_SEED = """
def _set_random_seed(seed_, data_parallel_random_init=False, te_rng_tracker=False, inference_rng_tracker=False,
                     use_cudagraphable_rng=False, *, pg_collection):
    assert seed_ is not None and seed_ > 0, f"Seed ({seed_}) should be a positive integer."
    seed = seed_ + 100 * torch.distributed.get_rank(pg_collection.pp)
    if data_parallel_random_init:
        seed = seed + 10 * torch.distributed.get_rank(pg_collection.dp)
    torch.manual_seed(seed)
    tensor_parallel.model_parallel_cuda_manual_seed(seed, te_rng_tracker, inference_rng_tracker,
                                                    use_cudagraphable_rng, tp_rank=0, ep_rank=0, etp_rank=0)
"""


@pytest.fixture
def bridge(training, monkeypatch):
    """Megatron-Bridge's training setup in sys.modules, with process groups
    that are names here: torch.distributed.get_rank answers for them."""
    ranks = {"pp": 0, "dp": 0}
    monkeypatch.setattr(torch.distributed, "get_rank", lambda group=None: ranks[group])
    module = types.ModuleType(BRIDGE)
    module.__dict__.update(torch=torch, tensor_parallel=m)
    exec(compile(BRIDGE_SET_RANDOM_SEED, f"<{BRIDGE}>", "exec"), module.__dict__)
    for package in ("megatron.bridge", "megatron.bridge.training"):
        monkeypatch.setitem(sys.modules, package, types.ModuleType(package))
    monkeypatch.setitem(sys.modules, BRIDGE, module)
    ranks["module"] = module
    return ranks


def bridge_seeded(bridge, pp, dp):
    bridge["pp"], bridge["dp"] = pp, dp
    bridge["module"]._set_random_seed(1234, True, pg_collection=types.SimpleNamespace(pp="pp", dp="dp"))
    tracker = m.get_cuda_rng_tracker()
    return tracker.tracker.get_states(), tracker.tracker.origin()


def test_megatron_bridges_setup_records_the_true_stage_and_data_parallel_rank(bridge):
    original = bridge["module"]._set_random_seed
    unwrapped, origin = bridge_seeded(bridge, pp=1, dp=0)
    assert (origin.seed, origin.pp, origin.dp) == (1334, 0, 0)  # without install(): the sum, no rank
    m.install()
    assert bridge["module"]._set_random_seed is not original
    states_a, origin_a = bridge_seeded(bridge, pp=1, dp=0)
    states_b, origin_b = bridge_seeded(bridge, pp=0, dp=10)
    assert states_a == states_b == unwrapped  # one sum, the same states, to the bit ...
    assert (origin_a.seed, origin_a.pp, origin_a.dp) == (1234, 1, 0)  # ... each knowing its rank
    assert (origin_b.seed, origin_b.pp, origin_b.dp) == (1234, 0, 10)
    m.uninstall()
    assert bridge["module"]._set_random_seed is original
