# SPDX-License-Identifier: Apache-2.0
"""A PEP 517 build backend for the rngtrk Python package, with no dependency.

pip cannot reach PyPI on every machine rngtrk is built on, so the usual
backends (setuptools, flit, hatchling) cannot be assumed.  A pure-Python
wheel is a zip file with a .dist-info folder; this backend writes one.

Metadata comes from pyproject.toml's [project] table (read with a small
parser for the forms used there, so Python < 3.11 needs no tomli) and the
version from rngtrk/_cdef.py, i.e. from c_api/rngtrk.h.

The wheel carries librngtrk in the package folder, so the installed
package works from any directory with no environment variable, and says
which library it carries in .dist-info/bundled_library.json (the file, its
sha256 and size, the version the library reports, where it was taken from):

- RNGTRK_BUNDLE_LIBRARY=/path/to/librngtrk.so.0 bundles that file; the path
  must be absolute (pip runs the backend in a folder of its own), and the file
  must load here (ctypes) and report a version that rngtrk/_library.py's
  is_compatible accepts for this package's version, else the build stops;
- otherwise, built from an rngtrk checkout, it runs `make -jCPUS lib` there (a
  no-op when build/ is current) and links build/librngtrk.a's objects again
  with -static-libstdc++ -static-libgcc into build/wheel-lib/;
- built from an unpacked sdist (which carries the library's C++ sources
  and library.mk), it compiles the library itself: the sources and flags
  of library.mk, the C++ compiler ($CXX, else c++, g++, clang++), one job
  per CPU, CPU-only (NO_CUDA_SOURCES), libstdc++ and libgcc linked in;
  library.mk in this folder means an sdist, even inside a checkout;
- with neither (pip < 21.3 copies bindings/python alone to a temporary
  folder) the build stops and says so;
- RNGTRK_BUNDLE_LIBRARY=none gives a pure-Python wheel (py3-none-any) that
  finds the library at import time (RNGTRK_LIBRARY, ldconfig, the soname).

The bundled library is stripped of its debug information (strip
--strip-debug; $STRIP names another strip).  The wheel's platform tag is
computed from that file (see rngtrk_build_elf.platform_tag):
manylinux_2_N_ARCH, N the highest GLIBC_2.N symbol version it needs
(GLIBC_ABI_DT_RELR counts as 2.36), when it needs no library but glibc's
and no other glibc version; else linux_ARCH, with a note on stderr.  A
file without .dynamic is refused.

build_editable (pip install -e) puts this folder on sys.path and builds the
library where rngtrk/_library.py finds it: `make lib` in a checkout (then
build/librngtrk.so.MAJOR), the sdist's compile into rngtrk/ otherwise (its
objects in build/obj/ beside).  It refuses RNGTRK_BUNDLE_LIBRARY=/path (see
build_editable).

A build that cannot go on (no C++ compiler, no strip, a failed compile)
prints one message saying what is missing and how to get it, and exits 1.

This module holds the PEP 517 and PEP 660 hooks, the choice of the library
a wheel carries and BuildError's one message.  Each other job is a module
of this folder; they never import this one, and they use each other's
names through the module (metadata.HERE, metadata._version()), so that a
test that replaces a name in its module replaces it for all:

- rngtrk_build_errors.py: BuildError;
- rngtrk_build_metadata.py: pyproject.toml's [project] table, the version,
  the core metadata, the package's files, checkout or sdist;
- rngtrk_build_elf.py: the ELF reader and the platform tag;
- rngtrk_build_compile.py: library.mk, the compiler, `make lib`, strip;
- rngtrk_build_checks.py: a library's checks (opens here, its version);
- rngtrk_build_archives.py: the wheel and sdist writers.
"""
import hashlib
import os
import sys
import tempfile

import rngtrk_build_archives as archives
import rngtrk_build_checks as checks
import rngtrk_build_compile as compiler
import rngtrk_build_elf as elf
import rngtrk_build_metadata as metadata
# Re-exported for callers (the tests, tools): BuildError and the helpers'
# public functions.  This module calls them through their modules, so a
# test that replaces one must replace it there.
from rngtrk_build_checks import check_library, is_compatible
from rngtrk_build_compile import compile_library, read_library_mk
from rngtrk_build_elf import MANYLINUX_LIBRARIES, platform_tag, read_elf_needs, tag_from_needs
from rngtrk_build_errors import BuildError

