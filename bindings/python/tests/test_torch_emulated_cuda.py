# SPDX-License-Identifier: Apache-2.0
"""rngtrk.torch's CUDA-generator paths (thunder, dtensor, slapo, and forks
of a CUDA tracker under torch.compile) on CPU-only torch, under a CPU
stand-in of torch's CUDA generator (emulated_cuda_checks.py and
emulated_cuda_compile_checks.py, each in a process of its own).  The GPU
machines run the same paths on a real device in test_torch.py and
test_torch_cuda_compile.py."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")

CHECKS = ("thunder_on_the_cuda_generator", "dtensor_on_the_cuda_generator", "slapo_on_the_cuda_generator",
          "kept_values_on_the_cuda_generator")


def test_the_cuda_generator_paths_under_the_emulation():
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "emulated_cuda_checks.py")
    done = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split() == [word for check in CHECKS for word in ("ok", check)], done.stdout


COMPILE_CHECKS = ("compiled_forks_equal_eager", "fullgraph_refuses_the_fork",
                  "compiled_checkpoint_recomputes_the_forwards_masks")


def test_compiled_forks_of_a_cuda_tracker_under_the_emulation():
    import torch
    from rngtrk.torch import _torch_ops
    if not _torch_ops.AVAILABLE:
        pytest.skip(f"torch {torch.__version__} has no torch.compile custom operators (2.4 needed)")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "emulated_cuda_compile_checks.py")
    done = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split() == [word for check in COMPILE_CHECKS for word in ("ok", check)], done.stdout
