# SPDX-License-Identifier: Apache-2.0
"""`pip install bindings/python` works offline (in-tree build backend, no
build requirement to fetch), bundles the library built in this checkout,
and the installed package works from any directory with no environment
variable."""
import os
import pathlib
import subprocess
import sys
import zipfile

import pytest

from conftest import BINDING_DIR, BUILD, REPO

LIBRARY = os.path.join(BUILD, "librngtrk.so.0")
CHECK = ("import rngtrk, sys; t = rngtrk.Tracker(); t.add('a', 1); "
         "print(rngtrk.__file__); print(rngtrk.library_path); print(rngtrk.version_string())")


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A virtual environment that sees the system's cffi and numpy."""
    where = tmp_path_factory.mktemp("venv")
    result = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(where)],
                            capture_output=True, text=True)
    assert result.returncode == 0, "python3 -m venv failed (Debian: apt-get install python3-venv):\n" + \
        result.stderr
    return where


def pip_install(venv, *extra, env=None):
    full_env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", **(env or {}))
    full_env.pop("PYTHONPATH", None)
    pip = [str(venv / "bin" / "python"), "-m", "pip"]
    subprocess.run(pip + ["uninstall", "-y", "rngtrk"], capture_output=True, env=full_env)
    # Dependencies are resolved for real: cffi comes from the system (Debian).
    return subprocess.run(pip + ["install", "--no-index", *extra, BINDING_DIR],
                          capture_output=True, text=True, env=full_env)


def run_in(venv, cwd, env):
    full_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RNGTRK_LIBRARY")}
    full_env.update(env)
    return subprocess.run([str(venv / "bin" / "python"), "-c", CHECK], capture_output=True, text=True,
                          cwd=cwd, env=full_env)


def test_a_plain_pip_install_works_from_any_directory_without_environment_variables(venv, tmp_path):
    result = pip_install(venv)
    assert result.returncode == 0, result.stdout + result.stderr
    code = ("import rngtrk; print(rngtrk.uniform_f32(rngtrk.PhiloxState(0, 0), 4)); "
            "print(rngtrk.library_path); print(rngtrk.__file__)")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RNGTRK_LIBRARY", "LD_LIBRARY_PATH")}
    run = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True,
                         cwd="/tmp", env=env)
    assert run.returncode == 0, run.stderr
    values, library, module = run.stdout.split("\n")[:3]
    assert values.startswith("[") and len(values.strip("[]").split()) == 4
    assert library == os.path.join(os.path.dirname(module), "librngtrk.so.0")
    assert module.startswith(str(venv))


def test_pip_installs_offline_and_the_package_uses_rngtrk_library(venv, tmp_path):
    result = pip_install(venv)
    assert result.returncode == 0, result.stdout + result.stderr
    run = run_in(venv, str(tmp_path), {"RNGTRK_LIBRARY": LIBRARY})
    assert run.returncode == 0, run.stderr
    module, library, version = run.stdout.split("\n")[:3]
    assert module.startswith(str(venv)) and library == LIBRARY and version == "0.1.0"


def test_a_wheel_can_carry_the_library_in_the_package_folder(venv, tmp_path):
    result = pip_install(venv, env={"RNGTRK_BUNDLE_LIBRARY": LIBRARY})
    assert result.returncode == 0, result.stdout + result.stderr
    run = run_in(venv, str(tmp_path), {})
    assert run.returncode == 0, run.stderr
    module, library = run.stdout.split("\n")[:2]
    assert library == os.path.join(os.path.dirname(module), "librngtrk.so.0")


