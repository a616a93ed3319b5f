# SPDX-License-Identifier: Apache-2.0
"""The wheel's library and its tag (build_backend/: rngtrk_build.py, the
hooks, and the modules of each job, rngtrk_build_elf.py and the like): the
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
    # The modules of the names the tests replace (monkeypatch) or read
    # beyond rngtrk_build's re-exports: a name is replaced in the module
    # that owns it, where the backend looks it up.
    import rngtrk_build_compile
    import rngtrk_build_elf
    import rngtrk_build_metadata
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


# -- RNGTRK_BUNDLE_LIBRARY: an absolute path to a library that loads here and
# -- whose version the package accepts.

def edited_copy(tmp_path, name, machine):
    """A copy of make's library with its ELF e_machine set to `machine`."""
    data = bytearray(open(os.path.realpath(LIBRARY), "rb").read())
    data[18:20] = machine.to_bytes(2, "little" if data[5] == 1 else "big")
    path = tmp_path / name
    path.write_bytes(bytes(data))
    return str(path)


def build_wheel_fails(tmp_path, capfd, bundle, *says):
    """build_wheel with RNGTRK_BUNDLE_LIBRARY=bundle exits 1 with one line on
    stderr, no traceback, holding every one of `says`, and writes no wheel."""
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    os.environ["RNGTRK_BUNDLE_LIBRARY"] = bundle
    capfd.readouterr()
    with pytest.raises(SystemExit) as exit_:
        rngtrk_build.build_wheel(str(out))
    err = capfd.readouterr().err
    assert exit_.value.code == 1 and len(err.strip().splitlines()) == 1, err
    for text in says:
        assert text in err, err
    assert not list(out.glob("*.whl"))
    return err


def test_a_bundled_library_must_be_absolute_load_here_and_match_the_version(tmp_path, capfd, monkeypatch):
    monkeypatch.setenv("RNGTRK_BUNDLE_LIBRARY", "")
    build_wheel_fails(tmp_path, capfd, "build/librngtrk.so.0", "a relative path", "$PWD/build/librngtrk.so.0")
    other = 183 if os.uname().machine != "aarch64" else 62
    build_wheel_fails(tmp_path, capfd, edited_copy(tmp_path, "librngtrk.so.0", other),
                      "RNGTRK_BUNDLE_LIBRARY", "does not open here", "built for this machine")
    text = tmp_path / "text.so.0"
    text.write_text("not a library\n")
    build_wheel_fails(tmp_path, capfd, str(text), "does not open here")
    # make's library (0.1.0) for a package of another version, under _library.py's rule.
    for package in ("0.2.0", "1.1.0"):
        monkeypatch.setattr(rngtrk_build_metadata, "_version", lambda: package)
        build_wheel_fails(tmp_path, capfd, LIBRARY, "is librngtrk 0.1.0", f"rngtrk {package} would refuse")
    monkeypatch.undo()
    assert rngtrk_build.check_library(LIBRARY, "make's library") == "0.1.0"


@pytest.mark.parametrize("package", ["0.1.0", "0.3.2", "1.2.0", "2.0.5"])
def test_the_backend_applies_the_import_version_rule(monkeypatch, package):
    from rngtrk import _library
    monkeypatch.setattr(rngtrk_build_metadata, "_version", lambda: package)
    header = tuple(int(p) for p in package.split("."))
    numbers = [major * 10000 + minor * 100 + patch for major in range(4) for minor in range(5) for patch in (0, 7)]
    assert [rngtrk_build.is_compatible(n) for n in numbers] == [_library.is_compatible(n, header) for n in numbers]
    assert any(rngtrk_build.is_compatible(n) for n in numbers) and not all(rngtrk_build.is_compatible(n) for n in numbers)


# -- The tag: glibc's versions, the architecture, no .dynamic.

def needs(*versions, machine="x86_64"):
    return {"machine": machine, "needed": ["libc.so.6", "libm.so.6"], "versions": {"libc.so.6": list(versions)}}


