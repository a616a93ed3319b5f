# SPDX-License-Identifier: Apache-2.0
"""The wheel's library and its tag (build_backend/rngtrk_build.py): the
ELF reader against readelf, the tag rule, stripping, library.mk read as
make reads it, the sdist's sources complete by the compiler's own view, and
the one message of a build without a C++ compiler.  (tests/wheel_test.sh
installs the wheel, the sdist and the editable package.)"""
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

from conftest import BINDING_DIR, BUILD, REPO

sys.path.insert(0, os.path.join(BINDING_DIR, "build_backend"))
try:
    import rngtrk_build
finally:
    sys.path.pop(0)

LIBRARY = os.path.join(BUILD, "librngtrk.so.0")


def readelf(*args):
    return subprocess.run(["readelf", *args], capture_output=True, text=True, check=True,
                          env=dict(os.environ, LC_ALL="C")).stdout


def readelf_needs(path):
    """(NEEDED libraries, {library: versions}) by readelf -d and -V."""
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", readelf("-d", path))
    versions, current = {}, None
    text = readelf("-V", path)
    for line in text[text.index(".gnu.version_r"):].splitlines():
        file_match = re.search(r"File: (\S+)", line)
        if file_match:
            current = versions.setdefault(file_match.group(1), [])
        name = re.search(r"Name: (\S+)", line)
        if name and "File:" not in line:
            current.append(name.group(1))
    return needed, versions


@pytest.fixture(scope="module")
def wheel_library(tmp_path_factory):
    """The library of the wheel built from this checkout, and the wheel's name."""
    where = tmp_path_factory.mktemp("wheel")
    saved = os.environ.pop("RNGTRK_BUNDLE_LIBRARY", None)
    try:
        name = rngtrk_build.build_wheel(str(where))
    finally:
        if saved is not None:
            os.environ["RNGTRK_BUNDLE_LIBRARY"] = saved
    zipfile.ZipFile(where / name).extract("rngtrk/librngtrk.so.0", str(where))
    return str(where / "rngtrk" / "librngtrk.so.0"), name


def test_the_elf_reader_agrees_with_readelf(wheel_library):
    for path in (LIBRARY, wheel_library[0]):
        ours = rngtrk_build.read_elf_needs(path)
        needed, versions = readelf_needs(path)
        assert ours["needed"] == needed
        assert {k: sorted(v) for k, v in ours["versions"].items()} == {k: sorted(v) for k, v in versions.items()}
        assert ours["machine"] == os.uname().machine


def test_the_wheels_library_is_stripped_needs_only_glibc_and_is_tagged_by_its_highest_glibc(wheel_library):
    path, name = wheel_library
    sections = readelf("-S", "-W", path)
    assert ".text" in sections and ".debug_" not in sections
    assert os.path.getsize(path) < os.path.getsize(os.path.realpath(LIBRARY)) / 2
    needed, versions = readelf_needs(path)
    assert not {"libstdc++.so.6", "libgcc_s.so.1"} & set(needed), needed
    assert set(needed) <= rngtrk_build.MANYLINUX_LIBRARIES
    highest = max(int(v.split(".")[1]) for vs in versions.values() for v in vs if re.fullmatch(r"GLIBC_2\.\d+(\.\d+)?", v))
    assert name == f"rngtrk-0.1.0-py3-none-manylinux_2_{max(highest, 17)}_{os.uname().machine}.whl"


def test_a_library_that_needs_libstdcxx_is_tagged_linux_with_the_reason_on_stderr(capfd):
    # make's build/librngtrk.so.0 links libstdc++ and libgcc_s dynamically.
    tag, why = rngtrk_build.platform_tag(LIBRARY)
    assert tag == f"linux_{os.uname().machine}"
    assert "libstdc++.so.6" in why and "-static-libstdc++" in why
    assert why in capfd.readouterr().err


def test_library_mk_is_read_as_make_reads_it():
    names = ["LIB_SOURCES", "X86_64_SOURCES", "NO_CUDA_SOURCES", "DEFAULT_OPTFLAGS", "WARNINGS", "LIB_FLAGS",
             "CORE_INCLUDES", "C_API_INCLUDES", "ENGINE_SOURCES", "ENGINE_FLAGS", "AVX2_SOURCES", "AVX2_FLAGS",
             "AVX512_SOURCES", "AVX512_FLAGS", "AVX512_GCC_FLAGS", "LIB_LINK_FLAGS", "CUDA_LINK_LIBRARIES"]
    printer = "p:\n" + "".join(f"\t@echo '{n}=$({n})'\n" for n in names)
    made = subprocess.run(["make", "-s", "-f", os.path.join(REPO, "library.mk"), "-f", "-", "p"], input=printer,
                          capture_output=True, text=True, check=True).stdout
    by_make = {line.split("=", 1)[0]: line.split("=", 1)[1].split() for line in made.splitlines()}
    ours = rngtrk_build.read_library_mk(os.path.join(REPO, "library.mk"))
    assert {n: ours[n] for n in names} == by_make


@pytest.fixture(scope="module")
def unpacked_sdist(tmp_path_factory):
    where = tmp_path_factory.mktemp("sdist")
    name = rngtrk_build.build_sdist(str(where))
    with tarfile.open(where / name) as sdist:
        sdist.extractall(where)
    return where / name[:-len(".tar.gz")]


def test_the_sdist_holds_every_file_the_compiler_reads(unpacked_sdist):
    """g++ -MM, in the unpacked sdist, finds every header of every source
    (a missing one is an error), with the include folders of library.mk."""
    lists = rngtrk_build.read_library_mk(str(unpacked_sdist / "library.mk"))
    for source in lists["LIB_SOURCES"] + lists["NO_CUDA_SOURCES"]:
        includes = lists["C_API_INCLUDES"] if source.startswith("c_api/") else lists["CORE_INCLUDES"]
        result = subprocess.run(["g++", "-std=c++17", "-MM"] + [f"-I{i}" for i in includes] + [source],
                                cwd=str(unpacked_sdist), capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        for header in result.stdout.replace("\\\n", " ").split(":", 1)[1].split():
            assert (unpacked_sdist / header).is_file(), header


def test_no_compiler_fails_with_one_message_and_no_traceback(unpacked_sdist, tmp_path):
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("ar", "strip"):
        os.symlink(shutil.which(tool), bare / tool)
    for cxx, says in (("", "no C++ compiler (c++, g++, clang++) on PATH"), ("/nonexistent", "$CXX is '/nonexistent'")):
        env = {k: v for k, v in os.environ.items() if k not in ("RNGTRK_BUNDLE_LIBRARY", "CXX")}
        env.update(PATH=str(bare), CXX=cxx)
        result = subprocess.run([sys.executable, "-c", "import sys, rngtrk_build; rngtrk_build.build_wheel(sys.argv[1])",
                                 str(tmp_path)], cwd=str(unpacked_sdist / "build_backend"), env=env,
                                capture_output=True, text=True)
        assert result.returncode == 1
        assert says in result.stderr and "apt-get install g++" in result.stderr
        assert "RNGTRK_BUNDLE_LIBRARY=/path/to/librngtrk.so.0" in result.stderr
        assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert not list(tmp_path.glob("*.whl"))
