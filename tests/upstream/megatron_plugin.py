# SPDX-License-Identifier: Apache-2.0
"""pytest plugin of run_megatron_tests.py: prepares the imports of
Megatron-LM's tests/unit_tests/tensor_parallel/test_random.py before pytest
collects it.  RNGTRK_MEGATRON_MODE says what the test's names are:

* upstream: Megatron-LM's own random.py (the baseline);
* install:  Megatron-LM's random.py with rngtrk.torch.megatron.install()
            applied before the test module is imported;
* names:    rngtrk.torch.megatron in place of Megatron's random.py.

Megatron-LM's package __init__ files import far more than this test needs
(and need torch >= 2.0), so megatron, megatron.core,
megatron.core.tensor_parallel and the test packages are entered as bare
packages over the checkout: their modules load from Megatron's files, their
__init__ files do not run.  The stand-ins in standins/ (our code) take the
place of megatron.core.parallel_state, megatron.core.utils,
megatron.core.transformer.cuda_graphs and the test's Utils."""
import importlib.util
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))


def _bare_package(name, path):
    module = types.ModuleType(name)
    module.__path__ = [path]
    module.__package__ = name
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)
    return module


def _standin(name, filename):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, "standins", filename))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    setattr(sys.modules[parent], child, module)
    return module


def pytest_configure(config):
    root = os.environ["MEGATRON_LM"]
    mode = os.environ["RNGTRK_MEGATRON_MODE"]
    if os.environ.get("RNGTRK_EMULATE_CUDA"):  # before anything reads torch.cuda
        import cuda_emulation
        cuda_emulation.emulate()
    sys.path.insert(0, root)
    for name in ("megatron", "megatron.core", "megatron.core.tensor_parallel", "megatron.core.transformer",
                 "tests", "tests.unit_tests", "tests.unit_tests.tensor_parallel"):
        _bare_package(name, os.path.join(root, *name.split(".")))
    _standin("megatron.core.parallel_state", "parallel_state.py")
    _standin("megatron.core.utils", "megatron_core_utils.py")
    _standin("megatron.core.transformer.cuda_graphs", "cuda_graphs.py")
    _standin("tests.unit_tests.test_utilities", "test_utilities.py")
    if mode == "install":
        import rngtrk.torch.megatron
        rngtrk.torch.megatron.install()
    elif mode == "names":
        import rngtrk.torch.megatron
        sys.modules["megatron.core.tensor_parallel.random"] = rngtrk.torch.megatron
    elif mode != "upstream":
        raise ValueError(f"RNGTRK_MEGATRON_MODE must be upstream, install or names, not {mode!r}")
