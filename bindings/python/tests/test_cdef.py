"""The cffi declarations are generated from c_api/rngtrk.h and match the library."""
import os
import re
import subprocess
import sys

import rngtrk
from rngtrk import errors
from rngtrk._cdef import CDEF

from conftest import BINDING_DIR, REPO


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
