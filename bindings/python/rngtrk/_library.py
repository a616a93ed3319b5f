# SPDX-License-Identifier: Apache-2.0
"""Finds librngtrk, opens it with cffi in ABI mode, and checks its version.

Nothing is compiled and nothing is parsed: the declarations come as cffi's
out-of-line ABI module _rngtrk_ffi (generated with _cdef.py from the header
by generate_cdef.py, `make python-cdef`), and `ffi.dlopen` opens the same
shared object that C and Rust programs link.  The candidates, in order:

1. the file named by the RNGTRK_LIBRARY environment variable;
2. the shared object in this package's folder (a wheel may carry it);
3. the repository's build/ folder, when this package runs from a checkout;
4. what ctypes.util.find_library("rngtrk") finds (ldconfig's cache, ...);
5. the soname itself, searched by the dynamic loader (LD_LIBRARY_PATH, ...).

The first candidate that opens is used.  A library that opens but has an
incompatible version is an error, not a reason to try the next candidate:
silently preferring another copy would hide the mismatch.
"""
import os
import re

from ._cdef import CDEF
from ._rngtrk_ffi import ffi


def _header_define(name):
    # Needed before any library is open (the soname depends on it), so read
    # from the cdef text rather than from lib.
    return int(re.search(rf"^#define {name} ([0-9]+)$", CDEF, re.MULTILINE).group(1))


# The version of the header this binding was generated from.
HEADER_VERSION = tuple(_header_define(f"RNGTRK_VERSION_{part}") for part in ("MAJOR", "MINOR", "PATCH"))
SONAME = f"librngtrk.so.{HEADER_VERSION[0]}"

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_CHECKOUT_ROOT = os.path.normpath(os.path.join(_PACKAGE_DIR, "..", "..", ".."))


def _candidates():
    """The (where, path) pairs to try, in order, each found when it is
    needed: asking ctypes.util runs ldconfig and the compiler (tens of
    milliseconds), which an import that finds the library earlier skips."""
    explicit = os.environ.get("RNGTRK_LIBRARY")
    if explicit:
        yield "RNGTRK_LIBRARY", explicit
    for name in (SONAME, "librngtrk.so"):
        yield "package folder", os.path.join(_PACKAGE_DIR, name)
    if os.path.isfile(os.path.join(_CHECKOUT_ROOT, "c_api", "rngtrk.h")):
        yield "checkout build/", os.path.join(_CHECKOUT_ROOT, "build", SONAME)
    import ctypes.util  # here, not at the top: importing it alone takes about 20 ms
    by_ctypes = ctypes.util.find_library("rngtrk")
    if by_ctypes:
        yield "ctypes.util.find_library", by_ctypes
    yield "dynamic loader", SONAME


def candidates():
    """The (where, path) pairs to try, in order."""
    return list(_candidates())


def open_first(tries):
    """Opens the first loadable library of `tries`; returns (lib, path).

    Raises one OSError that lists every path tried and why each failed."""
    failures = []
    for where, path in tries:
        # A bare name goes to the dynamic loader; anything else must exist.
        if os.sep in path and not os.path.exists(path):
            failures.append(f"  {where}: {path}: no such file")
            continue
        try:
            return ffi.dlopen(path), path
        except OSError as error:
            failures.append(f"  {where}: {path}: {error}")
    raise OSError("rngtrk: cannot load librngtrk; tried, in order:\n" + "\n".join(failures) +
                  "\nTwo ways out: install this package from an rngtrk checkout (`pip install bindings/python` "
                  "builds the library and puts it in the package), or set RNGTRK_LIBRARY to the path of a "
                  "librngtrk.so.0 (`make` in the checkout builds build/librngtrk.so.0).")


def is_compatible(library_number, header=HEADER_VERSION):
    """Whether a library reporting `library_number` (MAJOR*10000 + MINOR*100
    + PATCH) serves a binding generated from `header`.

    The major version must match and the minor must be at least the header's
    (later minors only add).  While the major version is 0 the minor must
    match too: 0.x releases may change the interface."""
    major, minor = library_number // 10000, library_number // 100 % 100
    if major != header[0]:
        return False
    return minor == header[1] if major == 0 else minor >= header[1]


def _format(number):
    return f"{number // 10000}.{number // 100 % 100}.{number % 100}"


def load():
    lib, path = open_first(_candidates())
    number = lib.rngtrk_version_number()
    if not is_compatible(number):
        raise ImportError(
            f"rngtrk: {path} is librngtrk {_format(number)}, but this binding was generated "
            f"from rngtrk.h {'.'.join(map(str, HEADER_VERSION))} and needs a library "
            f"{HEADER_VERSION[0]}.{HEADER_VERSION[1]}.x; point RNGTRK_LIBRARY at a matching build")
    return lib, path


lib, library_path = load()