@pytest.mark.parametrize("versions, tag", [
    (["GLIBC_2.2.5", "GLIBC_2.14"], "manylinux_2_17_x86_64"),
    (["GLIBC_2.14", "GLIBC_ABI_DT_RELR"], "manylinux_2_36_x86_64"),
    (["GLIBC_ABI_DT_RELR", "GLIBC_2.38"], "manylinux_2_38_x86_64"),
    (["GLIBC_2.14", "GLIBC_PRIVATE"], "linux_x86_64"),
    (["GLIBC_2.14", "GLIBC_ABI_SOMETHING_NEW"], "linux_x86_64"),
])
def test_glibc_versions_that_are_not_2_n(capfd, versions, tag):
    got, why = rngtrk_build.tag_from_needs(needs(*versions), "lib.so")
    assert got == tag, why
    err = capfd.readouterr().err
    if tag.startswith("linux_"):
        assert versions[-1] in why and why in err
    else:
        assert err == ""


def test_ppc64_is_ppc64le_or_ppc64_by_the_byte_order(tmp_path):
    assert rngtrk_build_elf._machine_name(21, True) == "ppc64le"
    assert rngtrk_build_elf._machine_name(21, False) == "ppc64"
    assert rngtrk_build.read_elf_needs(edited_copy(tmp_path, "ppc.so", 21))["machine"] == "ppc64le"  # make's is little-endian
    assert rngtrk_build.tag_from_needs(needs("GLIBC_2.17", machine="ppc64le"), "x")[0] == "manylinux_2_17_ppc64le"


def test_a_file_without_dynamic_section_is_refused():
    obj = os.path.join(BUILD, "obj", "core", "crc32.o")  # ELF, relocatable: no .dynamic
    assert os.path.isfile(obj), "run `make lib` first"
    with pytest.raises(rngtrk_build.BuildError, match="no .dynamic section"):
        rngtrk_build.platform_tag(obj)


# -- Where the sources are.

def copy_package(to):
    """bindings/python alone, as pip < 21.3 copies it before building."""
    to.mkdir()
    for name in ("pyproject.toml", "build_backend", "rngtrk"):
        source = os.path.join(BINDING_DIR, name)
        if os.path.isdir(source):
            shutil.copytree(source, to / name, ignore=shutil.ignore_patterns("__pycache__", "*.so*"))
        else:
            shutil.copy(source, to / name)
    return to


def run_hook(package, hook, out, **env):
    full = {k: v for k, v in os.environ.items() if k not in ("RNGTRK_BUNDLE_LIBRARY", "PYTHONPATH")}
    full.update(env)
    return subprocess.run([sys.executable, "-c", f"import sys, rngtrk_build; print(rngtrk_build.{hook}(sys.argv[1]))",
                           str(out)], cwd=str(package / "build_backend"), env=full, capture_output=True, text=True)


def test_a_package_folder_without_sources_fails_unless_told_what_to_bundle(tmp_path):
    package = copy_package(tmp_path / "copied")
    for hook in ("build_wheel", "build_editable"):
        result = run_hook(package, hook, tmp_path)
        assert result.returncode == 1, result.stdout + result.stderr
        err = result.stderr
        assert "no rngtrk sources around the package" in err and "pip before 21.3" in err, err
        for way in ("pip >= 21.3", "make sdist", "RNGTRK_BUNDLE_LIBRARY=/absolute/path", "RNGTRK_BUNDLE_LIBRARY=none"):
            assert way in err, (way, err)
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert not list(tmp_path.glob("*.whl"))
    # A library from the checkout: bundled (README.md and LICENSE from the checkout around it).
    result = run_hook(package, "build_wheel", tmp_path, RNGTRK_BUNDLE_LIBRARY=LIBRARY)
    assert result.returncode == 0, result.stderr
    assert "rngtrk/librngtrk.so.0" in zipfile.ZipFile(tmp_path / result.stdout.strip()).namelist()
    # none: nothing to build, but README.md is nowhere: one line says so.
    result = run_hook(package, "build_wheel", tmp_path / "copied", RNGTRK_BUNDLE_LIBRARY="none")
    assert result.returncode == 1 and "no README.md beside pyproject.toml" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_an_unpacked_sdist_inside_a_checkout_is_an_sdist(unpacked_sdist, tmp_path):
    fake = tmp_path / "checkout"
    (fake / "c_api").mkdir(parents=True)
    (fake / "Makefile").write_text("lib:\n\tfalse\n")
    (fake / "c_api" / "rngtrk.h").write_text("")
    inside = fake / "dist" / unpacked_sdist.name
    shutil.copytree(str(unpacked_sdist), str(inside))
    where = subprocess.run([sys.executable, "-c",
                            "import rngtrk_build_metadata as b; print(b._checkout_root(), b._source_root())"],
                           cwd=str(inside / "build_backend"), capture_output=True, text=True, check=True).stdout.split()
    assert where == ["None", str(inside)]
    assert rngtrk_build_metadata._checkout_root() == REPO  # the checkout's own package


