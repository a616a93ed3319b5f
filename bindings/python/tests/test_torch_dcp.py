# SPDX-License-Identifier: Apache-2.0
"""rngtrk.torch.dcp: RNG streams in torch.distributed.checkpoint (DCP)
checkpoints (docs/pytorch.md, "Distributed checkpoints (DCP)"; the table's
bytes: docs/checkpoint-format.md).

Single-process tests run here, through DCP's own save and load (DCP's
single-process mode).  The multi-rank tests start dcp_job.py on 1 to 8
gloo ranks (FileStore rendezvous, no torchrun) and judge what each rank
recorded: the same layout, fewer ranks, more tensor-parallel ranks, data-
parallel growth, ranks that disagree at save, and the naive
{"rng": tracker.state_dict()} / {"rng": tracker.get_states()} that DCP
restores from one rank on every rank.

DCP needs torch >= 2.2 (Debian 12's torch 1.13 has none): there the module
is skipped, and test_import_refused_without_dcp checks the refusal instead.
"""
import os
import struct
import sys
import warnings
import zlib

import pytest

os.environ["RNGTRK_DEBUG"] = "1"  # rngtrk.torch.dcp's debug mode: every table written is decoded again
torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
import rngtrk  # noqa: E402
import rngtrk.torch as rt  # noqa: E402

try:
    import rngtrk.torch.dcp as rdcp
    REFUSAL = None
except ImportError as e:  # DCPUnavailableError on a torch without DCP
    rdcp, REFUSAL = None, e

from rngtrk.torch import _dcp_table as table_format  # noqa: E402  (the table's bytes need no DCP)
from rank_jobs import dcp_jobs, ok, raised  # noqa: E402

needs_dcp = pytest.mark.skipif(rdcp is None, reason=f"this torch ({torch.__version__}) has no "
                                                    "torch.distributed.checkpoint with the Stateful protocol "
                                                    "(torch >= 2.2)")
pytestmark = pytest.mark.filterwarnings("ignore:torch.distributed is")  # DCP's single-process note

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "dcp_job.py")
SEED = 1234


@pytest.mark.skipif(rdcp is not None, reason=f"this torch ({torch.__version__}) has DCP: the module imports")
def test_import_refused_without_dcp():
    from rngtrk.errors import UnavailableError
    assert isinstance(REFUSAL, UnavailableError)
    assert type(REFUSAL).__name__ == "DCPUnavailableError"
    message = str(REFUSAL)
    assert "torch 2.2 or later" in message and torch.__version__ in message


# -- single process ----------------------------------------------------------------------

if rdcp is not None:
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.stateful import Stateful


def seeded(m, tp=0, ep=0, etp=0, seed=SEED):
    m.model_parallel_cuda_manual_seed(seed, tp_rank=tp, ep_rank=ep, etp_rank=etp, force_reset_rng=True)
    return m.get_cuda_rng_tracker()


def draw(tracker):
    """Draws from every named stream and from the generator, through the
    tracker given (on CPU-only torch rngtrk.torch's ops otherwise draw
    from Megatron's process tracker; with CUDA both are torch's generator)."""
    out = {}
    for name in tracker.tracker.names():
        with tracker.fork(name):
            out[name] = rt.rand(5, tracker=tracker)
    out["<generator>"] = rt.rand(3, tracker=tracker)
    return out


def same_draws(a, b):
    return list(a) == list(b) and all(torch.equal(a[k], b[k]) for k in a)


@needs_dcp
def test_rngstate_is_a_dcp_stateful():
    assert isinstance(rdcp.RNGState(), Stateful)


@needs_dcp
def test_round_trip_continues_every_stream_bit_for_bit(fresh_torch_trackers, tmp_path):
    m = fresh_torch_trackers
    tracker = seeded(m, tp=1, ep=1, etp=1)
    draw(tracker)
    dcp.save({"rng": rdcp.RNGState()}, checkpoint_id=str(tmp_path))
    saved = tracker.state_dict()
    expected = [draw(tracker) for _ in range(3)]
    tracker = seeded(m, tp=1, ep=1, etp=1)
    state = rdcp.RNGState()
    dcp.load({"rng": state}, checkpoint_id=str(tmp_path))
    assert tracker.state_dict() == saved and state.fresh == ()
    assert all(same_draws(e, draw(tracker)) for e in expected)


@needs_dcp
def test_async_save_keeps_the_streams_of_the_call(fresh_torch_trackers, tmp_path):
    m = fresh_torch_trackers
    tracker = seeded(m)
    draw(tracker)
    pending = dcp.async_save({"rng": rdcp.RNGState()}, checkpoint_id=str(tmp_path))
    saved = tracker.state_dict()
    expected = draw(tracker)  # drawn while the checkpoint may still be written
    getattr(pending, "upload_completion", pending).result()  # torch 2.14 may answer an AsyncSaveResponse
    tracker = seeded(m)
    dcp.load({"rng": rdcp.RNGState()}, checkpoint_id=str(tmp_path))
    assert tracker.state_dict() == saved
    assert same_draws(draw(tracker), expected)


