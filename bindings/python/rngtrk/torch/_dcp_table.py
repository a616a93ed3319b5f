"""The stream table: what rngtrk.torch.dcp.RNGState stores in a
torch.distributed.checkpoint (DCP) checkpoint, as bytes.

One table holds every stream of every rank of the job that saved: each
named state once per (name, seed) -- data-parallel replicas share it --
and, per rank, the generator outside every fork (torch's default CUDA
generator; on CPU-only torch the tracker's default state).  The layout
(docs/checkpoint-format.md, "The DCP stream table") is little-endian with
a CRC-32, like rngtrk's own checkpoint bytes, so any language can read it;
this module is the one reader and writer in this package.  Nothing here
needs torch.distributed.
"""
import struct
import zlib
from collections import namedtuple

from ..errors import CorruptCheckpointError, UnsupportedVersionError

MAGIC = b"RNGTRKDS"
VERSION = 1
KIND_NAMED = 0
KIND_GENERATOR = 1

_HEADER = struct.Struct("<8sIQII")   # magic, format_version, total_length, world_size, stream_count
_ENTRY_FIXED = struct.Struct("<BB")  # kind, name_length
_ENTRY_TAIL = struct.Struct("<IIQQ")  # rank, holders, seed, offset
_CRC = struct.Struct("<I")

# One stream of the table.  kind KIND_NAMED: a named state, keyed by (name,
# seed); rank is the lowest rank that held it, holders how many did.
# kind KIND_GENERATOR: rank's generator (name None, holders 1).
Entry = namedtuple("Entry", "kind name seed offset rank holders")


class Table(namedtuple("Table", "world_size entries")):
    """world_size: the size of the group that saved; entries: in the
    canonical order (named streams by name bytes then seed, then
    generators by rank)."""

    __slots__ = ()

    def named(self):
        """{(name, seed): Entry} of the named streams."""
        return {(e.name, e.seed): e for e in self.entries if e.kind == KIND_NAMED}

    def generators(self):
        """{rank: Entry} of the generators."""
        return {e.rank: e for e in self.entries if e.kind == KIND_GENERATOR}


def _order(entry):
    if entry.kind == KIND_NAMED:
        return (KIND_NAMED, entry.name.encode("utf-8"), entry.seed)
    return (KIND_GENERATOR, b"", entry.rank)


def canonical(world_size, entries):
    """A Table with `entries` in the canonical order."""
    return Table(world_size, tuple(sorted(entries, key=_order)))


def encode(table):
    """The table's bytes (it must be canonical and valid: decode(encode(t)) == t)."""
    body = []
    for e in table.entries:
        name = b"" if e.name is None else e.name.encode("utf-8")
        body.append(_ENTRY_FIXED.pack(e.kind, len(name)) + name + _ENTRY_TAIL.pack(e.rank, e.holders, e.seed,
                                                                                 e.offset))
    body = b"".join(body)
    total = _HEADER.size + len(body) + _CRC.size
    data = _HEADER.pack(MAGIC, VERSION, total, table.world_size, len(table.entries)) + body
    data += _CRC.pack(zlib.crc32(data))
    if decode(data) != table:
        raise ValueError("encode: the table is not canonical and valid")  # a bug of the caller in this package
    return data


def _corrupt(message):
    return CorruptCheckpointError(f"DCP stream table: {message}")


def decode(data):
    """The Table of `data` (bytes-like), after every check of
    docs/checkpoint-format.md: CorruptCheckpointError or
    UnsupportedVersionError otherwise."""
    try:
        data = memoryview(data).cast("B").tobytes()
    except TypeError:
        raise _corrupt(f"expected bytes, got {type(data).__name__}") from None
    if len(data) < 8 or data[:8] != MAGIC:
        raise _corrupt("the magic RNGTRKDS is missing (not a stream table)")
    if len(data) < 12:
        raise _corrupt(f"truncated at {len(data)} bytes")
    version = struct.unpack_from("<I", data, 8)[0]
    if version != VERSION:
        raise UnsupportedVersionError(f"DCP stream table format_version {version}; this rngtrk reads {VERSION}")
    if len(data) < _HEADER.size + _CRC.size:
        raise _corrupt(f"truncated at {len(data)} bytes")
    _, _, total, world_size, count = _HEADER.unpack_from(data, 0)
    if total != len(data):
        raise _corrupt(f"total_length {total} but {len(data)} bytes given")
    if _CRC.unpack_from(data, total - _CRC.size)[0] != zlib.crc32(data[:total - _CRC.size]):
        raise _corrupt("CRC-32 mismatch")
    if world_size == 0:
        raise _corrupt("world_size 0")
    entries = []
    at, end = _HEADER.size, total - _CRC.size
    for index in range(count):
        if at + _ENTRY_FIXED.size > end:
            raise _corrupt(f"entry {index} of {count} runs past the end")
        kind, length = _ENTRY_FIXED.unpack_from(data, at)
        at += _ENTRY_FIXED.size
        if at + length + _ENTRY_TAIL.size > end:
            raise _corrupt(f"entry {index} of {count} runs past the end")
        raw_name = data[at:at + length]
        at += length
        rank, holders, seed, offset = _ENTRY_TAIL.unpack_from(data, at)
        at += _ENTRY_TAIL.size
        entries.append(_checked_entry(index, kind, raw_name, rank, holders, seed, offset, world_size))
    if at != end:
        raise _corrupt(f"{end - at} bytes after the last entry")
    keys = [_order(e) for e in entries]
    for index in range(1, len(keys)):
        if keys[index - 1] >= keys[index]:
            raise _corrupt(f"entries {index - 1} and {index} are out of order or repeat a stream")
    return Table(world_size, tuple(entries))


def _checked_entry(index, kind, raw_name, rank, holders, seed, offset, world_size):
    where = f"entry {index}"
    if offset % 4:
        raise _corrupt(f"{where}: offset {offset} is not a multiple of 4")
    if rank >= world_size:
        raise _corrupt(f"{where}: rank {rank} outside a world of {world_size}")
    if kind == KIND_GENERATOR:
        if raw_name or holders != 1:
            raise _corrupt(f"{where}: a generator has no name and one holder")
        return Entry(KIND_GENERATOR, None, seed, offset, rank, 1)
    if kind != KIND_NAMED:
        raise _corrupt(f"{where}: unknown kind {kind}")
    try:
        name = raw_name.decode("utf-8")  # strict: no overlong forms, no surrogates
    except UnicodeDecodeError:
        raise _corrupt(f"{where}: the name is not well-formed UTF-8") from None
    if not name or "\0" in name:
        raise _corrupt(f"{where}: a name is 1 to 255 bytes without NUL")
    if not 1 <= holders <= world_size - rank:
        raise _corrupt(f"{where}: {holders} holders from rank {rank} in a world of {world_size}")
    return Entry(KIND_NAMED, name, seed, offset, rank, holders)

