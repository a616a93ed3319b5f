# SPDX-License-Identifier: Apache-2.0
"""The process table: what RNGState(process=True) stores in a DCP checkpoint
beside the stream table, as bytes: the process generators (Python's random,
NumPy's, torch's CPU generator, CUDA devices' default generators:
rngtrk.torch._process_generators) of every key of the job that saved, each
key once.  A key is what the user's key function gave (the rank in the group
by default): an unsigned integer or a text.  Every rank of the group holds
these same bytes, so DCP keeps one copy whichever rank writes it.

The layout is little-endian with a CRC-32, like the stream table
(docs/checkpoint-format.md, "The DCP process table"); this module is its
one reader and writer.  Nothing here needs torch.distributed.
"""
import struct
from collections import namedtuple

from ..errors import CorruptCheckpointError
from . import _process_generators as generators
from ._dcp_table import HEADER_SIZE, framed, unframed  # the frame both DCP tables share

MAGIC = b"RNGTRKPS"
VERSION = 1
KEY_INTEGER, KEY_TEXT = 0, 1
MAX_KEY_TEXT = 1024  # bytes of UTF-8

_KEY = struct.Struct("<BH")          # key kind, key length
_ENTRY_TAIL = struct.Struct("<III")  # rank, holders, generator_count
_GENERATOR = struct.Struct("<BII")   # kind, device, state length

# One key of the table: key (int or str), the lowest rank that held it and
# how many did, and its generators: a tuple of (kind, device, state bytes)
# in (kind, device) order.
Entry = namedtuple("Entry", "key rank holders generators")


class Table(namedtuple("Table", "world_size entries")):
    """world_size: the size of the group that saved; entries: by key, in
    the canonical order (integers before texts, each ascending)."""

    __slots__ = ()

    def by_key(self):
        return {e.key: e for e in self.entries}


def key_order(key):
    return (KEY_INTEGER, key, b"") if isinstance(key, int) else (KEY_TEXT, 0, key.encode("utf-8"))


def key_bytes(key):
    """The key as it is stored (its kind byte, then its bytes): what
    derived states hash."""
    kind, number, text = key_order(key)
    return bytes([kind]) + (struct.pack("<Q", number) if kind == KEY_INTEGER else text)


def checked_key(key, where):
    """`key` if it can be a key (an int in [0, 2^64) or a non-empty text of
    at most MAX_KEY_TEXT bytes of UTF-8 without NUL), else TypeError or
    ValueError naming `where`."""
    if isinstance(key, bool) or not isinstance(key, (int, str)):
        raise TypeError(f"{where}: a key is an int or a str, not {type(key).__name__}")
    if isinstance(key, int) and not 0 <= key < 2 ** 64:
        raise ValueError(f"{where}: an integer key is in [0, 2^64), not {key}")
    if isinstance(key, str):
        try:
            raw = key.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"{where}: a text key is valid UTF-8 (no lone surrogates)") from None
        if not 1 <= len(raw) <= MAX_KEY_TEXT or "\0" in key:
            raise ValueError(f"{where}: a text key is 1 to {MAX_KEY_TEXT} bytes of UTF-8 without NUL")
    return key


def encode_generators(states):
    """A rank's generators ([(kind, device, bytes)], in order) as bytes: the
    part of an entry a rank sends and replicas compare."""
    return b"".join(_GENERATOR.pack(kind, device, len(data)) + data for kind, device, data in states)


def encode(table):
    body = []
    for e in table.entries:
        kind, number, text = key_order(e.key)
        raw = struct.pack("<Q", number) if kind == KEY_INTEGER else text
        body.append(_KEY.pack(kind, len(raw)) + raw + _ENTRY_TAIL.pack(e.rank, e.holders, len(e.generators))
                    + encode_generators(e.generators))
    return framed(MAGIC, VERSION, table.world_size, len(table.entries), b"".join(body))


def _corrupt(message):
    return CorruptCheckpointError(f"DCP process table: {message}")


def decode_generators(data, at, end, count, where):
    """(the generators of `count` records from data[at:end], the offset
    after them), each checked (_process_generators.check)."""
    found = []
    for index in range(count):
        if at + _GENERATOR.size > end:
            raise _corrupt(f"{where}: generator {index} runs past the end")
        kind, device, length = _GENERATOR.unpack_from(data, at)
        at += _GENERATOR.size
        if at + length > end:
            raise _corrupt(f"{where}: generator {index} runs past the end")
        state = data[at:at + length]
        at += length
        generators.check(kind, device, state, f"DCP process table: {where}")
        if found and (found[-1][0], found[-1][1]) >= (kind, device):
            raise _corrupt(f"{where}: generators out of order or repeated")
        found.append((kind, device, state))
    return tuple(found), at


def decode(data):
    """The Table of `data` (bytes-like), after every check of
    docs/checkpoint-format.md: CorruptCheckpointError or
    UnsupportedVersionError otherwise."""
    data, _, world_size, count, end = unframed(data, MAGIC, (VERSION,), "process table")
    entries, at = [], HEADER_SIZE
    for index in range(count):
        where = f"entry {index}"
        if at + _KEY.size > end:
            raise _corrupt(f"{where} of {count} runs past the end")
        kind, length = _KEY.unpack_from(data, at)
        at += _KEY.size
        if at + length + _ENTRY_TAIL.size > end:
            raise _corrupt(f"{where} of {count} runs past the end")
        raw = data[at:at + length]
        at += length
        if kind == KEY_INTEGER and length == 8:
            key = struct.unpack("<Q", raw)[0]
        elif kind == KEY_TEXT:
            try:
                key = checked_key(raw.decode("utf-8"), where)
            except (UnicodeDecodeError, ValueError):
                raise _corrupt(f"{where}: a text key is 1 to {MAX_KEY_TEXT} bytes of UTF-8 without NUL") from None
        else:
            raise _corrupt(f"{where}: key kind {kind} of {length} bytes")
        rank, holders, generator_count = _ENTRY_TAIL.unpack_from(data, at)
        at += _ENTRY_TAIL.size
        if rank >= world_size or not 1 <= holders <= world_size - rank:
            raise _corrupt(f"{where}: {holders} holders from rank {rank} in a world of {world_size}")
        states, at = decode_generators(data, at, end, generator_count, where)
        if entries and key_order(entries[-1].key) >= key_order(key):
            raise _corrupt(f"entries {index - 1} and {index} are out of order or repeat a key")
        entries.append(Entry(key, rank, holders, states))
    if at != end:
        raise _corrupt(f"{end - at} bytes after the last entry")
    return Table(world_size, tuple(entries))
