# SPDX-License-Identifier: Apache-2.0
"""The names of layouts, distributions, dtypes and seeding policies, and the
dtypes' sizes: the library's (rngtrk_*_name, rngtrk_*_from_name,
rngtrk_dtype_size), so the binding keeps no list of its own.

Each enumeration is read once at import (its values are numbered from 0
without gaps, so asking for 0, 1, 2, ... until NULL lists them all).  A
name it does not list is looked up by the library, which refuses it with
its own InvalidArgumentError and message (the message lists the names).
"""
from ._library import ffi, lib
from .errors import check


def _listed(name_of):
    """{name: value} of every value `name_of` names."""
    found, value = {}, 0
    while (name := name_of(value)) != ffi.NULL:
        found[ffi.string(name).decode("ascii")] = value
        value += 1
    return found


def _as_c_name(name):
    """What to ask the library for `name`: a str as UTF-8 (an unpaired
    surrogate escaped); anything else, or a str with a NUL that C would
    cut short, as its repr, which is no name, so the library's refusal
    shows what was given."""
    if not isinstance(name, str) or "\0" in name:
        name = repr(name)
    return name.encode("utf-8", "backslashreplace")


class Enumeration:
    """One C enumeration by the library's names: `values` {name: value},
    `names` {value: name}, and value(name)."""

    def __init__(self, name_of, from_name, c_type):
        self.values = _listed(name_of)
        self.names = {value: name for name, value in self.values.items()}
        self._from_name = from_name
        self._out_type = c_type + " *"

    def value(self, name):
        """The value called `name`; the library's InvalidArgumentError for
        anything else."""
        try:
            return self.values[name]
        except (KeyError, TypeError):  # TypeError: an unhashable object
            out = ffi.new(self._out_type)
            check(self._from_name(_as_c_name(name), out))
            return out[0]


LAYOUT = Enumeration(lib.rngtrk_layout_name, lib.rngtrk_layout_from_name, "rngtrk_layout")
DISTRIBUTION = Enumeration(lib.rngtrk_distribution_name, lib.rngtrk_distribution_from_name, "rngtrk_distribution")
DTYPE = Enumeration(lib.rngtrk_dtype_name, lib.rngtrk_dtype_from_name, "rngtrk_dtype")
POLICY = Enumeration(lib.rngtrk_seed_policy_name, lib.rngtrk_seed_policy_from_name, "rngtrk_seed_policy")


def dtype_size(dtype):
    """Bytes of one element of `dtype` ("u8" ... "f64"), as the library says."""
    return lib.rngtrk_dtype_size(DTYPE.value(dtype))
