# SPDX-License-Identifier: Apache-2.0
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
    (tmp_path / "folder.rtck").mkdir()
    for path, message in ((foreign, "corrupt checkpoint: not an rngtrk checkpoint (bad magic)"),
                          (tmp_path / "folder.rtck", "cannot read: Is a directory")):
        result = python_tool("inspect", str(path))
        assert result.returncode == 1 and result.stdout == b""
        assert result.stderr.decode() == f"rngtrk inspect: {path}: {message}\n"
        assert (result.returncode, result.stderr) == (c_tool("inspect", str(path)).returncode,
                                                      c_tool("inspect", str(path)).stderr)


@pytest.mark.parametrize("args", [["inspect"], ["inspect", "a", "b"], ["inspect", "--bogus"], ["version", "x"],
                                  ["inspekt", "x"]])
def test_usage_errors_are_the_c_tools(args):
    py, c = python_tool(*args), c_tool(*args)
    assert py.returncode == c.returncode == 2
    assert py.stdout == b"" and py.stderr.count(b"\n") == 1
    assert py.stderr == c.stderr


def test_version_help_and_bare_usage():
    assert python_tool("version").stdout == c_tool("version").stdout == python_tool("--version").stdout
    for form in ("help", "--help", "-h"):
        result = python_tool(form)
        assert result.returncode == 0 and b"  inspect " in result.stdout and result.stderr == b""
    bare = python_tool()
    assert bare.returncode == 2 and bare.stderr.startswith(b"usage: python3 -m rngtrk COMMAND")


def test_sample_is_the_c_commands_only_and_says_so():
    result = python_tool("sample", "--seed", "0", "--count", "4")
    assert result.returncode == 2 and result.stdout == b""
    assert result.stderr.count(b"\n") == 1 and b"`rngtrk sample ...`" in result.stderr
    assert b"sample" not in python_tool("help").stdout  # no longer listed
    assert c_tool("sample", "--seed", "0", "--count", "4").stdout.count(b"\n") == 4  # where it lives
