# SPDX-License-Identifier: Apache-2.0
"""install() makes Megatron-LM's own checkpoints carry rngtrk's stream
table (rngtrk.torch._megatron_saved_streams), so a load on another layout
restores every stream the checkpoint holds.

The megatron.training.checkpointing here is written in the test: its four
functions have Megatron's names and the arguments this hook reads, and a
body of ours that does what Megatron's does with the RNG (main d98e8a64):
save_checkpoint gathers the RNG, has generate_state_dict build the state
dict and writes it; load_checkpoint reads it with _load_base_checkpoint
and restores its per-rank RNG only where the tensor-parallel size is the
one saved ("RNG state will be ignored" otherwise).  Megatron-LM's own
functions run in tests/upstream/run_megatron_checkpoints.py (make
test-upstream)."""
import os
import sys
import types
import warnings

import pytest

os.environ["RNGTRK_DEBUG"] = "1"  # rngtrk.torch.dcp's debug mode: every table written is decoded again

torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
dcp = pytest.importorskip("rngtrk.torch.dcp")  # the stream table is RNGState's (torch 2.2 and later)
import rngtrk.torch as rt  # noqa: E402
import rngtrk.torch.megatron as m  # noqa: E402
from rngtrk.errors import InvalidArgumentError  # noqa: E402
from rngtrk.state import PhiloxState  # noqa: E402
from rngtrk.torch import _dcp_table  # noqa: E402

pytestmark = pytest.mark.usefixtures("fresh_torch_trackers")

CHECKPOINTING = "megatron.training.checkpointing"
TRAINING_LOOP = "megatron.training.training"
MEGATRON = """
import os


def get_rng_state(ckpt_format, tp_group=None, pp_group=None):
    return {"rng_tracker_states": tensor_parallel.get_cuda_rng_tracker().get_states()}


def generate_state_dict(args, model, optimizer, opt_param_scheduler, rng_state, iteration=None, **kwargs):
    state_dict = {"args": dict(vars(args)), "iteration": iteration}
    if not args.no_save_rng and rng_state:
        state_dict["rng_state"] = rng_state
    return state_dict


def save_checkpoint(iteration, model, optimizer, opt_param_scheduler, num_floating_point_operations_so_far,
                    checkpointing_context=None, **kwargs):
    args = get_args()
    rng_state = get_rng_state(args.ckpt_format)
    state_dict = generate_state_dict(args, model, optimizer, opt_param_scheduler, rng_state, iteration=iteration)
    torch.save(state_dict, os.path.join(args.save, "model_optim_rng.pt"))


def _load_base_checkpoint(load_dir, args, rank0=False, **kwargs):
    path = os.path.join(load_dir, "model_optim_rng.pt")
    if not os.path.exists(path):
        return None, "", False, None
    return torch.load(path, weights_only=False), path, args.release, "legacy"


def load_checkpoint(ddp_model, optimizer, opt_param_scheduler, load_arg="load", strict=True, **kwargs):
    args = get_args()
    state_dict, name, release, kind = _load_base_checkpoint(getattr(args, load_arg), args, rank0=False)
    if state_dict is None:
        return 0, 0
    same = state_dict["args"]["tensor_model_parallel_size"] == args.tensor_model_parallel_size
    if same and not release and not args.finetune and not args.no_load_rng:
        tensor_parallel.get_cuda_rng_tracker().set_states(state_dict["rng_state"]["rng_tracker_states"])
    elif not same:
        print("(TP, PP) mismatch after resume: RNG state will be ignored")
    return state_dict["iteration"], 0
"""


