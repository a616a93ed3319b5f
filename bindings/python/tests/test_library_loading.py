# SPDX-License-Identifier: Apache-2.0
"""Finding and opening librngtrk, and the version check at import."""
import ctypes.util
import os
import shutil
import subprocess

import pytest

import rngtrk
from rngtrk import _library

from conftest import BINDING_DIR, BUILD, run_python

REAL_LIBRARY = os.path.join(BUILD, _library.SONAME)


def test_from_a_checkout_the_build_folder_is_used():
    assert os.path.realpath(rngtrk.library_path) == os.path.realpath(REAL_LIBRARY)
    assert rngtrk.version_string() == ".".join(map(str, _library.HEADER_VERSION))


def test_candidates_come_in_the_documented_order(monkeypatch):
    monkeypatch.setenv("RNGTRK_LIBRARY", "/somewhere/librngtrk.so")
    wheres = [where for where, _ in _library.candidates()]
    expected = ["RNGTRK_LIBRARY", "package folder", "package folder", "checkout build/"]
    assert wheres[:4] == expected
    assert wheres[-1] == "dynamic loader"
    assert _library.candidates()[0][1] == "/somewhere/librngtrk.so"
    assert _library.candidates()[-1][1] == _library.SONAME
    if ctypes.util.find_library("rngtrk"):
        assert wheres[-2] == "ctypes.util.find_library"


def test_none_loading_gives_one_oserror_listing_every_path(tmp_path):
    not_a_library = tmp_path / "librngtrk.so.0"
    not_a_library.write_text("not an ELF file")
    tries = [("RNGTRK_LIBRARY", "/nonexistent/librngtrk.so"), ("package folder", str(not_a_library)),
             ("dynamic loader", "librngtrk-that-does-not-exist.so.0")]
    with pytest.raises(OSError) as raised:
        _library.open_first(tries)
    message = str(raised.value)
    for where, path in tries:
        assert f"{where}: {path}" in message
    assert "RNGTRK_LIBRARY" in message.splitlines()[-1]


def test_rngtrk_library_variable_wins(tmp_path):
    copy = tmp_path / "librngtrk-copy.so"
    shutil.copy(REAL_LIBRARY, copy)
    result = run_python("import rngtrk; print(rngtrk.library_path)", env={"RNGTRK_LIBRARY": str(copy)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(copy)


def test_an_unloadable_rngtrk_library_falls_through_to_the_next_candidate():
    result = run_python("import rngtrk; print(rngtrk.library_path)",
                        env={"RNGTRK_LIBRARY": "/nonexistent/librngtrk.so"})
    assert result.returncode == 0, result.stderr
    assert os.path.realpath(result.stdout.strip()) == os.path.realpath(REAL_LIBRARY)


def test_the_package_folder_is_searched_before_the_checkout(tmp_path):
    package = tmp_path / "rngtrk"
    shutil.copytree(os.path.join(BINDING_DIR, "rngtrk"), package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REAL_LIBRARY, package / _library.SONAME)
    result = run_python("import rngtrk; print(rngtrk.library_path)", env={"RNGTRK_LIBRARY": None},
                        cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(package / _library.SONAME)


def test_outside_a_checkout_with_no_library_anywhere_the_error_lists_what_was_tried(tmp_path):
    if ctypes.util.find_library("rngtrk"):
        pytest.skip("a librngtrk is installed system-wide, so the loader would find it")
    shutil.copytree(os.path.join(BINDING_DIR, "rngtrk"), tmp_path / "rngtrk",
                    ignore=shutil.ignore_patterns("__pycache__"))
    result = run_python("import rngtrk", cwd=str(tmp_path),
                        env={"RNGTRK_LIBRARY": "/nonexistent/librngtrk.so", "LD_LIBRARY_PATH": None})
    assert result.returncode != 0
    assert "OSError: rngtrk: cannot load librngtrk; tried, in order:" in result.stderr
    assert "RNGTRK_LIBRARY: /nonexistent/librngtrk.so: no such file" in result.stderr
    assert f"package folder: {tmp_path / 'rngtrk' / _library.SONAME}" in result.stderr
    assert f"dynamic loader: {_library.SONAME}" in result.stderr
    assert "checkout build/" not in result.stderr
    # ... and names the two ways out.
    assert "pip install bindings/python" in result.stderr and "set RNGTRK_LIBRARY" in result.stderr


@pytest.fixture
def fake_library(tmp_path):
    """A shared object whose rngtrk_version_number() says 9.9.9."""
    source = tmp_path / "fake.c"
    source.write_text("unsigned rngtrk_version_number(void) { return 90909; }\n")
    library = tmp_path / "libfake.so"
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-o", str(library), str(source)],
                   check=True)
    return library


def test_a_library_of_another_version_is_refused_at_import(fake_library):
    result = run_python("import rngtrk", env={"RNGTRK_LIBRARY": str(fake_library)})
    assert result.returncode != 0
    assert "ImportError" in result.stderr
    assert f"{fake_library} is librngtrk 9.9.9" in result.stderr
    assert "needs a library 0.1.x" in result.stderr


@pytest.mark.parametrize("library, header, compatible", [
    (100, (0, 1, 0), True), (105, (0, 1, 0), True), (200, (0, 1, 0), False), (99, (0, 1, 0), False),
    (10000, (0, 1, 0), False), (10203, (1, 2, 0), True), (10300, (1, 2, 0), True),
    (10100, (1, 2, 0), False), (20200, (1, 2, 0), False),
])
def test_version_compatibility_rule(library, header, compatible):
    assert _library.is_compatible(library, header) is compatible


def test_an_import_that_finds_the_library_early_never_asks_ctypes_util(tmp_path):
    # ctypes.util.find_library runs ldconfig and the compiler: it is the
    # fourth candidate, asked only when the first three fail to open.
    copy = tmp_path / "librngtrk-copy.so"
    shutil.copy(REAL_LIBRARY, copy)
    code = "import sys, rngtrk; print(rngtrk.library_path, 'ctypes.util' in sys.modules)"
    result = run_python(code, env={"RNGTRK_LIBRARY": str(copy)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(copy), "False"]
    result = run_python(code, env={"RNGTRK_LIBRARY": None})  # from build/, the checkout's
    assert result.stdout.split() == [os.path.join(BUILD, _library.SONAME), "False"], result.stderr
