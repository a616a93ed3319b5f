# SPDX-License-Identifier: Apache-2.0
"""Checkpoint bytes as canonical JSON, the one format every tool prints.

One line: {"format_version": N, "default": {"seed": S, "offset": O},
"states": [{"name": "...", "seed": S, "offset": O}, ...]}, keys in that
order, states in stored order, and for a version-2 or -3 checkpoint, last,
"origin": {"policy": "megatron", "seed": S, "flags": [...], "rank":
{"tp": T, "pp": P, "dp": D, "ep": E, "etp": F}} (version 3 adds
"gtp_remat", "gtp_remat_size", "egtp_remat" and "egtp_remat_size" to
"rank"): exactly what
json.dumps(..., ensure_ascii=False) writes.  The library writes it
(rngtrk_checkpoint_json), so the C `rngtrk inspect`, this module and the
Rust crate print the same bytes, and a damaged checkpoint raises its usual
exception with the library's message.
"""
import json

from ._library import ffi, lib
from .errors import check


def _text(call):
    """Runs call(dst, capacity, out_len) as a size query, then for the text."""
    length = ffi.new("size_t *")
    check(call(ffi.NULL, 0, length))
    buffer = ffi.new("char[]", length[0] + 1)
    check(call(buffer, length[0] + 1, length))
    return ffi.string(buffer, length[0]).decode("utf-8")


def to_json(data):
    """The canonical JSON line (without its newline) of checkpoint bytes."""
    data = bytes(data)
    return _text(lambda dst, capacity, length: lib.rngtrk_checkpoint_json(data, len(data), dst, capacity, length))


def file_to_json(path):
    """The canonical JSON line of the checkpoint file at `path`, read header
    first (a foreign file is refused before the rest is read).  Raises
    RngtrkIOError, CorruptCheckpointError, ... whose message names the file."""
    encoded = path.encode() if isinstance(path, str) else bytes(path)
    return _text(lambda dst, capacity, length: lib.rngtrk_checkpoint_file_json(encoded, dst, capacity, length))


def describe(data):
    """The checkpoint's content as a dict in canonical key order."""
    return json.loads(to_json(data))
