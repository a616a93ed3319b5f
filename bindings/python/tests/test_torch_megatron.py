# SPDX-License-Identifier: Apache-2.0
"""rngtrk.torch.megatron against Megatron-LM's interface and rules, on
CPU-only torch (Debian's python3-torch).  Megatron-LM main at
d98e8a64ddf34856e74b24714e3bedb2f5a39553 (megatron/core/tensor_parallel/
random.py) is the spec: its signatures are written out below, and compared
with the upstream source itself when MEGATRON_LM names a checkout (make
test-upstream does).  Megatron's own tests run through
tests/upstream/run_megatron_tests.py; GPU behaviour is in test_torch.py."""
import ast
import inspect
import os
import sys

import pytest

import rngtrk
from conftest import STANDINS

torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
import rngtrk.torch as rt  # noqa: E402  (after the skip)
import rngtrk.torch.megatron as m  # noqa: E402

pytestmark = pytest.mark.usefixtures("fresh_torch_trackers")

# Upstream's parameters, in order, with their defaults (megatron/core/tensor_parallel/random.py).
UPSTREAM_SIGNATURES = {
    "model_parallel_cuda_manual_seed": [
        ("seed", inspect.Parameter.empty), ("te_rng_tracker", False), ("inference_rng_tracker", False),
        ("use_cudagraphable_rng", False), ("tp_rank", None), ("ep_rank", None), ("etp_rank", None),
        ("gtp_remat_rank", None), ("egtp_remat_rank", None), ("force_reset_rng", False),
        ("gtp_remat_world_size", None), ("egtp_remat_world_size", None)],
    "get_cuda_rng_tracker": [("use_te_rng_tracker", False), ("inference_rng_tracker", False),
                             ("use_cudagraphable_rng", False)],
    "initialize_rng_tracker": [("use_te_rng_tracker", False), ("inference_rng_tracker", False),
                               ("use_cudagraphable_rng", False), ("force_reset", False)],
    "_get_cuda_rng_state": [("device", "cuda"), ("clone", False), ("graph_safe", False)],
    "_set_cuda_rng_state": [("new_state", inspect.Parameter.empty), ("device", -1), ("graph_safe", False)],
    "convert_cuda_rng_state": [("state", inspect.Parameter.empty), ("to_graphable", False)],
    "get_gtp_remat_rng_tracker_name": [("is_expert", False)],
    "is_graph_safe_cuda_rng_tracker": [("cuda_rng_tracker", inspect.Parameter.empty)],
    "checkpoint": [("function", inspect.Parameter.empty), ("distribute_saved_activations", inspect.Parameter.empty)],
    "CudaRNGStatesTracker": [("use_cudagraphable_rng", False), ("is_inference_rng_tracker", False)],
    "CheckpointWithoutOutput": [("fp8", False), ("ckpt_manager", None), ("retain_input_tensors", False)],
}
UPSTREAM_NAMES = ["get_all_rng_states", "_get_all_rng_states", "_set_all_rng_states", "_fork_rng",
                  "get_data_parallel_rng_tracker_name", "get_expert_parallel_rng_tracker_name",
                  "CheckpointWithoutOutputManager", "InferenceCudaRNGStatesTracker", "is_checkpointing",
                  "_MODEL_PARALLEL_RNG_TRACKER_NAME", "_EXPERT_PARALLEL_RNG_TRACKER_NAME",
                  "_DATA_PARALLEL_RNG_TRACKER_NAME", "_GTP_REMAT_RNG_TRACKER_NAME",
                  "_EXPERT_GTP_REMAT_RNG_TRACKER_NAME", "_CUDA_RNG_STATE_TRACKER",
                  "_CUDA_RNG_STATE_TRACKER_INITIALIZED"]


def leading_parameters(obj, count):
    target = obj.__init__ if isinstance(obj, type) else obj
    params = [p for p in inspect.signature(target).parameters.values() if p.name != "self"]
    return [(p.name, p.default) for p in params[:count]]


def test_names_parameters_order_and_defaults_are_upstreams():
    for name, expected in UPSTREAM_SIGNATURES.items():
        assert leading_parameters(getattr(m, name), len(expected)) == expected, name
    for name in UPSTREAM_NAMES:
        assert hasattr(m, name), name
    assert (m._MODEL_PARALLEL_RNG_TRACKER_NAME, m._DATA_PARALLEL_RNG_TRACKER_NAME,
            m._EXPERT_PARALLEL_RNG_TRACKER_NAME) == ("model-parallel-rng", "data-parallel-rng", "expert-parallel-rng")
    assert m.get_gtp_remat_rng_tracker_name() == "gtp-remat-rng"
    assert m.get_gtp_remat_rng_tracker_name(is_expert=True) == "egtp-remat-rng"


