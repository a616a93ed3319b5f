# SPDX-License-Identifier: Apache-2.0
"""The rngtrk package's metadata and where its files are, for the build
backend (rngtrk_build.py): pyproject.toml's [project] table, the version,
the core metadata (METADATA / PKG-INFO), the package's source files, the
repository's top files (README.md, LICENSE), and whether this folder sits
in an rngtrk checkout or in an unpacked sdist.

pyproject.toml's [project] table is read with a small parser for the forms
used there, so Python < 3.11 needs no tomli; the version comes from
rngtrk/_cdef.py, i.e. from c_api/rngtrk.h.

HERE is the package folder (bindings/python, or an unpacked sdist's top):
the other modules read it, and _version, as metadata.HERE and
metadata._version(), so that a test that sets them here sets them for all.
"""
import os
import re

from rngtrk_build_errors import BuildError

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
    pyproject.toml in an unpacked sdist, else in the checkout around it,
    else in the checkout around RNGTRK_BUNDLE_LIBRARY's file (its build/)."""
    chosen = os.environ.get("RNGTRK_BUNDLE_LIBRARY", "")
    around_chosen = _is_checkout(os.path.join(os.path.dirname(chosen), "..")) if os.path.isabs(chosen) else None
    for folder in (HERE, _checkout_root(), around_chosen):
        if folder is not None and os.path.isfile(os.path.join(folder, name)):
            with open(os.path.join(folder, name), "rb") as f:
                return f.read()
    raise BuildError(f"rngtrk: no {name} beside pyproject.toml ({HERE}) nor in an rngtrk checkout around it "
                     "(pip before 21.3 copies bindings/python alone to a temporary folder): use pip >= 21.3, "
                     "or install the sdist (`make sdist`), which carries it")


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


def _is_checkout(folder):
    """`folder`, normalised, if it is an rngtrk checkout's root, else None."""
    root = os.path.normpath(folder)
    markers = ("Makefile", os.path.join("c_api", "rngtrk.h"))
    return root if all(os.path.isfile(os.path.join(root, m)) for m in markers) else None


def _checkout_root():
    """The rngtrk checkout this package sits in (bindings/python), or None:
    an unpacked sdist (library.mk beside pyproject.toml) is never taken for
    the checkout it may have been unpacked in."""
    if os.path.isfile(os.path.join(HERE, "library.mk")):
        return None
    return _is_checkout(os.path.join(HERE, "..", ".."))


def _source_root():
    """Where library.mk and the sources are: the checkout, or this folder
    (an unpacked sdist); None when neither has them."""
    root = _checkout_root()
    if root is not None:
        return root
    return HERE if os.path.isfile(os.path.join(HERE, "library.mk")) else None


def _no_sources():
    major = _version().split(".")[0]
    return BuildError(
        f"rngtrk: no rngtrk sources around the package in {HERE}: neither library.mk beside pyproject.toml "
        "(an unpacked sdist) nor an rngtrk checkout two folders up, so no library to build; pip before 21.3 "
        "(Debian 11's 20.3) copies bindings/python alone to a temporary folder before building. Ways out: "
        "pip >= 21.3, which builds in place; or the sdist (`make sdist`, then pip install "
        f"dist/rngtrk-{_version()}.tar.gz); or, after `make` in the checkout, "
        f"RNGTRK_BUNDLE_LIBRARY=/absolute/path/to/build/librngtrk.so.{major}; or RNGTRK_BUNDLE_LIBRARY=none "
        "for a wheel without the library, which finds an installed one at import")