def fake_run(calls, fail_first=False):
    """A stand-in for rngtrk_build_compile._run that records (what, -o target),
    touches the target, and fails the first compile when asked."""
    import time

    def run(command, cwd, what):
        target = command[command.index("-o") + 1] if "-o" in command else None
        calls.append((what, target))
        if fail_first and what.startswith("compiling") and len(calls) == 1:
            raise rngtrk_build.BuildError("rngtrk: compiling the first failed")
        time.sleep(0.02)
        if target:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            open(target, "wb").close()
    return run


def test_the_first_failed_compile_cancels_the_queued_ones(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(rngtrk_build_compile, "_run", fake_run(calls, fail_first=True))
    monkeypatch.setattr(rngtrk_build_compile.os, "cpu_count", lambda: 1)
    with pytest.raises(rngtrk_build.BuildError, match="the first failed"):
        rngtrk_build.compile_library(REPO, str(tmp_path / "librngtrk.so.0"))
    sources = rngtrk_build.read_library_mk(os.path.join(REPO, "library.mk"))["LIB_SOURCES"]
    assert len(sources) > 10 and len(calls) <= 2, calls  # the one worker may have taken the next already
    assert not any(what.startswith("linking") for what, _ in calls)


def test_an_editable_sdist_keeps_its_objects_out_of_the_package(monkeypatch, unpacked_sdist, tmp_path):
    sdist = tmp_path / unpacked_sdist.name
    shutil.copytree(str(unpacked_sdist), str(sdist))
    calls = []
    monkeypatch.setattr(rngtrk_build_compile, "_run", fake_run(calls))
    monkeypatch.setattr(rngtrk_build_metadata, "HERE", str(sdist))
    monkeypatch.delenv("RNGTRK_BUNDLE_LIBRARY", raising=False)
    rngtrk_build.build_editable(str(tmp_path))
    objects = [target for what, target in calls if what.startswith("compiling")]
    assert objects and all(t.startswith(str(sdist / "build" / "obj") + os.sep) for t in objects), objects
    assert [t for what, t in calls if what.startswith("linking")] == [str(sdist / "rngtrk" / "librngtrk.so.0")]
    assert sorted(os.listdir(sdist / "rngtrk")) == sorted(os.listdir(unpacked_sdist / "rngtrk") + ["librngtrk.so.0"])


def test_an_editable_install_refuses_a_library_to_bundle(monkeypatch, tmp_path, capfd):
    monkeypatch.setenv("RNGTRK_BUNDLE_LIBRARY", LIBRARY)
    monkeypatch.setattr(rngtrk_build_compile, "_make_lib", lambda root: pytest.fail("make lib ran"))
    with pytest.raises(SystemExit):
        rngtrk_build.build_editable(str(tmp_path))
    err = capfd.readouterr().err
    assert "is for wheels" in err and f"RNGTRK_LIBRARY={LIBRARY}" in err and "RNGTRK_BUNDLE_LIBRARY=none" in err
    assert len(err.strip().splitlines()) == 1 and not list(tmp_path.glob("*.whl"))


@pytest.mark.parametrize("line", ["LIB_SOURCES += core/extra.cpp", "WARNINGS := -Wall $(EXTRA)", "LIB_FLAGS = -fPIC",
                                  "LIB_FLAGS ?= -fPIC", "CORE_INCLUDES := ${TOP}/core"])
def test_library_mk_lines_the_reader_would_misread_are_refused(tmp_path, line):
    path = tmp_path / "library.mk"
    path.write_text(f"# comment\nLIB_SOURCES := core/a.cpp \\\n    core/b.cpp\n{line}\n")
    with pytest.raises(rngtrk_build.BuildError, match=r"is not a plain `NAME := words` line") as error:
        rngtrk_build.read_library_mk(str(path))
    assert " ".join(line.split()) in str(error.value)
    path.write_text("# comment\nLIB_SOURCES := core/a.cpp \\\n    core/b.cpp\n\nlib: ; $(CXX) $(LIB_SOURCES)\n")
    assert rngtrk_build.read_library_mk(str(path)) == {"LIB_SOURCES": ["core/a.cpp", "core/b.cpp"]}
