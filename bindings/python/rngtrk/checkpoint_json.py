"""Checkpoint bytes as canonical JSON, the one format every tool prints.

One line: {"format_version": N, "default": {"seed": S, "offset": O},
"states": [{"name": "...", "seed": S, "offset": O}, ...]}, keys in that
order, states in stored order, integers as JSON numbers; exactly what
json.dumps(..., ensure_ascii=False) writes.  The C `rngtrk inspect` and the
Rust example print the same bytes.  Decoding goes through the library
(Tracker.load), so a damaged checkpoint raises its usual exception.
"""
import json

from .tracker import Tracker

# Header fields read before the rest of a file (docs/checkpoint-format.md).
MAGIC = b"RNGTRKCK"
HEADER_PREFIX_BYTES = 20  # magic 8, format_version u32 LE, total_length u64 LE


def describe(data):
    """The checkpoint's content as a dict in canonical key order."""
    with Tracker() as tracker:
        tracker.load(data)
        default = tracker.get_default()
        states = [(name, tracker.get_state(name)) for name in tracker.names()]
    return {
        "format_version": int.from_bytes(bytes(data[8:12]), "little"),
        "default": {"seed": default.seed, "offset": default.offset},
        "states": [{"name": name, "seed": s.seed, "offset": s.offset} for name, s in states],
    }


def to_json(data):
    """The canonical JSON line (without its newline) of checkpoint bytes."""
    return json.dumps(describe(data), ensure_ascii=False)


def read_checkpoint_file(path):
    """The bytes of the checkpoint file at `path`.  The header is read first,
    so a foreign file, or one whose size disagrees with its declared length,
    is refused without reading the rest.  Raises ValueError with the same
    words as the C `rngtrk inspect`, or OSError."""
    with open(path, "rb") as f:
        head = f.read(HEADER_PREFIX_BYTES)
        if not head.startswith(MAGIC):
            raise ValueError("not an rngtrk checkpoint (bad magic)")
        if len(head) < HEADER_PREFIX_BYTES:
            raise ValueError("truncated checkpoint header")
        if int.from_bytes(head[8:12], "little") not in (1, 2):
            raise ValueError("unsupported checkpoint format version")
        size = f.seek(0, 2)
        declared = int.from_bytes(head[12:20], "little")
        if size != declared:
            raise ValueError("truncated checkpoint" if size < declared
                             else "trailing bytes after the checkpoint")
        f.seek(0)
        return f.read()
