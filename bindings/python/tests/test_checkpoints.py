# SPDX-License-Identifier: Apache-2.0
"""Golden and invalid checkpoints from tests/vectors, and recipes whose bytes
must equal both the golden file and what C writes for the same calls."""
import glob
import os
import subprocess

import pytest

import rngtrk

from conftest import build_program, read_bytes, snapshot, vector_path

GOLDEN = sorted(os.path.basename(p)[:-5] for p in glob.glob(vector_path("checkpoints", "*.rtck")))
STATUS_CLASSES = {"RNGTRK_E_CORRUPT": rngtrk.CorruptCheckpointError,
                  "RNGTRK_E_UNSUPPORTED_VERSION": rngtrk.UnsupportedVersionError}


def invalid_files():
    with open(vector_path("checkpoints", "invalid", "expected.txt")) as f:
        return [tuple(line.split()) for line in f if line.strip() and not line.startswith("#")]


def recipes():
    """{name: [call lines]} from recipes.txt."""
    found, current = {}, None
    with open(vector_path("checkpoints", "recipes.txt")) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#") or not line:
                continue
            if current is None:
                assert line.startswith("recipe "), line
                current = found.setdefault(line[7:], [])
            elif line == "end":
                current = None
            else:
                current.append(line)
    return found


def replay(tracker, calls):
    """The recipe's calls through the Python API."""
    for line in calls:
        op, *args = line.split()
        if op == "manual_seed":
            tracker.manual_seed(int(args[0]))
        elif op == "add":
            tracker.add(args[0], int(args[1]))
        elif op == "fork":
            tracker.fork(args[0]).__enter__()  # restore comes as its own line
        elif op == "restore":
            rngtrk.tracker._Fork(tracker, args[0]).__exit__(None, None, None)
        elif op == "advance":
            tracker.advance(int(args[0]))
        elif op == "set_state":
            tracker.set_state(args[0], rngtrk.PhiloxState(int(args[1]), int(args[2])))
        elif op == "set_default":
            tracker.set_default(rngtrk.PhiloxState(int(args[0]), int(args[1])))
        elif op == "reset":
            tracker.reset()
        elif op == "seed_rank":  # seed_rank POLICY SEED [FIELD=N]... [FLAG]..., flags by the library's names
            coordinates = {k: int(v) for k, v in (a.split("=") for a in args[2:] if "=" in a)}
            flags = {a.replace("-", "_"): True for a in args[2:] if "=" not in a}
            tracker.seed_rank(args[0], int(args[1]), **coordinates, **flags)
        elif op == "set_states":
            tracker.set_states({args[i]: rngtrk.PhiloxState(int(args[i + 1]), int(args[i + 2]))
                                for i in range(0, len(args), 3)})
        else:
            raise AssertionError("unknown recipe call " + line)


def test_there_are_golden_files():
    assert {"empty", "megatron", "edge_names", "resumed_job", "megatron_rank_v2", "megatron_remat_v3",
            "derived_remat_v3"} <= set(GOLDEN)


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_files_load_save_back_and_decode_to_their_json(tracker, name):
    data = read_bytes("checkpoints", name + ".rtck")
    tracker.load(data)
    assert tracker.save() == data
    with open(vector_path("checkpoints", name + ".json"), encoding="utf-8") as f:
        assert rngtrk.checkpoint_to_json(data) + "\n" == f.read()


@pytest.mark.parametrize("file, status", invalid_files())
def test_invalid_files_raise_their_error_and_change_nothing(tracker, file, status):
    tracker.manual_seed(5)
    tracker.add("keep", 9)
    before = snapshot(tracker)
    with pytest.raises(STATUS_CLASSES[status]) as raised:
        tracker.load(read_bytes("checkpoints", "invalid", file))
    assert raised.value.code == getattr(rngtrk._lib, status)
    assert raised.value.message
    assert snapshot(tracker) == before


@pytest.mark.parametrize("name", sorted(recipes()))
def test_recipes_save_the_same_bytes_as_c_and_the_golden_file(tracker, tmp_path, name):
    replay(tracker, recipes()[name])
    assert tracker.fork_depth == 0
    written_by_python = tracker.save()
    c_file = tmp_path / "c.rtck"
    subprocess.run([build_program("run_recipe"), vector_path("checkpoints", "recipes.txt"), name,
                    str(c_file)], check=True)
    assert written_by_python == c_file.read_bytes()
    assert written_by_python == read_bytes("checkpoints", name + ".rtck")


def test_every_truncation_and_bit_flip_is_refused_without_change(tracker):
    data = read_bytes("checkpoints", "megatron.rtck")
    tracker.add("keep", 9)
    before = snapshot(tracker)
    for cut in range(len(data)):
        with pytest.raises(rngtrk.CorruptCheckpointError):
            tracker.load(data[:cut])
    for bit in range(len(data) * 8):
        damaged = bytearray(data)
        damaged[bit // 8] ^= 1 << (bit % 8)
        with pytest.raises((rngtrk.CorruptCheckpointError, rngtrk.UnsupportedVersionError)):
            tracker.load(damaged)
    assert snapshot(tracker) == before


def test_describe_checkpoint_gives_the_fields():
    described = rngtrk.describe_checkpoint(read_bytes("checkpoints", "megatron.rtck"))
    assert list(described) == ["format_version", "default", "states"]
    assert described["default"] == {"seed": 1234, "offset": 8}
    assert [s["name"] for s in described["states"]] == ["data-parallel-rng", "model-parallel-rng",
                                                        "expert-parallel-rng"]


def test_checkpoint_files_round_trip_and_report_io_errors(tracker, tmp_path):
    tracker.add("a", 1)
    tracker.advance(8)
    path = tmp_path / "t.rtck"
    tracker.save_file(path)
    assert not (tmp_path / "t.rtck.rngtrk-tmp").exists()
    with rngtrk.Tracker() as other:
        other.load_file(str(path))
        assert other.save() == tracker.save()
        before = other.save()
        with pytest.raises(rngtrk.RngtrkIOError):
            other.load_file(tmp_path / "missing.rtck")
        with pytest.raises(OSError):
            other.load_file(tmp_path / "missing.rtck")
        (tmp_path / "bad.rtck").write_bytes(b"not a checkpoint")
        with pytest.raises(rngtrk.CorruptCheckpointError):
            other.load_file(tmp_path / "bad.rtck")
        assert other.save() == before
    with pytest.raises(rngtrk.RngtrkIOError):
        tracker.save_file(tmp_path / "no" / "such" / "folder.rtck")
    with pytest.raises(rngtrk.InvalidArgumentError):
        tracker.save_file("a\0b")
