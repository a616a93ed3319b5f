# SPDX-License-Identifier: Apache-2.0
"""rngtrk.torch.slapo.install(): slapo on rngtrk at every call site
(rngtrk.torch._install says why attributes alone are not enough).

* slapo.random: its functions and CudaRNGStatesTracker become
  rngtrk.torch.slapo's (the class is rngtrk's and a subclass of slapo's, so
  isinstance checks hold), and the process tracker moves into its global
  _CUDA_RNG_STATE_TRACKER, which rngtrk.torch.slapo reads from then on.  A
  tracker slapo had already seeded is carried over with its states.
* the modules that bind slapo.random's names at import (slapo,
  slapo.checkpoint, slapo.primitives.tensor_parallel, slapo.verify): each
  such name that is slapo.random's original becomes ours.

uninstall() puts slapo's functions and class back; the process tracker
stays in slapo.random's global, so names bound while installed and slapo's
own functions still reach one tracker.

This module sits below rngtrk.torch.slapo, which makes its installer with
installer(itself): what is installed is the module handed in, not an
import of it.
"""
from ._install import Installer, ModulePatch, bridge
from ._tracker import is_rngtrk_tracker

RANDOM = "slapo.random"
# The modules that import names from slapo.random (slapo at b80534a2).
BINDERS = ("slapo", "slapo.checkpoint", "slapo.primitives.tensor_parallel", "slapo.verify")
FUNCTIONS = ("get_cuda_rng_tracker", "model_parallel_cuda_manual_seed", "is_random_seed_set", "set_random_seed",
             "_set_cuda_rng_state")


_installers = {}  # module name -> its Installer (a reload of rngtrk.torch.slapo keeps its install() state)


def installer(ours_module):
    """The Installer of `ours_module` (rngtrk.torch.slapo): its functions,
    class and process tracker into slapo; the same one for the same module."""
    made = _installers.get(ours_module.__name__)
    if made is None:
        made = _installers[ours_module.__name__] = _new_installer(ours_module)
    return made


def _new_installer(ours_module):
    def binder_attributes(module):
        originals = made.originals(RANDOM) or {}
        return {name: getattr(ours_module, name) for name in FUNCTIONS
                if name in originals and module.__dict__.get(name) is originals[name]}

    made = Installer([ModulePatch(RANDOM, lambda module: _random_attributes(ours_module, module),
                                  after=lambda module: _random_installed(ours_module, module))] +
                     [ModulePatch(name, binder_attributes) for name in BINDERS])
    return made


def _random_attributes(_s, module):
    attributes = {name: getattr(_s, name) for name in FUNCTIONS}
    attributes["CudaRNGStatesTracker"] = bridge(_s.CudaRNGStatesTracker, module.__dict__.get("CudaRNGStatesTracker"),
                                                "CudaRNGStatesTracker")
    return attributes


def _random_installed(_s, module):
    """The process tracker moves into slapo.random's global, given the
    bridged class; slapo's own seeded tracker is carried over."""
    ours = _s._home.get("_CUDA_RNG_STATE_TRACKER")
    if not is_rngtrk_tracker(ours):  # slapo.random re-executed (a reload) in the dict that held ours
        ours = _s._last_installed
    old = module.__dict__.get("_CUDA_RNG_STATE_TRACKER")
    if old is not None and old is not ours and not is_rngtrk_tracker(old) and old.get_states():
        ours.set_states(old.get_states())
    bridged = module.CudaRNGStatesTracker
    if not isinstance(ours, bridged) and issubclass(bridged, type(ours)):
        ours.__class__ = bridged  # the same instance layout: a subclass of its own class
    module.__dict__["_CUDA_RNG_STATE_TRACKER"] = ours
    _s._home = module.__dict__
    _s._last_installed = ours

