# SPDX-License-Identifier: Apache-2.0
"""RNGState(process=True): the process's own generators (Python's random,
NumPy's, torch's CPU generator, CUDA devices') in a DCP checkpoint, keyed by
rank or by the user's key, resumed on the same and on other layouts
(docs/pytorch.md, "The whole process"; the bytes: docs/checkpoint-format.md,
"The DCP process table").

Single-process tests go through DCP's own save and load; the multi-rank
ones start process_job.py on 2, 4 and 8 gloo ranks (as test_torch_dcp.py
starts dcp_job.py) and judge what each rank recorded.  DCP needs torch >=
2.2: on Debian 12's torch 1.13 only the table's bytes are tested.
"""
import hashlib
import os
import random
import struct
import sys
import zlib

import pytest

os.environ["RNGTRK_DEBUG"] = "1"
torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
np = pytest.importorskip("numpy", reason="NumPy is not installed here (tools/install-deps.sh)")
import rngtrk  # noqa: E402
import rngtrk.torch  # noqa: E402
from rngtrk.torch import _process_generators as generators  # noqa: E402
from rngtrk.torch import _process_table as table_format  # noqa: E402

try:
    import rngtrk.torch.dcp as rdcp
except ImportError:  # DCPUnavailableError on a torch without DCP (test_torch_dcp.py checks it)
    rdcp = None

from rank_jobs import dcp_jobs, ok, raised  # noqa: E402

needs_dcp = pytest.mark.skipif(rdcp is None, reason=f"this torch ({torch.__version__}) has no "
                                                    "torch.distributed.checkpoint with the Stateful protocol "
                                                    "(torch >= 2.2)")
pytestmark = pytest.mark.filterwarnings("ignore:torch.distributed is")

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 1234

if rdcp is not None:
    import torch.distributed.checkpoint as dcp


def seeded(m, tp=0):
    m.model_parallel_cuda_manual_seed(SEED, tp_rank=tp, ep_rank=0, etp_rank=0, force_reset_rng=True)
    return m.get_cuda_rng_tracker()


def seed_process(value):
    random.seed(value)
    np.random.seed(value)
    torch.manual_seed(value)


def process_draws():
    return (random.random(), random.gauss(0, 1), float(np.random.rand()), float(np.random.randn()),
            torch.rand(4).tolist(), torch.randn(2).tolist())


def process_states():
    return {generators.name(*g): generators.read(*g) for g in generators.present()}


# -- single process ----------------------------------------------------------------------

@needs_dcp
def test_every_process_generator_continues_exactly(fresh_torch_trackers, tmp_path):
    m = fresh_torch_trackers
    tracker = seeded(m)
    seed_process(7)
    process_draws()
    random.gauss(0, 1)  # leaves Python's gauss_next cached: saved too
    dcp.save({"rng": rdcp.RNGState(process=True)}, checkpoint_id=str(tmp_path))
    saved, saved_tracker = process_states(), tracker.state_dict()
    expected = [process_draws() for _ in range(3)]
    seed_process(0)
    tracker = seeded(m)
    state = rdcp.RNGState(process=True)
    dcp.load({"rng": state}, checkpoint_id=str(tmp_path))
    assert process_states() == saved and tracker.state_dict() == saved_tracker
    assert state.fresh_process == () and state.fresh == ()
    assert [process_draws() for _ in range(3)] == expected


@needs_dcp
def test_a_process_checkpoint_loads_without_process_and_leaves_the_generators(fresh_torch_trackers, tmp_path):
    tracker = seeded(fresh_torch_trackers)
    dcp.save({"rng": rdcp.RNGState(process=True)}, checkpoint_id=str(tmp_path))
    saved_tracker = tracker.state_dict()
    with tracker.fork():
        rngtrk.torch.rand(5)
    seed_process(5)
    before = process_states()
    dcp.load({"rng": rdcp.RNGState()}, checkpoint_id=str(tmp_path))
    assert tracker.state_dict() == saved_tracker and process_states() == before


