# SPDX-License-Identifier: Apache-2.0
"""torchtitan's checkpoints take rngtrk in one line: "rng":
RNGState(process=True) in the states its trainer gives CheckpointManager
(docs/resuming.md).

The CheckpointManager here is written in the test: what torchtitan's
(b5bcd76, torchtitan/components/checkpointer/dcp.py) does with `states`,
which matters to the line: it keeps the caller's dict, adds the model to
it, hands it to dcp.save, and loads it with DCP's default planner, leaving
out the keys of exclude_from_loading.  torchtitan's own manager runs in
tests/upstream/run_torchtitan.py (make test-upstream)."""
import os

import pytest

os.environ["RNGTRK_DEBUG"] = "1"  # rngtrk.torch.dcp's debug mode: every table written is decoded again
torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
rdcp = pytest.importorskip("rngtrk.torch.dcp")  # RNGState (torch 2.2 and later)
np = pytest.importorskip("numpy")
from process_draws import draws, seed  # noqa: E402
import torch.distributed.checkpoint as dcp  # noqa: E402

pytestmark = [pytest.mark.usefixtures("fresh_torch_trackers"),
              pytest.mark.filterwarnings("ignore:torch.distributed is disabled")]


class CheckpointManager:
    def __init__(self, folder, model, states, exclude_from_loading=()):
        self.folder, self.states, self.exclude = folder, states, set(exclude_from_loading)
        self.states["model"] = model

    def save(self, step):
        dcp.save(self.states, checkpoint_id=os.path.join(self.folder, f"step-{step}"))

    def load(self, step):
        dcp.load({k: v for k, v in self.states.items() if k not in self.exclude},
                 checkpoint_id=os.path.join(self.folder, f"step-{step}"))


def trained_and_saved(folder, with_line):
    seed(1000)
    draws()
    states = {"train_state": {"step": torch.tensor(2)}}
    if with_line:
        states["rng"] = rdcp.RNGState(process=True)
    CheckpointManager(folder, torch.nn.Linear(2, 2), states).save(2)
    return draws()


def resumed(folder, with_line, **options):
    states = {"train_state": {"step": torch.tensor(0)}}
    if with_line:
        states["rng"] = rdcp.RNGState(process=True)
    manager = CheckpointManager(folder, torch.nn.Linear(2, 2), states, **options)
    seed(0)
    manager.load(2)
    return draws()


def test_with_the_line_every_generator_continues(tmp_path):
    expected = trained_and_saved(str(tmp_path), with_line=True)
    assert resumed(str(tmp_path), with_line=True) == expected


def test_without_it_every_generator_restarts(tmp_path):
    """The baseline: torchtitan saves no RNG."""
    expected = trained_and_saved(str(tmp_path), with_line=False)
    seed(0)
    reseeded = draws()
    got = resumed(str(tmp_path), with_line=False)
    assert got == reseeded and got != expected


def test_a_checkpoint_saved_without_it_is_refused_unless_excluded(tmp_path):
    trained_and_saved(str(tmp_path), with_line=False)
    with pytest.raises(BaseException, match="rng") as refused:  # DCP's CheckpointException is a BaseException
        resumed(str(tmp_path), with_line=True)
    assert type(refused.value).__name__ == "CheckpointException"
    seed(0)
    reseeded = draws()
    assert resumed(str(tmp_path), with_line=True, exclude_from_loading=["rng"]) == reseeded
