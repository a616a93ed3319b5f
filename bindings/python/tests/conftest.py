# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures.  The tests import the package from this checkout
(bindings/python) and open the library from the repository's build/ folder,
as `make test` leaves it."""
import os
import subprocess
import sys

import pytest

BINDING_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.normpath(os.path.join(BINDING_DIR, "..", ".."))
VECTORS = os.path.join(REPO, "tests", "vectors")
BUILD = os.path.join(REPO, "build")
sys.path.insert(0, BINDING_DIR)

import rngtrk  # noqa: E402  (after the path is set)


@pytest.fixture
def tracker():
    with rngtrk.Tracker() as t:
        yield t


def vector_path(*parts):
    return os.path.join(VECTORS, *parts)


def read_bytes(*parts):
    with open(vector_path(*parts), "rb") as f:
        return f.read()


def build_program(name):
    """A program `make test-programs` builds under build/tests; its absence
    is a failure, not a skip (make test builds it first)."""
    path = os.path.join(BUILD, "tests", name)
    assert os.path.exists(path), f"{path} is missing: run `make test-programs` first"
    return path


def run_python(code, env=None, cwd=None):
    """Runs `code` in a fresh interpreter (the one running the tests) with the
    given environment changes.  Without `cwd` it imports this checkout's
    package; with one, whatever `rngtrk` that folder holds."""
    full_env = dict(os.environ)
    # PYTHONPATH's other folders stay (where cffi may come from, as on the
    # GPU machine); this checkout's binding is put first, or left out.
    kept = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
            if p and os.path.realpath(p) != os.path.realpath(BINDING_DIR)]
    paths = kept if cwd is not None else [BINDING_DIR] + kept
    if paths:
        full_env["PYTHONPATH"] = os.pathsep.join(paths)
    else:
        full_env.pop("PYTHONPATH", None)
    for key, value in (env or {}).items():
        if value is None:
            full_env.pop(key, None)
        else:
            full_env[key] = value
    return subprocess.run([sys.executable, "-c", code], env=full_env, cwd=cwd,
                          capture_output=True, text=True)


def snapshot(t):
    """Everything observable about a tracker, to prove a failed call changed nothing."""
    return (t.save(), t.active_state(), t.fork_depth, t.names(), t.get_default())


STANDINS = os.path.join(os.path.dirname(os.path.abspath(__file__)))


def forget_modules(*prefixes):
    """Drops the named packages and their submodules from sys.modules (a
    stand-in imported afresh by the next test)."""
    for name in list(sys.modules):
        if any(name == p or name.startswith(p + ".") for p in prefixes):
            del sys.modules[name]
            parent, _, child = name.rpartition(".")
            if parent in sys.modules and getattr(sys.modules[parent], child, None) is not None:
                delattr(sys.modules[parent], child)  # `from parent import child` would find the old one


def import_standin(folder, *modules):
    """The stand-in package in tests/`folder`, imported afresh: the named
    modules (the first one's top package forgotten first), in order."""
    import importlib
    forget_modules(modules[0].split(".")[0])
    sys.path.insert(0, os.path.join(STANDINS, folder))
    return tuple(importlib.import_module(name) for name in modules)


@pytest.fixture
def fresh_torch_trackers():
    """rngtrk.torch's process trackers (Megatron's and slapo's) cleared and
    install() undone, before and after the test; the stand-in Megatron-LM,
    TransformerEngine and slapo packages (tests/standin_*) forgotten and
    taken off sys.path after it."""
    import rngtrk.torch.megatron as m
    import rngtrk.torch.slapo as s

    def clear():
        s.uninstall()
        s._home = vars(s)  # uninstall() leaves the process tracker in slapo.random
        s._home["_CUDA_RNG_STATE_TRACKER"] = s._last_installed = s.CudaRNGStatesTracker()  # as a new process has
        m.uninstall()
        m._home = vars(m)  # uninstall() leaves the process tracker in Megatron's module
        m._home["_CUDA_RNG_STATE_TRACKER"] = None
        m._home["_CUDA_RNG_STATE_TRACKER_INITIALIZED"] = False
        m._classes.update(megatron=m.CudaRNGStatesTracker, te=None)

    clear()
    path = list(sys.path)
    yield m
    clear()
    sys.path[:] = path
    forget_modules("megatron", "transformer_engine", "slapo")
