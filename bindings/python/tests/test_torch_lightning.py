# SPDX-License-Identifier: Apache-2.0
"""Lightning Fabric's checkpoints take rngtrk in one line: "rng":
RNGState(process=True) in the state given to fabric.save and fabric.load
(docs/resuming.md).

The save and load here are written in the test: what Fabric's
(pytorch-lightning 7f0c343, lightning/fabric/strategies/strategy.py) does
with the state, which matters to the line: on every process, a value with
state_dict() and load_state_dict() is replaced by its state_dict(); rank 0
writes the dict with torch.save; every process reads it back with
torch.load in its weights_only mode (torch's default since 2.6, which
refuses what is not plain data) and hands each such value its part;
strict, it refuses a requested key the file lacks.  Fabric's own save and
load run in tests/upstream/run_lightning.py (make test-upstream)."""
import os

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
    """The baseline: Fabric saves no RNG."""
    path = str(tmp_path / "last.ckpt")
    expected = trained_and_saved(path, with_line=False)
    seed(0)
    reseeded = draws()
    got = resumed(path, with_line=False)
    assert got == reseeded and got != expected


def test_a_checkpoint_saved_without_it_is_refused_unless_not_strict(tmp_path):
    path = str(tmp_path / "last.ckpt")
    trained_and_saved(path, with_line=False)
    with pytest.raises(KeyError, match="'rng'"):
        resumed(path, with_line=True)
    seed(0)
    reseeded = draws()
    assert resumed(path, with_line=True, strict=False) == reseeded
