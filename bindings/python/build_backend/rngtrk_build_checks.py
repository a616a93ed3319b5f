# SPDX-License-Identifier: Apache-2.0
"""The checks of a library before it goes into a wheel, for the build
backend (rngtrk_build.py): it opens here (ctypes) as a librngtrk and
reports a version that `import rngtrk` accepts for this package's version
(check_library), by the rule of rngtrk/_library.py's is_compatible, taken
from that file's source (is_compatible), so the rule is written once.
"""
import ast
import os

import rngtrk_build_metadata as metadata
from rngtrk_build_errors import BuildError


def is_compatible(library_number):
    """rngtrk/_library.py's is_compatible (the rule `import rngtrk` applies to
    the library it opens) for this package's version, run from that file's
    source: importing the module is not possible here, as it imports
    _rngtrk_ffi (cffi's _cffi_backend, absent from pip's isolated build
    environment) and the package's __init__ opens a library."""
    path = os.path.join(metadata.HERE, metadata.PACKAGE, "_library.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    function = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "is_compatible"]
    if len(function) != 1:
        raise BuildError(f"rngtrk: {path} has no function is_compatible for the backend to apply")
    namespace = {"HEADER_VERSION": tuple(int(p) for p in metadata._version().split("."))}
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
                         f"{' '.join(str(error).split())}; bundle a "
                         f"librngtrk.so.{metadata._version().split('.')[0]} built for this machine (its "
                         "architecture, a glibc no newer than this one's), or set "
                         "RNGTRK_BUNDLE_LIBRARY=none") from None
    if not is_compatible(number):
        raise BuildError(f"rngtrk: {what} ({path}) is librngtrk {number // 10000}.{number // 100 % 100}."
                         f"{number % 100}, which rngtrk {metadata._version()} would refuse at import "
                         "(rngtrk/_library.py's is_compatible: the same major version, and while it is 0 the same "
                         "minor; else a minor at least the package's): bundle a library built from the same "
                         "rngtrk version")
    return text
