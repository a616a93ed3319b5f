# SPDX-License-Identifier: Apache-2.0
"""A PEP 517 build backend for the rngtrk Python package, with no dependency.

pip cannot reach PyPI on every machine rngtrk is built on, so the usual
backends (setuptools, flit, hatchling) cannot be assumed.  A pure-Python
wheel is a zip file with a .dist-info folder; this module writes one.

Metadata comes from pyproject.toml's [project] table (read with a small
parser for the forms used there, so Python < 3.11 needs no tomli) and the
version from rngtrk/_cdef.py, i.e. from c_api/rngtrk.h.

The wheel carries librngtrk in the package folder, so the installed
package works from any directory with no environment variable, and says
which library it carries in .dist-info/bundled_library.json (the file, its
sha256 and size, the version the library reports, where it was taken from):

- RNGTRK_BUNDLE_LIBRARY=/path/to/librngtrk.so.0 bundles that file;
- otherwise, built from an rngtrk checkout, it runs `make lib` there (a
  no-op when build/ is current) and bundles build/librngtrk.so.MAJOR;
- RNGTRK_BUNDLE_LIBRARY=none, or a source tree with no checkout around it
  (an sdist), gives a pure-Python wheel that finds the library at import
  time (RNGTRK_LIBRARY, ldconfig, the soname).
"""
import base64
import hashlib
import io
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "rngtrk"


def _project_table():
    """{key: str or list} of the [project] lines `key = "v"`, `key = ["a", ...]`
    and `key = { extra = ["a", ...] }`."""
    with open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    section = re.search(r"^\[project\]\n(.*?)(?=^\[|\Z)", text, re.MULTILINE | re.DOTALL).group(1)
    table = {}
    for key, value in re.findall(r"^([\w-]+) = (.+?)\s*(?:#.*)?$", section, re.MULTILINE):
        if value.startswith("{"):
            table[key] = {k: re.findall(r'"([^"]*)"', v)
                          for k, v in re.findall(r"([\w-]+) = (\[[^\]]*\])", value)}
        elif value.startswith("["):
            table[key] = re.findall(r'"([^"]*)"', value)
        else:
            table[key] = value.strip('"')
    return table


def _version():
    with open(os.path.join(HERE, PACKAGE, "_cdef.py"), encoding="utf-8") as f:
        text = f.read()
    parts = [re.search(rf"^#define RNGTRK_VERSION_{p} ([0-9]+)$", text, re.MULTILINE).group(1)
             for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def _top_file(name):
    """A file of the repository's root (README.md, LICENSE): beside
    pyproject.toml in an unpacked sdist, else in the checkout around it."""
    for folder in (HERE, _checkout_root()):
        if folder is not None and os.path.isfile(os.path.join(folder, name)):
            with open(os.path.join(folder, name), "rb") as f:
                return f.read()
    raise FileNotFoundError(f"rngtrk: no {name} beside pyproject.toml or in the checkout around it")


def _metadata():
    """METADATA / PKG-INFO: core metadata 2.1, which every pip reads; the
    licence as its SPDX expression in License, with the text in LICENSE."""
    project = _project_table()
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {_version()}",
             f"Summary: {project['description']}", f"License: {project['license']}",
             f"Requires-Python: {project['requires-python']}"]
    lines += [f"Classifier: {c}" for c in project.get("classifiers", [])]
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    for extra, requirements in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {r}; extra == "{extra}"' for r in requirements]
    lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + _top_file(project["readme"]).decode("utf-8")


def _package_files():
    """(path inside the archive, bytes) of the package's sources."""
    files = []
    top = os.path.join(HERE, PACKAGE)
    for folder, subfolders, names in os.walk(top):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")  # rngtrk/torch/ and the like
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, "rb") as f:
                    files.append((f"{PACKAGE}/{os.path.relpath(path, top).replace(os.sep, '/')}", f.read()))
    return files


def _checkout_root():
    """The rngtrk checkout this package sits in, or None (an unpacked sdist)."""
    root = os.path.normpath(os.path.join(HERE, "..", ".."))
    markers = ("Makefile", os.path.join("c_api", "rngtrk.h"))
    return root if all(os.path.isfile(os.path.join(root, m)) for m in markers) else None


