# SPDX-License-Identifier: Apache-2.0
"""Lightning Fabric's checkpoints take rngtrk in one line: "rng":
RNGState(process=True) in the state given to fabric.save and fabric.load;
the Trainer's in one callback: rngtrk.torch.lightning.RNGStateCallback
(docs/resuming.md).

The save and load here are written in the test: what Fabric's
(pytorch-lightning 7f0c343, lightning/fabric/strategies/strategy.py) does
with the state, which matters to the line: on every process, a value with
state_dict() and load_state_dict() is replaced by its state_dict(); rank 0
writes the dict with torch.save; every process reads it back with
torch.load in its weights_only mode (torch's default since 2.6, which
refuses what is not plain data) and hands each such value its part;
strict, it refuses a requested key the file lacks.  The Trainer's
checkpoint and restore are written here too, with a stand-in of Lightning's
Callback (its hooks and state_key), in the order of Lightning's
(lightning/pytorch/trainer/trainer.py, call.py): a checkpoint holds every
callback's non-empty state_dict() under checkpoint["callbacks"][state_key]
(no "callbacks" with weights_only); a run from a checkpoint calls every
callback's setup(stage); then, where the checkpoint holds "callbacks", its
on_load_checkpoint with the whole checkpoint and its load_state_dict with a
copy of its state, where it has one; then, when fitting, on_train_start.
Fabric's and the Trainer's own code run in tests/upstream/run_lightning.py
(make test-upstream)."""
import copy
import importlib
import os
import sys
import types
import warnings

import pytest

os.environ["RNGTRK_DEBUG"] = "1"  # rngtrk.torch.dcp's debug mode: every table written is decoded again
torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
rdcp = pytest.importorskip("rngtrk.torch.dcp")  # RNGState (torch 2.2 and later)
np = pytest.importorskip("numpy")
from process_draws import draws, seed  # noqa: E402

pytestmark = [pytest.mark.usefixtures("fresh_torch_trackers"),
              pytest.mark.filterwarnings("ignore:torch.distributed is disabled")]


def stateful(value):
    return callable(getattr(value, "state_dict", None)) and callable(getattr(value, "load_state_dict", None))


def fabric_save(path, state):
    torch.save({k: v.state_dict() if stateful(v) else v for k, v in state.items()}, path)


def fabric_load(path, state, strict=True):
    checkpoint = torch.load(path, weights_only=True)
    lacking = set(state) - set(checkpoint)
    if strict and lacking:
        raise KeyError(f"The requested state contains a key {sorted(lacking)[0]!r} that does not exist in the "
                       "loaded checkpoint")
    for name, value in state.items():
        if name in checkpoint:
            if stateful(value):
                value.load_state_dict(checkpoint[name])
            else:
                state[name] = checkpoint[name]


def trained_and_saved(path, with_line):
    seed(1000)
    draws()
    state = {"model": torch.nn.Linear(2, 2), "step": 2}
    if with_line:
        state["rng"] = rdcp.RNGState(process=True)
    fabric_save(path, state)
    return draws()


def resumed(path, with_line, strict=True):
    state = {"model": torch.nn.Linear(2, 2), "step": 0}
    if with_line:
        state["rng"] = rdcp.RNGState(process=True)
    seed(0)
    fabric_load(path, state, strict=strict)
    assert state["step"] == 2
    return draws()


def test_with_the_line_every_generator_continues(tmp_path):
    path = str(tmp_path / "last.ckpt")
    expected = trained_and_saved(path, with_line=True)
    assert resumed(path, with_line=True) == expected


def test_without_it_every_generator_restarts(tmp_path):
    """The baseline (of the stand-in): Fabric saves no RNG."""
    path = str(tmp_path / "last.ckpt")
    expected = trained_and_saved(path, with_line=False)
    seed(0)
    reseeded = draws()
    got = resumed(path, with_line=False)
    assert got == reseeded and got != expected


def test_a_checkpoint_saved_without_it_is_refused_unless_not_strict(tmp_path):
    """What Fabric does (of the stand-in): rngtrk is not called either way."""
    path = str(tmp_path / "last.ckpt")
    trained_and_saved(path, with_line=False)
    with pytest.raises(KeyError, match="'rng'"):
        resumed(path, with_line=True)
    seed(0)
    reseeded = draws()
    assert resumed(path, with_line=True, strict=False) == reseeded


# -- the Trainer: RNGStateCallback ---------------------------------------------------


class Callback:
    """The stand-in of Lightning's Callback: what the Trainer reads of one."""

    @property
    def state_key(self):
        return type(self).__qualname__

    def state_dict(self):
        return {}

    def load_state_dict(self, state_dict):
        pass

    def on_load_checkpoint(self, trainer, pl_module, checkpoint):
        pass