@pytest.mark.parametrize("bundle", ["", "none"])
def test_the_wheel_records_every_file_with_its_hash(tmp_path, monkeypatch, bundle):
    sys.path.insert(0, os.path.join(BINDING_DIR, "build_backend"))
    try:
        import rngtrk_build
    finally:
        sys.path.pop(0)
    monkeypatch.setenv("RNGTRK_BUNDLE_LIBRARY", bundle)
    name = rngtrk_build.build_wheel(str(tmp_path))
    wheel = zipfile.ZipFile(tmp_path / name)
    record = wheel.read("rngtrk-0.1.0.dist-info/RECORD").decode().splitlines()
    names = set(wheel.namelist())
    assert {line.split(",")[0] for line in record} == names
    for line in record:
        path, digest, size = line.split(",")
        if digest:
            assert int(size) == len(wheel.read(path))
    assert {"rngtrk/_cdef.py", "rngtrk/_rngtrk_ffi.py"} <= names  # the declarations, parsed already
    # Every module of the source tree, subpackages included (rngtrk/torch/).
    package = os.path.join(BINDING_DIR, "rngtrk")
    sources = {"rngtrk/" + os.path.relpath(os.path.join(d, f), package).replace(os.sep, "/")
               for d, _, fs in os.walk(package) if "__pycache__" not in d for f in fs if f.endswith(".py")}
    assert "rngtrk/torch/_tracker.py" in sources and sources <= names, sorted(sources - names)
    # From a checkout the library is in the wheel (tagged for this platform)
    # unless RNGTRK_BUNDLE_LIBRARY=none asks for a pure-Python one.
    assert ("rngtrk/librngtrk.so.0" in names) == (bundle != "none")
    assert name.endswith("py3-none-any.whl") == (bundle == "none")
    metadata = wheel.read("rngtrk-0.1.0.dist-info/METADATA").decode()
    assert "Requires-Dist: cffi>=1.12" in metadata
    assert_licensed(metadata, wheel.read("rngtrk-0.1.0.dist-info/LICENSE"))


def assert_licensed(metadata, licence_text):
    """The metadata names Apache-2.0, carries the README as its long
    description and names no host; the licence's text is the root LICENSE."""
    headers, _, body = metadata.partition("\n\n")
    assert "License: Apache-2.0" in headers.splitlines()
    assert "Classifier: License :: OSI Approved :: Apache Software License" in headers.splitlines()
    assert "Description-Content-Type: text/markdown" in headers.splitlines()
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        assert body == f.read()
    assert "http" not in headers and "Home-page" not in headers
    with open(os.path.join(REPO, "LICENSE"), "rb") as f:
        assert licence_text == f.read()
    assert b"Apache License" in licence_text and b"Version 2.0, January 2004" in licence_text


def test_the_package_version_is_the_headers():
    with open(os.path.join(REPO, "c_api", "rngtrk.h")) as f:
        header = f.read()
    import rngtrk
    parts = [line.split()[2] for line in header.splitlines()
             if line.startswith("#define RNGTRK_VERSION_") and line.split()[1][-5:] in ("MAJOR", "MINOR", "PATCH")]
    assert rngtrk.__version__ == ".".join(parts)


def test_the_sdist_holds_what_a_wheel_build_needs(tmp_path):
    import tarfile
    sys.path.insert(0, os.path.join(BINDING_DIR, "build_backend"))
    try:
        import rngtrk_build
    finally:
        sys.path.pop(0)
    name = rngtrk_build.build_sdist(str(tmp_path))
    with tarfile.open(tmp_path / name) as sdist:
        members = set(sdist.getnames())
        sdist.extractall(tmp_path / "unpacked")
    base = "rngtrk-0.1.0"
    assert {f"{base}/pyproject.toml", f"{base}/PKG-INFO", f"{base}/build_backend/rngtrk_build.py",
            f"{base}/rngtrk/_cdef.py", f"{base}/rngtrk/_rngtrk_ffi.py", f"{base}/rngtrk/tracker.py",
            f"{base}/README.md", f"{base}/LICENSE"} <= members
    # Every module of the backend (rngtrk_build.py imports the others).
    backend = {f"{base}/build_backend/{n}" for n in os.listdir(os.path.join(BINDING_DIR, "build_backend"))
               if n.endswith(".py")}
    assert f"{base}/build_backend/rngtrk_build_elf.py" in backend and len(backend) >= 6, backend
    assert {m for m in members if m.startswith(f"{base}/build_backend/")} == backend
    # The library's sources: library.mk, what it lists (CPU-only), the version script.
    lists = rngtrk_build.read_library_mk(os.path.join(REPO, "library.mk"))
    for path in lists["LIB_SOURCES"] + lists["NO_CUDA_SOURCES"] + ["library.mk", "c_api/exports.map",
                                                                   "c_api/rngtrk.h"]:
        assert f"{base}/{path}" in members, path
    assert f"{base}/cuda/cuda_backend.cu" not in members
    unpacked = tmp_path / "unpacked" / base
    assert_licensed((unpacked / "PKG-INFO").read_text(encoding="utf-8"), (unpacked / "LICENSE").read_bytes())
    # The unpacked sdist builds the same wheel contents on its own (here
    # without compiling the library: tests/wheel_test.sh installs the sdist).
    build = subprocess.run(
        [sys.executable, "-c", "import sys, rngtrk_build; print(rngtrk_build.build_wheel(sys.argv[1]))",
         str(tmp_path)], cwd=str(tmp_path / "unpacked" / base / "build_backend"),
        capture_output=True, text=True, env=dict(os.environ, RNGTRK_BUNDLE_LIBRARY="none"))
    assert build.returncode == 0, build.stderr
    wheel = zipfile.ZipFile(tmp_path / build.stdout.strip())
    assert {"rngtrk/_cdef.py", "rngtrk/_rngtrk_ffi.py"} <= set(wheel.namelist())
    assert_licensed(wheel.read("rngtrk-0.1.0.dist-info/METADATA").decode(), wheel.read("rngtrk-0.1.0.dist-info/LICENSE"))


