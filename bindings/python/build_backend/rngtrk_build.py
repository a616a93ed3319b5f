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
computed from that file (see platform_tag): manylinux_2_N_ARCH, N the
highest GLIBC_2.N symbol version it needs (GLIBC_ABI_DT_RELR counts as 2.36),
when it needs no library but glibc's and no other glibc version; else
linux_ARCH, with a note on stderr.  A file without .dynamic is refused.

build_editable (pip install -e) puts this folder on sys.path and builds the
library where rngtrk/_library.py finds it: `make lib` in a checkout (then
build/librngtrk.so.MAJOR), the sdist's compile into rngtrk/ otherwise (its
objects in build/obj/ beside).  It refuses RNGTRK_BUNDLE_LIBRARY=/path (see
build_editable).

A build that cannot go on (no C++ compiler, no strip, a failed compile)
prints one message saying what is missing and how to get it, and exits 1.
"""
import ast
import base64
import hashlib
import io
import os
import platform
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

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


class BuildError(Exception):
    """A build that cannot go on, with the one message that says why."""


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


# -- Reading the bundled library: an ELF reader -----------------------------
#
# What the platform tag needs of a shared object: the libraries it names in
# DT_NEEDED (.dynamic) and the symbol versions it needs of each
# (.gnu.version_r).  Both are reached through the section headers, which
# strip keeps.

_SHT_DYNAMIC, _SHT_GNU_VERNEED, _DT_NEEDED = 6, 0x6FFFFFFE, 1
_ELF_MACHINES = {62: "x86_64", 183: "aarch64", 3: "i686", 22: "s390x", 243: "riscv64", 40: "armv7l"}


def _machine_name(machine, little_endian):
    """The platform tag's architecture for ELF e_machine `machine`: PPC64 (21)
    is ppc64le or ppc64 by the file's byte order (EI_DATA)."""
    if machine == 21:
        return "ppc64le" if little_endian else "ppc64"
    return _ELF_MACHINES.get(machine, platform.machine())