@needs_dcp
def test_torch_cpu_generator_is_torchs_own_bytes(fresh_torch_trackers, tmp_path):
    """rngtrk.torch extends torch.get_rng_state(); the process part holds
    torch's own CPU state, which torch.Generator.set_state takes."""
    seeded(fresh_torch_trackers)
    torch.manual_seed(99)
    saved = rdcp.RNGState(process=True).state_dict()[rdcp.PROCESS_KEY]
    (entry,) = table_format.decode(saved).entries
    cpu = dict(((k, d), s) for k, d, s in entry.generators)[(generators.KIND_TORCH_CPU, 0)]
    g = torch.Generator()
    g.set_state(torch.frombuffer(bytearray(cpu), dtype=torch.uint8))
    assert torch.equal(torch.rand(5, generator=g), torch.rand(5, generator=torch.Generator().manual_seed(99)))


@needs_dcp
def test_a_checkpoint_without_the_process_part_changes_nothing(fresh_torch_trackers, tmp_path):
    from torch.distributed.checkpoint.default_planner import DefaultLoadPlanner
    tracker = seeded(fresh_torch_trackers)
    dcp.save({"rng": rdcp.RNGState()}, checkpoint_id=str(tmp_path))
    seed_process(3)
    before, before_tracker = process_states(), tracker.state_dict()
    with pytest.raises(BaseException, match="rngtrk_process"):  # DCP's CheckpointException names the key
        dcp.load({"rng": rdcp.RNGState(process=True)}, checkpoint_id=str(tmp_path))
    with pytest.raises(rdcp.ProcessStateError, match="holds no process part.*process=False"):
        dcp.load({"rng": rdcp.RNGState(process=True)}, checkpoint_id=str(tmp_path),
                 planner=DefaultLoadPlanner(allow_partial_load=True))
    assert process_states() == before and tracker.state_dict() == before_tracker


@needs_dcp
def test_numpy_saved_and_absent_at_load_is_named(fresh_torch_trackers, tmp_path, monkeypatch):
    tracker = seeded(fresh_torch_trackers)
    dcp.save({"rng": rdcp.RNGState(process=True)}, checkpoint_id=str(tmp_path))
    seed_process(3)
    before, before_tracker = process_states(), tracker.state_dict()
    monkeypatch.setitem(sys.modules, "numpy", None)  # `import numpy` fails from here on
    for on_missing in ("raise", "fresh"):
        with pytest.raises(rdcp.ProcessStateError, match="holds numpy for key 0.*NumPy does not import here"):
            dcp.load({"rng": rdcp.RNGState(process=True, on_missing=on_missing)}, checkpoint_id=str(tmp_path))
    monkeypatch.undo()
    assert process_states() == before and tracker.state_dict() == before_tracker