@pytest.mark.skipif("MEGATRON_LM" not in os.environ,
                    reason="MEGATRON_LM does not name a Megatron-LM checkout (make test-upstream sets it)")
def test_signatures_equal_those_in_the_upstream_source():
    """Every function and class __init__ of UPSTREAM_SIGNATURES, read from
    upstream's random.py with ast (nothing of it is imported or run)."""
    path = os.path.join(os.environ["MEGATRON_LM"], "megatron", "core", "tensor_parallel", "random.py")
    tree = ast.parse(open(path).read())
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            found.setdefault(node.name, node)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    found[node.name] = item
    for name, expected in UPSTREAM_SIGNATURES.items():
        args = found[name].args
        names = [a.arg for a in args.args if a.arg != "self"]
        defaults = [ast.literal_eval(d) for d in args.defaults]
        upstream = list(zip(names, [inspect.Parameter.empty] * (len(names) - len(defaults)) + defaults))
        assert upstream[:len(expected)] == expected, f"{name}: upstream {upstream}"


# -- seeding ---------------------------------------------------------------------


def seeds(tracker):
    return {name: rt.state_of(value).seed for name, value in tracker.get_states().items()}


def test_model_parallel_cuda_manual_seed_has_megatrons_formulas_and_order():
    m.model_parallel_cuda_manual_seed(1234, False, False, False, tp_rank=3, ep_rank=2, etp_rank=1)
    t = m.get_cuda_rng_tracker()
    assert list(seeds(t).items()) == [("data-parallel-rng", 1234), ("model-parallel-rng", 1234 + 2718 + 3),
                                      ("expert-parallel-rng", 1234 + 1024 + 200 + 1)]
    assert t.tracker.get_default() == (1234, 0), "on CPU-only torch the default state plays the CUDA generator"
    origin = t.tracker.origin()
    assert (origin.policy, origin.seed, origin.tp, origin.ep, origin.etp) == ("megatron", 1234, 3, 2, 1)


def test_the_remat_states_exist_only_when_their_axis_is_on():
    m.model_parallel_cuda_manual_seed(7, tp_rank=1, ep_rank=0, etp_rank=2, gtp_remat_rank=3, gtp_remat_world_size=4,
                                      egtp_remat_rank=1, egtp_remat_world_size=2)
    got = seeds(m.get_cuda_rng_tracker())
    model, expert = 7 + 2718 + 1, 7 + 1024 + 2
    assert list(got.items()) == [("data-parallel-rng", 7), ("model-parallel-rng", model),
                                 ("expert-parallel-rng", expert), ("gtp-remat-rng", model + 65536 * 4),
                                 ("egtp-remat-rng", expert + 32768 + 65536 * 2)]
    # A world size of 1 (or 0: not set up) is off, whatever the rank says.
    m.model_parallel_cuda_manual_seed(7, tp_rank=1, ep_rank=0, etp_rank=2, gtp_remat_rank=5, gtp_remat_world_size=1)
    assert list(seeds(m.get_cuda_rng_tracker())) == ["data-parallel-rng", "model-parallel-rng",
                                                     "expert-parallel-rng"]


def test_a_rank_that_cannot_be_determined_is_named_and_nothing_changes():
    m.model_parallel_cuda_manual_seed(50, tp_rank=0, ep_rank=0, etp_rank=0)
    t = m.get_cuda_rng_tracker()
    before = t.tracker.save()
    for kwargs, missing in [({}, "tp_rank"), ({"tp_rank": 0}, "ep_rank"), ({"tp_rank": 0, "ep_rank": 1}, "etp_rank"),
                            ({"tp_rank": 0, "ep_rank": 0, "etp_rank": 0, "gtp_remat_world_size": 4}, "gtp_remat_rank")]:
        with pytest.raises(m.RankUnavailableError, match=missing) as raised:
            m.model_parallel_cuda_manual_seed(60, **kwargs)
        assert isinstance(raised.value, AssertionError) and "megatron.core.parallel_state" in str(raised.value)
        assert m.get_cuda_rng_tracker() is t and t.tracker.save() == before
    with pytest.raises(rngtrk.InvalidArgumentError, match="tp_rank"):
        m.model_parallel_cuda_manual_seed(60, tp_rank=-1, ep_rank=0, etp_rank=0)
    assert t.tracker.save() == before


