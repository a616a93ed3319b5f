#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generates rngtrk's shared test vectors (read by the C, Python and Rust tests).

This is a second, independent implementation of Philox4x32-10, the stream,
the float transform and the checkpoint encoding, in plain Python with no
dependency and no use of librngtrk.  The library is tested against its output,
and against Random123 and cuRAND, so no expected value comes from the code
under test.

    generate.py            rewrite the files in tests/vectors/
    generate.py --check    exit 1 (and say which) if a checked-in file is stale

Files (formats in tests/vectors/README.md):
    rngtrk_vectors.txt         philox / state / u32 / f32 lines
    checkpoints/*.rtck         golden checkpoints, with *.json their canonical decoding
    checkpoints/invalid/*.rtck invalid checkpoints, listed with their expected status
                               in checkpoints/invalid/expected.txt
    checkpoints/recipes.txt    tracker operations; each recipe NAME must save to
                               checkpoints/NAME.rtck (every language runs them)
    sample_vectors.txt         rngtrk_sample outputs for every layout, distribution and
                               dtype, from sample_reference.py (docs/streams.md)
"""
import json
import os
import struct
import sys
import zlib

import sample_reference as sr

HERE = os.path.dirname(os.path.abspath(__file__))
M64 = (1 << 64) - 1
M32 = (1 << 32) - 1


# --- Philox4x32-10 ---------------------------------------------------------

def philox4x32_10(ctr, key):
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for _ in range(10):
        p0 = 0xD2511F53 * c0
        p1 = 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & M32, p1 & M32, ((p0 >> 32) ^ c3 ^ k1) & M32, p0 & M32
        k0 = (k0 + 0x9E3779B9) & M32
        k1 = (k1 + 0xBB67AE85) & M32
    return (c0, c1, c2, c3)


def stream_u32(seed, offset, first, count):
    """Element g: word g%4 of Philox(key(seed), counter(offset/4 + g/4, 0))."""
    assert offset % 4 == 0
    key = (seed & M32, seed >> 32)
    out = []
    block_cache = {}
    for g in range(first, first + count):
        b = (offset // 4 + g // 4) & M64
        if b not in block_cache:
            block_cache = {b: philox4x32_10((b & M32, b >> 32, 0, 0), key)}
        out.append(block_cache[b][g % 4])
    return out


def uniform_f32_bits(word):
    """(w & 0xFFFFFF) * 2^-24 as an IEEE float32 bit pattern."""
    value = (word & 0xFFFFFF) / 16777216.0  # exact: 24 bits fit a float mantissa
    return struct.unpack("<I", struct.pack("<f", value))[0]


def state_bytes(seed, offset):
    return struct.pack("<QQ", seed, offset)


# --- checkpoints (docs/checkpoint-format.md) -------------------------------

MAGIC = b"RNGTRKCK"
FORMAT_VERSION = 1


def origin_version(origin):
    """1 without an origin; 2 for (policy, flags, seed, tp, pp, dp, ep, etp);
    3 when the origin goes on with (gtp_remat, gtp_remat_size, egtp_remat,
    egtp_remat_size), which is written only when one of them is not 0."""
    if origin is None:
        return FORMAT_VERSION
    return 3 if len(origin) == 12 else 2


def encode_checkpoint(default, states, version=None, total_length=None, crc=None, origin=None):
    """states: list of (name_bytes, seed, offset); origin: None or a tuple of
    origin_version.  The keyword arguments let the invalid-file recipes break
    one field at a time."""
    body = bytearray()
    for name, seed, offset in states:
        body += bytes([len(name)]) + name + state_bytes(seed, offset)
    if origin is not None:
        body += struct.pack("<IIQ%dI" % (len(origin) - 3), *origin)
    if version is None:
        version = origin_version(origin)
    length = 40 + len(body) + 4 if total_length is None else total_length
    head = MAGIC + struct.pack("<IQ", version, length) + state_bytes(*default)
    head += struct.pack("<I", len(states))
    data = head + body
    return data + struct.pack("<I", zlib.crc32(data) if crc is None else crc)


POLICY_NAMES = ["megatron", "slapo", "derived"]
FLAG_NAMES = [(1, "dp-random-init"), (2, "always-enable-tp-seed")]


def canonical_json(default, states, version=FORMAT_VERSION, origin=None):
    """One line, as Python's json.dumps(ensure_ascii=False) writes it.
    `origin` (policy, flags, seed, tp, pp, dp, ep, etp[, gtp_remat,
    gtp_remat_size, egtp_remat, egtp_remat_size]) comes last."""
    obj = {
        "format_version": version,
        "default": {"seed": default[0], "offset": default[1]},
        "states": [{"name": n.decode("utf-8"), "seed": s, "offset": o} for n, s, o in states],
    }
    if origin is not None:
        policy, flags, seed = origin[:3]
        rank = dict(zip(("tp", "pp", "dp", "ep", "etp", "gtp_remat", "gtp_remat_size", "egtp_remat",
                         "egtp_remat_size"), origin[3:]))
        obj["origin"] = {"policy": POLICY_NAMES[policy], "seed": seed,
                         "flags": [name for bit, name in FLAG_NAMES if flags & bit], "rank": rank}
    return json.dumps(obj, ensure_ascii=False) + "\n"


MEGATRON_SEED = 1234  # Megatron-LM model_parallel_cuda_manual_seed(1234, tp_rank=3, ep_rank=1, etp_rank=0)
GOLDEN = {
    "empty": ((0, 0), []),
    "megatron": (
        (MEGATRON_SEED, 8),
        [
            (b"data-parallel-rng", MEGATRON_SEED, 0),
            (b"model-parallel-rng", MEGATRON_SEED + 2718 + 3, 40),
            (b"expert-parallel-rng", MEGATRON_SEED + 1024 + 100 * 1 + 0, 4),
        ],
    ),
    "edge_names": (
        (M64, M64 - 3),
        [
            ("dropout-ü-ß-日本語-🎲".encode("utf-8"), 7, 12),
            (b'quote " backslash \\ tab \t newline \n ctl \x01 del \x7f', 8, 0),
            (b"n" * 255, M64, M64 - 3),
            (b"x", 0, 1 << 62),
        ],
    ),
}

_two = [(b"a", 1, 0), (b"b", 2, 4)]
_ok = encode_checkpoint((5, 0), _two)
INVALID = {
    # name: (bytes, expected status name)
    "empty_file": (b"", "RNGTRK_E_CORRUPT"),
    "bad_magic": (b"RNGTRKXX" + _ok[8:], "RNGTRK_E_CORRUPT"),
    "future_version": (encode_checkpoint((5, 0), _two, version=4), "RNGTRK_E_UNSUPPORTED_VERSION"),
    "origin_unknown_policy": (encode_checkpoint((5, 0), _two, origin=(7, 0, 1, 0, 0, 0, 0, 0)), "RNGTRK_E_CORRUPT"),
    # A flag no policy has, and a flag megatron does not read: seed_rank writes neither.
    "origin_unknown_flag": (encode_checkpoint((5, 0), _two, origin=(0, 4, 1, 0, 0, 0, 0, 0)), "RNGTRK_E_CORRUPT"),
    "origin_flag_not_read": (encode_checkpoint((5, 0), _two, origin=(0, 2, 1, 0, 0, 0, 0, 0)), "RNGTRK_E_CORRUPT"),
    # Version 3 holds only what seed_rank records: a remat axis that is off
    # is 0 and 0, at least one coordinate is not 0, and slapo has none.
    "origin_v3_without_remat": (encode_checkpoint((5, 0), _two, origin=(0, 0, 1) + (0,) * 9), "RNGTRK_E_CORRUPT"),
    "origin_remat_rank_outside": (encode_checkpoint((5, 0), _two, origin=(0, 0, 1) + (0,) * 5 + (4, 4, 0, 0)),
                                  "RNGTRK_E_CORRUPT"),
    "origin_remat_size_one": (encode_checkpoint((5, 0), _two, origin=(0, 0, 1) + (0,) * 5 + (0, 0, 0, 1)),
                              "RNGTRK_E_CORRUPT"),
    "origin_remat_rank_when_off": (encode_checkpoint((5, 0), _two, origin=(2, 0, 1) + (0,) * 5 + (1, 0, 0, 0)),
                                   "RNGTRK_E_CORRUPT"),
    "origin_slapo_remat": (encode_checkpoint((5, 0), _two, origin=(1, 0, 1) + (0,) * 5 + (1, 2, 0, 0)),
                           "RNGTRK_E_CORRUPT"),
    "origin_v3_short_block": (encode_checkpoint((5, 0), _two, version=3, origin=(0, 0, 1, 0, 0, 0, 0, 0)),
                              "RNGTRK_E_CORRUPT"),  # version 3 with a version-2 origin block
    "origin_truncated": (encode_checkpoint((5, 0), _two, origin=(0, 0, 1, 0, 0, 0, 0, 0))[:-8], "RNGTRK_E_CORRUPT"),
    "truncated": (_ok[:-1], "RNGTRK_E_CORRUPT"),
    "trailing_byte": (_ok + b"\0", "RNGTRK_E_CORRUPT"),
    "bad_checksum": (encode_checkpoint((5, 0), _two, crc=zlib.crc32(_ok[:-4]) ^ 1), "RNGTRK_E_CORRUPT"),
    "flipped_seed_bit": (_ok[:45] + bytes([_ok[45] ^ 0x10]) + _ok[46:], "RNGTRK_E_CORRUPT"),
    "duplicate_name": (encode_checkpoint((5, 0), [(b"a", 1, 0), (b"a", 2, 0)]), "RNGTRK_E_CORRUPT"),
    "duplicate_seed": (encode_checkpoint((5, 0), [(b"a", 1, 0), (b"b", 1, 0)]), "RNGTRK_E_CORRUPT"),
    "empty_name": (encode_checkpoint((5, 0), [(b"", 1, 0)]), "RNGTRK_E_CORRUPT"),
    "invalid_utf8_name": (encode_checkpoint((5, 0), [(b"\xc3\x28", 1, 0)]), "RNGTRK_E_CORRUPT"),
    "nul_in_name": (encode_checkpoint((5, 0), [(b"a\x00b", 1, 0)]), "RNGTRK_E_CORRUPT"),
    "misaligned_offset": (encode_checkpoint((5, 0), [(b"a", 1, 2)]), "RNGTRK_E_CORRUPT"),
    "misaligned_default_offset": (encode_checkpoint((5, 6), _two), "RNGTRK_E_CORRUPT"),
}


def _count_too_large():
    # A checksum-valid file whose entry count promises far more than it holds.
    data = bytearray(encode_checkpoint((5, 0), _two))
    struct.pack_into("<I", data, 36, 0xFFFFFFFF)
    struct.pack_into("<I", data, len(data) - 4, zlib.crc32(bytes(data[:-4])))
    return bytes(data)


INVALID["count_too_large"] = (_count_too_large(), "RNGTRK_E_CORRUPT")



# --- recipes: operations every language runs, and the checkpoint they save --
#
# Each recipe is a list of tracker calls.  RecipeModel below replays them
# from the documented semantics (docs/tracker.md) to get the golden states;
# the C and Python tests replay them through librngtrk and must save the
# same bytes.  Only valid sequences appear here.

RECIPES = {
    # The "megatron" golden file, reached by the calls a training job makes.
    "megatron": [
        "manual_seed 1234", "advance 8",
        "add data-parallel-rng 1234", "add model-parallel-rng 3955", "add expert-parallel-rng 2358",
        "fork model-parallel-rng", "advance 40", "restore model-parallel-rng",
        "fork expert-parallel-rng", "advance 3", "restore expert-parallel-rng",
    ],
    # A longer job: nested forks, rounding, set_state/set_default, a reset
    # and a set_states that reorders and replaces the named states.
    "resumed_job": [
        "manual_seed 42", "add model-parallel-rng 2760", "add data-parallel-rng 42",
        "fork model-parallel-rng", "advance 1", "fork data-parallel-rng", "advance 4097",
        "restore data-parallel-rng", "advance 6", "restore model-parallel-rng", "advance 13",
        "set_state data-parallel-rng 42 65536", "set_default 7 1024",
        "reset", "manual_seed 9", "add a 1", "add b 2", "fork b", "advance 2", "restore b",
        "set_states b 2 8 c 3 0 a 18446744073709551615 18446744073709551612",
        "fork c", "advance 5", "restore c", "advance 1",
    ],
    # Megatron-LM's double fork: "a" is forked again while open; the inner
    # fork continues a's one stream, and the outer one goes on after it.
    "double_fork": [
        "manual_seed 5", "add a 11", "add b 22",
        "fork a", "advance 8", "fork b", "advance 8", "fork a", "advance 8", "restore a",
        "advance 8", "restore b", "advance 8", "restore a", "advance 4",
    ],
    # Format version 3: Megatron-LM main's states with both remat axes on
    # (GTP_remat rank 2 of 4, expert GTP_remat rank 1 of 2) and
    # data-parallel random init, then draws from the remat states.
    "megatron_remat_v3": [
        "seed_rank megatron 1234 tp=3 pp=1 dp=2 ep=1 etp=1 gtp_remat=2 gtp_remat_size=4 egtp_remat=1 "
        "egtp_remat_size=2 dp-random-init",
        "advance 8", "fork gtp-remat-rng", "advance 100", "restore gtp-remat-rng",
        "fork egtp-remat-rng", "advance 5", "restore egtp-remat-rng",
    ],
    # The derived policy's remat state (its fold_in formulas), GTP_remat on
    # and the expert axis off with a size of 1, which the origin records as 0.
    "derived_remat_v3": [
        "seed_rank derived 99 tp=1 ep=2 gtp_remat=1 gtp_remat_size=2 egtp_remat_size=1",
        "fork model-parallel-rng", "advance 4", "fork gtp-remat-rng", "advance 7", "restore gtp-remat-rng",
        "restore model-parallel-rng",
    ],
}

# The seeding policies, from docs/distributed.md (Megatron-LM main,
# commit d98e8a64ddf34856e74b24714e3bedb2f5a39553, and our derived policy).
RANK_FIELDS = ("tp", "pp", "dp", "ep", "etp", "gtp_remat", "gtp_remat_size", "egtp_remat", "egtp_remat_size")


def fold_in(seed, offset, d):
    """(seed, offset) of Philox4x32-10(key(seed), counter offset/4 + d)."""
    b = (offset // 4 + d) & M64
    w = philox4x32_10((b & M32, b >> 32, 0, 0), (seed & M32, seed >> 32))
    return w[0] | w[1] << 32, w[2] | w[3] << 32


def derive(seed, tag, coordinate):
    return fold_in(*fold_in(seed, 0, tag), coordinate)[0]


def policy_states(policy, seed, rank, flags):
    """(default seed, [(name, seed)...]) in the order upstream adds them."""
    gtp_on, egtp_on = rank["gtp_remat_size"] > 1, rank["egtp_remat_size"] > 1
    if policy == "megatron":
        s = seed + 100 * rank["pp"] + (10 * rank["dp"] if "dp-random-init" in flags else 0)
        model, expert = s + 2718 + rank["tp"], s + 1024 + 100 * rank["ep"] + rank["etp"]
        gtp = model + 65536 * (1 + rank["gtp_remat"])
        egtp = expert + 32768 + 65536 * (1 + rank["egtp_remat"])
    elif policy == "derived":
        s = derive(seed, 2, rank["pp"])
        if "dp-random-init" in flags:
            s = derive(s, 3, rank["dp"])
        model = derive(derive(s, 0x101, 0), 1, rank["tp"])
        expert = derive(derive(derive(s, 0x102, 0), 4, rank["ep"]), 5, rank["etp"])
        gtp = derive(derive(model, 0x103, 0), 6, rank["gtp_remat"])
        egtp = derive(derive(expert, 0x104, 0), 7, rank["egtp_remat"])
    else:
        raise ValueError("the recipe model knows megatron and derived")
    states = [("data-parallel-rng", s & M64), ("model-parallel-rng", model & M64), ("expert-parallel-rng", expert & M64)]
    states += [("gtp-remat-rng", gtp & M64)] if gtp_on else []
    states += [("egtp-remat-rng", egtp & M64)] if egtp_on else []
    return s & M64, states


class RecipeModel:
    """A tracker written from docs/tracker.md, for valid sequences only."""

    def __init__(self):
        self.default = [0, 0]
        self.states = {}  # name -> [seed, offset], insertion order
        self.forks = []
        self.origin = None  # the checkpoint's origin tuple (encode_checkpoint)

    def active(self):
        return self.states[self.forks[-1]] if self.forks else self.default

    def run(self, line):
        op, *args = line.split()
        ints = [int(a) for a in args if a.isdigit()]
        if op == "manual_seed":
            self.default = [ints[0], 0]
        elif op == "add":
            assert args[0] not in self.states and not self.forks
            self.states[args[0]] = [ints[0], 0]
        elif op == "fork":  # a name already open continues its one stream
            assert args[0] in self.states
            self.forks.append(args[0])
        elif op == "restore":
            assert self.forks.pop() == args[0]
        elif op == "advance":
            self.active()[1] += (ints[0] + 3) // 4 * 4
        elif op == "set_state":
            self.states[args[0]][:] = ints
        elif op == "set_default":
            self.default[:] = ints
        elif op == "reset":
            assert not self.forks
            self.default, self.states, self.origin = [0, 0], {}, None
        elif op == "seed_rank":
            assert not self.forks
            policy, seed = args[0], int(args[1])
            rank = dict.fromkeys(RANK_FIELDS, 0)
            rank.update((k, int(v)) for k, v in (a.split("=") for a in args[2:] if "=" in a))
            flags = [a for a in args[2:] if "=" not in a]
            default, states = policy_states(policy, seed, rank, flags)
            assert len({seed for _, seed in states}) == len(states)
            self.default, self.states = [default, 0], {n: [v, 0] for n, v in states}
            for axis in ("gtp_remat", "egtp_remat"):  # off: recorded as 0
                if rank[axis + "_size"] <= 1:
                    assert rank[axis] == 0
                    rank[axis + "_size"] = 0
            coords = tuple(rank[f] for f in RANK_FIELDS)
            self.origin = ((POLICY_NAMES.index(policy), sum(b for b, n in FLAG_NAMES if n in flags), seed)
                           + (coords if any(coords[5:]) else coords[:5]))
        elif op == "set_states":
            assert not self.forks
            self.states = {args[i]: [int(args[i + 1]), int(args[i + 2])] for i in range(0, len(args), 3)}
        else:
            raise ValueError("unknown recipe operation " + op)

    def checkpoint_fields(self):
        return tuple(self.default), [(n.encode(), s, o) for n, (s, o) in self.states.items()], self.origin


def recipe_file():
    lines = ["# Tracker recipes (tests/vectors/README.md). Generated by generate.py: do not edit.",
             "# Each recipe's calls, run on a new tracker, must save to checkpoints/NAME.rtck."]
    for name, ops in RECIPES.items():
        lines += ["recipe " + name] + ops + ["end"]
    return "\n".join(lines) + "\n"


def recipe_goldens():
    goldens = {}
    for name, ops in RECIPES.items():
        model = RecipeModel()
        for line in ops:
            model.run(line)
        goldens[name] = model.checkpoint_fields()
    # The recipe must reach the hand-written megatron states exactly.
    assert goldens["megatron"] == GOLDEN["megatron"] + (None,), goldens["megatron"]
    return goldens

# --- the text vectors -------------------------------------------------------

def splitmix64(state):
    """Deterministic input recipe (Vigna's SplitMix64): no hidden randomness."""
    while True:
        state = (state + 0x9E3779B97F4A7C15) & M64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        yield z ^ (z >> 31)


def vector_lines():
    lines = [
        "# rngtrk shared test vectors. Generated by tests/vectors/generate.py: do not edit.",
        "# Formats: tests/vectors/README.md. Hex values have no 0x prefix; decimal otherwise.",
    ]
    rng = splitmix64(2026)
    # Philox: edge inputs plus pseudo-random ones.
    cases = [((0, 0, 0, 0), (0, 0)), ((M32,) * 4, (M32, M32)), ((1, 0, 0, 0), (0, 0)),
             ((0, 0, 0, 1), (0, 0)), ((0, 0, 0, 0), (1, 0))]
    for _ in range(59):
        a, b, c = next(rng), next(rng), next(rng)
        cases.append(((a & M32, a >> 32, b & M32, b >> 32), (c & M32, c >> 32)))
    for ctr, key in cases:
        out = philox4x32_10(ctr, key)
        lines.append("philox " + " ".join("%08x" % v for v in (*ctr, *key, *out)))
    # 16-byte states.
    states = [(0, 0), (1, 4), (M64, M64), (0x0123456789ABCDEF, 0xFEDCBA9876543210)]
    states += [(next(rng), next(rng) & ~3 & M64) for _ in range(4)]
    for seed, offset in states:
        lines.append("state %d %d %s" % (seed, offset, state_bytes(seed, offset).hex()))
    # Streams: (seed, offset, first, count), covering partial blocks on both
    # ends, large offsets, counter words above 32 bits and the last indices.
    requests = [(0, 0, 0, 16), (42, 0, 0, 37), (42, 0, 3, 9), (42, 8, 1, 2), (42, 4, 0, 5),
                (M64, 0, 0, 8), (1234, 1 << 40, 5, 11), (7, M64 - 3, 0, 8),
                (7, 0, M64 - 9, 9), (0xDEADBEEFCAFEF00D, 1 << 34, (1 << 34) + 2, 13)]
    for _ in range(6):
        requests.append((next(rng), next(rng) & ~3 & ((1 << 50) - 1), next(rng) % 1000, 1 + next(rng) % 40))
    for seed, offset, first, count in requests:
        words = stream_u32(seed, offset, first, count)
        lines.append("u32 %d %d %d %d %s" % (seed, offset, first, count, " ".join("%08x" % w for w in words)))
        lines.append("f32 %d %d %d %d %s" % (seed, offset, first, count,
                                             " ".join("%08x" % uniform_f32_bits(w) for w in words)))
    return "\n".join(lines) + "\n"


# --- sampling vectors ---------------------------------------------------------

# (distribution, dtype, a, b) combinations; None takes the defaults.
SAMPLE_KINDS = [
    ("bits", "u32", None, None), ("bits", "u64", None, None),
    ("uniform", "f32", None, None), ("uniform", "f32", -3.0, 5.5),
    ("uniform", "f64", None, None), ("uniform", "f64", -1e3, 2.5),
    ("uniform", "f16", None, None), ("uniform", "f16", -2.0, 100.0),
    ("uniform", "bf16", None, None), ("uniform", "bf16", 0.25, 0.75),
    ("normal", "f32", None, None), ("normal", "f32", 2.0, 0.5),
    ("normal", "f64", None, None), ("normal", "f64", -1.0, 3.0),
    ("bernoulli", "u8", None, None), ("bernoulli", "u8", 0.1, None),
]


# Normal f16 and bf16 (issue 30), drawn after the kinds above from a seed
# of their own, so that adding them left every earlier line as it was.
NORMAL_HALF_KINDS = [
    ("normal", "f16", None, None), ("normal", "f16", 2.0, 0.5),
    ("normal", "bf16", None, None), ("normal", "bf16", -1.0, 3.0),
]


def sample_cases(kinds=SAMPLE_KINDS, seed=5):
    """(spec, seed, offset, first, count) covering partial blocks at both ends,
    big offsets and seeds, and eager launches with several slabs."""
    rng = splitmix64(seed)
    cases = []
    for layout in sr.LAYOUTS:
        for dist, dtype, a, b in kinds:
            requests = [(0, 0, 0, 9), (1234, 8, 3, 13), (next(rng), (next(rng) & ~3) & ((1 << 62) - 1), 5, 7)]
            for seed, offset, first, count in requests:
                cases.append((sr.Spec(layout, dist, dtype, a, b), seed, offset, first, count))
            if layout == "torch-eager-cuda":
                # One 256-thread block (sm_count 1, 256 threads per SM): T = 256,
                # several slabs of T*U elements, and a tensor larger than the range.
                small = sr.Spec(layout, dist, dtype, a, b, sm_count=1, max_threads_per_sm=256, numel=3000)
                cases.append((small, 42, 4, 1020, 9))
                cases.append((small, 42, 4, 2040, 20))
                cases.append((sr.Spec(layout, dist, dtype, a, b, numel=70000), 7, 0, 66000, 6))
            if layout == "triton":
                # Counters across 2^32 (the high counter word) and odd starts.
                cases.append((sr.Spec(layout, dist, dtype, a, b), 99, (1 << 32) - 8, 3, 13))
    return cases


def sample_vector_lines():
    lines = ["# rngtrk sample vectors. Generated by tests/vectors/generate.py: do not edit.",
             "# sample LAYOUT DIST DTYPE SEED OFFSET FIRST COUNT A B SM_COUNT MAX_THREADS_PER_SM NUMEL "
             "bits... (format: tests/vectors/README.md)"]
    for spec, seed, offset, first, count in sample_cases() + sample_cases(NORMAL_HALF_KINDS, 30):
        digits = sr.HEX_DIGITS[spec.dtype]
        values = sr.sample_bits(spec, seed, offset, first, count)
        lines.append("sample %s %s %s %d %d %d %d %r %r %d %d %d %s" % (
            spec.layout, spec.dist, spec.dtype, seed, offset, first, count, float(spec.a), float(spec.b),
            spec.sm_count, spec.max_threads_per_sm, spec.numel,
            " ".join("%0*x" % (digits, v) for v in values)))
    for layout in sr.LAYOUTS:
        for dist, dtype, a, b in SAMPLE_KINDS[:3] + SAMPLE_KINDS[4:5]:
            spec = sr.Spec(layout, dist, dtype, a, b)
            for numel in (0, 1, 5, 1000, 33792 * 4 + 1, 10 ** 9):
                lines.append("increment %s %s %s %d %d" % (layout, dist, dtype, numel, sr.offset_increment(spec, numel)))
    for layout in sr.LAYOUTS:  # normal f16 and bf16 consume what f32 does
        for dtype in ("f16", "bf16"):
            spec = sr.Spec(layout, "normal", dtype)
            for numel in (0, 5, 33792 * 4 + 1):
                lines.append("increment %s normal %s %d %d" % (layout, dtype, numel, sr.offset_increment(spec, numel)))
    return "\n".join(lines) + "\n"


def all_files():
    files = {"rngtrk_vectors.txt": vector_lines().encode(), "sample_vectors.txt": sample_vector_lines().encode()}
    goldens = dict({name: fields + (None,) for name, fields in GOLDEN.items()}, **recipe_goldens())
    for name, (default, states, origin) in goldens.items():
        files["checkpoints/%s.rtck" % name] = encode_checkpoint(default, states, origin=origin)
        files["checkpoints/%s.json" % name] = canonical_json(default, states, version=origin_version(origin),
                                                             origin=origin).encode("utf-8")
    # Format version 2: Megatron-LM's rank (tp 3, pp 1, dp 2, ep 1, etp 0) of
    # seed 1234, as rngtrk_tracker_seed_rank seeds it, with its origin.
    s = 1234 + 100 * 1
    v2_states = [(b"data-parallel-rng", s, 0), (b"model-parallel-rng", s + 2718 + 3, 16),
                 (b"expert-parallel-rng", s + 1024 + 100 * 1 + 0, 0)]
    origin = (0, 0, 1234, 3, 1, 2, 1, 0)  # policy megatron, flags 0, seed, tp, pp, dp, ep, etp
    files["checkpoints/megatron_rank_v2.rtck"] = encode_checkpoint((s, 8), v2_states, origin=origin)
    files["checkpoints/megatron_rank_v2.json"] = canonical_json((s, 8), v2_states, version=2,
                                                                origin=origin).encode("utf-8")
    expected = ["# file expected-status (each file must fail to load with that status)"]
    for name, (data, status) in INVALID.items():
        files["checkpoints/invalid/%s.rtck" % name] = data
        expected.append("%s.rtck %s" % (name, status))
    files["checkpoints/invalid/expected.txt"] = ("\n".join(expected) + "\n").encode()
    files["checkpoints/recipes.txt"] = recipe_file().encode()
    return files


def main(argv):
    check = "--check" in argv[1:]
    stale = []
    for rel, data in sorted(all_files().items()):
        path = os.path.join(HERE, rel)
        if check:
            try:
                with open(path, "rb") as f:
                    if f.read() != data:
                        stale.append(rel)
            except FileNotFoundError:
                stale.append(rel + " (missing)")
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
    if stale:
        print("stale test vectors (run tests/vectors/generate.py): " + ", ".join(stale))
        return 1
    if check:
        print("test vectors are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