@needs_dcp
def test_the_generator_is_saved_and_restored(fresh_torch_trackers, tmp_path):
    """On CPU-only torch the tracker's default state plays the CUDA generator."""
    m = fresh_torch_trackers
    tracker = seeded(m)
    rt.rand(10)
    position = tracker.generator_state()
    assert position.offset == 12
    dcp.save({"rng": rdcp.RNGState()}, checkpoint_id=str(tmp_path / "with"))
    dcp.save({"rng": rdcp.RNGState(generator=False)}, checkpoint_id=str(tmp_path / "without"))
    seeded(m)
    dcp.load({"rng": rdcp.RNGState()}, checkpoint_id=str(tmp_path / "with"))
    assert m.get_cuda_rng_tracker().generator_state() == position
    tracker = seeded(m)
    rt.rand(2)
    moved = tracker.generator_state()
    dcp.load({"rng": rdcp.RNGState(generator=False)}, checkpoint_id=str(tmp_path / "with"))
    assert tracker.generator_state() == moved  # left alone
    with pytest.raises(rdcp.MissingStreamError, match=r"the generator \(seed 1234, megatron seed 1234 pp 0\)"):
        dcp.load({"rng": rdcp.RNGState()}, checkpoint_id=str(tmp_path / "without"))


@needs_dcp
def test_a_generator_with_another_seed_is_another_stream(fresh_torch_trackers, tmp_path):
    m = fresh_torch_trackers
    seeded(m, seed=SEED)
    dcp.save({"rng": rdcp.RNGState(generator=True)}, checkpoint_id=str(tmp_path))
    tracker = seeded(m, seed=SEED)
    tracker.set_generator_state(rngtrk.PhiloxState(77, 0))  # the generator, reseeded
    # not the policy's seed: a stream without an origin, so this rank's own
    with pytest.raises(rdcp.MissingStreamError, match=r"the generator of rank 0 \(seed 77\)"):
        dcp.load({"rng": rdcp.RNGState()}, checkpoint_id=str(tmp_path))


@needs_dcp
def test_missing_stream_raises_and_changes_nothing_or_starts_fresh(fresh_torch_trackers, tmp_path):
    m = fresh_torch_trackers
    tracker = seeded(m, tp=0)
    for _ in range(2):
        draw(tracker)
    dcp.save({"rng": rdcp.RNGState()}, checkpoint_id=str(tmp_path))
    positions = tracker.tracker.get_states()
    tracker = seeded(m, tp=3)  # a tensor-parallel rank the checkpoint never had
    draw(tracker)
    before = tracker.state_dict()
    with pytest.raises(rdcp.MissingStreamError) as raised:
        dcp.load({"rng": rdcp.RNGState()}, checkpoint_id=str(tmp_path))
    assert "'model-parallel-rng' (seed 3955, megatron seed 1234 tp 3 pp 0) on rank 0" in str(raised.value)
    assert "'data-parallel-rng'" not in str(raised.value)
    assert tracker.state_dict() == before
    state = rdcp.RNGState(on_missing="fresh")
    with pytest.warns(rdcp.FreshStreamWarning, match=r"'model-parallel-rng' \(seed 3955, megatron seed 1234 tp 3"):
        dcp.load({"rng": state}, checkpoint_id=str(tmp_path))
    (fresh,) = state.fresh
    assert fresh[:3] == ("model-parallel-rng", 3955, None)
    assert (fresh.origin.seed, fresh.origin.coordinates[:2]) == (SEED, (3, 0))
    assert tracker.tracker.get_state("model-parallel-rng") == rngtrk.PhiloxState(3955, 0)
    for name in ("data-parallel-rng", "expert-parallel-rng"):
        assert tracker.tracker.get_states()[name] == positions[name]


@needs_dcp
def test_load_inside_a_fork_is_refused(fresh_torch_trackers, tmp_path):
    m = fresh_torch_trackers
    tracker = seeded(m)
    dcp.save({"rng": rdcp.RNGState()}, checkpoint_id=str(tmp_path))
    draw(tracker)
    with tracker.fork():
        before = tracker.state_dict()
        with pytest.raises(rngtrk.ForkOrderError, match="while a fork is open"):
            dcp.load({"rng": rdcp.RNGState()}, checkpoint_id=str(tmp_path))
        assert tracker.state_dict() == before


@needs_dcp
def test_an_unseeded_tracker_is_told_to_seed_first(fresh_torch_trackers, tmp_path):
    m = fresh_torch_trackers
    seeded(m)
    dcp.save({"rng": rdcp.RNGState()}, checkpoint_id=str(tmp_path))
    empty = m.CudaRNGStatesTracker()
    with pytest.raises(rngtrk.InvalidArgumentError, match="seed it for this rank first"):
        dcp.load({"rng": rdcp.RNGState(empty)}, checkpoint_id=str(tmp_path))
    assert empty.tracker.names() == []


@needs_dcp
def test_a_given_tracker_is_used_and_the_process_tracker_left_alone(fresh_torch_trackers, tmp_path):
    m = fresh_torch_trackers
    from rngtrk.torch.te import CudaRNGStatesTracker as TETracker
    mine = TETracker()
    mine.seed_rank("megatron", 99, tp=1)
    with mine.fork():
        rt.rand(9, tracker=mine)
    process = seeded(m)
    dcp.save({"rng": rdcp.RNGState(mine)}, checkpoint_id=str(tmp_path))
    saved = mine.state_dict()
    process_before = process.get_states()
    mine = TETracker()
    mine.seed_rank("megatron", 99, tp=1)
    dcp.load({"rng": rdcp.RNGState(mine)}, checkpoint_id=str(tmp_path))
    assert mine.state_dict() == saved
    assert same_draws(process.get_states(), process_before)  # the process tracker, not the one given, is untouched


