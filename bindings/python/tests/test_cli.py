"""python3 -m rngtrk: byte-identical to the C `rngtrk` command."""
import glob
import os
import subprocess
import sys

import pytest

from conftest import BINDING_DIR, BUILD, vector_path

C_TOOL = os.path.join(BUILD, "rngtrk")
ALL_FILES = sorted(glob.glob(vector_path("checkpoints", "*.rtck")) +
                   glob.glob(vector_path("checkpoints", "invalid", "*.rtck"))) + ["/nonexistent/x.rtck"]


def python_tool(*args):
    env = dict(os.environ, PYTHONPATH=BINDING_DIR, LC_ALL="C")  # a non-UTF-8 locale on purpose
    return subprocess.run([sys.executable, "-m", "rngtrk", *args], capture_output=True, env=env)


def c_tool(*args):
    assert os.path.exists(C_TOOL), "run make first"
    return subprocess.run([C_TOOL, *args], capture_output=True)


@pytest.mark.parametrize("path", ALL_FILES, ids=os.path.basename)
def test_inspect_matches_the_c_tool_byte_for_byte(path):
    py, c = python_tool("inspect", path), c_tool("inspect", path)
    assert (py.returncode, py.stdout, py.stderr) == (c.returncode, c.stdout, c.stderr)


@pytest.mark.parametrize("json_path", glob.glob(vector_path("checkpoints", "*.json")), ids=os.path.basename)
def test_inspect_prints_the_golden_json(json_path):
    result = python_tool("inspect", json_path[:-5] + ".rtck")
    assert result.returncode == 0
    with open(json_path, "rb") as f:
        assert result.stdout == f.read()


def test_errors_are_one_line_on_stderr_and_exit_1(tmp_path):
    foreign = tmp_path / "foreign.bin"
    foreign.write_bytes(b"PK\x03\x04 not a checkpoint")
    result = python_tool("inspect", str(foreign))
    assert result.returncode == 1 and result.stdout == b""
    assert result.stderr.decode() == f"rngtrk: {foreign}: not an rngtrk checkpoint (bad magic)\n"


def test_version_usage_and_unknown_commands():
    assert python_tool("version").stdout == c_tool("version").stdout
    assert python_tool("--help").returncode == 0 and b"inspect FILE" in python_tool("--help").stdout
    for args in ([], ["bogus"], ["inspect"]):
        py, c = python_tool(*args), c_tool(*args)
        assert py.returncode == c.returncode == 2
        # The C tool also has `sample`; both usages start with inspect.
        assert py.stderr.startswith(b"usage: rngtrk inspect FILE") and c.stderr.startswith(py.stderr.split(b"\n")[0])