def test_ranks_come_from_megatrons_parallel_state_when_it_is_there():
    sys.path.insert(0, os.path.join(STANDINS, "standin_megatron"))
    from megatron.core import parallel_state
    parallel_state.set_ranks(tp=2, ep=3, etp=1, gtp=1, gtp_size=2)
    m.model_parallel_cuda_manual_seed(100)
    assert list(seeds(m.get_cuda_rng_tracker()).values()) == [100, 100 + 2718 + 2, 100 + 1024 + 301,
                                                              100 + 2718 + 2 + 65536 * 2]
    parallel_state.set_ranks(tp=0)  # expert-tensor rank unknown: Megatron's getter returns None
    with pytest.raises(m.RankUnavailableError, match="get_expert_tensor_parallel_rank"):
        m.model_parallel_cuda_manual_seed(100, force_reset_rng=True)
    parallel_state.set_ranks()  # not initialised: the getter's own AssertionError, as upstream
    with pytest.raises(AssertionError, match="not initialized"):
        m.model_parallel_cuda_manual_seed(100)


def test_seeds_that_collide_are_refused_before_anything_changes():
    m.model_parallel_cuda_manual_seed(50, tp_rank=0, ep_rank=0, etp_rank=0)
    before = m.get_cuda_rng_tracker().tracker.save()
    # model seed 2718 + 6 == expert seed 1024 + 100 * 17
    with pytest.raises(rngtrk.DuplicateSeedError):
        m.model_parallel_cuda_manual_seed(50, tp_rank=6, ep_rank=17, etp_rank=0, force_reset_rng=True)
    assert m.get_cuda_rng_tracker().tracker.save() == before


def test_initialize_rng_tracker_flavours_and_force_reset():
    with pytest.raises(AssertionError, match="not been initalized"):
        m.get_all_rng_states()
    m.initialize_rng_tracker(use_te_rng_tracker=True)
    from rngtrk.torch import te
    first = m.get_cuda_rng_tracker()
    assert isinstance(first, te.CudaRNGStatesTracker) and m.is_graph_safe_cuda_rng_tracker(first) == first.graph_safe
    m.initialize_rng_tracker(inference_rng_tracker=True)
    assert m.get_cuda_rng_tracker() is first, "created once, flags of later calls ignored (upstream)"
    m.initialize_rng_tracker(inference_rng_tracker=True, force_reset=True)
    inference = m.get_cuda_rng_tracker()
    assert isinstance(inference, m.CudaRNGStatesTracker) and inference.is_inference_rng_tracker
    inference.add("x", 1)
    inference.set_states({"y": rngtrk.PhiloxState(2, 0)})
    with inference.fork("not-there"):
        pass
    assert inference.get_states() == {}
    m.model_parallel_cuda_manual_seed(9, tp_rank=0, ep_rank=0, etp_rank=0)
    assert inference.get_states() == {}, "an inference tracker takes no states"
    assert dict(m.get_all_rng_states()) == {}


def test_use_cudagraphable_rng_where_it_cannot_work_is_upstreams_assertion_naming_the_real_cause():
    if rt.graph_safe_supported():
        pytest.skip("graph-safe generator states work here (test_torch.py covers them)")
    with pytest.raises(AssertionError, match="cudagraphs") as refused:
        m.CudaRNGStatesTracker(use_cudagraphable_rng=True)
    message = str(refused.value)
    if not rt._generators.graph_safe_api():
        assert f"need torch >= 2.2; this is {torch.__version__}" in message
    elif not torch.backends.cuda.is_built():
        assert "live on a CUDA device: this torch" in message and "is built without CUDA" in message
    else:
        assert "live on a CUDA device: this torch" in message and "sees no CUDA device" in message
    with pytest.raises(rngtrk.UnavailableError):
        m.get_cuda_rng_tracker(use_cudagraphable_rng=True)


# -- the tracker --------------------------------------------------------------------


