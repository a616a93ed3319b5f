# SPDX-License-Identifier: Apache-2.0
"""The stream table: what rngtrk.torch.dcp.RNGState stores in a
torch.distributed.checkpoint (DCP) checkpoint, as bytes.

One table holds every stream of every rank of the job that saved, each
once, keyed by what it is (docs/checkpoint-format.md, "The DCP stream
table"): a named state by its name, seed and stream origin (the seeding
policy, its flags and base seed, and the coordinates its seed depends on:
rngtrk._stream_origins), and the generator outside every fork (torch's
default CUDA generator; on CPU-only torch the tracker's default state) by
its seed and stream origin, or by its rank where it has none.  The layout
is little-endian with a CRC-32, like rngtrk's own checkpoint bytes, so any
language can read it; this module is the one reader and writer in this
package.  It reads version 1 (before streams had origins) and writes version
2.  Nothing here needs torch.distributed.
"""
import struct
import zlib
from collections import namedtuple

from .._stream_origins import AXES, StreamOrigin
from ..distributed import FLAG_NAMES, POLICIES
from ..errors import CorruptCheckpointError, UnsupportedVersionError

MAGIC = b"RNGTRKDS"
VERSION = 2          # written
VERSIONS = (1, 2)    # read
KIND_NAMED = 0
KIND_GENERATOR = 1
NO_POLICY = 0xFFFFFFFF  # an entry without a stream origin

_HEADER = struct.Struct("<8sIQII")   # magic, format_version, total_length, world_size, stream_count
_ENTRY_FIXED = struct.Struct("<BB")  # kind, name_length
_TAIL_V1 = struct.Struct("<IIQQ")    # rank, holders, seed, offset
# version 2 adds the stream origin: policy, flags, base seed, depends, the coordinates
_TAIL_V2 = struct.Struct("<IIQQIIQI" + "I" * len(AXES))
_CRC = struct.Struct("<I")
_KNOWN_FLAGS = sum(bit for bit, _ in FLAG_NAMES)
_KNOWN_POLICIES = frozenset(POLICIES.values())

# One stream of the table.  kind KIND_NAMED: a named state; rank is the
# lowest rank that held it, holders how many did.  kind KIND_GENERATOR: a
# generator (name None); with a stream origin like a named state, without
# one the generator of `rank` (holders 1).  origin: a StreamOrigin or None.
Entry = namedtuple("Entry", "kind name seed offset rank holders origin", defaults=(None,))


class Table(namedtuple("Table", "world_size entries version", defaults=(VERSION,))):
    """world_size: the size of the group that saved; entries: in the
    canonical order; version: the format_version it was read from."""

    __slots__ = ()

    def named(self):
        """{(name, seed, origin): Entry} of the named streams."""
        return {(e.name, e.seed, e.origin): e for e in self.entries if e.kind == KIND_NAMED}

    def generators(self):
        """{(seed, origin): Entry} of the generators with a stream origin,
        and {rank: Entry} of those without: one dict."""
        return {(e.seed, e.origin) if e.origin is not None else e.rank: e
                for e in self.entries if e.kind == KIND_GENERATOR}


def _origin_fields(origin):
    if origin is None:
        return (NO_POLICY, 0, 0, 0) + (0,) * len(AXES)
    return (origin.policy, origin.flags, origin.seed, origin.depends) + tuple(origin.coordinates)


def order(entry):
    """The canonical order's key of an entry, which is also what makes it
    one stream: named streams by name bytes, seed and stream origin fields;
    then generators with a stream origin by seed and origin fields; then
    generators without one by rank (a rank has one generator)."""
    if entry.kind == KIND_NAMED:
        return (0, entry.name.encode("utf-8"), entry.seed, _origin_fields(entry.origin))
    if entry.origin is not None:
        return (1, entry.seed, _origin_fields(entry.origin))
    return (2, entry.rank)


def canonical(world_size, entries):
    """A Table with `entries` in the canonical order."""
    return Table(world_size, tuple(sorted(entries, key=order)))


def encode(table, check=False):
    """The table's version-2 bytes.  It must be canonical and valid; with
    `check` (rngtrk.torch.dcp's debug mode) decode(encode(t)) == t is
    verified."""
    body = []
    for e in table.entries:
        name = b"" if e.name is None else e.name.encode("utf-8")
        body.append(_ENTRY_FIXED.pack(e.kind, len(name)) + name
                    + _TAIL_V2.pack(e.rank, e.holders, e.seed, e.offset, *_origin_fields(e.origin)))
    data = framed(MAGIC, VERSION, table.world_size, len(table.entries), b"".join(body))
    if check:  # a failure is a bug of the caller in this package
        try:
            back = decode(data)
        except CorruptCheckpointError as e:
            raise ValueError(f"encode: the table is not canonical and valid ({e})") from None
        if back != Table(table.world_size, tuple(table.entries)):
            raise ValueError("encode: the table is not canonical and valid (it reads back otherwise)")
    return data


def _corrupt(message):
    return CorruptCheckpointError(f"DCP stream table: {message}")


# The frame both DCP tables share (this one and rngtrk.torch._process_table):
# the header (magic, format_version, total_length, world_size, a count),
# the body, and a CRC-32 of everything before it.