@needs_dcp
def test_a_checkpoint_without_the_table_is_every_stream_missing(fresh_torch_trackers, tmp_path):
    """dcp.load(allow_partial_load=True) leaves a key the checkpoint lacks
    as it was: RNGState sees its own value come back unread."""
    from torch.distributed.checkpoint.default_planner import DefaultLoadPlanner
    m = fresh_torch_trackers
    tracker = seeded(m)
    dcp.save({"other": {"x": torch.zeros(2)}}, checkpoint_id=str(tmp_path))
    before = tracker.state_dict()
    with pytest.raises(rdcp.MissingStreamError, match="holds no rngtrk stream table"):
        dcp.load({"rng": rdcp.RNGState()}, checkpoint_id=str(tmp_path),
                 planner=DefaultLoadPlanner(allow_partial_load=True))
    assert tracker.state_dict() == before
    state = rdcp.RNGState(on_missing="fresh")
    with pytest.warns(rdcp.FreshStreamWarning):
        dcp.load({"rng": state}, checkpoint_id=str(tmp_path), planner=DefaultLoadPlanner(allow_partial_load=True))
    assert {s.name for s in state.fresh} == {"data-parallel-rng", "model-parallel-rng", "expert-parallel-rng", None}


@needs_dcp
def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="on_missing"):
        rdcp.RNGState(on_missing="ignore")
    with pytest.raises(TypeError, match="drop-in trackers"):
        rdcp.RNGState(rngtrk.Tracker())
    with pytest.raises(TypeError, match="generator is a bool"):
        rdcp.RNGState(generator="yes")
    with pytest.raises(ValueError, match="takes the dict"):
        rdcp.RNGState().load_state_dict({"rngtrk_checkpoint": b""})


@needs_dcp
def test_load_refuses_a_damaged_table_and_changes_nothing(fresh_torch_trackers):
    m = fresh_torch_trackers
    tracker = seeded(m)
    data = rdcp.RNGState().state_dict()[rdcp.STREAMS_KEY]
    with tracker.fork():  # moved past the table: a load applied would show
        rt.rand(9, tracker=tracker)
    before = tracker.state_dict()
    flipped = bytearray(data)
    flipped[30] ^= 1
    for bad in (data[:-1], bytes(flipped), b"not a table"):
        with pytest.raises(rngtrk.CorruptCheckpointError):
            rdcp.RNGState().load_state_dict({rdcp.STREAMS_KEY: bad})
        assert tracker.state_dict() == before


# -- issue 41: the five defects an adversarial review found, each fixed ----------------------

@needs_dcp
@pytest.mark.parametrize("on_missing", ["raise", "fresh"])
@pytest.mark.parametrize("kept", ["as returned", "deep-copied"])
def test_a_kept_snapshot_restores_like_the_same_bytes_in_a_new_object(fresh_torch_trackers, on_missing, kept):
    """A load outside dcp.load of the very bytes state_dict() returned is a
    restore, not a table DCP left unread (which only dcp.load can hand back)."""
    import copy
    m = fresh_torch_trackers
    tracker = seeded(m, tp=1)
    draw(tracker)
    state = rdcp.RNGState(on_missing=on_missing)
    snapshot = state.state_dict()
    if kept == "deep-copied":
        snapshot = copy.deepcopy(snapshot)
    at_snapshot = tracker.state_dict()
    expected = draw(tracker)
    state.load_state_dict(snapshot)
    assert tracker.state_dict() == at_snapshot and state.fresh == ()
    assert same_draws(draw(tracker), expected)
    state.load_state_dict({rdcp.STREAMS_KEY: bytes(bytearray(snapshot[rdcp.STREAMS_KEY]))})  # fresh bytes alike
    assert tracker.state_dict() == at_snapshot and state.fresh == ()


# The largest base seeds a Megatron-LM rank can take at tp 0 (its tensor-parallel
# seed adds 2718): past 2^64 - 2818 the next pipeline stage cannot seed; at
# 2^64 - 2719 the next tensor-parallel rank cannot either.
@needs_dcp
@pytest.mark.parametrize("seed", [2 ** 64 - 2818, 2 ** 64 - 2800, 2 ** 64 - 2719])
def test_any_seed_the_tracker_takes_saves_and_continues(fresh_torch_trackers, tmp_path, seed):
    m = fresh_torch_trackers
    tracker = seeded(m, seed=seed)
    draw(tracker)
    dcp.save({"rng": rdcp.RNGState()}, checkpoint_id=str(tmp_path))
    saved = tracker.state_dict()
    expected = draw(tracker)
    tracker = seeded(m, seed=seed)
    state = rdcp.RNGState()
    dcp.load({"rng": state}, checkpoint_id=str(tmp_path))
    assert tracker.state_dict() == saved and state.fresh == ()
    assert same_draws(draw(tracker), expected)


@needs_dcp
def test_a_tracker_without_streams_saves_an_empty_table_that_loads(fresh_torch_trackers, tmp_path):
    m = fresh_torch_trackers
    empty = m.CudaRNGStatesTracker()
    data = rdcp.RNGState(empty, generator=False).state_dict()[rdcp.STREAMS_KEY]
    assert table_format.decode(data) == table_format.Table(1, ())
    dcp.save({"rng": rdcp.RNGState(empty, generator=False)}, checkpoint_id=str(tmp_path))
    state = rdcp.RNGState(empty, generator=False)
    dcp.load({"rng": state}, checkpoint_id=str(tmp_path))
    assert state.fresh == () and empty.tracker.names() == []


