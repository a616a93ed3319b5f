# SPDX-License-Identifier: Apache-2.0
"""rngtrk.torch.te against TransformerEngine's tracker contract
(transformer_engine/pytorch/distributed.py at d0067d0d), on CPU-only torch.
The real TransformerEngine needs CUDA libraries to import; where it is
missing, a stand-in (tests/standin_te, our code) plays the module TE's
isinstance checks and graph code read.  GPU behaviour: test_torch.py."""
import os
import sys

import pytest

import rngtrk
from conftest import STANDINS, forget_modules

torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
import rngtrk.torch as rt  # noqa: E402  (after the skip)

pytestmark = pytest.mark.usefixtures("fresh_torch_trackers")


def te_module():
    forget_modules("rngtrk.torch.te")
    from rngtrk.torch import te
    return te


def test_tes_contract_exceptions_and_forks():
    te = te_module()
    t = te.CudaRNGStatesTracker()
    assert t.graph_safe == rt.graph_safe_supported(), "TE's rule: graph-safe wherever torch and a device allow"
    t.add("model-parallel-rng", 3952)
    t.add("data-parallel-rng", 1234)
    before = t.tracker.save()
    with pytest.raises(RuntimeError, match="model-parallel-rng"):
        t.add("model-parallel-rng", 1)  # TE raises RuntimeError; rngtrk's class derives from it
    with pytest.raises(RuntimeError, match="3952"):
        t.add("other", 3952)
    with pytest.raises(KeyError):
        with t.fork("other"):
            pass
    assert t.tracker.save() == before
    # TE's nested fork of the same name: one stream, nothing drawn twice.
    with t.fork():
        a = rt.rand(6, tracker=t)
        with t.fork():
            b = rt.rand(6, tracker=t)
        c = rt.rand(6, tracker=t)
    want = [rngtrk.sample(rngtrk.PhiloxState(3952, offset), 6) for offset in (0, 8, 16)]  # 6 rounds up to 8
    assert all(torch.equal(x, torch.from_numpy(w)) for x, w in zip((a, b, c), want))
    # What Megatron's TECudaRNGStatesTracker adds, and rngtrk's checkpoints.
    assert t.is_initialized() and te.CudaRNGStatesTracker(is_inference_rng_tracker=True).is_inference_rng_tracker
    other = te.CudaRNGStatesTracker()
    other.load_state_dict(t.state_dict())
    assert [(k, rt.state_of(v)) for k, v in other.get_states().items()] == \
        [(k, rt.state_of(v)) for k, v in t.get_states().items()]


def test_get_rng_state_tracker_is_the_process_tracker():
    te = te_module()
    import rngtrk.torch.megatron as megatron
    made = te.get_rng_state_tracker()
    assert isinstance(made, te.CudaRNGStatesTracker) and made is megatron.get_cuda_rng_tracker()
    assert te.get_rng_state_tracker() is made


def test_where_transformer_engine_imports_the_class_is_also_tes():
    sys.path.insert(0, os.path.join(STANDINS, "standin_te"))
    forget_modules("transformer_engine")
    te = te_module()
    import transformer_engine.pytorch.distributed as te_distributed
    assert te.TE_IMPORT_ERROR is None
    t = te.CudaRNGStatesTracker()
    assert isinstance(t, te_distributed.CudaRNGStatesTracker), "DotProductAttention's capture check accepts it"
    t.add("model-parallel-rng", 5)  # every method is rngtrk's, none is TE's
    assert rt.state_of(t.get_states()["model-parallel-rng"]) == (5, 0) and list(t.states_) == ["model-parallel-rng"]
    forget_modules("rngtrk.torch.te")


def test_without_transformer_engine_the_reason_is_kept():
    te = te_module()
    assert "transformer_engine" in te.TE_IMPORT_ERROR
    assert te.CudaRNGStatesTracker.__mro__[1] is rt._tracker.RngtrkStatesTracker
