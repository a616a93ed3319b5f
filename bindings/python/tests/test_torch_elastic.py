# SPDX-License-Identifier: Apache-2.0
"""A node dies: an elastic job of two agents with two gloo workers each
checkpoints {"rng": RNGState(process=True)} with DCP every two steps; one
agent's workers are killed with SIGKILL, in the middle of a step or in the
middle of a save, and the surviving agent restarts its workers as a world of
two, which resumes from the newest complete checkpoint
(elastic_agents.py says why these are our agents, not torchrun's).

Held to: the resumed workers load the newest checkpoint every rank
finished, never the one cut short; every generator of every rank (Python's,
NumPy's, torch's CPU generator, the tracker's stream) draws what the lost
4-rank job drew at the steps it finished after that checkpoint, and what an
uninterrupted 2-rank run resumed from the same checkpoint draws; the keys
of the lost ranks are named in one warning."""
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
try:
    import rngtrk.torch.dcp as rdcp
except ImportError:
    rdcp = None
import elastic_agents  # noqa: E402
from rank_jobs import distributed_ok  # noqa: E402

pytestmark = [
    pytest.mark.skipif(rdcp is None, reason=f"this torch ({torch.__version__}) has no torch.distributed.checkpoint "
                                            "(torch >= 2.2)"),
    pytest.mark.skipif(rdcp is not None and not distributed_ok(), reason="this torch has no torch.distributed with gloo"),
]
NEWEST_COMPLETE = 3  # checkpoints after steps 1, 3, 5 and 7 (every 2 of 8); both kills come before 5's is complete


@pytest.mark.parametrize("kill", ["step:4", "save:5"])
def test_a_lost_node_resumes_every_generator_exactly_on_the_smaller_world(tmp_path, kill):
    folder = str(tmp_path)
    result = elastic_agents.run(folder, kill)
    resumed = result["resumed"]
    assert [r["world"] for r in resumed] == [2, 2]
    assert {r["loaded"] for r in resumed} == {NEWEST_COMPLETE}
    left = result["left"]
    assert all("complete" in left[f"step_{s}"] and ".metadata" in left[f"step_{s}"] for s in (1, 3))
    if kill.startswith("save"):  # the save cut short: some data files, no metadata, no mark
        assert left["step_5"] and ".metadata" not in left["step_5"] and "complete" not in left["step_5"]
    else:
        assert sorted(left) == ["step_1", "step_3"]
    first = {r["rank"]: r for r in result["first"].records()[:2]}
    for r in resumed:
        lost_job = {int(s): d for s, d in first[r["rank"]]["draws"].items() if int(s) > NEWEST_COMPLETE}
        assert {s: r["draws"][str(s)] for s in lost_job} == lost_job
        if kill.startswith("save"):
            assert sorted(lost_job) == [4, 5]  # steps the lost job finished after the checkpoint
    reference = elastic_agents.reference(folder, NEWEST_COMPLETE, 2)
    for r, again in zip(resumed, reference):
        assert r["draws"] == again["draws"] and sorted(map(int, r["draws"])) == [4, 5, 6, 7]
    assert [w for w in resumed[0]["warnings"] if w.startswith("DroppedStateWarning") and ": 2, 3;" in w]
    assert not resumed[1]["warnings"]