def framed(magic, version, world_size, count, body):
    """A table's bytes: its header, `body` and the CRC-32."""
    total = _HEADER.size + len(body) + _CRC.size
    data = _HEADER.pack(magic, version, total, world_size, count) + body
    return data + _CRC.pack(zlib.crc32(data))


def unframed(data, magic, versions, what):
    """(bytes, version, world_size, count, the end of the body) of `data`
    (bytes-like) after the frame's checks (docs/checkpoint-format.md):
    CorruptCheckpointError naming `what` ("stream table"), or
    UnsupportedVersionError for a version not in `versions`."""
    def corrupt(message):
        return CorruptCheckpointError(f"DCP {what}: {message}")
    try:
        data = memoryview(data).cast("B").tobytes()
    except TypeError:
        raise corrupt(f"expected bytes, got {type(data).__name__}") from None
    if len(data) < 8 or data[:8] != magic:
        raise corrupt(f"the magic {magic.decode()} is missing (not a {what})")
    if len(data) < 12:
        raise corrupt(f"truncated at {len(data)} bytes")
    version = struct.unpack_from("<I", data, 8)[0]
    if version not in versions:
        raise UnsupportedVersionError(f"DCP {what} format_version {version}; this rngtrk reads "
                                      f"{' and '.join(map(str, versions))}")
    if len(data) < _HEADER.size + _CRC.size:
        raise corrupt(f"truncated at {len(data)} bytes")
    _, _, total, world_size, count = _HEADER.unpack_from(data, 0)
    if total != len(data):
        raise corrupt(f"total_length {total} but {len(data)} bytes given")
    if _CRC.unpack_from(data, total - _CRC.size)[0] != zlib.crc32(data[:total - _CRC.size]):
        raise corrupt("CRC-32 mismatch")
    if world_size == 0:
        raise corrupt("world_size 0")
    return data, version, world_size, count, total - _CRC.size


HEADER_SIZE = _HEADER.size


def decode(data):
    """The Table of `data` (bytes-like), after every check of
    docs/checkpoint-format.md: CorruptCheckpointError or
    UnsupportedVersionError otherwise."""
    data, version, world_size, count, end = unframed(data, MAGIC, VERSIONS, "stream table")
    tail = _TAIL_V1 if version == 1 else _TAIL_V2
    entries = []
    at = _HEADER.size
    for index in range(count):
        if at + _ENTRY_FIXED.size > end:
            raise _corrupt(f"entry {index} of {count} runs past the end")
        kind, length = _ENTRY_FIXED.unpack_from(data, at)
        at += _ENTRY_FIXED.size
        if at + length + tail.size > end:
            raise _corrupt(f"entry {index} of {count} runs past the end")
        raw_name = data[at:at + length]
        at += length
        fields = tail.unpack_from(data, at)
        at += tail.size
        origin = _checked_origin(index, fields[4:]) if version > 1 else None
        entries.append(_checked_entry(index, kind, raw_name, *fields[:4], origin, world_size))
    if at != end:
        raise _corrupt(f"{end - at} bytes after the last entry")
    keys = [order(e) for e in entries]
    for index in range(1, len(keys)):
        if keys[index - 1] >= keys[index]:
            raise _corrupt(f"entries {index - 1} and {index} are out of order or repeat a stream")
    return Table(world_size, tuple(entries), version)


def _checked_origin(index, fields):
    policy, flags, seed, depends, *coordinates = fields
    where = f"entry {index}"
    if policy == NO_POLICY:
        if flags or seed or depends or any(coordinates):
            raise _corrupt(f"{where}: an entry without a stream origin has its origin fields 0")
        return None
    if policy not in _KNOWN_POLICIES:
        raise _corrupt(f"{where}: unknown seed policy {policy}")
    if flags & ~_KNOWN_FLAGS:
        raise _corrupt(f"{where}: unknown seed flags {flags:#x}")
    if depends >> len(AXES):
        raise _corrupt(f"{where}: depends {depends:#x} names a coordinate past the {len(AXES)} known")
    if any(value for i, value in enumerate(coordinates) if not depends >> i & 1):
        raise _corrupt(f"{where}: a coordinate the seed does not depend on is not 0")
    return StreamOrigin(policy, flags, seed, depends, tuple(coordinates))


def _checked_entry(index, kind, raw_name, rank, holders, seed, offset, origin, world_size):
    where = f"entry {index}"
    if offset % 4:
        raise _corrupt(f"{where}: offset {offset} is not a multiple of 4")
    if rank >= world_size:
        raise _corrupt(f"{where}: rank {rank} outside a world of {world_size}")
    if kind == KIND_GENERATOR:
        if raw_name:
            raise _corrupt(f"{where}: a generator has no name")
        if origin is None and holders != 1:
            raise _corrupt(f"{where}: a generator without a stream origin has one holder")
        if not 1 <= holders <= world_size - rank:
            raise _corrupt(f"{where}: {holders} holders from rank {rank} in a world of {world_size}")
        return Entry(KIND_GENERATOR, None, seed, offset, rank, holders, origin)
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
    return Entry(KIND_NAMED, name, seed, offset, rank, holders, origin)
