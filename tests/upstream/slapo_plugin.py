# SPDX-License-Identifier: Apache-2.0
"""pytest plugin of run_slapo_tests.py: prepares the imports of slapo's
tests/test_random.py before pytest collects it.  RNGTRK_SLAPO_MODE says
what the test's names are:

* upstream: slapo's own slapo/random.py (the baseline);
* install:  slapo's random.py with rngtrk.torch.slapo.install() applied
            before the test module is imported.

slapo's package __init__ imports far more than this test needs (its
scheduler, tracer and autotuner), so `slapo` is entered as a bare package
over the checkout: slapo.random loads from slapo's file, the __init__ does
not run.  With RNGTRK_EMULATE_CUDA set, cuda_emulation.py (ours) stands in
for the CUDA generator first; LOCAL_RANK defaults to 0 (the test reads it,
as torchrun sets it)."""
import os
import sys
import types


def pytest_configure(config):
    root = os.environ["SLAPO"]
    mode = os.environ["RNGTRK_SLAPO_MODE"]
    os.environ.setdefault("LOCAL_RANK", "0")
    if os.environ.get("RNGTRK_EMULATE_CUDA"):  # before slapo binds torch.cuda._lazy_call
        import cuda_emulation
        cuda_emulation.emulate()
    package = types.ModuleType("slapo")
    package.__path__ = [os.path.join(root, "slapo")]
    package.__package__ = "slapo"
    sys.modules["slapo"] = package
    if mode == "install":
        import rngtrk.torch.slapo
        rngtrk.torch.slapo.install()
    elif mode != "upstream":
        raise ValueError(f"RNGTRK_SLAPO_MODE must be upstream or install, not {mode!r}")