@pytest.fixture
def megatron(tmp_path):
    """The stand-in checkpointing module and a training loop that bound its
    save_checkpoint and load_checkpoint at import, with Megatron's args
    (settable on the returned namespace); taken out after."""
    names = (CHECKPOINTING, TRAINING_LOOP, "megatron", "megatron.training")
    saved = {name: sys.modules.get(name) for name in names}
    args = types.SimpleNamespace(save=str(tmp_path), load=str(tmp_path), ckpt_format="torch", no_save_rng=False,
                                 no_load_rng=False, finetune=False, release=False, tensor_model_parallel_size=2)
    module = types.ModuleType(CHECKPOINTING)
    module.__dict__.update(torch=torch, tensor_parallel=m, get_args=lambda: args)
    exec(compile(MEGATRON, f"<{CHECKPOINTING}>", "exec"), module.__dict__)
    loop = types.ModuleType(TRAINING_LOOP)
    loop.save_checkpoint, loop.load_checkpoint = module.save_checkpoint, module.load_checkpoint
    for package in ("megatron", "megatron.training"):
        sys.modules[package] = types.ModuleType(package)
    sys.modules[CHECKPOINTING], sys.modules[TRAINING_LOOP] = module, loop
    yield types.SimpleNamespace(args=args, module=module, loop=loop, originals=dict(vars(module)))
    m.uninstall()
    for name, value in saved.items():
        if value is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = value


def seed_and_draw(steps, tp_rank=0):
    m.model_parallel_cuda_manual_seed(1234, tp_rank=tp_rank, ep_rank=0, etp_rank=0)
    return draw(steps)


def draw(steps):
    tracker = m.get_cuda_rng_tracker()
    out = []
    for _ in range(steps):
        for name in ("model-parallel-rng", "data-parallel-rng"):
            with tracker.fork(name):
                out.append(rt.rand(3 + len(name) % 4))
    return out


def positions():
    return {name: (state.seed, state.offset) for name, state in
            ((name, PhiloxState.from_bytes(raw)) for name, raw in m.get_cuda_rng_tracker().tracker.get_states().items())}


def saved_and_continued(megatron, steps=2):
    """Seeded, `steps` steps drawn, saved; (positions at save, the next two steps)."""
    seed_and_draw(steps)
    at_save = positions()
    megatron.loop.save_checkpoint(steps, [], None, None, 0)
    return at_save, draw(2)


def same(a, b):
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))


def test_a_save_carries_the_stream_table(megatron):
    m.install()
    at_save, _ = saved_and_continued(megatron)
    state_dict = torch.load(f"{megatron.args.save}/model_optim_rng.pt", weights_only=False)
    table = _dcp_table.decode(state_dict["rngtrk_streams"])
    assert {(e.name, e.seed, e.offset) for e in table.entries if e.name} == \
        {(name, seed, offset) for name, (seed, offset) in at_save.items()}
    assert "rng_state" in state_dict  # Megatron's own RNG is still saved


def test_a_load_on_another_layout_continues_every_stream(megatron, capsys):
    m.install()
    at_save, expected = saved_and_continued(megatron)
    megatron.args.tensor_model_parallel_size = 1  # Megatron ignores its own RNG state
    seed_and_draw(0)
    assert positions() != at_save
    assert megatron.loop.load_checkpoint([], None, None) == (2, 0)
    assert "RNG state will be ignored" in capsys.readouterr().out
    assert positions() == at_save
    assert same(draw(2), expected)


def test_without_install_the_streams_restart(megatron):
    """The baseline: what the hook removes (the same steps, Megatron alone)."""
    at_save, expected = saved_and_continued(megatron)
    megatron.args.tensor_model_parallel_size = 1
    seed_and_draw(0)
    megatron.loop.load_checkpoint([], None, None)
    assert all(offset == 0 for _, offset in positions().values())
    assert not same(draw(2), expected)


def test_the_same_layout_restores_as_megatron_does(megatron):
    m.install()
    at_save, expected = saved_and_continued(megatron)
    seed_and_draw(0)
    megatron.loop.load_checkpoint([], None, None)
    assert positions() == at_save and same(draw(2), expected)


@pytest.mark.parametrize("flag", ["no_load_rng", "finetune", "release"])
def test_a_load_that_megatron_keeps_from_the_rng_restores_nothing(megatron, flag):
    m.install()
    saved_and_continued(megatron)
    megatron.args.tensor_model_parallel_size = 1
    setattr(megatron.args, flag, True)
    seed_and_draw(0)
    megatron.loop.load_checkpoint([], None, None)
    assert all(offset == 0 for _, offset in positions().values())


