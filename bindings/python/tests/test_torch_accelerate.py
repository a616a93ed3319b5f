# SPDX-License-Identifier: Apache-2.0
"""rngtrk.torch.accelerate.register(): RNGState(process=True) in Hugging
Face Accelerate's save_state / load_state, through its pre-hooks and
register_for_checkpointing.

The Accelerator here is written in the test: the methods register() uses,
with Accelerate's names, and a save_state / load_state of ours that call
them in Accelerate's order (16cb6eb, accelerator.py and checkpointing.py):
save pre-hooks with the output folder, this process's
random_states_{i}.pkl, then each registered object's state_dict into
custom_checkpoint_{i}.pkl; on load, pre-hooks with the folder, a count of
the custom checkpoints, the process's own pickle restored in a try/except
that only logs, then each object's load_state_dict.  Accelerate's own code
runs in tests/upstream/run_accelerate.py (make test-upstream)."""
import os
import pickle
import random

import pytest

os.environ["RNGTRK_DEBUG"] = "1"  # rngtrk.torch.dcp's debug mode: every table written is decoded again
torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
pytest.importorskip("rngtrk.torch.dcp")  # RNGState (torch 2.2 and later)
np = pytest.importorskip("numpy")
from process_draws import draws, seed  # noqa: E402
from rngtrk.errors import InvalidArgumentError  # noqa: E402
from rngtrk.torch import accelerate  # noqa: E402

pytestmark = pytest.mark.usefixtures("fresh_torch_trackers")


class Accelerator:
    """The parts of Accelerate's Accelerator that register() uses, and a
    save_state / load_state that call them in Accelerate's order (one
    process: process_index 0)."""

    process_index = 0

    def __init__(self):
        self.save_hooks, self.load_hooks, self.custom = {}, {}, []
        self.log = []

    def register_save_state_pre_hook(self, hook):
        self.save_hooks[len(self.save_hooks)] = hook
        return len(self.save_hooks) - 1

    def register_load_state_pre_hook(self, hook):
        self.load_hooks[len(self.load_hooks)] = hook
        return len(self.load_hooks) - 1

    def register_for_checkpointing(self, *objects):
        self.custom.extend(objects)

    def save_state(self, output_dir):
        os.makedirs(output_dir, exist_ok=True)
        for hook in self.save_hooks.values():
            hook([], [], output_dir)
        with open(os.path.join(output_dir, f"random_states_{self.process_index}.pkl"), "wb") as f:
            pickle.dump({"random_state": random.getstate(), "numpy_random_seed": np.random.get_state(),
                         "torch_manual_seed": torch.get_rng_state()}, f)
        for i, obj in enumerate(self.custom):
            torch.save(obj.state_dict(), os.path.join(output_dir, f"custom_checkpoint_{i}.pkl"))

    def load_state(self, input_dir):
        for hook in self.load_hooks.values():
            hook([], input_dir)
        found = [name for name in os.listdir(input_dir) if name.startswith("custom_checkpoint_")]
        if len(found) != len(self.custom):
            raise RuntimeError(f"{len(found)} custom checkpoints, {len(self.custom)} registered objects")
        try:
            with open(os.path.join(input_dir, f"random_states_{self.process_index}.pkl"), "rb") as f:
                states = pickle.load(f)
            random.setstate(states["random_state"])
            np.random.set_state(states["numpy_random_seed"])
            torch.set_rng_state(states["torch_manual_seed"])
        except Exception:  # noqa: BLE001 (Accelerate's: logged at INFO, the load goes on)
            self.log.append("Could not load random states")
        for i, obj in enumerate(self.custom):
            obj.load_state_dict(torch.load(os.path.join(input_dir, f"custom_checkpoint_{i}.pkl"), weights_only=False))


def saved(tmp_path, accelerator):
    seed(1000)
    draws()
    accelerator.save_state(str(tmp_path))
    return draws()


def test_a_resume_continues_every_generator(tmp_path):
    accelerator = Accelerator()
    state = accelerate.register(accelerator)
    assert accelerator.custom == [state] and len(state.handles) == 2
    expected = saved(tmp_path, accelerator)
    assert os.path.isfile(tmp_path / "rngtrk_dcp" / ".metadata")
    seed(5)
    accelerator.load_state(str(tmp_path))
    assert draws() == expected
    assert state.last.fresh_process == ()


def test_rngtrk_s_states_win_over_accelerate_s_pickle(tmp_path):
    accelerator = Accelerator()
    accelerate.register(accelerator)
    expected = saved(tmp_path, accelerator)
    seed(999)  # Accelerate's file now says something else
    with open(tmp_path / "random_states_0.pkl", "wb") as f:
        pickle.dump({"random_state": random.getstate(), "numpy_random_seed": np.random.get_state(),
                     "torch_manual_seed": torch.get_rng_state()}, f)
    seed(5)
    accelerator.load_state(str(tmp_path))
    assert draws() == expected


def test_without_register_a_missing_pickle_goes_unnoticed(tmp_path):
    """The baseline (Accelerate's own behaviour, our stand-in of it): a
    process without its file keeps its generators, and only a log line says so."""
    accelerator = Accelerator()
    saved(tmp_path, accelerator)
    os.remove(tmp_path / "random_states_0.pkl")
    seed(5)
    unchanged = draws()
    seed(5)
    accelerator.load_state(str(tmp_path))
    assert draws() == unchanged and accelerator.log == ["Could not load random states"]


def test_a_checkpoint_saved_without_register_is_refused_with_nothing_changed(tmp_path):
    saved(tmp_path, Accelerator())
    accelerator = Accelerator()
    accelerate.register(accelerator)
    seed(5)
    with pytest.raises(accelerate.NoRNGStateError, match="without rngtrk.torch.accelerate.register"):
        accelerator.load_state(str(tmp_path))
    unchanged = draws()
    seed(5)
    assert draws() == unchanged


def test_an_object_at_another_position_is_refused(tmp_path):
    state = accelerate.AccelerateRNGState()
    with pytest.raises(accelerate.NoRNGStateError, match="same position"):
        state.load_state_dict({"step": 3})
    with pytest.raises(accelerate.NoRNGStateError, match="pre-hook"):
        state.load_state_dict(state.state_dict())


def test_save_on_each_node_is_refused_at_register():
    accelerator = Accelerator()
    accelerator.project_configuration = type("ProjectConfiguration", (), {"save_on_each_node": True})()
    with pytest.raises(InvalidArgumentError, match="save_on_each_node"):
        accelerate.register(accelerator)
    assert accelerator.custom == []


@pytest.mark.parametrize("options", [{"subdir": "/abs"}, {"subdir": ""}, {"subdir": "../up"},
                                     {"on_missing": "sometimes"}])
def test_bad_options_are_refused_at_register(options):
    accelerator = Accelerator()
    with pytest.raises(InvalidArgumentError):
        accelerate.register(accelerator, **options)
    assert accelerator.custom == [] and not accelerator.save_hooks