def read_elf_needs(path):
    """{"machine": "x86_64", "needed": [soname, ...], "versions": {soname: [version, ...]}}
    of a shared object, from its .dynamic and .gnu.version_r sections."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        raise BuildError(f"rngtrk: {path} is not an ELF file")
    is64, order = data[4] == 2, "<" if data[5] == 1 else ">"
    machine = struct.unpack_from(order + "H", data, 18)[0]
    if is64:
        shoff, = struct.unpack_from(order + "Q", data, 0x28)
        shentsize, shnum = struct.unpack_from(order + "HH", data, 0x3A)
        section_format, dyn_format = order + "IIQQQQIIQQ", order + "qQ"
    else:
        shoff, = struct.unpack_from(order + "I", data, 0x20)
        shentsize, shnum = struct.unpack_from(order + "HH", data, 0x2E)
        section_format, dyn_format = order + "IIIIIIIIII", order + "iI"
    # (type, offset, size, link, info) of every section
    sections = []
    for i in range(shnum):
        fields = struct.unpack_from(section_format, data, shoff + i * shentsize)
        sections.append((fields[1], fields[4], fields[5], fields[6], fields[7]))

    def string(table, at):
        start = sections[table][1] + at
        return data[start:data.index(b"\0", start)].decode("ascii", "replace")

    if not any(kind == _SHT_DYNAMIC for kind, *_ in sections):
        raise BuildError(f"rngtrk: {path} has no .dynamic section: not a shared library (an object file, "
                         "or a statically linked program?); bundle a librngtrk.so built with -shared")
    needed, versions = [], {}
    for kind, offset, size, link, info in sections:
        if kind == _SHT_DYNAMIC:
            step = struct.calcsize(dyn_format)
            for at in range(offset, offset + size, step):
                tag, value = struct.unpack_from(dyn_format, data, at)
                if tag == 0:
                    break
                if tag == _DT_NEEDED:
                    needed.append(string(link, value))
        elif kind == _SHT_GNU_VERNEED:
            at = offset
            for _ in range(info):  # sh_info: the number of Verneed entries
                _, count, file_name, aux, next_need = struct.unpack_from(order + "HHIII", data, at)
                names = versions.setdefault(string(link, file_name), [])
                aux_at = at + aux
                for _ in range(count):
                    _, _, _, name, next_aux = struct.unpack_from(order + "IHHII", data, aux_at)
                    names.append(string(link, name))
                    aux_at += next_aux
                at += next_need
    return {"machine": _machine_name(machine, order == "<"), "needed": needed, "versions": versions}


# The libraries a manylinux wheel may need of the system (PEP 600: those of
# manylinux2014's PEP 599 list that a C++ library can use), and the
# architecture's dynamic loader, which is part of glibc.
MANYLINUX_LIBRARIES = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
                       "libgcc_s.so.1", "libstdc++.so.6", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}
# libstdc++ and libgcc_s have symbol versions of their own (GLIBCXX_, CXXABI_,
# GCC_) whose manylinux limits this reader does not know: a library that
# needs them gets no manylinux tag.  The backend's own builds link both in.
_UNCHECKED_LIBRARIES = {"libstdc++.so.6", "libgcc_s.so.1"}
# The oldest glibc a manylinux tag of ours names: manylinux2014's.
_MANYLINUX_FLOOR = 17


# glibc's symbol versions not of the GLIBC_2.N form that a tag can name: the
# glibc release that introduced each.  Any other (GLIBC_PRIVATE, a future
# marker) makes the tag linux_ARCH.
_GLIBC_MARKERS = {"GLIBC_ABI_DT_RELR": (2, 36)}


def _version_key(name):
    return tuple(int(p) for p in name.split("_", 1)[1].split("."))


def platform_tag(path, note=True):
    """(tag, why) for the shared object at `path` (see tag_from_needs)."""
    return tag_from_needs(read_elf_needs(path), path, note)


def tag_from_needs(needs, path, note=True):
    """(tag, why) for a library of read_elf_needs' `needs`: manylinux_2_N_ARCH,
    N the highest glibc it needs (GLIBC_2.N, GLIBC_ABI_DT_RELR: 2.36; at
    least 17), when every library it needs is in MANYLINUX_LIBRARIES, none
    is libstdc++/libgcc_s and every version it needs of them is one of
    those; otherwise linux_ARCH, and the reason goes to stderr."""
    arch = needs["machine"]
    glibc, problems = [], []
    problems += [f"needs {lib}, which manylinux does not promise" for lib in needs["needed"]
                 if lib not in MANYLINUX_LIBRARIES]
    problems += [f"needs {lib} (versions {', '.join(needs['versions'].get(lib, [])) or 'none'}), whose "
                 "symbol versions this backend does not check against manylinux: link it statically "
                 "(-static-libstdc++ -static-libgcc)" for lib in needs["needed"] if lib in _UNCHECKED_LIBRARIES]
    for lib, names in needs["versions"].items():
        if lib not in MANYLINUX_LIBRARIES or lib in _UNCHECKED_LIBRARIES:
            continue  # a problem above already
        for name in names:
            if re.fullmatch(r"GLIBC_2(\.[0-9]+)+", name):
                glibc.append((_version_key(name), name))
            elif name in _GLIBC_MARKERS:
                glibc.append((_GLIBC_MARKERS[name], name))
            else:
                problems.append(f"needs {name} of {lib}, a version no manylinux glibc release names")
    if problems:
        why = f"rngtrk: {path}: tagged linux_{arch}, not manylinux: " + "; ".join(problems)
        if note:
            print(why, file=sys.stderr)
        return f"linux_{arch}", why
    minor = max([key[1] for key, _ in glibc] + [_MANYLINUX_FLOOR])
    highest = max(glibc)[1] if glibc else "no GLIBC_ version"
    return f"manylinux_2_{minor}_{arch}", f"needs {', '.join(needs['needed'])}; highest {highest}"


# -- Building the library from library.mk ------------------------------------

def read_library_mk(path):
    """{NAME: [words]} of library.mk's `NAME := words` lines (a backslash at
    the end of a line continues it), as CMakeLists.txt reads them.  Any
    other assignment of a NAME (`+=`, `=`, `?=`, ...) or a `$(` / `${` in
    its words would be misread: a BuildError names the line."""
    with open(path, encoding="utf-8") as f:
        text = f.read().replace("\\\n", " ")
    lists = {}
    for line in text.splitlines():
        assignment = re.match(r"([A-Z0-9_]+)\s*(::=|:::=|:=|\+=|\?=|!=|=)", line)
        if assignment is None:
            continue
        plain = re.fullmatch(r"([A-Z0-9_]+) := (.*)", line)
        if plain is None or "$(" in plain.group(2) or "${" in plain.group(2):
            raise BuildError(f"rngtrk: {path}: `{' '.join(line.split())}` is not a plain `NAME := words` line "
                             "(no `+=`, no `$(...)`): this backend, CMakeLists.txt and rngtrk-sys's build.rs "
                             "read library.mk as such lines only, and would misread it")
        lists[plain.group(1)] = shlex.split(plain.group(2))
    return lists


def _find_tool(variable, names, what, how):
    """The command of $variable (split as the shell would), else the first of
    `names` on PATH; else a BuildError saying what is missing and how to get it."""
    chosen = os.environ.get(variable, "")
    if chosen:
        command = shlex.split(chosen)
        if shutil.which(command[0]):
            return command
        raise BuildError(f"rngtrk: ${variable} is {chosen!r}, which is not a command here: {how}")
    for name in names:
        if shutil.which(name):
            return [name]
    raise BuildError(f"rngtrk: no {what} ({', '.join(names)}) on PATH and ${variable} unset: {how}")


_NO_COMPILER = ("the rngtrk wheel builds librngtrk, a C++17 library. Install a C++ compiler "
                "(Debian/Ubuntu: sudo apt-get install g++; Fedora: sudo dnf install gcc-c++) or set CXX "
                "to one; or bundle a library built elsewhere: RNGTRK_BUNDLE_LIBRARY=/path/to/librngtrk.so.0 "
                "(RNGTRK_BUNDLE_LIBRARY=none: a wheel without it, that finds one at import time).")


def _compiler():
    return _find_tool("CXX", ("c++", "g++", "clang++"), "C++ compiler", _NO_COMPILER)


def _run(command, cwd, what):
    result = subprocess.run(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        raise BuildError(f"rngtrk: {what} failed (exit {result.returncode}):\n  {shlex.join(command)}\n"
                         f"{result.stdout}")
    if result.stdout.strip():
        sys.stderr.write(result.stdout)  # warnings: pip shows them with -v
    return result


def _link_flags(lists, root):
    """library.mk's LIB_LINK_FLAGS with the version script's path made
    absolute, then libstdc++ and libgcc linked in: the library needs of the
    system only glibc (its symbols stay hidden: the version script exports
    rngtrk_* alone)."""
    flags = [f"-Wl,--version-script={os.path.join(root, f.split('=', 1)[1])}"
             if f.startswith("-Wl,--version-script=") else f for f in lists["LIB_LINK_FLAGS"]]
    return flags + ["-static-libstdc++", "-static-libgcc"]


def compile_library(root, output, objects_dir=None):
    """Compiles librngtrk.so.MAJOR at `output` from the sources of
    root/library.mk, CPU-only, as the Makefile would (its default
    optimisation, warnings, library flags, per-source includes and engine
    flags), one compiler per CPU, the objects in `objects_dir` (default:
    obj/ beside `output`).  The first failed compile stops the build: the
    compiles not yet started are cancelled."""
    lists = read_library_mk(os.path.join(root, "library.mk"))
    cxx = _compiler()
    version_text = subprocess.run(cxx + ["--version"], capture_output=True, text=True).stdout
    is_clang = "clang" in version_text.split("\n")[0]
    target = subprocess.run(cxx + ["-dumpmachine"], capture_output=True, text=True).stdout.strip()
    sources = list(lists["LIB_SOURCES"])
    if "x86_64" not in (target or platform.machine()):
        sources = [s for s in sources if s not in lists["X86_64_SOURCES"]]
    sources += lists["NO_CUDA_SOURCES"]
    extra = shlex.split(os.environ.get("CXXFLAGS", ""))
    objects_dir = objects_dir or os.path.join(os.path.dirname(output), "obj")

    def command(source):
        includes = lists["C_API_INCLUDES"] if source.startswith("c_api/") else lists["CORE_INCLUDES"]
        # -g left out: the wheel's library is stripped of it anyway, and GCC and
        # clang make the same code with and without it.
        optimise = [f for f in lists["DEFAULT_OPTFLAGS"] if f != "-g"]
        flags = optimise + lists["WARNINGS"] + lists["LIB_FLAGS"] + extra
        flags += [f"-I{os.path.join(root, i)}" for i in includes]
        if source in lists["ENGINE_SOURCES"]:
            flags += lists["ENGINE_FLAGS"]
            if source in lists.get("AVX2_SOURCES", []):
                flags += lists["AVX2_FLAGS"]
            if source in lists.get("AVX512_SOURCES", []):
                flags += lists["AVX512_FLAGS"] + ([] if is_clang else lists["AVX512_GCC_FLAGS"])
        obj = os.path.join(objects_dir, source[:-len(".cpp")] + ".o")
        os.makedirs(os.path.dirname(obj), exist_ok=True)
        return cxx + flags + ["-c", os.path.join(root, source), "-o", obj], obj

    commands = [command(s) for s in sources]
    print(f"rngtrk: compiling librngtrk ({len(commands)} sources, {os.cpu_count() or 1} jobs, "
          f"{shlex.join(cxx)}{' (clang)' if is_clang else ''}, CPU-only)", file=sys.stderr, flush=True)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        futures = [pool.submit(_run, c, root, f"compiling {s}") for (c, _), s in zip(commands, sources)]
        done, pending = wait(futures, return_when=FIRST_EXCEPTION)
        failed = [f for f in futures if f in done and f.exception() is not None]
        if failed:
            for future in pending:
                future.cancel()  # the queued ones; the few running finish as the pool closes
            raise failed[0].exception()
    soname = os.path.basename(output)
    _run(cxx + ["-shared", f"-Wl,-soname,{soname}"] + _link_flags(lists, root) + ["-o", output] +
         [obj for _, obj in commands] + shlex.split(os.environ.get("LDFLAGS", "")), root, "linking librngtrk")
    return output


def _relink_checkout_library(root, output):
    """The objects `make lib` built (build/librngtrk.a: exactly the Makefile's
    LIB_OBJECTS, the CUDA backend's included when it was built) linked again
    as the wheel's librngtrk, with libstdc++ and libgcc linked in."""
    lists = read_library_mk(os.path.join(root, "library.mk"))
    archive = os.path.join(root, "build", "librngtrk.a")
    with open(archive, "rb") as f:
        with_cuda = b"cuda_backend.o/" in f.read()
    cuda = []
    if with_cuda:  # the Makefile's CUDA_LIBS
        cuda = [f"-L{os.path.join(os.environ.get('CUDA_HOME', '/usr/local/cuda'), 'lib64')}"]
        cuda += [f"-l{name}" for name in lists["CUDA_LINK_LIBRARIES"]]
    os.makedirs(os.path.dirname(output), exist_ok=True)
    _run(_compiler() + ["-shared", f"-Wl,-soname,{os.path.basename(output)}"] + _link_flags(lists, root) +
         ["-o", output, "-Wl,--whole-archive", archive, "-Wl,--no-whole-archive"] + cuda,
         root, "linking the wheel's librngtrk from build/librngtrk.a")
    return output


def _stripped(path, output):
    """A copy of `path` at `output` without debug information."""
    strip = _find_tool("STRIP", ("strip",), "strip",
                       "install binutils (Debian/Ubuntu: sudo apt-get install binutils), or set STRIP")
    _run(strip + ["--strip-debug", "-o", output, path], None, f"strip --strip-debug {path}")
    return output


def _library_sources(root):
    """The files of `root` a library build needs, as repository paths: the
    sources of library.mk (CPU-only), every header they include (followed
    from their quoted #include lines through the include folders), the
    version script, and library.mk itself."""
    lists = read_library_mk(os.path.join(root, "library.mk"))
    folders = lists["C_API_INCLUDES"] + lists["CORE_INCLUDES"]
    scripts = [f.split("=", 1)[1] for f in lists["LIB_LINK_FLAGS"] if f.startswith("-Wl,--version-script=")]
    wanted, found = list(lists["LIB_SOURCES"] + lists["NO_CUDA_SOURCES"]), set()
    while wanted:
        path = wanted.pop()
        if path in found:
            continue
        found.add(path)
        with open(os.path.join(root, path), encoding="utf-8") as f:
            for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', f.read(), re.MULTILINE):
                for folder in [os.path.dirname(path)] + folders:
                    candidate = os.path.normpath(os.path.join(folder, name))
                    if os.path.isfile(os.path.join(root, candidate)):
                        wanted.append(candidate.replace(os.sep, "/"))
                        break
    return sorted(found) + scripts + ["library.mk"]


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


def is_compatible(library_number):
    """rngtrk/_library.py's is_compatible (the rule `import rngtrk` applies to
    the library it opens) for this package's version, run from that file's
    source: importing the module is not possible here, as it imports
    _rngtrk_ffi (cffi's _cffi_backend, absent from pip's isolated build
    environment) and the package's __init__ opens a library."""
    path = os.path.join(HERE, PACKAGE, "_library.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    function = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "is_compatible"]
    if len(function) != 1:
        raise BuildError(f"rngtrk: {path} has no function is_compatible for the backend to apply")
    namespace = {"HEADER_VERSION": tuple(int(p) for p in _version().split("."))}
    exec(compile(ast.Module(body=function, type_ignores=[]), path, "exec"), namespace)
    return namespace["is_compatible"](library_number)


def check_library(path, what):
    """The version string of the librngtrk at `path`, after opening it here
    (ctypes) and checking its version against this package's (is_compatible);
    a BuildError with one line otherwise.  `what` says where it came from."""
    import ctypes
    try:
        opened = ctypes.CDLL(os.path.abspath(path))
        opened.rngtrk_version_number.restype = ctypes.c_uint32
        opened.rngtrk_version_string.restype = ctypes.c_char_p
        number, text = opened.rngtrk_version_number(), opened.rngtrk_version_string().decode("ascii", "replace")
    except (OSError, AttributeError) as error:
        raise BuildError(f"rngtrk: {what} ({path}) does not open here as a librngtrk: "
                         f"{' '.join(str(error).split())}; bundle a librngtrk.so.{_version().split('.')[0]} built "
                         "for this machine (its architecture, a glibc no newer than this one's), or set "
                         "RNGTRK_BUNDLE_LIBRARY=none") from None
    if not is_compatible(number):
        raise BuildError(f"rngtrk: {what} ({path}) is librngtrk {number // 10000}.{number // 100 % 100}."
                         f"{number % 100}, which rngtrk {_version()} would refuse at import (rngtrk/_library.py's "
                         "is_compatible: the same major version, and while it is 0 the same minor; else a minor "
                         "at least the package's): bundle a library built from the same rngtrk version")
    return text


def _library_to_bundle(work):
    """(the path of the librngtrk to put in the wheel, unstripped; where it
    came from, for bundled_library.json), or None."""
    major = _version().split(".")[0]
    chosen = os.environ.get("RNGTRK_BUNDLE_LIBRARY", "")
    if chosen.lower() == "none":
        return None
    if chosen:
        if not os.path.isabs(chosen):
            raise BuildError(f"rngtrk: RNGTRK_BUNDLE_LIBRARY is {chosen!r}, a relative path; give an absolute "
                             f"one (e.g. \"$PWD/{chosen}\"): pip runs this backend in a folder of its own")
        if not os.path.isfile(chosen):
            raise BuildError(f"rngtrk: RNGTRK_BUNDLE_LIBRARY is {chosen!r}: no such file")
        check_library(chosen, "RNGTRK_BUNDLE_LIBRARY")
        return chosen, os.path.realpath(chosen)
    root = _checkout_root()
    if root is None:
        if _source_root() is None:
            raise _no_sources()
        return compile_library(HERE, os.path.join(work, f"librngtrk.so.{major}")), \
            "compiled from the sdist's sources (library.mk)"
    _make_lib(root)
    output = os.path.join(root, "build", "wheel-lib", f"librngtrk.so.{major}")
    return _relink_checkout_library(root, output), os.path.join(root, "build", "librngtrk.a")


def _make_lib(root):
    # make's output goes to stderr, so that pip shows it only when asked (-v)
    # or when the build fails.
    major = _version().split(".")[0]
    if shutil.which("make") is None:
        raise BuildError("rngtrk: no `make` on PATH (Debian/Ubuntu: sudo apt-get install make g++), or set "
                         f"RNGTRK_BUNDLE_LIBRARY to a librngtrk.so.{major}")
    jobs = [] if re.search(r"(^|\s)-j|--jobs", os.environ.get("MAKEFLAGS", "")) else [f"-j{os.cpu_count() or 1}"]
    result = subprocess.run(["make", "-C", root] + jobs + ["lib"], stdout=sys.stderr, stderr=sys.stderr)
    if result.returncode != 0:
        raise BuildError(f"rngtrk: `make -C {root} lib` failed (exit {result.returncode}); build the "
                         f"library first, or set RNGTRK_BUNDLE_LIBRARY to a librngtrk.so.{major} "
                         "(or to 'none' for a wheel without it)")


def _bundled_library(work):
    """(path in the wheel, bytes, the record of it for bundled_library.json,
    the platform tag), or None."""
    chosen = _library_to_bundle(work)
    if chosen is None:
        return None
    built, source = chosen
    major = _version().split(".")[0]
    path = _stripped(built, os.path.join(work, f"stripped-librngtrk.so.{major}"))
    with open(path, "rb") as f:
        data = f.read()
    import json
    version = check_library(path, "the library to bundle")
    tag, why = platform_tag(path)
    record = {"file": f"{PACKAGE}/librngtrk.so.{major}", "sha256": hashlib.sha256(data).hexdigest(),
              "size": len(data), "version": version,
              "source": source, "stripped": "strip --strip-debug", "platform": tag, "platform_reason": why}
    return record["file"], data, json.dumps(record, indent=1, sort_keys=True).encode() + b"\n", tag


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


@_guarded
def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = _package_files()
    with tempfile.TemporaryDirectory(prefix="rngtrk-wheel-") as work:
        library = _bundled_library(work)
    if library is None:
        return _write_wheel(wheel_directory, files, "py3-none-any", purelib=True)
    path, data, record, tag = library
    # cffi's ABI mode: the package runs on any Python 3 of that platform.
    return _write_wheel(wheel_directory, files + [(path, data)], f"py3-none-{tag}", purelib=False,
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
        root = _checkout_root()
        if root is not None:
            _make_lib(root)
        elif _source_root() is not None:
            compile_library(HERE, os.path.join(HERE, PACKAGE, f"librngtrk.so.{_version().split('.')[0]}"),
                            objects_dir=os.path.join(HERE, "build", "obj"))
        else:
            raise _no_sources()
    return _write_wheel(wheel_directory, [(f"_{PACKAGE}_editable.pth", (HERE + "\n").encode())],
                        "py3-none-any", purelib=True)


@_guarded
def build_sdist(sdist_directory, config_settings=None):
    """The Python package, this backend, and what building the library needs
    (library.mk, the sources it lists, their headers, the version script) at
    their repository paths, so that a wheel built from the unpacked sdist
    compiles the library (see compile_library)."""
    base = f"{PACKAGE}-{_version()}"
    members = [(HERE, "pyproject.toml"), (HERE, "build_backend/rngtrk_build.py")]
    members += [(HERE, path) for path, _ in _package_files()]
    root = _source_root()
    if root is None:
        raise BuildError("rngtrk: an sdist needs the library's sources: build it from an rngtrk checkout")
    members += [(root, path) for path in _library_sources(root)]
    filename = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as sdist:
        for folder, path in members:
            sdist.add(os.path.join(folder, path), arcname=f"{base}/{path}")
        for name, data in (("PKG-INFO", _metadata().encode()), ("README.md", _top_file("README.md")),
                           ("LICENSE", _top_file("LICENSE"))):
            info = tarfile.TarInfo(f"{base}/{name}")
            info.size = len(data)
            info.mode = 0o644
            sdist.addfile(info, io.BytesIO(data))
    return filename


if __name__ == "__main__":
    # python3 rngtrk_build.py tag LIBRARY: the platform tag of a shared object
    # and why (tests/wheel_test.sh compares it with readelf's view).
    if len(sys.argv) == 3 and sys.argv[1] == "tag":
        print("\n".join(platform_tag(sys.argv[2], note=False)))
    elif len(sys.argv) == 3 and sys.argv[1] == "needs":
        import json
        print(json.dumps(read_elf_needs(sys.argv[2]), sort_keys=True))
    else:
        sys.exit("usage: rngtrk_build.py tag|needs LIBRARY")
