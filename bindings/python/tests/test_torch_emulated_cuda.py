"""rngtrk.torch's CUDA-generator paths (thunder, dtensor, slapo) on
CPU-only torch, under a CPU stand-in of torch's CUDA generator
(emulated_cuda_checks.py, in a process of its own).  The GPU machines run
the same paths on a real device in test_torch.py."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")

CHECKS = ("thunder_on_the_cuda_generator", "dtensor_on_the_cuda_generator", "slapo_on_the_cuda_generator")


def test_the_cuda_generator_paths_under_the_emulation():
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "emulated_cuda_checks.py")
    done = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split() == [word for check in CHECKS for word in ("ok", check)], done.stdout