def test_no_stream_on_any_rank_is_an_empty_table():
    """The merge of no rows (needs no DCP: one process, no group)."""
    from rngtrk.torch import _dcp_streams
    import rngtrk.torch.megatron as m
    data = _dcp_streams.save_table(m.CudaRNGStatesTracker, False, _dcp_streams.Collectives(None, 1), 0)
    assert table_format.decode(data) == table_format.Table(1, ())


def seeded_slapo(tp=0, seed=SEED):
    import rngtrk.torch.slapo as slapo
    slapo.model_parallel_cuda_manual_seed(seed, tp, False)
    return slapo.get_cuda_rng_tracker()


@needs_dcp
def test_without_tracker_a_slapo_job_saves_slapos_streams(fresh_torch_trackers, tmp_path):
    tracker = seeded_slapo(tp=1)
    draw(tracker)
    dcp.save({"rng": rdcp.RNGState()}, checkpoint_id=str(tmp_path))
    saved = tracker.state_dict()
    expected = draw(tracker)
    tracker = seeded_slapo(tp=1)
    dcp.load({"rng": rdcp.RNGState()}, checkpoint_id=str(tmp_path))
    assert tracker.state_dict() == saved
    assert same_draws(draw(tracker), expected)


@needs_dcp
def test_without_tracker_a_tracker_the_job_made_is_not_guessed(fresh_torch_trackers, tmp_path):
    """Only the process trackers are looked up; a tracker the job made
    itself is given with tracker= (which trackers are still alive depends on
    the collector), and without it generator=False is refused, naming it."""
    m = fresh_torch_trackers
    mine = m.CudaRNGStatesTracker()
    mine.add("model-parallel-rng", 4321)
    with pytest.raises(rngtrk.InvalidArgumentError, match=r"no process tracker.*RNGState\(tracker=\.\.\.\)"):
        rdcp.RNGState(generator=False).state_dict()
    with mine.fork():
        rt.rand(7, tracker=mine)
    dcp.save({"rng": rdcp.RNGState(mine, generator=False)}, checkpoint_id=str(tmp_path))
    saved = mine.get_states()
    with mine.fork():
        rt.rand(7, tracker=mine)
    dcp.load({"rng": rdcp.RNGState(mine, generator=False)}, checkpoint_id=str(tmp_path))
    assert same_draws(mine.get_states(), saved)


@needs_dcp
def test_without_tracker_two_trackers_with_streams_or_none_are_refused(fresh_torch_trackers):
    m = fresh_torch_trackers
    with pytest.raises(rngtrk.InvalidArgumentError, match=r"nothing to save.*RNGState\(tracker=\.\.\.\)"):
        rdcp.RNGState(generator=False).state_dict()
    megatron, slapo = seeded(m), seeded_slapo()
    before = megatron.state_dict(), slapo.state_dict()
    for call in (lambda: rdcp.RNGState().state_dict(), lambda: rdcp.RNGState().load_state_dict(
            rdcp.RNGState(megatron).state_dict())):
        with pytest.raises(rngtrk.InvalidArgumentError) as refused:
            call()
        message = str(refused.value)
        assert "megatron's process tracker" in message and "slapo's process tracker" in message
        assert "RNGState(tracker=...)" in message
        assert (megatron.state_dict(), slapo.state_dict()) == before


# -- the table's bytes (docs/checkpoint-format.md), against an encoder written from the doc --

NONE = (0xFFFFFFFF, 0, 0, 0, (0,) * 7)  # the origin fields of an entry without a stream origin


def doc_encode(world_size, entries, version=2):
    """The stream table as docs/checkpoint-format.md lays it out (written
    here from the page, not from the module): entries are (kind, name, rank,
    holders, seed, offset[, (policy, flags, seed, depends, coordinates)])."""
    body = b""
    for kind, name, rank, holders, seed, offset, *origin in entries:
        raw = name.encode() if name else b""
        body += bytes([kind, len(raw)]) + raw + struct.pack("<IIQQ", rank, holders, seed, offset)
        if version >= 2:
            policy, flags, base, depends, coordinates = origin[0] if origin else NONE
            body += struct.pack("<IIQI7I", policy, flags, base, depends, *coordinates)
    total = 8 + 4 + 8 + 4 + 4 + len(body) + 4
    data = b"RNGTRKDS" + struct.pack("<IQII", version, total, world_size, len(entries)) + body
    return data + struct.pack("<I", zlib.crc32(data))


def megatron_origin(depends, tp=0, pp=0, ep=0, seed=SEED):
    """A megatron stream origin of seed 1234: depends in AXES bits."""
    coordinates = (tp, pp, 0, ep, 0, 0, 0)
    return (0, 0, seed, depends, tuple(c if depends >> i & 1 else 0 for i, c in enumerate(coordinates)))


DP_DEPENDS, TP_DEPENDS = 0b10, 0b11  # data-parallel-rng and the default: pp; model-parallel-rng: tp and pp


def so(fields):
    from rngtrk._stream_origins import StreamOrigin
    return StreamOrigin(*fields)