def test_the_tracker_follows_megatrons_rules():
    t = m.CudaRNGStatesTracker()
    assert not t.is_initialized() and t.get_states() == {} and dict(t.states_) == {} and t.seeds_ == set()
    t.set_states({})
    assert t.is_initialized(), "set_states makes a tracker initialised (upstream)"
    t.add("a", 10)
    t.add("b", 11)
    assert t.seeds_ == {10, 11} and "a" in t.states_ and list(t.states_) == ["a", "b"]
    assert rt.state_of(t.states_["a"]) == (10, 0) and t.states_["a"].dtype == torch.uint8
    t.reset()
    assert not t.is_initialized()
    t.set_states({"s": rngtrk.PhiloxState(5, 8)})
    t.add("after", 6)
    assert list(seeds(t).items()) == [("s", 5), ("after", 6)]
    with t.fork("s"):  # upstream allows add and set_states inside a fork
        t.add("inside", 7)
        t.set_states({"s": rngtrk.PhiloxState(5, 40), "inside": rngtrk.PhiloxState(7, 0)})
        assert t.tracker.get_state("s") == (5, 40)
        with pytest.raises(rngtrk.ForkOrderError, match='"s"'):
            t.set_states({"inside": rngtrk.PhiloxState(7, 0)})  # would drop the open fork's state
    assert list(seeds(t).items()) == [("s", 5), ("inside", 7)]


def test_bad_input_raises_upstreams_exception_and_changes_nothing():
    t = m.CudaRNGStatesTracker()
    t.add("a", 10)
    before = t.tracker.save()
    with pytest.raises(RuntimeError) as raised:  # TransformerEngine's class; Megatron raises Exception
        t.add("a", 12)
    assert isinstance(raised.value, rngtrk.DuplicateNameError) and "a" in str(raised.value)
    with pytest.raises(RuntimeError) as raised:
        t.add("c", 10)
    assert isinstance(raised.value, rngtrk.DuplicateSeedError) and "10" in str(raised.value)
    t.add("c", 12)  # the failed add above burned no seed
    t.reset()
    t.add("a", 10)
    before = t.tracker.save()
    with pytest.raises(rngtrk.DuplicateSeedError):
        t.set_states({"x": rngtrk.PhiloxState(1, 0), "y": rngtrk.PhiloxState(1, 4)})
    with pytest.raises(TypeError):
        t.set_states([("a", rngtrk.PhiloxState(1, 0))])
    fork = t.fork("missing")  # nothing happens until the fork is entered (upstream)
    with pytest.raises(KeyError, match="missing"):
        with fork:
            pass
    assert t.tracker.save() == before and t.tracker.fork_depth == 0


def draws(tracker, name_sequence):
    """Ten uniforms per step, each step inside the forks named (nested)."""
    out = []

    def step(names):
        if not names:
            out.append(rt.rand(10, tracker=tracker))
            return
        with tracker.fork(names[0]):
            step(names[1:])
    for names in name_sequence:
        step(names)
    return out


def test_a_name_forked_again_inside_its_own_fork_continues_its_one_stream():
    """Megatron-LM's test_double_fork, on rngtrk's CPU generator: forks of
    state1 inside state2 inside state1 draw what one fork per name draws."""
    t = m.CudaRNGStatesTracker()
    t.add("state1", 1234)
    t.add("state2", 5678)
    nested = []
    with t.fork("state1"):
        nested.append(("1", rt.rand(10, tracker=t)))
        with t.fork("state2"):
            nested.append(("2", rt.rand(10, tracker=t)))
            with t.fork("state1"):
                nested.append(("1", rt.rand(10, tracker=t)))
            nested.append(("2", rt.rand(10, tracker=t)))
        nested.append(("1", rt.rand(10, tracker=t)))
    nested_states = t.get_states()
    t.reset()
    t.add("state1", 1234)
    t.add("state2", 5678)
    single = {"1": draws(t, [["state1"]] * 3), "2": draws(t, [["state2"]] * 2)}
    for name in "12":
        got = [x for n, x in nested if n == name]
        assert len(got) == len(single[name]) and all(torch.equal(a, b) for a, b in zip(got, single[name]))
    assert all(torch.equal(nested_states[k], v) for k, v in t.get_states().items())
    every = torch.cat([x for _, x in nested])
    assert every.unique().numel() == every.numel(), "no number drawn twice"


def test_get_states_inside_a_fork_is_the_state_now_and_a_snapshot():
    t = m.CudaRNGStatesTracker()
    t.add("model-parallel-rng", 1)
    with t.fork():
        rt.rand(8, tracker=t)
        inside = t.get_states()
        assert rt.state_of(inside["model-parallel-rng"]) == (1, 8)
        rt.rand(8, tracker=t)
        assert rt.state_of(inside["model-parallel-rng"]) == (1, 8)
        assert rt.state_of(t.states_["model-parallel-rng"]) == (1, 16)


