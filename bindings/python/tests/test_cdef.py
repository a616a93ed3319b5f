# SPDX-License-Identifier: Apache-2.0
"""The cffi declarations are generated from c_api/rngtrk.h and match the library."""
import importlib
import os
import re
import subprocess
import sys

import rngtrk
from rngtrk import errors
from rngtrk._cdef import CDEF

from conftest import BINDING_DIR, REPO, run_python


def test_generated_cdef_is_current():
    result = subprocess.run([sys.executable, os.path.join(BINDING_DIR, "generate_cdef.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_cdef_declares_exactly_the_functions_the_header_declares():
    with open(os.path.join(REPO, "c_api", "rngtrk.h"), encoding="utf-8") as f:
        header = f.read()
    in_header = set(re.findall(r"RNGTRK_API [^;(]*?\b(rngtrk_\w+)\(", header))
    in_cdef = set(re.findall(r"\b(rngtrk_\w+)\(", CDEF))
    assert len(in_header) >= 28
    assert in_cdef == in_header


def test_every_declared_function_resolves_in_the_loaded_library():
    for name in re.findall(r"\b(rngtrk_\w+)\(", CDEF):
        assert getattr(rngtrk._lib, name) is not None, name


def test_header_constants_reach_python():
    assert rngtrk._lib.RNGTRK_STATE_BYTES == 16 == rngtrk.STATE_BYTES
    assert rngtrk._lib.RNGTRK_MAX_NAME_BYTES == 255
    assert rngtrk._lib.RNGTRK_VERSION_NUMBER == rngtrk.version_number()


def test_every_status_code_in_the_header_has_its_exception_class():
    codes = {name: getattr(rngtrk._lib, name) for name in re.findall(r"\b(RNGTRK_E_\w+) =", CDEF)}
    assert len(codes) == 16
    assert set(codes.values()) == set(errors.ERROR_CLASSES)


def test_the_package_imports_the_generated_module_and_parses_nothing():
    assert rngtrk._library.ffi is importlib.import_module("rngtrk._rngtrk_ffi").ffi
    # A fresh `import rngtrk` (and a call) loads neither cffi's C parser nor
    # pycparser: the declarations come parsed already, as tables.
    result = run_python("import sys, rngtrk; rngtrk.Tracker().add('a', 1); "
                        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('cffi', 'pycparser')))")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def _shape(ctype):
    """What a C type is, apart from how cffi spells it (an out-of-line
    module names an enum `enum rngtrk_status` where a parsed cdef keeps the
    typedef's name)."""
    kind = ctype.kind
    if kind in ("pointer", "array"):
        return kind, getattr(ctype, "length", None), _shape(ctype.item)
    if kind == "function":
        return kind, tuple(map(_shape, ctype.args)), _shape(ctype.result), ctype.ellipsis, ctype.abi
    if kind == "enum":
        return kind, tuple(sorted(ctype.relements.items()))
    if kind in ("struct", "union"):
        return kind, ctype.cname.split()[-1]  # their fields: compared by name, below
    return kind, ctype.cname  # primitive, void


def _size(ffi, ctype):
    """The size of `ctype`, or None for an opaque struct (whose .fields
    some cffi builds refuse to read)."""
    try:
        return ffi.sizeof(ctype)
    except Exception:  # which class says "unknown size" varies with the FFI and the cffi version
        return None


def test_the_generated_module_declares_what_parsing_the_cdef_declares():
    """_rngtrk_ffi.py holds cffi's tables, written by the cffi that ran
    generate_cdef.py; whatever cffi reads them here must see the very
    functions, types, layouts and constants that parsing CDEF gives."""
    import cffi
    from rngtrk._library import ffi, lib
    parsed = cffi.FFI()
    parsed.cdef(CDEF)
    parsed_lib = parsed.dlopen(rngtrk.library_path)
    functions = re.findall(r"\b(rngtrk_\w+)\(", CDEF)
    assert len(functions) >= 28
    for name in functions:
        assert _shape(ffi.typeof(getattr(lib, name))) == _shape(parsed.typeof(getattr(parsed_lib, name))), name
    types = set(re.findall(r"\}\s*(rngtrk_\w+);", CDEF)) | set(re.findall(r"typedef struct \w+ (rngtrk_\w+);", CDEF))
    assert {"rngtrk_sample_spec", "rngtrk_philox_state", "rngtrk_tracker", "rngtrk_status"} <= types
    for name in types:
        ours, theirs = ffi.typeof(name), parsed.typeof(name)
        assert _shape(ours) == _shape(theirs), name
        assert _size(ffi, ours) == _size(parsed, theirs), name
        if ours.kind == "struct" and _size(ffi, ours) is not None:
            assert ffi.alignof(name) == parsed.alignof(name), name
            assert [(f, x.offset, _shape(x.type)) for f, x in ours.fields] == \
                [(f, x.offset, _shape(x.type)) for f, x in theirs.fields], name
    constants = set(re.findall(r"^#define (RNGTRK_\w+)", CDEF, re.MULTILINE)) | set(re.findall(r"\b(RNGTRK_\w+) =", CDEF))
    assert {"RNGTRK_VERSION_NUMBER", "RNGTRK_DTYPE_BF16", "RNGTRK_E_INVALID_ARGUMENT"} <= constants
    for name in constants:
        assert getattr(lib, name) == getattr(parsed_lib, name), name
