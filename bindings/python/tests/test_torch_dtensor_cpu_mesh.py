# SPDX-License-Identifier: Apache-2.0
"""DTensor's random ops on a CPU mesh (issue 28): PyTorch refuses them
(torch 2.6) or lets each rank draw from its own CPU generator (2.14), so a
Replicate() random tensor differs between ranks.  With
rngtrk.torch.dtensor.install() they are drawn by rngtrk from the rank's
offset for the op, DTensor's own rule: replicas equal on every rank, shards
disjoint (float64 too), the full tensor of a Shard(0) rand the unsharded
draw, and the tracker at the same offset on every rank after each op; the
ops rngtrk has no form for are refused.  4 gloo ranks on a 2 x 2 mesh, started directly
(dtensor_cpu_job.py); needs torch >= 2.4 with DTensor."""
import json
import os
import sys

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
import rngtrk  # noqa: E402
import rngtrk.torch as rt  # noqa: E402
from rank_jobs import run_ranks  # noqa: E402

try:
    import torch.distributed.tensor  # noqa: F401
    from torch.distributed.device_mesh import init_device_mesh  # noqa: F401
except ImportError:
    pytest.skip(f"torch {torch.__version__} has no DTensor (torch >= 2.4)", allow_module_level=True)

HERE = os.path.dirname(os.path.abspath(__file__))
WORLD = 4


def run_job(tmp_path, mode):
    store = tmp_path / f"store-{mode}"
    outs = [tmp_path / f"{mode}-{rank}.json" for rank in range(WORLD)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(HERE, ".."), os.environ.get("PYTHONPATH", "")]),
               GLOO_SOCKET_IFNAME="lo", MASTER_ADDR="127.0.0.1")
    run_ranks([[sys.executable, os.path.join(HERE, "dtensor_cpu_job.py"), str(rank), str(WORLD), str(store),
                str(outs[rank]), mode] for rank in range(WORLD)], f"the {mode} job on {WORLD} ranks", env)
    return [json.loads(o.read_text()) for o in outs]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    return run_job(tmp_path_factory.mktemp("dtensor-install"), "install")


@pytest.fixture(scope="module")
def pytorchs(tmp_path_factory):
    return run_job(tmp_path_factory.mktemp("dtensor-torch"), "torch")


def values(ranks, name):
    for rank, seen in enumerate(ranks):
        assert isinstance(seen[name], str), f"rank {rank}: {name}: {seen[name]}"
    return [seen[name] for seen in ranks]


@pytest.mark.parametrize("name", ["rand replicate", "dropout replicate", "uniform_ replicate", "bernoulli_ replicate",
                                  "rand replicate again", "rand shard0 full"])
def test_replicated_random_dtensors_are_equal_on_every_rank(installed, name):
    assert len(set(values(installed, name))) == 1


def test_shards_draw_disjoint_numbers_and_the_tracker_moves_alike(installed):
    assert len(set(values(installed, "randn shard1 local"))) == 2, "two tp shards, replicated over dp"
    assert len(set(values(installed, "normal_ shard"))) == WORLD
    for name in ("offset after seeding", "offset after rand", "offset at the end"):
        assert len({tuple(seen[name]) for seen in installed}) == 1, name
    assert installed[0]["offset after seeding"] == [1234, 0]
    assert installed[0]["offset after rand"] == [1234, 24], "4 x 6 elements: 24"
    assert values(installed, "rand replicate") != values(installed, "rand replicate again")


def test_the_numbers_are_rngtrks_from_the_ops_offsets(installed):
    """A replicated rand is rngtrk's stateless draw at the offset the op
    started from; the full tensor of a Shard(0) rand is the unsharded draw."""
    assert values(installed, "rand replicate")[0] == rt.rand(4, 6, state=rngtrk.PhiloxState(1234, 0)).numpy().tobytes().hex()
    assert values(installed, "rand shard0 full")[0] == \
        rt.rand(8, 6, state=rngtrk.PhiloxState(1234, 24)).numpy().tobytes().hex()


def test_float64_shards_take_two_numbers_per_value_and_stay_disjoint(installed):
    """DTensor's offsets count elements; a float64 value takes two of
    rngtrk's 32-bit numbers, so the region doubles its distances: the full
    tensor of a Shard(0) float64 rand is the unsharded float64 draw (no two
    shards share a number) and the tracker moves 2 x 48."""
    full = values(installed, "rand f64 shard0 full")
    assert len(set(full)) == 1
    seed, start = installed[0]["offset before f64"]
    assert installed[0]["offset after f64"] == [seed, start + 96]
    expected = rt.rand(8, 6, dtype=torch.float64, state=rngtrk.PhiloxState(seed, start))
    assert full[0] == expected.numpy().tobytes().hex()
    got = torch.frombuffer(bytearray.fromhex(full[0]), dtype=torch.float64)
    assert got.unique().numel() == 48, "shards overlapping in the stream repeat values"


def test_torch_manual_seed_starts_the_stream_again_even_with_the_same_seed(installed):
    """As DTensor on torch >= 2.7 (torch.manual_seed puts its generator at
    offset 0): the second seeding draws the first one's numbers."""
    for seen in installed:
        first, second = seen["reseeded twice"]
        assert first == second, "the same seed again did not start the stream again"
        assert first[0] == [77, 0] and first[2] == [77, 24]
        assert first[1] == rt.rand(4, 6, state=rngtrk.PhiloxState(77, 0)).numpy().tobytes().hex()


def test_ops_rngtrk_cannot_draw_are_refused(installed):
    """randint_like: rngtrk's refusal where DTensor hands it to the tracker,
    DTensor's own NotImplementedError where it has no sharding for it."""
    for seen in installed:
        refused = seen["randint refused"]
        assert isinstance(refused, dict) and refused["not_implemented"], refused
        assert refused["error"] == "UnsupportedOnCpuMeshError" or "sharding strategy" in refused["message"], refused


def test_without_install_pytorch_refuses_or_replicas_differ(pytorchs):
    """What install() fixes (and proof the tests above can fail)."""
    rand = [seen["rand replicate"] for seen in pytorchs]
    dropout = [seen["dropout replicate"] for seen in pytorchs]
    refused = all(isinstance(r, dict) for r in rand)
    assert refused or len(set(rand)) > 1
    assert len(set(dropout)) > 1, "PyTorch's dropout on a CPU mesh draws from each rank's own generator"
