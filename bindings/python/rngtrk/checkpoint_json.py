"""Checkpoint bytes as canonical JSON, the one format every tool prints.

One line: {"format_version": N, "default": {"seed": S, "offset": O},
"states": [{"name": "...", "seed": S, "offset": O}, ...]}, keys in that
order, states in stored order, integers as JSON numbers; exactly what
json.dumps(..., ensure_ascii=False) writes.  A version-2 checkpoint that
records who it belongs to adds, last, "origin": {"policy": "megatron",
"seed": S, "flags": ["dp-random-init", ...], "rank": {"tp": T, "pp": P,
"dp": D, "ep": E, "etp": F}}.  The C `rngtrk inspect` and the
Rust example print the same bytes.  Decoding goes through the library
(Tracker.load), so a damaged checkpoint raises its usual exception.
"""
import json

from ._library import ffi, lib
from .errors import check
from .tracker import Tracker

POLICY_NAMES = {lib.RNGTRK_POLICY_MEGATRON: "megatron", lib.RNGTRK_POLICY_SLAPO: "slapo",
                lib.RNGTRK_POLICY_DERIVED: "derived"}
FLAG_NAMES = ((lib.RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT, "dp-random-init"),
              (lib.RNGTRK_SEED_ALWAYS_ENABLE_TP_SEED, "always-enable-tp-seed"))


def _origin(tracker):
    """The tracker's origin as a dict in canonical key order, or None."""
    origin = ffi.new("rngtrk_origin *")
    with tracker._lock:
        check(lib.rngtrk_tracker_get_origin(tracker._live(), origin))
    if not origin.present:
        return None
    rank = origin.rank
    return {"policy": POLICY_NAMES.get(origin.policy, "?"), "seed": origin.seed,
            "flags": [name for bit, name in FLAG_NAMES if origin.flags & bit],
            "rank": {"tp": rank.tp, "pp": rank.pp, "dp": rank.dp, "ep": rank.ep, "etp": rank.etp}}

# Header fields read before the rest of a file (docs/checkpoint-format.md).
MAGIC = b"RNGTRKCK"
HEADER_PREFIX_BYTES = 20  # magic 8, format_version u32 LE, total_length u64 LE


def describe(data):
    """The checkpoint's content as a dict in canonical key order."""
    with Tracker() as tracker:
        tracker.load(data)
        default = tracker.get_default()
        states = [(name, tracker.get_state(name)) for name in tracker.names()]
        origin = _origin(tracker)
    version = int.from_bytes(bytes(data[8:12]), "little")
    described = {
        "format_version": version,
        "default": {"seed": default.seed, "offset": default.offset},
        "states": [{"name": name, "seed": s.seed, "offset": s.offset} for name, s in states],
    }
    if version >= 2 and origin is not None:
        described["origin"] = origin
    return described


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
