# SPDX-License-Identifier: Apache-2.0
"""TransformerEngine's RNG tracker interface (transformer_engine/pytorch/
distributed.py, TransformerEngine 2.20.0.dev0 at d0067d0d, August 2026),
backed by rngtrk (docs/pytorch.md).

    import rngtrk.torch.te as rte
    layer = te.TransformerLayer(..., get_rng_state_tracker=rte.get_rng_state_tracker)
    y = te.distributed.checkpoint(block, x, distribute_saved_activations=False,
                                  get_rng_state_tracker=rte.get_rng_state_tracker, tp_group=None)

CudaRNGStatesTracker is TransformerEngine's: add, fork, get_states,
set_states, reset, graph-safe wherever torch has graph-safe generator
states and a device (TE's rule), with TE's exceptions (RuntimeError for a
name or seed in use, KeyError for a fork of an unknown name; rngtrk's
classes derive from both).  It also has Megatron-LM's is_initialized and
is_inference_rng_tracker (what Megatron's TECudaRNGStatesTracker adds) and
rngtrk's state_dict / load_state_dict.  When TransformerEngine is
importable the class is a subclass of TE's own, so TE's isinstance checks
(DotProductAttention's at graph capture) accept it, and every change of its
states is published through TE's set_all_rng_states, which
make_graphed_callables reads.  Without TE it works the same on its own.

get_rng_state_tracker() is the process tracker: the one
rngtrk.torch.megatron.get_cuda_rng_tracker() returns, created in this
flavour if it does not exist yet.
"""
import importlib.util

from ._generators import graph_safe_api
from ._tracker import RngtrkStatesTracker, process_tracker

TE_IMPORT_ERROR = None  # why TransformerEngine's class could not be imported, if it could not


def _te_base():
    """TransformerEngine's CudaRNGStatesTracker, when TE can be imported here."""
    global TE_IMPORT_ERROR
    if importlib.util.find_spec("transformer_engine") is None:
        TE_IMPORT_ERROR = "transformer_engine is not installed"
        return ()
    try:
        from transformer_engine.pytorch.distributed import CudaRNGStatesTracker as te_class
    except (ImportError, OSError, RuntimeError) as e:  # installed, but its libraries do not load here
        TE_IMPORT_ERROR = f"{type(e).__name__}: {e}"
        return ()
    return (te_class,)


def _publish(generators):
    """TE's get_all_rng_states() (make_graphed_callables registers them with
    every graph) gets the live graph-safe generators."""
    import sys
    te = sys.modules.get("transformer_engine.pytorch.distributed")
    if te is not None and hasattr(te, "set_all_rng_states"):
        te.set_all_rng_states(dict(generators))


class CudaRNGStatesTracker(RngtrkStatesTracker, *_te_base()):
    """TransformerEngine's CudaRNGStatesTracker over rngtrk (module text).
    `is_inference_rng_tracker` is Megatron-LM's (its TECudaRNGStatesTracker
    takes it); `tracker` (keyword, rngtrk's) the rngtrk.Tracker to use."""

    _te_flavour = True

    def __init__(self, is_inference_rng_tracker=False, *, tracker=None):
        RngtrkStatesTracker.__init__(self, graph_safe=graph_safe_api(), tracker=tracker)
        self.is_inference_rng_tracker = bool(is_inference_rng_tracker)

    def _states_changed(self):
        if self._graph_safe:
            _publish(self._generators)


def get_rng_state_tracker():
    """The process tracker (rngtrk.torch.megatron's), in this flavour when
    it is created here: what TE modules and te.checkpoint take as
    get_rng_state_tracker."""
    return process_tracker(use_te_rng_tracker=True)


__all__ = ["CudaRNGStatesTracker", "get_rng_state_tracker", "TE_IMPORT_ERROR"]