def test_table_bytes_are_the_documented_layout():
    Entry = table_format.Entry
    table = table_format.canonical(4, [
        Entry(1, None, 1234, 12, 3, 1),
        Entry(0, "model-parallel-rng", 3953, 16, 1, 2, so(megatron_origin(TP_DEPENDS, tp=1))),
        Entry(0, "data-parallel-rng", 1234, 8, 0, 4, so(megatron_origin(DP_DEPENDS))),
        Entry(0, "model-parallel-rng", 3952, 16, 0, 2, so(megatron_origin(TP_DEPENDS))),
        Entry(1, None, 1234, 4, 0, 1),
        Entry(1, None, 1334, 4, 2, 2, so(megatron_origin(DP_DEPENDS, pp=1))),
        Entry(0, "user-rng", 5, 0, 0, 4),
    ])
    expected = doc_encode(4, [(0, "data-parallel-rng", 0, 4, 1234, 8, megatron_origin(DP_DEPENDS)),
                              (0, "model-parallel-rng", 0, 2, 3952, 16, megatron_origin(TP_DEPENDS)),
                              (0, "model-parallel-rng", 1, 2, 3953, 16, megatron_origin(TP_DEPENDS, tp=1)),
                              (0, "user-rng", 0, 4, 5, 0),
                              (1, None, 2, 2, 1334, 4, megatron_origin(DP_DEPENDS, pp=1)),
                              (1, None, 0, 1, 1234, 4), (1, None, 3, 1, 1234, 12)])
    assert table_format.encode(table, check=True) == expected
    assert table_format.decode(expected) == table
    assert len(doc_encode(1, [])) == 32


def test_the_debug_mode_refuses_a_table_that_is_not_canonical():
    Entry = table_format.Entry
    entries = (Entry(0, "b", 1, 0, 0, 1), Entry(0, "a", 1, 0, 0, 1))  # out of order
    table_format.encode(table_format.Table(1, entries))  # written as given outside the debug mode
    with pytest.raises(ValueError, match="not canonical"):
        table_format.encode(table_format.Table(1, entries), check=True)
    if rdcp is not None:
        assert rdcp.DEBUG


def test_a_version_1_table_is_read_as_written():
    """Tables of rngtrk before stream origins: named streams by (name,
    seed), generators per rank."""
    data = doc_encode(2, [(0, "data-parallel-rng", 0, 2, 1234, 8), (1, None, 1, 1, 1234, 12)], version=1)
    table = table_format.decode(data)
    assert table.version == 1
    assert table.named() == {("data-parallel-rng", 1234, None): table_format.Entry(0, "data-parallel-rng", 1234, 8,
                                                                                     0, 2)}
    assert table.generators() == {1: table_format.Entry(1, None, 1234, 12, 1, 1)}


def test_the_same_name_and_seed_with_other_origins_are_two_streams_of_the_table():
    Entry = table_format.Entry
    stage1 = so(megatron_origin(0b11010, pp=0, ep=0, seed=SEED + 100))  # expert: pp, ep, etp
    stage0 = so(megatron_origin(0b11010, pp=0, ep=1))
    table = table_format.canonical(4, [Entry(0, "expert-parallel-rng", 2358, 8, 0, 1, stage0),
                                       Entry(0, "expert-parallel-rng", 2358, 24, 2, 1, stage1)])
    assert len(table_format.decode(table_format.encode(table)).named()) == 2


def test_the_documented_example_is_what_the_writer_writes():
    with open(os.path.join(HERE, "..", "..", "..", "docs", "checkpoint-format.md"), encoding="utf-8") as f:
        text = f.read()
    block = text.split("<!-- dcp-table-example")[1].split("```")[1]
    data = bytes.fromhex("".join(line[10:58] for line in block.strip().splitlines()))
    Entry = table_format.Entry
    table = table_format.canonical(2, [
        Entry(0, "data-parallel-rng", 1234, 8, 0, 2, so(megatron_origin(DP_DEPENDS))),
        Entry(0, "model-parallel-rng", 3952, 16, 0, 1, so(megatron_origin(TP_DEPENDS))),
        Entry(0, "model-parallel-rng", 3953, 16, 1, 1, so(megatron_origin(TP_DEPENDS, tp=1))),
        Entry(1, None, 1234, 4, 0, 2, so(megatron_origin(DP_DEPENDS)))])
    assert len(data) == 381
    assert table_format.encode(table) == data
    assert table_format.decode(data) == table
    assert doc_encode(2, [(0, "data-parallel-rng", 0, 2, 1234, 8, megatron_origin(DP_DEPENDS)),
                          (0, "model-parallel-rng", 0, 1, 3952, 16, megatron_origin(TP_DEPENDS)),
                          (0, "model-parallel-rng", 1, 1, 3953, 16, megatron_origin(TP_DEPENDS, tp=1)),
                          (1, None, 0, 2, 1234, 4, megatron_origin(DP_DEPENDS))]) == data


