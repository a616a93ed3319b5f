"""README.md's Python example runs as written."""
import os
import re

from conftest import REPO, run_python


def test_readme_python_example_runs():
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    block = re.search(r"<!-- readme-python-example:begin -->\n```python\n(.*?)```\n"
                      r"<!-- readme-python-example:end -->", readme, re.DOTALL)
    assert block, "README.md lost its Python example markers"
    result = run_python(block.group(1))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("duplicate seed: seed 3952 is already used by")
    assert lines[1].startswith('{"format_version": 1, "default": {"seed": 1234, "offset": 0}, "states": '
                               '[{"name": "model-parallel-rng", "seed": 3952, "offset": 4096}')
