# SPDX-License-Identifier: Apache-2.0
"""rngtrk.torch.dtensor.OffsetBasedRNGTracker with PyTorch's interface
(torch/distributed/tensor/_random.py, the torch 2.11 line): its constructor,
_distribute_region(spec, generator=None), _compute_rng_offsets against
PyTorch's arithmetic written out here, refusals, and install() against a
stand-in of DTensor's random module (tests/standin_dtensor: our code;
Debian's torch 1.13 has no DTensor).  On CPU-only torch the tracker keeps
the state itself."""
import importlib
import inspect
import itertools
import math
import os
import random
import sys
import types

import pytest

import rngtrk
from conftest import STANDINS, forget_modules

torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
import rngtrk.torch as rt  # noqa: E402  (after the skip)
from rngtrk.torch import dtensor  # noqa: E402

try:  # torch 2.14's dynamo imports DTensor's real package: before the stand-in hides it
    import torch._dynamo  # noqa: E402,F401
except ImportError:
    pass  # (torch 1.13)

STANDIN = "torch.distributed.tensor._random"


_REAL = {}  # torch's own DTensor modules, set aside while the stand-in stands in


def standin():
    """The stand-in random module, imported afresh as DTensor's (torch's
    own, when something imported it already, e.g. torch.compile, is set
    aside until the test ends)."""
    forget_modules(STANDIN)
    package = sys.modules.get("torch.distributed.tensor")
    if package is not None and getattr(package, "__file__", None) is not None:
        for name in ("torch.distributed.tensor", STANDIN):
            _REAL.setdefault(name, sys.modules.pop(name, None))
        package = None
    if package is None:
        package = types.ModuleType("torch.distributed.tensor")
        package.__path__ = [os.path.join(STANDINS, "standin_dtensor", "tensor")]
        sys.modules["torch.distributed.tensor"] = package
    return importlib.import_module(STANDIN)


@pytest.fixture(autouse=True)
def no_install():
    dtensor.uninstall()
    yield
    dtensor.uninstall()
    forget_modules(STANDIN)
    if getattr(sys.modules.get("torch.distributed.tensor"), "__file__", None) is None:
        sys.modules.pop("torch.distributed.tensor", None)  # ours, not a real DTensor
    for name, module in _REAL.items():
        if module is not None:
            sys.modules[name] = module
    _REAL.clear()


def spec(mesh_shape, coord, placements, shape):
    r = standin()
    mesh = r.Mesh(mesh_shape, coord, device_type="cpu")
    return r.Spec(mesh, [r.Shard(int(p[1:])) if p.startswith("S") else r.Replicate() for p in placements], shape)


def round4(n):
    return (n + 3) // 4 * 4


