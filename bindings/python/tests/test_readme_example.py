# SPDX-License-Identifier: Apache-2.0
"""The documentation's Python examples run as written: README.md's Python
and PyTorch examples, and docs/python.md's longer one."""
import os
import re

import pytest

from conftest import REPO, run_python


def block(path, marker):
    with open(os.path.join(REPO, path), encoding="utf-8") as f:
        text = f.read()
    found = re.search(rf"<!-- {marker}:begin -->\n```python\n(.*?)```\n<!-- {marker}:end -->", text, re.DOTALL)
    assert found, f"{path} lost its {marker} markers"
    return found.group(1)


def test_readme_python_example_runs():
    result = run_python(block("README.md", "readme-python-example"))
    assert result.returncode == 0, result.stderr
    mask, checkpoint = result.stdout.splitlines()
    assert mask.startswith("[") and set(mask.strip("[]").split()) <= {"0", "1"}
    assert checkpoint.startswith('{"format_version": 1, "default": {"seed": 1234, "offset": 0}, "states": '
                                 '[{"name": "model-parallel-rng", "seed": 3952, "offset": 8}]')


def test_readme_pytorch_example_runs(tmp_path):
    pytest.importorskip("torch", reason="PyTorch is not installed (Debian: python3-torch): the example not run")
    code = f"import os\nos.chdir({str(tmp_path)!r})\n" + block("README.md", "readme-torch-example")
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    fraction, state = result.stdout.split(" ", 1)
    assert 0.05 < float(fraction) < 0.15, "about p = 0.1 of the elements dropped"
    assert state.strip() == "PhiloxState(seed=3953, offset=2048)", "the fork advanced model-parallel-rng by 32 * 64"
    assert (tmp_path / "rng.pt").exists()


def test_docs_python_example_runs():
    result = run_python(block("docs/python.md", "python-example"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("duplicate seed: seed 3952 is already used by")
    assert lines[1].startswith('{"format_version": 1, "default": {"seed": 1234, "offset": 0}, "states": '
                               '[{"name": "model-parallel-rng", "seed": 3952, "offset": 4096}')