def test_the_cuda_generator_functions_on_cpu_only_torch_are_rngtrks_active_state():
    if rt._generators.cuda_ready():
        pytest.skip("torch has a CUDA device here: the CUDA generator is torch's (test_torch.py)")
    m.model_parallel_cuda_manual_seed(300, tp_rank=0, ep_rank=0, etp_rank=0)
    t = m.get_cuda_rng_tracker()
    assert rt.state_of(m._get_cuda_rng_state()) == (300, 0)
    with t.fork():
        assert rt.state_of(m._get_cuda_rng_state()) == (300 + 2718, 0)
        m._set_cuda_rng_state(rt.state_tensor(rngtrk.PhiloxState(300 + 2718, 40)))
        assert t.tracker.get_state("model-parallel-rng") == (300 + 2718, 40)
    m._set_cuda_rng_state(rngtrk.PhiloxState(1, 4).to_bytes())
    assert t.tracker.get_default() == (1, 4)


def test_convert_cuda_rng_state():
    state = rt.state_tensor(rngtrk.PhiloxState(3, 4))
    assert m.convert_cuda_rng_state(state) is state
    generator = torch.Generator()
    assert torch.equal(m.convert_cuda_rng_state(generator), generator.get_state())
    assert m.convert_cuda_rng_state(generator, to_graphable=True) is generator
    with pytest.raises(ValueError, match="Invalid state type"):
        m.convert_cuda_rng_state(b"0" * 16)
    if not torch.cuda.is_available():
        with pytest.raises(AssertionError, match="CUDA"):
            m.convert_cuda_rng_state(state, to_graphable=True)


# -- activation checkpointing ------------------------------------------------------------


def masked_block(x):
    """A block that draws: dropout in the model-parallel fork, then outside it."""
    with m.get_cuda_rng_tracker().fork():
        y = rt.dropout(torch.nn.functional.gelu(x), p=0.4)
    return rt.dropout(y * 3.0, p=0.2)


def start_of():
    """The named states and the generator (rngtrk's default state on
    CPU-only torch, torch's CUDA generator with CUDA)."""
    t = m.get_cuda_rng_tracker()
    return t.get_states(), t.generator_state()


def rewind(start):
    t = m.get_cuda_rng_tracker()
    t.set_states(start[0])
    t.set_generator_state(start[1])


def test_checkpoint_takes_megatrons_arguments_and_recomputes_the_same_masks():
    a, b = torch.ones(16), torch.ones(16) * 2
    assert torch.equal(m.checkpoint(lambda u, v: u + v, None, a, b), torch.ones(16) * 3)
    m.model_parallel_cuda_manual_seed(11, tp_rank=0, ep_rank=0, etp_rank=0)
    t = m.get_cuda_rng_tracker()
    t.tracker.set_ledger("raise")  # the recompute must make exactly the forward's reservations
    start = start_of()
    x = torch.randn(64, 32, requires_grad=True)
    ref_x = x.detach().clone().requires_grad_(True)
    y = m.checkpoint(masked_block, False, x)
    after = t.tracker.save()
    y.sum().backward()
    assert t.tracker.save() == after, "backward leaves the states as the forward left them"
    t.tracker.set_ledger("off")
    rewind(start)
    ref = masked_block(ref_x)
    ref.sum().backward()
    assert torch.equal(y, ref) and torch.equal(x.grad, ref_x.grad)
    assert (y == 0).any() and not m.is_checkpointing()


def test_distribute_saved_activations_needs_megatrons_tensor_parallel_group():
    m.model_parallel_cuda_manual_seed(11, tp_rank=0, ep_rank=0, etp_rank=0)
    x = torch.ones(4, 4, requires_grad=True)
    with pytest.raises(m.RankUnavailableError, match="tensor-parallel group"):
        m.checkpoint(lambda u: u * 2, True, x)
    sys.path.insert(0, os.path.join(STANDINS, "standin_megatron"))
    from megatron.core import parallel_state
    parallel_state.set_ranks(tp=0, tp_size=1)
    y = m.checkpoint(lambda u: u * 2, True, x)
    assert x.data.shape == (16,), "kept as this rank's 1-D chunk until backward (upstream)"
    y.sum().backward()
    assert x.data.shape == (4, 4) and torch.equal(x.grad, torch.full((4, 4), 2.0))


