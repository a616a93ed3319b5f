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


def test_readme_pytorch_example_runs():
    pytest.importorskip("torch", reason="PyTorch is not installed (Debian: python3-torch): the example not run")
    result = run_python(block("README.md", "readme-torch-example"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("tensor([")


def test_docs_python_example_runs():
    result = run_python(block("docs/python.md", "python-example"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("duplicate seed: seed 3952 is already used by")
    assert lines[1].startswith('{"format_version": 1, "default": {"seed": 1234, "offset": 0}, "states": '
                               '[{"name": "model-parallel-rng", "seed": 3952, "offset": 4096}')