__all__ = ["BuildError", "MANYLINUX_LIBRARIES", "build_editable", "build_sdist", "build_wheel", "check_library",
           "compile_library", "get_requires_for_build_editable", "get_requires_for_build_sdist",
           "get_requires_for_build_wheel", "is_compatible", "platform_tag", "read_elf_needs", "read_library_mk",
           "tag_from_needs"]


def _fail(message):
    """Ends the build with `message` alone on stderr (no traceback): pip shows
    it under its own 'subprocess-exited-with-error'."""
    print(message, file=sys.stderr, flush=True)
    raise SystemExit(1)


def _guarded(hook):
    """A PEP 517 hook that turns BuildError into _fail's one message."""
    def run(*args, **kwargs):
        try:
            return hook(*args, **kwargs)
        except BuildError as error:
            _fail(str(error))
    run.__name__, run.__doc__ = hook.__name__, hook.__doc__
    return run


# -- The library a wheel carries --------------------------------------------

def _library_to_bundle(work):
    """(the path of the librngtrk to put in the wheel, unstripped; where it
    came from, for bundled_library.json; the CUDA modules to put beside it,
    {file name: path}), or None."""
    major = metadata._version().split(".")[0]
    chosen = os.environ.get("RNGTRK_BUNDLE_LIBRARY", "")
    if chosen.lower() == "none":
        return None
    if chosen:
        if not os.path.isabs(chosen):
            raise BuildError(f"rngtrk: RNGTRK_BUNDLE_LIBRARY is {chosen!r}, a relative path; give an absolute "
                             f"one (e.g. \"$PWD/{chosen}\"): pip runs this backend in a folder of its own")
        if not os.path.isfile(chosen):
            raise BuildError(f"rngtrk: RNGTRK_BUNDLE_LIBRARY is {chosen!r}: no such file")
        checks.check_library(chosen, "RNGTRK_BUNDLE_LIBRARY")
        return chosen, os.path.realpath(chosen), compiler.cuda_modules_beside(chosen)
    root = metadata._checkout_root()
    if root is None:
        if metadata._source_root() is None:
            raise metadata._no_sources()
        return compiler.compile_library(metadata.HERE, os.path.join(work, f"librngtrk.so.{major}")), \
            "compiled from the sdist's sources (library.mk)", {}
    compiler._make_lib(root)
    output = os.path.join(root, "build", "wheel-lib", f"librngtrk.so.{major}")
    return compiler._relink_checkout_library(root, output), os.path.join(root, "build", "obj", "shared-objects.a"), \
        compiler.cuda_modules_beside(os.path.join(root, "build", f"librngtrk.so.{major}"))


def _wheel_tag(tags):
    """The tag of a wheel whose shared objects have `tags` ((tag, why) each):
    linux_ARCH if one is not manylinux, else the manylinux of the newest glibc."""
    for tag, why in tags:
        if not tag.startswith("manylinux_"):
            return tag, why
    return max(tags, key=lambda t: tuple(int(n) for n in t[0].split("_")[1:3]))


def _bundled_library(work):
    """(the files for the wheel: [(path in the wheel, bytes)], the record of
    them for bundled_library.json, the platform tag), or None.  The CUDA
    modules go beside the library, where its loader looks."""
    chosen = _library_to_bundle(work)
    if chosen is None:
        return None
    built, source, modules = chosen
    major = metadata._version().split(".")[0]
    path = compiler._stripped(built, os.path.join(work, f"stripped-librngtrk.so.{major}"))
    with open(path, "rb") as f:
        data = f.read()
    import json
    version = checks.check_library(path, "the library to bundle")
    tags = [elf.platform_tag(path)]
    files = [(f"{metadata.PACKAGE}/librngtrk.so.{major}", data)]
    records = []
    for name, module in modules.items():
        stripped = compiler._stripped(module, os.path.join(work, f"stripped-{name}"))
        with open(stripped, "rb") as f:
            module_data = f.read()
        tags.append(elf.platform_tag(stripped))
        files.append((f"{metadata.PACKAGE}/{name}", module_data))
        records.append({"file": files[-1][0], "sha256": hashlib.sha256(module_data).hexdigest(),
                        "size": len(module_data), "source": module, "platform": tags[-1][0]})
    tag, why = _wheel_tag(tags)
    record = {"file": files[0][0], "sha256": hashlib.sha256(data).hexdigest(),
              "size": len(data), "version": version,
              "source": source, "stripped": "strip --strip-debug", "platform": tag, "platform_reason": why,
              "cuda_modules": records}
    return files, json.dumps(record, indent=1, sort_keys=True).encode() + b"\n", tag