@pytest.mark.parametrize("version", [1, 2])
def test_every_truncation_and_bit_flip_of_a_table_is_refused(version):
    origin = [megatron_origin(TP_DEPENDS)] if version == 2 else []
    data = doc_encode(2, [(0, "model-parallel-rng", 0, 2, 3952, 16, *origin), (1, None, 1, 1, 1234, 4)], version)
    table_format.decode(data)
    for n in range(len(data)):
        with pytest.raises((rngtrk.CorruptCheckpointError, rngtrk.UnsupportedVersionError)):
            table_format.decode(data[:n])
    for i in range(len(data) * 8):
        flipped = bytearray(data)
        flipped[i // 8] ^= 1 << (i % 8)
        with pytest.raises((rngtrk.CorruptCheckpointError, rngtrk.UnsupportedVersionError)):
            table_format.decode(bytes(flipped))


@pytest.mark.parametrize("entries, problem", [
    ([(0, "a", 0, 1, 1, 2)], "not a multiple of 4"),
    ([(0, "a", 2, 1, 1, 0)], "outside a world"),
    ([(0, "a", 1, 2, 1, 0)], "holders"),
    ([(0, "a", 0, 0, 1, 0)], "holders"),
    ([(1, "a", 0, 1, 1, 0)], "no name"),
    ([(1, None, 0, 2, 1, 0)], "without a stream origin has one holder"),
    ([(1, None, 1, 2, 1, 0, megatron_origin(DP_DEPENDS))], "holders"),
    ([(2, None, 0, 1, 1, 0)], "unknown kind"),
    ([(0, "", 0, 1, 1, 0)], "1 to 255 bytes"),
    ([(0, "b", 0, 1, 1, 0), (0, "a", 0, 1, 1, 0)], "out of order"),
    ([(0, "a", 0, 1, 1, 0), (0, "a", 0, 1, 1, 4)], "out of order or repeat"),
    ([(1, None, 1, 1, 1, 0), (1, None, 1, 1, 2, 0)], "out of order or repeat"),
    ([(0, "a", 0, 1, 1, 0, (0xFFFFFFFF, 0, 1, 0, (0,) * 7))], "origin fields 0"),
    ([(0, "a", 0, 1, 1, 0, (3, 0, 1, 0, (0,) * 7))], "unknown seed policy 3"),
    ([(0, "a", 0, 1, 1, 0, (0, 4, 1, 0, (0,) * 7))], "unknown seed flags"),
    ([(0, "a", 0, 1, 1, 0, (0, 0, 1, 1 << 7, (0,) * 7))], "past the 7 known"),
    ([(0, "a", 0, 1, 1, 0, (0, 0, 1, 0b10, (1, 0, 0, 0, 0, 0, 0)))], "does not depend on is not 0"),
])
def test_a_table_breaking_a_rule_is_refused(entries, problem):
    with pytest.raises(rngtrk.CorruptCheckpointError, match=problem):
        table_format.decode(doc_encode(2, entries))


def test_a_table_of_another_version_is_refused():
    data = bytearray(doc_encode(1, []))
    data[8] = 3
    data[-4:] = struct.pack("<I", zlib.crc32(bytes(data[:-4])))
    with pytest.raises(rngtrk.UnsupportedVersionError, match="format_version 3; this rngtrk reads 1 and 2"):
        table_format.decode(bytes(data))


# -- several ranks -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    return dcp_jobs(tmp_path_factory, "dcp", JOB, rdcp)


def draws_equal(a, b, names=None):
    """Step by step, the draws of the streams in `names` (default: all of a's)."""
    assert len(a) == len(b)
    for step_a, step_b in zip(a, b):
        for name in (names if names is not None else step_a):
            assert torch.equal(step_a[name], step_b[name]), f"stream {name} drew other numbers"
    return True


def fresh_draws(names_and_seeds, generator, steps=3):
    """What streams started at offset 0 draw, step by step, in dcp_job.py's
    sizes: from a plain rngtrk.Tracker, independent of the drop-in.
    generator: (its seed, the pipeline stage)."""
    sys.path.insert(0, HERE)
    import dcp_job
    plain = rngtrk.Tracker()
    for name, seed in names_and_seeds:
        plain.add(name, seed)
    plain.manual_seed(generator[0])
    out = []
    for _ in range(steps):
        step = {}
        for name, _ in names_and_seeds:
            with plain.fork(name):
                step[name] = rt.rand(dcp_job.stream_size(name), tracker=plain)
        step["<generator>"] = rt.rand(2 + 2 * generator[1], tracker=plain)
        out.append(step)
    return out


@needs_dcp
def test_same_layout_continues_every_rank_exactly(jobs):
    train, same = jobs.run("train", 4), jobs.run("same", 4)
    for r in range(4):
        ok(train[r], "save")
        ok(same[r], "load")
        assert same[r]["fresh"]["load"] == ()
        assert same[r]["snapshots"]["loaded"] == train[r]["snapshots"]["at_save"]
        assert draws_equal(same[r]["draws"]["after"], train[r]["draws"]["after"])
    # Every rank's expert-parallel stream is its own (Megatron-LM #6858's case).
    experts = set()
    for s in same:
        with rngtrk.Tracker() as t:
            t.load(s["snapshots"]["loaded"], any_rank=True)
            experts.add(t.get_state("expert-parallel-rng"))
    assert len(experts) == 4


@needs_dcp
def test_naive_state_dicts_in_dcp_restore_one_rank_everywhere(jobs):
    """Why RNGState exists: what DCP does with {"rng": tracker.state_dict()}
    and {"rng": tracker.get_states()} (what frameworks write)."""
    train, same = jobs.run("train", 4), jobs.run("same", 4)
    loaded = {s["naive_bytes_loaded"] for s in same}
    assert len(loaded) == 1  # one rank's bytes, on every rank
    (the_bytes,) = loaded
    writer = [r for r in range(4) if train[r]["snapshots"]["at_save"] == the_bytes]
    assert len(writer) == 1
    for r in range(4):
        if r == writer[0]:
            ok(same[r], "naive_bytes_load")
        else:
            raised(same[r], "naive_bytes_load", "WrongRankError")
        ok(same[r], "naive_bytes_any_rank")
    # Told to take it, every rank ends with the one rank's streams.
    assert len({s["snapshots"]["naive_bytes_any_rank"] for s in same}) == 1
    # The tensors of get_states(): one rank's model- and expert-parallel
    # states on every rank, silently.
    states = []
    for s in same:
        with rngtrk.Tracker() as t:
            t.load(s["snapshots"]["naive_tensors"], any_rank=True)
            states.append(t.get_states())
    for name in ("model-parallel-rng", "expert-parallel-rng"):
        assert len({st[name] for st in states}) == 1, name


@needs_dcp
def test_ranks_that_disagree_on_a_stream_cannot_save(jobs):
    train = jobs.run("train", 4)
    with rngtrk.Tracker() as t:
        t.load(train[0]["snapshots"]["before_disagreeing_save"], any_rank=True)
        at_0 = t.get_state("model-parallel-rng").offset
        t.load(train[2]["snapshots"]["before_disagreeing_save"], any_rank=True)
        at_2 = t.get_state("model-parallel-rng").offset
    assert at_0 != at_2
    for r in range(4):
        message = raised(train[r], "disagreeing_save", "StreamPositionError")
        assert (f"'model-parallel-rng' (seed {SEED + 2718}, megatron seed {SEED} tp 0 pp 0): offset {at_0} on rank 0; "
                f"offset {at_2} on rank 2") in message
        assert "nothing was written" in message
        assert train[r]["snapshots"]["after_disagreeing_save"] == train[r]["snapshots"]["before_disagreeing_save"]
    folder = os.path.join(jobs.folder, "disagree")
    assert not os.path.exists(folder) or os.listdir(folder) == []


@needs_dcp
def test_fewer_ranks_continue_every_stream(jobs):
    train, fewer = jobs.run("train", 4), jobs.run("fewer", 2)
    for r in range(2):  # new (tp r, dp 0) holds old rank r's streams
        ok(fewer[r], "load")
        assert fewer[r]["fresh"]["load"] == ()
        assert fewer[r]["snapshots"]["loaded"] == train[r]["snapshots"]["at_save"]
        assert draws_equal(fewer[r]["draws"]["after"], train[r]["draws"]["after"])


@needs_dcp
def test_a_new_tensor_parallel_rank_raises_everywhere_and_changes_nothing(jobs):
    jobs.run("train", 4)
    more = jobs.run("more", 4)
    for r in range(4):
        message = raised(more[r], "load_raise", "MissingStreamError")
        for rank in (2, 3):
            assert f"'model-parallel-rng' (seed {SEED + 2718 + rank}, megatron seed {SEED} tp {rank} pp 0) on rank " \
                f"{rank}" in message
            assert f"'expert-parallel-rng' (seed {SEED + 1024 + rank}, megatron seed {SEED} pp 0 ep 0 etp {rank}) on " \
                f"rank {rank}" in message
        assert "data-parallel-rng" not in message and "generator" not in message.split("They belong")[0]
        assert more[r]["snapshots"]["after_raise"] == more[r]["snapshots"]["seeded"]


@needs_dcp
def test_a_new_tensor_parallel_rank_starts_fresh_when_told(jobs):
    train, more = jobs.run("train", 4), jobs.run("more", 4)
    for r in range(4):
        ok(more[r], "load_fresh")
        if r < 2:  # (tp r) existed: every stream continues, as old rank r's
            assert more[r]["fresh"]["load_fresh"] == () and more[r]["warnings"]["load_fresh"] == []
            assert draws_equal(more[r]["draws"]["after"], train[r]["draws"]["after"])
            continue
        new = (("model-parallel-rng", SEED + 2718 + r), ("expert-parallel-rng", SEED + 1024 + r))
        assert tuple(f[:3] for f in more[r]["fresh"]["load_fresh"]) == tuple((n, s, None) for n, s in new)
        (kind, text), = more[r]["warnings"]["load_fresh"]
        assert kind == "FreshStreamWarning" and f"'model-parallel-rng' (seed {SEED + 2718 + r}, megatron" in text
        # the shared stream and the stage's generator continue; the new ones start at 0
        assert draws_equal(more[r]["draws"]["after"], train[r]["draws"]["after"],
                           ["data-parallel-rng", "<generator>"])
        expected = fresh_draws(new, (SEED, 0))
        assert draws_equal(more[r]["draws"]["after"], expected, [n for n, _ in new])


@needs_dcp
def test_fresh_under_warnings_as_errors_raises_everywhere_and_changes_nothing(jobs):
    jobs.run("train", 4)
    more = jobs.run("more", 4)
    for r in range(4):
        if r < 2:  # no stream of theirs is missing: they stop because ranks 2 and 3 did
            message = raised(more[r], "load_fresh_warnings_as_errors", "PeerRankError")
            assert "rank 2 (and 1 more ranks) could not load" in message and "FreshStreamWarning" in message
        else:
            message = raised(more[r], "load_fresh_warnings_as_errors", "FreshStreamWarning")
            assert f"rank {r}: the checkpoint lacks 'model-parallel-rng' (seed {SEED + 2718 + r}" in message
        assert more[r]["snapshots"]["after_fresh_warnings_as_errors"] == more[r]["snapshots"]["seeded"]


@needs_dcp
def test_data_parallel_growth_gives_new_replicas_the_shared_streams(jobs):
    jobs.run("train", 4)
    fewer, growth = jobs.run("fewer", 2), jobs.run("growth", 4)
    named = ["data-parallel-rng", "model-parallel-rng", "expert-parallel-rng"]
    for r in range(4):
        # The generator is the stage's stream, like data-parallel-rng: the new
        # replicas 2 and 3 continue it where the 2-rank job held it.
        ok(growth[r], "load_raise")
        assert growth[r]["fresh"]["load_raise"] == ()
        # Without generators: every named stream continues on both replicas.
        ok(growth[r], "load_generator_off")
        assert growth[r]["fresh"]["load_generator_off"] == ()
        assert draws_equal(growth[r]["draws"]["generator_off"], fewer[r % 2]["draws"]["after"], named)
        # on_missing="fresh" has nothing to start fresh: the generator continues too.
        ok(growth[r], "load_fresh")
        assert growth[r]["fresh"]["load_fresh"] == ()
        assert draws_equal(growth[r]["draws"]["fresh"], fewer[r % 2]["draws"]["after"], named + ["<generator>"])


@needs_dcp
def test_one_rank_continues_rank_0(jobs):
    train, one = jobs.run("train", 4), jobs.run("one", 1)
    ok(one[0], "load")
    assert draws_equal(one[0]["draws"]["after"], train[0]["draws"]["after"])
    message = raised(one[0], "load_no_generator_checkpoint", "MissingStreamError")
    assert f"the generator (seed {SEED}, megatron seed {SEED} pp 0) on rank 0" in message
    ok(one[0], "load_no_generator_checkpoint_off")
    assert draws_equal(one[0]["draws"]["generator_off"], train[0]["draws"]["after"],
                       ["data-parallel-rng", "model-parallel-rng", "expert-parallel-rng"])


@needs_dcp
def test_eight_ranks_from_two(jobs):
    jobs.run("train", 4)
    fewer, eight = jobs.run("fewer", 2), jobs.run("eight", 8)
    for r in range(8):
        ok(eight[r], "load")
        assert draws_equal(eight[r]["draws"]["after"], fewer[r % 2]["draws"]["after"],
                           ["data-parallel-rng", "model-parallel-rng", "expert-parallel-rng"])


# -- pipeline stages: streams keyed by their origin, not their seed number ----------------

@needs_dcp
def test_pipeline_stages_sharing_a_seed_number_save_and_continue_exactly(jobs):
    """pp 2 x ep 2: (pp 1, ep 0) and (pp 0, ep 1) hold one expert seed number,
    drawn unevenly per stage; with data-parallel random init, (pp 0, dp 10)
    and (pp 1, dp 0) hold one seed number for every state.  Keyed by (name,
    seed) these ranks were taken for replicas and every save raised
    StreamPositionError; keyed by origin, they save, and the same layout
    continues every rank exactly."""
    stages, again = jobs.run("stages", 4), jobs.run("stages_same", 4)
    # the collisions are there: ranks 1 (pp 0, ep 1) and 2 (pp 1, ep 0)
    assert stages[1]["expert_seed"] == stages[2]["expert_seed"]
    assert stages[1]["random_init_seed"] == stages[2]["random_init_seed"]  # dp 10 x 10 meets pp 1 x 100
    for r in range(4):
        ok(stages[r], "save")
        ok(stages[r], "save_random_init")
        ok(again[r], "load")
        ok(again[r], "load_random_init")
        assert again[r]["fresh"]["load"] == () and again[r]["fresh"]["load_random_init"] == ()
        assert again[r]["snapshots"]["loaded"] == stages[r]["snapshots"]["at_save"]
        assert again[r]["snapshots"]["random_init_loaded"] == stages[r]["snapshots"]["random_init_at_save"]
        assert draws_equal(again[r]["draws"]["after"], stages[r]["draws"]["after"])
        assert draws_equal(again[r]["draws"]["random_init_after"], stages[r]["draws"]["random_init_after"])
    # and the draws were uneven: the two expert streams sharing a seed stand at other offsets
    with rngtrk.Tracker() as t:
        t.load(stages[1]["snapshots"]["at_save"], any_rank=True)
        at_1 = t.get_state("expert-parallel-rng")
        t.load(stages[2]["snapshots"]["at_save"], any_rank=True)
        at_2 = t.get_state("expert-parallel-rng")
    assert at_1.seed == at_2.seed and at_1.offset != at_2.offset


@needs_dcp
def test_a_version_1_checkpoint_still_loads(fresh_torch_trackers, tmp_path):
    """A table of the last release (version 1: named streams by (name,
    seed), the generator by rank), as DCP holds it, continues every stream."""
    m = fresh_torch_trackers
    tracker = seeded(m, tp=1, ep=1, etp=1)
    draw(tracker)
    named, generator = tracker.tracker.get_states(), tracker.generator_state()
    entries = [(0, name, 0, 1, rngtrk.PhiloxState.from_bytes(raw).seed, rngtrk.PhiloxState.from_bytes(raw).offset)
               for name, raw in sorted(named.items(), key=lambda item: (item[0].encode(),))]
    entries.append((1, None, 0, 1, generator.seed, generator.offset))
    old = doc_encode(1, entries, version=1)
    saved = tracker.state_dict()
    expected = [draw(tracker) for _ in range(2)]
    tracker = seeded(m, tp=1, ep=1, etp=1)
    state = rdcp.RNGState()
    state.load_state_dict({rdcp.STREAMS_KEY: old})
    assert tracker.state_dict() == saved and state.fresh == ()
    assert all(same_draws(e, draw(tracker)) for e in expected)