@needs_dcp
def test_a_checkpoint_cut_short_changes_nothing(fresh_torch_trackers, tmp_path):
    """A kill in the middle of a save leaves a data file cut short (or no
    metadata): DCP's refusal passes through, and nothing changes."""
    tracker = seeded(fresh_torch_trackers)
    dcp.save({"rng": rdcp.RNGState(process=True)}, checkpoint_id=str(tmp_path))
    seed_process(3)
    before, before_tracker = process_states(), tracker.state_dict()
    (data,) = [p for p in tmp_path.iterdir() if p.suffix == ".distcp"]
    data.write_bytes(data.read_bytes()[:len(data.read_bytes()) // 2])
    with pytest.raises(BaseException):
        dcp.load({"rng": rdcp.RNGState(process=True)}, checkpoint_id=str(tmp_path))
    (tmp_path / ".metadata").unlink()
    with pytest.raises(BaseException):
        dcp.load({"rng": rdcp.RNGState(process=True)}, checkpoint_id=str(tmp_path))
    assert process_states() == before and tracker.state_dict() == before_tracker


@needs_dcp
def test_a_state_the_generator_refuses_changes_nothing(fresh_torch_trackers):
    """A table with a well-formed, CRC-valid torch CPU state that torch's
    generator refuses (all zeros): refused before any generator or the
    tracker is written."""
    tracker = seeded(fresh_torch_trackers)
    state = rdcp.RNGState(process=True)
    saved = state.state_dict()
    table = table_format.decode(saved[rdcp.PROCESS_KEY])
    (entry,) = table.entries
    bad = tuple((k, d, bytes(len(s)) if k == generators.KIND_TORCH_CPU else s) for k, d, s in entry.generators)
    damaged = table_format.encode(table_format.Table(1, (entry._replace(generators=bad),)))
    with tracker.fork():
        rngtrk.torch.rand(3)
    seed_process(3)
    before, before_tracker = process_states(), tracker.state_dict()
    with pytest.raises(rngtrk.CorruptCheckpointError, match="torch-cpu refuses the state"):
        state.load_state_dict({rdcp.STREAMS_KEY: saved[rdcp.STREAMS_KEY], rdcp.PROCESS_KEY: damaged})
    with pytest.raises(rngtrk.InvalidArgumentError, match="is None"):
        state.load_state_dict({rdcp.STREAMS_KEY: saved[rdcp.STREAMS_KEY], rdcp.PROCESS_KEY: None})
    assert process_states() == before and tracker.state_dict() == before_tracker


@needs_dcp
def test_bad_keys_and_arguments_are_refused(fresh_torch_trackers):
    seeded(fresh_torch_trackers)
    with pytest.raises(TypeError, match="process is a bool"):
        rdcp.RNGState(process=1)
    with pytest.raises(TypeError, match="function of no arguments"):
        rdcp.RNGState(process=True, key=3)
    with pytest.raises(ValueError, match="with process=True"):
        rdcp.RNGState(key=lambda: 3)
    for bad, error in ((-1, ValueError), (2 ** 64, ValueError), ("", ValueError), ("a\0b", ValueError),
                       (1.5, TypeError), (True, TypeError), ("x" * 1025, ValueError)):
        with pytest.raises(error, match="key"):
            rdcp.RNGState(process=True, key=lambda bad=bad: bad).state_dict()


@needs_dcp
@pytest.mark.parametrize("key", [0, 2 ** 64 - 1, "dp 3 / pp 1", "\u00e9t\u00e9"])
def test_any_key_saves_and_loads(fresh_torch_trackers, tmp_path, key):
    seeded(fresh_torch_trackers)
    seed_process(11)
    dcp.save({"rng": rdcp.RNGState(process=True, key=lambda: key)}, checkpoint_id=str(tmp_path))
    expected = process_draws()
    seed_process(0)
    dcp.load({"rng": rdcp.RNGState(process=True, key=lambda: key)}, checkpoint_id=str(tmp_path))
    assert process_draws() == expected


# -- the table's bytes, against an encoder written from docs/checkpoint-format.md --

def doc_encode(world_size, entries):
    """entries: [(key, rank, holders, [(kind, device, state)])]."""
    body = b""
    for key, rank, holders, states in entries:
        raw = struct.pack("<Q", key) if isinstance(key, int) else key.encode()
        body += struct.pack("<BH", 0 if isinstance(key, int) else 1, len(raw)) + raw
        body += struct.pack("<III", rank, holders, len(states))
        for kind, device, state in states:
            body += struct.pack("<BII", kind, device, len(state)) + state
    data = b"RNGTRKPS" + struct.pack("<IQII", 1, 28 + len(body) + 4, world_size, len(entries)) + body
    return data + struct.pack("<I", zlib.crc32(data))


def a_python_state(seed):
    return generators.derived(b"x", str(seed).encode(), generators.KIND_PYTHON, 0)


def test_table_bytes_are_the_documented_layout():
    states = [(generators.KIND_PYTHON, 0, a_python_state(1)), (generators.KIND_CUDA, 0, struct.pack("<QQ", 5, 8))]
    table = table_format.Table(4, (table_format.Entry(1, 1, 2, tuple(states)),
                                   table_format.Entry("dp-0", 0, 1, tuple(states[:1]))))
    data = table_format.encode(table)
    assert data == doc_encode(4, [(1, 1, 2, states), ("dp-0", 0, 1, states[:1])])
    assert table_format.decode(data) == table


@pytest.mark.parametrize("entries, problem", [
    ([("b", 0, 1, []), ("a", 1, 1, [])], "out of order"),
    ([(1, 0, 1, []), (1, 1, 1, [])], "out of order or repeat"),
    ([(1, 4, 1, [])], "holders"),
    ([(1, 0, 5, [])], "holders"),
    ([(1, 0, 1, [(generators.KIND_CUDA, 0, b"\0" * 15)])], "16 bytes"),
    ([(1, 0, 1, [(generators.KIND_CUDA, 0, struct.pack("<QQ", 1, 6))])], "multiple of 4"),
    ([(1, 0, 1, [(9, 0, b"")])], "unknown generator kind 9"),
    ([(1, 0, 1, [(generators.KIND_PYTHON, 2, a_python_state(1))])], "device 0"),
    ([(1, 0, 1, [(generators.KIND_CUDA, 0, b"\0" * 16), (generators.KIND_PYTHON, 0, a_python_state(1))])],
     "out of order"),
    ([(1, 0, 1, [(generators.KIND_CUDA, 1, b"\0" * 16)])], "device 0"),
])
def test_a_table_breaking_a_rule_is_refused(entries, problem):
    with pytest.raises(rngtrk.CorruptCheckpointError, match=problem):
        table_format.decode(doc_encode(4, entries))


def test_every_truncation_and_bit_flip_of_a_table_is_refused():
    data = doc_encode(2, [(0, 0, 1, [(generators.KIND_CUDA, 0, struct.pack("<QQ", 5, 8))])])
    for cut in range(len(data)):
        with pytest.raises((rngtrk.CorruptCheckpointError, rngtrk.UnsupportedVersionError)):
            table_format.decode(data[:cut])
    for bit in range(len(data) * 8):
        flipped = bytearray(data)
        flipped[bit // 8] ^= 1 << bit % 8
        with pytest.raises((rngtrk.CorruptCheckpointError, rngtrk.UnsupportedVersionError)):
            table_format.decode(bytes(flipped))


def test_derived_states_are_the_documented_seeding():
    origin, key = hashlib.sha256(b"table").digest(), table_format.key_bytes(5)
    digest = hashlib.sha256(origin + b"\0" + key + b"\0" + b"python").digest()
    expected = random.Random(int.from_bytes(digest, "little"))
    mine = random.Random()
    version, *words, has_gauss, gauss = struct.unpack("<I625IBd",
                                                      generators.derived(origin, key, generators.KIND_PYTHON, 0))
    mine.setstate((version, tuple(words), gauss if has_gauss else None))
    assert mine.random() == expected.random()
    digest = hashlib.sha256(origin + b"\0" + key + b"\0" + b"cuda").digest()
    assert generators.derived(origin, key, generators.KIND_CUDA, 0) == digest[:8] + bytes(8)
    digest = hashlib.sha256(origin + b"\0" + key + b"\0" + b"numpy").digest()
    words = struct.unpack("<624IIId", generators.derived(origin, key, generators.KIND_NUMPY, 0))
    state = np.random.RandomState(np.frombuffer(digest, dtype="<u4")).get_state()
    assert list(words[:624]) == state[1].tolist() and words[624] == state[2]
    assert generators.derived(origin, table_format.key_bytes(6), generators.KIND_NUMPY, 0) != \
        generators.derived(origin, key, generators.KIND_NUMPY, 0)


# -- several ranks -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    return dcp_jobs(tmp_path_factory, "process", os.path.join(HERE, "process_job.py"), rdcp)


def draws_equal(a, b):
    assert len(a) == len(b)
    return all(torch.equal(x[k], y[k]) for x, y in zip(a, b) for k in ("python", "numpy", "torch-cpu"))


@needs_dcp
def test_same_layout_continues_every_generator_of_every_rank(jobs):
    train, same = jobs.run("train", 4), jobs.run("same", 4)
    for r in range(4):
        ok(train[r], "save")
        ok(same[r], "load")
        assert same[r]["states"]["load"] == train[r]["states"]["at_save"]
        assert draws_equal(same[r]["draws"]["after"], train[r]["draws"]["after"])
        assert same[r]["fresh"]["load"] == ()
    # every rank's own: the four ranks drew four different continuations
    assert len({tuple(same[r]["draws"]["after"][0]["python"].tolist()) for r in range(4)}) == 4


@needs_dcp
def test_replicas_that_differ_cannot_save(jobs):
    train = jobs.run("train", 4)
    for r in range(4):
        ok(train[r], "save_dp")  # key = dp: ranks 0, 1 and ranks 2, 3 are replicas, equal
        message = raised(train[r], "disagreeing_save", "ProcessStateError")
        assert "key 0: python differ between rank 0; rank 1" in message and "key 1" not in message


@needs_dcp
def test_fewer_ranks_continue_their_keys_and_name_the_rest(jobs):
    train, fewer = jobs.run("train", 4), jobs.run("fewer", 2)
    for r in range(2):
        ok(fewer[r], "load")
        assert draws_equal(fewer[r]["draws"]["after"], train[r]["draws"]["after"])
        dropped = [text for kind, text in fewer[r]["warnings"]["load"] if kind == "DroppedStateWarning"]
        assert dropped == ([] if r else ["RNGState: the checkpoint holds the process generators of 2 key(s) no rank "
                                         "of this layout takes (fewer ranks than saved): 2, 3; left unused"])
        # keyed by data-parallel rank, saved on tp=2 x dp=2, loaded on tp=1 x dp=2: each continues its dp's
        ok(fewer[r], "load_dp")
        assert draws_equal(fewer[r]["draws"]["after_dp"], train[2 * r]["draws"]["after_dp"])


@needs_dcp
def test_new_ranks_raise_everywhere_or_start_from_derived_states(jobs, tmp_path):
    train, more = jobs.run("train", 4), jobs.run("more", 8)
    holder = {"rng": {rdcp.STREAMS_KEY: b"", rdcp.PROCESS_KEY: b""}}
    dcp.load(holder, checkpoint_id=os.path.join(jobs.folder, "proc"))  # the table's bytes, as saved
    origin = hashlib.sha256(holder["rng"][rdcp.PROCESS_KEY]).digest()
    for r in range(8):
        message = raised(more[r], "load_raise", "MissingStreamError")
        assert "python, numpy, torch-cpu of key 4 on rank 4" in message and "key 7 on rank 7" in message
        assert more[r]["states"]["load_raise"] == more[r]["states"]["before_load_raise"]
        ok(more[r], "load_fresh")
        if r < 4:
            assert more[r]["fresh"]["load_fresh"] == ()
            assert draws_equal(more[r]["draws"]["after"], train[r]["draws"]["after"])
            continue
        assert more[r]["fresh"]["load_fresh"] == ("python", "numpy", "torch-cpu")
        expected = {generators.name(k, d): generators.derived(origin, table_format.key_bytes(r), k, d)
                    for k, d in ((1, 0), (2, 0), (3, 0))}
        assert more[r]["states"]["load_fresh"] == expected
        (kind, text), = [w for w in more[r]["warnings"]["load_fresh"] if w[0] == "FreshStreamWarning"]
        assert f"rank {r}: the checkpoint lacks python, numpy, torch-cpu for key {r}" in text
    assert len({tuple(more[r]["draws"]["after"][0]["python"].tolist()) for r in range(8)}) == 8
