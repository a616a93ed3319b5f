# SPDX-License-Identifier: Apache-2.0
"""Building librngtrk, for the build backend (rngtrk_build.py): library.mk
read as make reads its `NAME := words` lines (read_library_mk), the C++
compiler driven with library.mk's sources and flags (compile_library: an
unpacked sdist's build, CPU-only, libstdc++ and libgcc linked in), `make
lib` in a checkout and its objects linked again for the wheel
(_make_lib, _relink_checkout_library), strip --strip-debug (_stripped),
and the files of a checkout a library build needs (_library_sources: what
the sdist carries).

Every command runs through _run, which turns a failure into a BuildError
with the command and its output.
"""
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

import rngtrk_build_metadata as metadata
from rngtrk_build_errors import BuildError


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
    """The objects `make lib` linked into build/librngtrk.so (build/obj/
    shared-objects.a: exactly the Makefile's SHARED_OBJECTS, the CUDA loader
    included when it was built) linked again as the wheel's librngtrk, with
    libstdc++ and libgcc linked in."""
    lists = read_library_mk(os.path.join(root, "library.mk"))
    archive = os.path.join(root, "build", "obj", "shared-objects.a")
    with open(archive, "rb") as f:
        with_loader = b"cuda_loader.o/" in f.read()
    os.makedirs(os.path.dirname(output), exist_ok=True)
    _run(_compiler() + ["-shared", f"-Wl,-soname,{os.path.basename(output)}"] + _link_flags(lists, root) +
         ["-o", output, "-Wl,--whole-archive", archive, "-Wl,--no-whole-archive"] + (["-ldl"] if with_loader else []),
         root, "linking the wheel's librngtrk from build/obj/shared-objects.a")
    return output


def cuda_modules_beside(library):
    """The CUDA modules (librngtrk_cudaNN.so, cuda/cuda_module.h) in the
    folder of `library`, where its loader looks: {file name: path}."""
    folder = os.path.dirname(os.path.abspath(library))
    return {name: os.path.join(folder, name) for name in sorted(os.listdir(folder))
            if re.fullmatch(r"librngtrk_cuda[0-9]+\.so", name)}


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


def _make_lib(root):
    # make's output goes to stderr, so that pip shows it only when asked (-v)
    # or when the build fails.
    major = metadata._version().split(".")[0]
    if shutil.which("make") is None:
        raise BuildError("rngtrk: no `make` on PATH (Debian/Ubuntu: sudo apt-get install make g++), or set "
                         f"RNGTRK_BUNDLE_LIBRARY to a librngtrk.so.{major}")
    jobs = [] if re.search(r"(^|\s)-j|--jobs", os.environ.get("MAKEFLAGS", "")) else [f"-j{os.cpu_count() or 1}"]
    result = subprocess.run(["make", "-C", root] + jobs + ["lib"], stdout=sys.stderr, stderr=sys.stderr)
    if result.returncode != 0:
        raise BuildError(f"rngtrk: `make -C {root} lib` failed (exit {result.returncode}); build the "
                         f"library first, or set RNGTRK_BUNDLE_LIBRARY to a librngtrk.so.{major} "
                         "(or to 'none' for a wheel without it)")