def test_pip_wheel_makes_a_wheel_that_installs_alone_and_runs_the_readme_example(venv, tmp_path):
    """`pip wheel --no-deps -w dist bindings/python`: the wheel file alone installs into a
    fresh --system-site-packages venv (Debian's cffi and numpy), runs the
    README's Python example from another directory, and says in
    .dist-info/bundled_library.json which library it carries."""
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    dist = tmp_path / "dist"
    made = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-index", "-w", str(dist),
                           BINDING_DIR], capture_output=True, text=True, env=env)
    assert made.returncode == 0, made.stdout + made.stderr
    (wheel_path,) = dist.glob("rngtrk-0.1.0-*.whl")
    wheel = zipfile.ZipFile(wheel_path)
    import hashlib
    import json
    record = json.loads(wheel.read("rngtrk-0.1.0.dist-info/bundled_library.json"))
    bundled = wheel.read(record["file"])
    assert record["sha256"] == hashlib.sha256(bundled).hexdigest() and record["size"] == len(bundled)
    # Made from the objects `make lib` built, linked again with libstdc++ and
    # libgcc inside and stripped; tagged for the glibc it needs.
    assert record["version"] == "0.1.0"
    assert record["source"] == os.path.join(REPO, "build", "obj", "shared-objects.a")
    # The build's CUDA modules go beside the library, stripped, each recorded.
    built_modules = sorted(p.name for p in pathlib.Path(REPO, "build").glob("librngtrk_cuda*.so"))
    assert [m["file"] for m in record["cuda_modules"]] == [f"rngtrk/{name}" for name in built_modules]
    for module in record["cuda_modules"]:
        data = wheel.read(module["file"])
        assert module["sha256"] == hashlib.sha256(data).hexdigest() and module["size"] == len(data)
        assert module["platform"].startswith("manylinux_2_"), module
    assert record["stripped"] == "strip --strip-debug"
    assert wheel_path.name == f"rngtrk-0.1.0-py3-none-{record['platform']}.whl"
    assert record["platform"].startswith("manylinux_2_"), record["platform_reason"]
    fresh = tmp_path / "fresh-venv"
    assert subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(fresh)]).returncode == 0
    installed = subprocess.run([str(fresh / "bin" / "pip"), "install", "--no-index", str(wheel_path)],
                               capture_output=True, text=True, env=env)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    with open(os.path.join(REPO, "README.md")) as f:
        readme = f.read()
    example = readme.split("<!-- readme-python-example:begin -->")[1].split("```python")[1].split("```")[0]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ran = subprocess.run([str(fresh / "bin" / "python"), "-c", example], capture_output=True, text=True,
                         cwd=str(elsewhere), env={k: v for k, v in env.items() if k != "RNGTRK_LIBRARY"})
    assert ran.returncode == 0, ran.stderr
    assert '"model-parallel-rng"' in ran.stdout
    shown = subprocess.run([str(fresh / "bin" / "python"), "-c", "import importlib.metadata as m; "
                            "print(m.distribution('rngtrk').read_text('bundled_library.json'))"],
                           capture_output=True, text=True, cwd=str(elsewhere), env=env)
    assert json.loads(shown.stdout) == record, "the installed package still says which library it carries"