@pytest.fixture
def lightning(monkeypatch):
    """rngtrk.torch.lightning imported over the stand-in Lightning, and
    forgotten after the test."""
    import rngtrk.torch
    for name in ("lightning", "lightning.pytorch", "lightning.pytorch.callbacks"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    sys.modules["lightning.pytorch.callbacks"].Callback = Callback
    monkeypatch.delitem(sys.modules, "rngtrk.torch.lightning", raising=False)
    monkeypatch.delattr(rngtrk.torch, "lightning", raising=False)
    yield importlib.import_module("rngtrk.torch.lightning")
    sys.modules.pop("rngtrk.torch.lightning", None)
    vars(rngtrk.torch).pop("lightning", None)


def trainer_save(path, callbacks, weights_only=False):
    checkpoint = {"state_dict": {}, "global_step": 8}
    if not weights_only:
        checkpoint["callbacks"] = {cb.state_key: sd for cb in callbacks if (sd := cb.state_dict())}
    torch.save(checkpoint, path)


def trainer_run(path, callbacks, stage="fit"):
    """A fit (or validate, test, predict) from the checkpoint at `path`, up
    to the first step."""
    trainer = types.SimpleNamespace(ckpt_path=path)
    for cb in callbacks:
        cb.setup(trainer, None, stage)
    checkpoint = torch.load(path, weights_only=True)
    states = checkpoint.get("callbacks")
    if states is not None:
        for cb in callbacks:
            cb.on_load_checkpoint(trainer, None, checkpoint)
        for cb in callbacks:
            state = states.get(cb.state_key)
            if state:
                cb.load_state_dict(copy.deepcopy(state))
    if stage == "fit":
        for cb in callbacks:
            cb.on_train_start(trainer, None)


def fitted_and_saved(path, callbacks, **options):
    seed(1000)
    draws()
    trainer_save(path, callbacks, **options)
    return draws()


def test_the_callback_resumes_every_generator(tmp_path, lightning):
    path = str(tmp_path / "epoch=1.ckpt")
    expected = fitted_and_saved(path, [lightning.RNGStateCallback()])
    callback = lightning.RNGStateCallback()
    seed(0)
    trainer_run(path, [callback])
    assert draws() == expected
    assert callback.last is not None and callback.last.fresh_process == ()
    assert isinstance(callback, Callback)


@pytest.mark.parametrize("stage", ["validate", "test", "predict"])
def test_it_restores_on_fit_alone(tmp_path, lightning, stage):
    path = str(tmp_path / "epoch=1.ckpt")
    fitted_and_saved(path, [lightning.RNGStateCallback()])
    seed(0)
    reseeded = draws()
    callback = lightning.RNGStateCallback()
    seed(0)
    trainer_run(path, [callback], stage)
    assert draws() == reseeded and callback.last is None
    expected = fitted_and_saved(path, [lightning.RNGStateCallback()])
    seed(0)
    trainer_run(path, [callback])  # the same callback, fitting next
    assert draws() == expected


def test_the_trainer_alone_restarts_every_generator(tmp_path, lightning):
    """The baseline (of the stand-in): the Trainer saves no RNG."""
    path = str(tmp_path / "epoch=1.ckpt")
    expected = fitted_and_saved(path, [])
    seed(0)
    reseeded = draws()
    seed(0)
    trainer_run(path, [])
    got = draws()
    assert got == reseeded and got != expected


@pytest.mark.parametrize("weights_only", [False, True], ids=["saved-without-it", "no-callback-states"])
def test_a_fit_from_a_checkpoint_without_its_state_is_refused_or_warned(tmp_path, lightning, weights_only):
    path = str(tmp_path / "epoch=1.ckpt")
    fitted_and_saved(path, [] if not weights_only else [lightning.RNGStateCallback()], weights_only=weights_only)
    seed(0)
    reseeded = draws()
    seed(0)
    with pytest.raises(lightning.NoRNGStateError, match="holds no state of RNGStateCallback.*no generator was changed"):
        trainer_run(path, [lightning.RNGStateCallback()])
    assert draws() == reseeded
    assert issubclass(lightning.NoRNGStateError, RuntimeError)
    seed(0)
    with pytest.warns(lightning.NoRNGStateWarning, match="left as they are"):
        trainer_run(path, [lightning.RNGStateCallback(on_absent="warn")])
    assert draws() == reseeded
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        trainer_run(path, [lightning.RNGStateCallback()], "validate")  # nothing to restore there: no word


def test_bad_options_are_refused_when_the_callback_is_made(lightning):
    from rngtrk.errors import InvalidArgumentError
    with pytest.raises(InvalidArgumentError, match="on_absent"):
        lightning.RNGStateCallback(on_absent="ignore")
    with pytest.raises(InvalidArgumentError, match="on_missing"):
        lightning.RNGStateCallback(on_missing="zero")
    with pytest.raises(TypeError, match="key"):
        lightning.RNGStateCallback(key=3)


def test_without_lightning_the_import_says_what_it_needs(monkeypatch):
    for name in ("lightning.pytorch.callbacks", "pytorch_lightning.callbacks"):
        monkeypatch.setitem(sys.modules, name, None)  # import of it fails
    monkeypatch.delitem(sys.modules, "rngtrk.torch.lightning", raising=False)
    try:
        with pytest.raises(ImportError, match="needs Lightning's Trainer") as refused:
            importlib.import_module("rngtrk.torch.lightning")
    finally:
        sys.modules.pop("rngtrk.torch.lightning", None)
    from rngtrk.errors import UnavailableError
    assert isinstance(refused.value, UnavailableError)