def test_no_save_rng_saves_no_table(megatron):
    m.install()
    megatron.args.no_save_rng = True
    saved_and_continued(megatron)
    assert "rngtrk_streams" not in torch.load(f"{megatron.args.save}/model_optim_rng.pt", weights_only=False)


@pytest.mark.parametrize("ckpt_format", ["torch_dcp", "fsdp_dtensor"])
def test_formats_whose_loads_cannot_read_the_table_save_none_and_say_so_once(megatron, ckpt_format):
    m.install()
    megatron.args.ckpt_format = ckpt_format
    with pytest.warns(RuntimeWarning, match=f"{ckpt_format} checkpoints carry no rngtrk stream table"):
        saved_and_continued(megatron)
    assert "rngtrk_streams" not in torch.load(f"{megatron.args.save}/model_optim_rng.pt", weights_only=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        megatron.loop.save_checkpoint(3, [], None, None, 0)  # once per format


def test_a_binding_made_while_installed_does_megatrons_alone_after_uninstall(megatron):
    m.install()
    late = types.SimpleNamespace(save_checkpoint=megatron.module.save_checkpoint)  # imported after install()
    m.uninstall()
    seed_and_draw(1)
    late.save_checkpoint(1, [], None, None, 0)
    assert "rngtrk_streams" not in torch.load(f"{megatron.args.save}/model_optim_rng.pt", weights_only=False)


def test_a_checkpoint_saved_without_install_loads_as_megatron_alone(megatron):
    saved_and_continued(megatron)
    m.install()
    megatron.args.tensor_model_parallel_size = 1
    seed_and_draw(0)
    megatron.loop.load_checkpoint([], None, None)
    assert all(offset == 0 for _, offset in positions().values())


def test_a_stream_the_checkpoint_lacks_raises_with_nothing_changed(megatron):
    m.install()
    saved_and_continued(megatron)
    megatron.args.tensor_model_parallel_size = 1
    seed_and_draw(1, tp_rank=1)  # model-parallel-rng of tp rank 1: a seed the checkpoint lacks
    before = positions()
    with pytest.raises(dcp.MissingStreamError, match=r"install\(on_missing='fresh'\)"):
        megatron.loop.load_checkpoint([], None, None)
    assert positions() == before


def test_on_missing_fresh_starts_the_new_stream_and_continues_the_others(megatron):
    m.install(on_missing="fresh")
    at_save, _ = saved_and_continued(megatron)
    megatron.args.tensor_model_parallel_size = 1
    seed_and_draw(1, tp_rank=1)
    with pytest.warns(dcp.FreshStreamWarning):
        megatron.loop.load_checkpoint([], None, None)
    now = positions()
    assert now["data-parallel-rng"] == at_save["data-parallel-rng"]
    assert now["model-parallel-rng"][1] == 0 and now["model-parallel-rng"][0] != at_save["model-parallel-rng"][0]


def test_a_bad_on_missing_is_refused_and_changes_nothing(megatron):
    m.install(on_missing="fresh")
    with pytest.raises(InvalidArgumentError, match="on_missing"):
        m.install(on_missing="sometimes")
    from rngtrk.torch import _megatron_saved_streams
    assert _megatron_saved_streams.on_missing() == "fresh"
    m.uninstall()
    assert _megatron_saved_streams.on_missing() == "raise"


def test_install_wraps_the_four_functions_and_uninstall_puts_them_back(megatron):
    names = ("save_checkpoint", "generate_state_dict", "_load_base_checkpoint", "load_checkpoint")
    m.install()
    m.install()  # a second call wraps nothing twice
    for name in names:
        ours = getattr(megatron.module, name)
        assert ours is not megatron.originals[name] and ours.__rngtrk_wrapped__ is megatron.originals[name]
    assert megatron.loop.save_checkpoint is megatron.module.save_checkpoint
    assert megatron.loop.load_checkpoint is megatron.module.load_checkpoint
    m.uninstall()
    for name in names:
        assert getattr(megatron.module, name) is megatron.originals[name]
    assert megatron.loop.save_checkpoint is megatron.originals["save_checkpoint"]