def pytorch_offsets(mesh_shape, coord, placements, shape):
    """PyTorch's _compute_rng_offsets, written from its description, for
    placements that shard each tensor dim at most once: the shard's
    row-major index times the first shard's element count, and the tensor's
    element count, both rounded up to 4."""
    shard_coord, shard_size, first = [0] * len(shape), [1] * len(shape), list(shape)
    for mesh_dim, p in enumerate(placements):
        if p.startswith("S"):
            d = int(p[1:])
            shard_coord[d], shard_size[d] = coord[mesh_dim], mesh_shape[mesh_dim]
            first[d] = -(-shape[d] // mesh_shape[mesh_dim])  # torch.chunk's first chunk
    index = 0
    for c, s in zip(shard_coord, shard_size):
        index = index * s + c
    return round4(index * math.prod(first)), round4(math.prod(shape))


def test_the_constructor_and_region_have_pytorchs_signatures():
    assert list(inspect.signature(dtensor.OffsetBasedRNGTracker).parameters)[:2] == ["device_mesh", "run_state_sync"]
    assert inspect.signature(dtensor.OffsetBasedRNGTracker).parameters["run_state_sync"].default is True
    region = inspect.signature(dtensor.OffsetBasedRNGTracker._distribute_region)
    assert list(region.parameters) == ["self", "spec", "generator"]
    r = standin()
    mesh = r.Mesh((2, 2), (0, 1), device_type="cpu")
    tracker = dtensor.OffsetBasedRNGTracker(mesh, run_state_sync=False)
    assert tracker.device_mesh is mesh and tracker.device_type == "cpu", "a mesh is a mesh, not a device type"
    assert dtensor.OffsetBasedRNGTracker("cpu").device_type == "cpu"  # the older (device_type) form
    with pytest.raises(TypeError, match="DeviceMesh"):
        dtensor.OffsetBasedRNGTracker(3)


def test_compute_rng_offsets_is_pytorchs_arithmetic_on_random_cases():
    rng = random.Random(20261124)
    tracker = dtensor.OffsetBasedRNGTracker("cpu")
    for _ in range(300):
        ndim, mesh_ndim = rng.randint(1, 3), rng.randint(1, 3)
        shape = tuple(rng.randint(1, 13) for _ in range(ndim))
        mesh_shape = tuple(rng.randint(1, 4) for _ in range(mesh_ndim))
        coord = tuple(rng.randrange(n) for n in mesh_shape)
        dims = rng.sample(range(ndim), k=min(ndim, mesh_ndim))
        placements = [f"S{dims[i]}" if i < len(dims) and rng.random() < 0.7 else "R" for i in range(mesh_ndim)]
        case = (mesh_shape, coord, placements, shape)
        assert tracker._compute_rng_offsets(spec(*case)) == pytorch_offsets(*case), case


def test_calc_shard_linear_idx_on_a_2x2_mesh():
    tracker = dtensor.OffsetBasedRNGTracker("cpu")
    # PyTorch's test_deterministic_uniform_2d: the shard index of each rank of a 2x2 mesh.
    expected = {("S0", "S1"): [0, 1, 2, 3], ("S1", "S0"): [0, 2, 1, 3], ("S0", "R"): [0, 0, 1, 1],
                ("R", "S0"): [0, 1, 0, 1]}
    for placements, indices in expected.items():
        got = []
        for coord in itertools.product(range(2), range(2)):
            shard_coord, shard_size = [0, 0], [1, 1]
            for mesh_dim, p in enumerate(placements):
                if p != "R":
                    shard_coord[int(p[1])], shard_size[int(p[1])] = coord[mesh_dim], 2
            got.append(tracker._calc_shard_linear_idx(shard_coord, shard_size))
        assert got == indices, placements


def test_regions_move_past_the_whole_tensor_and_never_reuse_numbers():
    tracker = dtensor.OffsetBasedRNGTracker("cpu")
    tracker._manual_seed(1234)
    assert tracker.distribute_region_enabled
    s = spec((2, 2), (1, 0), ["S0", "R"], (8, 6))
    with tracker._distribute_region(s) as state:
        assert state == (1234, pytorch_offsets((2, 2), (1, 0), ["S0", "R"], (8, 6))[0])
        local = rt.rand(4, 6, state=state)
    assert tracker.get_offset() == 48 and tracker.rng_states["parallel-rng"].numel() == 16
    # The local box is the rank's run of the stream: offset pre, 24 values.
    assert torch.equal(local.reshape(-1), rt.rand(24, state=rngtrk.PhiloxState(1234, 24)))
    # The next op starts past every number this one used (a rule adding the
    # number of devices, 4, would start inside them).
    with tracker._distribute_region(s) as state:
        assert state.offset >= 48
    tracker.distribute_region_enabled = False
    with tracker._distribute_region(s) as state:
        assert state == (1234, 96)
    assert tracker.get_offset() == 96, "a disabled region moves nothing"


def test_the_exact_rule_chunks_a_dim_sharded_twice_by_its_true_size():
    case = ((2, 3), (1, 2), ["S0", "S0"], (12, 5))
    torch_rule = dtensor.OffsetBasedRNGTracker("cpu")._compute_rng_offsets(spec(*case))
    exact = dtensor.OffsetBasedRNGTracker("cpu", rule="exact")._compute_rng_offsets(spec(*case))
    assert (torch_rule, exact) == (rngtrk.dtensor_offsets(*case, 0, "torch"), rngtrk.dtensor_offsets(*case, 0, "exact"))
    assert torch_rule != exact


@pytest.mark.parametrize("case,error", [
    (((2,), (0,), ["S2"], (4, 4)), IndexError),
    (((2, 2), (0, 0), ["S0"], (4, 4)), IndexError),
    (((2,), (0,), ["S0"], (4, 4)), None),
])
def test_a_spec_that_does_not_fit_its_tensor_is_refused_with_nothing_changed(case, error):
    tracker = dtensor.OffsetBasedRNGTracker("cpu")
    tracker._manual_seed(5)
    if error is None:
        with tracker._distribute_region(spec(*case)):
            pass
        assert tracker.get_offset() == 16
        return
    with pytest.raises(error) as caught:
        with tracker._distribute_region(spec(*case)):
            pytest.fail("the body ran")
    assert isinstance(caught.value, rngtrk.InvalidArgumentError)
    assert tracker.get_offset() == 0


def test_a_rank_outside_the_mesh_and_unknown_state_names_raise_pytorchs_runtime_error():
    tracker = dtensor.OffsetBasedRNGTracker("cpu")
    r = standin()
    outside = r.Spec(r.Mesh((2,), None, device_type="cpu"), [r.Shard(0)], (4,))
    with pytest.raises(RuntimeError, match="not in the device mesh"):
        with tracker._distribute_region(outside):
            pass
    with pytest.raises(RuntimeError, match="does not have random state for tensor-parallel-rng"):
        tracker.get_offset("tensor-parallel-rng")


# -- install() against the stand-in ------------------------------------------------------

@pytest.mark.parametrize("install_first", [True, False], ids=["install-then-import", "import-then-install"])
def test_install_makes_dtensor_construct_and_use_rngtrks_tracker(install_first):
    seed_torch = (torch.manual_seed, torch.random.manual_seed)
    if install_first:
        assert dtensor.install()
        r = standin()
    else:
        r = standin()
        theirs = r.OffsetBasedRNGTracker
        assert dtensor.install()
    assert not dtensor.install(), "a second install does nothing"
    mesh = r.Mesh((2,), (1,), device_type="cpu")  # PyTorch's own class refuses a CPU mesh
    r.manual_seed(77, mesh)
    tracker = r._rng_tracker
    assert isinstance(tracker, dtensor.OffsetBasedRNGTracker) and isinstance(tracker, r.OffsetBasedRNGTracker)
    if not install_first:
        assert isinstance(tracker, theirs), "DTensor's isinstance checks hold"
    values = r.random_op(r.Spec(mesh, [r.Shard(0)], (10,)), lambda state: rt.rand(5, state=state))
    assert torch.equal(values, rt.rand(8 + 5, state=rngtrk.PhiloxState(77, 0))[8:]), "rank 1's shard of 10 (5 each)"
    assert tracker.get_offset() == 12
    torch.manual_seed(5)
    tracker.set_offset("parallel-rng", 40)
    torch.manual_seed(5)
    assert tracker._current() == (5, 0), "torch.manual_seed seeds a CPU tracker (the same seed again: from 0)"
    assert dtensor.uninstall() and not dtensor.installed()
    assert r.OffsetBasedRNGTracker is not type(tracker) and r._rng_tracker is None, "PyTorch's class and tracker back"
    assert (torch.manual_seed, torch.random.manual_seed) == seed_torch, "torch's own manual_seed back"
    with pytest.raises(RuntimeError, match="CUDA"):
        r.random_op(r.Spec(mesh, [r.Shard(0)], (10,)), lambda state: None)


def test_install_with_the_exact_rule_and_a_carried_over_state():
    r = standin()

    class Older:  # a tracker as older torch kept it: a state under "parallel-rng"
        _device_type = "cpu"
        distribute_region_enabled = True
        rng_states = {"parallel-rng": rt.state_tensor(rngtrk.PhiloxState(9, 40))}

    r._rng_tracker = Older()
    assert dtensor.install(rule="exact")
    tracker = r._rng_tracker
    assert isinstance(tracker, dtensor.OffsetBasedRNGTracker) and tracker.rule == "exact"
    assert (tracker.get_seed(), tracker.get_offset()) == (9, 40)
    assert r.OffsetBasedRNGTracker(r.Mesh((1,), (0,), device_type="cpu")).rule == "exact"
    with pytest.raises(ValueError, match="rule"):
        dtensor.install(rule="nearly")


def test_a_body_that_raises_leaves_the_state_as_it_was_as_pytorchs_does():
    tracker = dtensor.OffsetBasedRNGTracker("cpu")
    tracker._manual_seed(3)
    with pytest.raises(ZeroDivisionError):
        with tracker._distribute_region(spec((2,), (1,), ["S0"], (8,))):
            1 / 0
    assert tracker.get_offset() == 0


def test_a_strided_shard_shards_its_dim():
    class StridedShard:  # what PyTorch's _StridedShard has: a dim and a split factor, and is_shard() False
        def __init__(self, dim, split_factor):
            self.dim, self.split_factor = dim, split_factor

        def is_shard(self):
            return False

    r = standin()
    strided = r.Spec(r.Mesh((2, 2), (1, 1), device_type="cpu"), [StridedShard(0, 2), r.Shard(0)], (8, 4))
    tracker = dtensor.OffsetBasedRNGTracker("cpu")
    # As Shard(0) twice: shard 3 of 4 on dim 0, and PyTorch's first-shard size
    # takes each mesh dim's chunk of the whole dim (8 / 2 = 4 rows of 4): 3 * 16.
    assert tracker._compute_rng_offsets(strided) == \
        tracker._compute_rng_offsets(spec((2, 2), (1, 1), ["S0", "S0"], (8, 4))) == (48, 32)
