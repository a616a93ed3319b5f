# SPDX-License-Identifier: Apache-2.0
"""Layout, distribution, dtype and policy names, and dtype sizes, are the
library's: the binding lists none of its own, and an unknown name is refused
by the library, with its message."""
import numpy
import pytest

import rngtrk
from rngtrk import PhiloxState, _names, buffers, distributed, sampling
from rngtrk._library import ffi, lib

STATE = PhiloxState(1, 0)


def c_names(name_of):
    """The names the library gives for 0, 1, 2, ... until NULL."""
    found = []
    while name_of(len(found)) != ffi.NULL:
        found.append(ffi.string(name_of(len(found))).decode())
    return found


def test_the_public_tables_are_the_librarys_listing_in_its_order():
    for table, name_of in ((sampling.LAYOUTS, lib.rngtrk_layout_name),
                           (sampling.DISTRIBUTIONS, lib.rngtrk_distribution_name),
                           (sampling.DTYPES, lib.rngtrk_dtype_name),
                           (distributed.POLICIES, lib.rngtrk_seed_policy_name)):
        assert list(table) == c_names(name_of)
        assert list(table.values()) == list(range(len(table)))
    assert sampling.LAYOUTS == {"stateless": lib.RNGTRK_LAYOUT_STATELESS, "nvfuser": lib.RNGTRK_LAYOUT_NVFUSER,
                                "torch-eager-cuda": lib.RNGTRK_LAYOUT_TORCH_EAGER_CUDA,
                                "triton": lib.RNGTRK_LAYOUT_TRITON}
    assert sampling.DTYPES["bf16"] == lib.RNGTRK_DTYPE_BF16 and sampling.DISTRIBUTIONS["normal"] == lib.RNGTRK_DIST_NORMAL


DTYPE_NAMES = "u8, u32, u64, f16, bf16, f32 or f64"


@pytest.mark.parametrize("what, plural, call, listing", [
    ("layout", "layouts", lambda v: rngtrk.sample(STATE, 4, layout=v), "stateless, nvfuser, torch-eager-cuda or triton"),
    ("distribution", "distributions", lambda v: rngtrk.sample(STATE, 4, dist=v), "bits, uniform, normal or bernoulli"),
    ("dtype", "dtypes", lambda v: rngtrk.offset_increment(4, dtype=v), DTYPE_NAMES),
    ("dtype", "dtypes", rngtrk.dtype_size, DTYPE_NAMES),
    ("seeding policy", "policies", distributed.policy_value, "megatron, slapo or derived"),
])
def test_an_unknown_name_is_the_librarys_refusal(what, plural, call, listing):
    # (what is given, how the library's message shows it: a str as it is,
    # anything else, or a str with a NUL, as its repr)
    for bad, shown in (("jax", "jax"), ("Stateless", "Stateless"), ("", ""), (None, "None"), (3, "3"),
                       ("u8\0x", "'u8\\x00x'"), (["u8"], "['u8']"), ("\udcff", "\\udcff")):
        with pytest.raises(rngtrk.InvalidArgumentError) as raised:
            call(bad)
        error = raised.value
        # The library's words, as rngtrk_last_error() gave them.
        assert error.code == lib.RNGTRK_E_INVALID_ARGUMENT
        assert error.message == f'unknown {what} "{shown}" (the {plural} are {listing})', error.message


def test_an_empty_dtype_is_refused_not_taken_for_the_default():
    with pytest.raises(rngtrk.InvalidArgumentError, match='unknown dtype ""'):
        rngtrk.sample(STATE, 4, dtype="")
    assert rngtrk.sample(STATE, 4, dtype=None).dtype == numpy.float32  # None: the default, f32


def test_a_name_with_a_nul_is_never_cut_short_into_a_valid_one():
    for call in (lambda: rngtrk.sample(STATE, 4, layout="stateless\0junk"),
                 lambda: distributed.policy_value("slapo\0")):
        with pytest.raises(rngtrk.InvalidArgumentError, match="unknown"):
            call()


def test_dtype_sizes_are_the_librarys_and_numpys():
    for name, value in sampling.DTYPES.items():
        size = rngtrk.dtype_size(name)
        assert size == lib.rngtrk_dtype_size(value) > 0
        assert size == numpy.dtype(buffers.NUMPY_OF[name]).itemsize
        # A draw writes exactly count * size bytes into its output.
        dist = {"u8": "bernoulli", "u32": "bits", "u64": "bits"}.get(name, "uniform")
        assert rngtrk.sample(STATE, 3, dist=dist, dtype=name).nbytes == 3 * size


def test_the_binding_keeps_no_table_of_names_or_widths():
    for module, gone in ((buffers, "BYTES_OF"), (sampling, "_pick")):
        assert not hasattr(module, gone)
    assert _names.LAYOUT.values is sampling.LAYOUTS and _names.POLICY.values is distributed.POLICIES


class _DeviceArray:
    """A stand-in for a CuPy/Numba array: only __cuda_array_interface__."""

    def __init__(self, typestr, shape, strides):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (0x1000, False),
                                         "strides": strides, "version": 3}


def test_cuda_array_interface_strides_are_read_with_the_typestrs_width():
    # An int64 (seed, offset) pair with its strides spelt out is contiguous
    # (8 bytes apart); the same strides on float32 elements are a gap.
    buffer = buffers.device_buffer(_DeviceArray("<i8", (2,), (8,)), 2, "u64", "device_state")
    assert (buffer.count, buffer.dtype) == (2, "u64")
    assert buffers.device_buffer(_DeviceArray("<u2", (3, 2), (4, 2)), None, "bf16").count == 6
    with pytest.raises(rngtrk.InvalidArgumentError, match="not C-contiguous"):
        buffers.device_buffer(_DeviceArray("<f4", (2,), (8,)), 2, "f32")