# -- PEP 517 hooks -----------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


@_guarded
def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = metadata._package_files()
    with tempfile.TemporaryDirectory(prefix="rngtrk-wheel-") as work:
        library = _bundled_library(work)
    if library is None:
        return archives._write_wheel(wheel_directory, files, "py3-none-any", purelib=True)
    bundled, record, tag = library
    # cffi's ABI mode: the package runs on any Python 3 of that platform.
    return archives._write_wheel(wheel_directory, files + bundled, f"py3-none-{tag}", purelib=False,
                                 dist_info_files=[("bundled_library.json", record)])


@_guarded
def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 660: a wheel whose .pth file puts this folder on sys.path, after
    building the library where rngtrk/_library.py looks: `make lib` in a
    checkout (build/librngtrk.so.MAJOR), else (an unpacked sdist) the
    library.mk compile into rngtrk/ (its objects in build/obj/ beside).
    RNGTRK_BUNDLE_LIBRARY=none builds nothing (the package then finds a
    library as an installed one would); RNGTRK_BUNDLE_LIBRARY=/path is
    refused: copying that file into the package folder would shadow what
    `make lib` builds later (the package folder is searched first), and an
    editable install has no wheel to bundle it in.  RNGTRK_LIBRARY=/path at
    run time loads another library."""
    chosen = os.environ.get("RNGTRK_BUNDLE_LIBRARY", "")
    if chosen and chosen.lower() != "none":
        raise BuildError(f"rngtrk: RNGTRK_BUNDLE_LIBRARY={chosen} is for wheels; an editable install uses the "
                         "library built in place (`make lib` in a checkout). To use that file with an editable "
                         "install, install with RNGTRK_BUNDLE_LIBRARY=none (it builds nothing) and run with "
                         f"RNGTRK_LIBRARY={chosen}, the first place `import rngtrk` looks")
    if chosen.lower() != "none":
        root = metadata._checkout_root()
        if root is not None:
            compiler._make_lib(root)
        elif metadata._source_root() is not None:
            here, major = metadata.HERE, metadata._version().split(".")[0]
            compiler.compile_library(here, os.path.join(here, metadata.PACKAGE, f"librngtrk.so.{major}"),
                                     objects_dir=os.path.join(here, "build", "obj"))
        else:
            raise metadata._no_sources()
    pth = (f"_{metadata.PACKAGE}_editable.pth", (metadata.HERE + "\n").encode())
    return archives._write_wheel(wheel_directory, [pth], "py3-none-any", purelib=True)


@_guarded
def build_sdist(sdist_directory, config_settings=None):
    """The Python package, this backend, and what building the library needs
    (library.mk, the sources it lists, their headers, the version script) at
    their repository paths, so that a wheel built from the unpacked sdist
    compiles the library (see rngtrk_build_compile.compile_library)."""
    return archives._write_sdist(sdist_directory)


if __name__ == "__main__":
    # python3 rngtrk_build.py tag LIBRARY: the platform tag of a shared object
    # and why (tests/wheel_test.sh compares it with readelf's view).
    if len(sys.argv) == 3 and sys.argv[1] == "tag":
        print("\n".join(elf.platform_tag(sys.argv[2], note=False)))
    elif len(sys.argv) == 3 and sys.argv[1] == "needs":
        import json
        print(json.dumps(elf.read_elf_needs(sys.argv[2]), sort_keys=True))
    else:
        sys.exit("usage: rngtrk_build.py tag|needs LIBRARY")