def test_checkpoint_without_output_frees_the_output_and_recomputes_it_with_the_same_mask():
    m.model_parallel_cuda_manual_seed(21, tp_rank=0, ep_rank=0, etp_rank=0)
    start = start_of()
    x = torch.randn(8, 16, requires_grad=True)
    ckpt = m.CheckpointWithoutOutput()
    hidden = ckpt.checkpoint(masked_block, x)
    kept = hidden.detach().clone()
    out = hidden * x
    ckpt.discard_output_and_register_recompute(out)
    assert hidden.storage().size() == 0, "the output's memory is released"
    out.backward(torch.ones_like(out))
    assert hidden.storage().size() == hidden.numel() and torch.equal(hidden, kept), \
        "the recompute gave the output its values back: the same masks"
    rewind(start)
    ref_x = x.detach().clone().requires_grad_(True)
    ref = masked_block(ref_x) * ref_x
    ref.backward(torch.ones_like(ref))
    assert torch.equal(out, ref) and torch.equal(x.grad, ref_x.grad) and (kept == 0).any()


@pytest.mark.parametrize("use_manager", [False, True])
def test_checkpoint_without_output_keeps_outputs_that_alias_inputs_and_a_manager_recomputes_all(use_manager):
    m.model_parallel_cuda_manual_seed(31, tp_rank=0, ep_rank=0, etp_rank=0)

    def norm_and_residual(inp):
        return torch.nn.functional.layer_norm(inp, inp.shape[-1:]), inp

    def model(inp, checkpointed):
        if not checkpointed:
            normed, residual = norm_and_residual(inp)
            return (masked_block(normed + residual).sum(-1) * 1.5), None
        manager = m.CheckpointWithoutOutputManager() if use_manager else None
        first = m.CheckpointWithoutOutput(ckpt_manager=manager, retain_input_tensors=True)
        normed, residual = first.checkpoint(norm_and_residual, inp)
        second = m.CheckpointWithoutOutput(ckpt_manager=manager)
        out = second.checkpoint(masked_block, normed + residual).sum(-1) * 1.5
        if manager is None:
            first.discard_output_and_register_recompute(out)
            second.discard_output_and_register_recompute(out)
        else:
            manager.discard_all_outputs_and_register_unified_recompute(out)
        assert residual.storage().size() > 0, "an output that is the input is kept"
        assert normed.storage().size() == 0
        return out, manager

    start = start_of()
    x = torch.randn(4, 8, requires_grad=True)
    out, manager = model(x, checkpointed=True)
    out.sum().backward()
    rewind(start)
    ref_x = x.detach().clone().requires_grad_(True)
    ref, _ = model(ref_x, checkpointed=False)
    ref.sum().backward()
    assert torch.equal(out, ref) and torch.equal(x.grad, ref_x.grad)
    if manager is not None:
        with pytest.raises(TypeError):
            manager.add_checkpoint(object())


def test_a_region_checkpointed_inside_a_fork_is_recomputed_inside_it():
    """Megatron's sequence-parallel block forks around checkpointed layers;
    a layer that draws, then forks the same name again, replays exactly."""
    m.model_parallel_cuda_manual_seed(41, tp_rank=0, ep_rank=0, etp_rank=0)
    t = m.get_cuda_rng_tracker()
    t.tracker.set_ledger("raise")

    def layer(x):
        y = rt.dropout(x, p=0.3)          # the forked stream
        with t.fork():                    # the same name again: the stream goes on
            return y + rt.dropout(x, p=0.5)

    for make in ("checkpoint", "without-output"):
        x = torch.full((1000,), 10.0, requires_grad=True)
        with t.fork():
            if make == "checkpoint":
                y = m.checkpoint(layer, False, x)
                out = y * 1.0
            else:
                ckpt = m.CheckpointWithoutOutput()
                y = ckpt.checkpoint(layer, x)
                kept = y.detach().clone()
                out = y * 1.0
                ckpt.discard_output_and_register_recompute(out)
        out.sum().backward()  # the ledger checks every reservation of the recompute
        if make == "without-output":
            assert torch.equal(y, kept), "the recompute refilled the output with the forward's values"
        forward_first = torch.isclose(kept if make != "checkpoint" else y.detach(), torch.tensor(10 / 0.7)) | \
            torch.isclose(kept if make != "checkpoint" else y.detach(), torch.tensor(10 / 0.7 + 10 / 0.5))
        assert torch.equal(torch.isclose(x.grad, torch.tensor(1 / 0.7)) |
                           torch.isclose(x.grad, torch.tensor(1 / 0.7 + 1 / 0.5)), forward_first)