def _library_to_bundle():
    """The path of the librngtrk to put in the wheel, or None."""
    major = _version().split(".")[0]
    chosen = os.environ.get("RNGTRK_BUNDLE_LIBRARY", "")
    if chosen.lower() == "none":
        return None
    if chosen:
        return chosen
    root = _checkout_root()
    if root is None:
        return None
    # make's output goes to stderr, so that pip shows it only when asked (-v)
    # or when the build fails.
    result = subprocess.run(["make", "-C", root, "lib"], stdout=sys.stderr, stderr=sys.stderr)
    if result.returncode != 0:
        raise RuntimeError(f"rngtrk: `make -C {root} lib` failed (exit {result.returncode}); build the "
                           f"library first, or set RNGTRK_BUNDLE_LIBRARY to a librngtrk.so.{major} "
                           "(or to 'none' for a wheel without it)")
    return os.path.join(root, "build", f"librngtrk.so.{major}")


def _bundled_library():
    """(path in the wheel, bytes, the record of it for bundled_library.json), or None."""
    path = _library_to_bundle()
    if path is None:
        return None
    major = _version().split(".")[0]
    with open(path, "rb") as f:
        data = f.read()
    import ctypes
    import json
    opened = ctypes.CDLL(os.path.abspath(path))
    opened.rngtrk_version_string.restype = ctypes.c_char_p
    record = {"file": f"{PACKAGE}/librngtrk.so.{major}", "sha256": hashlib.sha256(data).hexdigest(),
              "size": len(data), "version": opened.rngtrk_version_string().decode("ascii"),
              "source": os.path.realpath(path)}
    return (record["file"], data, json.dumps(record, indent=1, sort_keys=True).encode() + b"\n")


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _write_wheel(directory, files, tag, purelib, dist_info_files=()):
    dist_info = f"{PACKAGE}-{_version()}.dist-info"
    wheel_text = (f"Wheel-Version: 1.0\nGenerator: rngtrk_build\nRoot-Is-Purelib: {str(purelib).lower()}\n"
                  f"Tag: {tag}\n")
    files = files + [(f"{dist_info}/METADATA", _metadata().encode()),
                     (f"{dist_info}/WHEEL", wheel_text.encode()),
                     (f"{dist_info}/LICENSE", _top_file("LICENSE"))] + \
        [(f"{dist_info}/{name}", data) for name, data in dist_info_files]
    record = "\n".join(_record_line(p, d) for p, d in files) + f"\n{dist_info}/RECORD,,\n"
    files.append((f"{dist_info}/RECORD", record.encode()))
    filename = f"{PACKAGE}-{_version()}-{tag}.whl"
    with zipfile.ZipFile(os.path.join(directory, filename), "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in files:
            info = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if path.endswith(".so." + _version().split(".")[0]) else 0o644) << 16
            wheel.writestr(info, data, zipfile.ZIP_DEFLATED)
    return filename


# -- PEP 517 hooks -----------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = _package_files()
    library = _bundled_library()
    if library is None:
        return _write_wheel(wheel_directory, files, "py3-none-any", purelib=True)
    platform = re.sub(r"[-.]", "_", sysconfig.get_platform())
    path, data, record = library
    return _write_wheel(wheel_directory, files + [(path, data)], f"py3-none-{platform}", purelib=False,
                        dist_info_files=[("bundled_library.json", record)])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 660: a wheel whose .pth file puts this folder on sys.path."""
    return _write_wheel(wheel_directory, [(f"_{PACKAGE}_editable.pth", (HERE + "\n").encode())],
                        "py3-none-any", purelib=True)


def build_sdist(sdist_directory, config_settings=None):
    base = f"{PACKAGE}-{_version()}"
    members = [("pyproject.toml", None), ("build_backend/rngtrk_build.py", None)]
    members += [(path, None) for path, _ in _package_files()]
    filename = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as sdist:
        for path, _ in members:
            sdist.add(os.path.join(HERE, path), arcname=f"{base}/{path}")
        for name, data in (("PKG-INFO", _metadata().encode()), ("README.md", _top_file("README.md")),
                           ("LICENSE", _top_file("LICENSE"))):
            info = tarfile.TarInfo(f"{base}/{name}")
            info.size = len(data)
            sdist.addfile(info, io.BytesIO(data))
    return filename
