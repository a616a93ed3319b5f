#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Random draw requests for the cross-language test (tests/cross_language/run.py).

    cases.py [--cases N] [--seed S]      prints N cases, one per line

The same seed and library give the same cases, and the first N cases of a
longer run are the N cases of a shorter one: each case is drawn from the
generator in turn.  The layout, distribution and dtype names, and which
distribution makes which dtype, come from the library that `rngtrk` (the
Python binding) loads, through the C functions rngtrk_layout_name,
rngtrk_distribution_name, rngtrk_dtype_name and rngtrk_sample_spec_init:
a layout or dtype added to the library is drawn at once, in every language.

The case format
---------------

One case per line: tokens separated by one space, each `key=value`, keys
in the order listed here, each at most once; a value holds no space and
may be empty (only the shape lists are).  Unsigned integers are decimal,
0 to 2^64 - 1; reals are Python's repr() of a float (`0.5`, `-1e-05`,
`inf`, `nan`), which C's strtod and Rust's f64::from_str read to the same
double.

  op=        sample     rngtrk_sample(state, spec, first, count)
             slice      rngtrk_sample_slice(state, spec, shape, start, box)
             dropout    rngtrk_dropout(state, spec, first, count, in)
             dslice     rngtrk_dropout_slice(state, spec, shape, start, box, in)
             tsample    rngtrk_tracker_sample(tracker, spec, count)
             tslice     rngtrk_tracker_sample_slice(tracker, spec, shape, start, box)
             tdropout   rngtrk_tracker_dropout_f32(tracker, spec, count, in)
  layout=    a layout name (rngtrk_layout_name)
  dist=      a distribution name; absent for the dropout ops (always
             bernoulli)
  dtype=     a dtype name; for dropout and dslice the data's (one that
             rngtrk_dropout takes); absent for tdropout (always f32)
  seed=      the state's seed
  offset=    the state's offset (not always a multiple of 4: those cases
             must fail alike)
  first=     first element (sample, dropout)
  count=     element count (sample, dropout, tsample, tdropout)
  shape=     the tensor's shape, comma-separated (slice, dslice, tslice; 0 to 17
  start=     dimensions, the same number in all three; the library takes
  box=       1 to 16)
  low= high= mean= std= p=
             the distribution's parameters: uniform low and high, normal
             mean and std, bernoulli and dropout p.  Always both (or p).
  sm_count= max_threads_per_sm= numel= threads=
             optional spec fields; absent means the library's default.
             Never on tdropout cases (Python's Tracker.dropout takes only p
             and layout).

The state: sample, slice and dropout draw from PhiloxState(seed, offset).
The tracker cases make a new tracker, add the named state "xlang-rng" with
`seed`, set it to (seed, offset), fork it, draw, restore, and read the
state's offset.

The input of the dropout cases is in[i] = float((i * 7) % 23) - 11 for
i = 0 .. count - 1 (the index within the call or the box, not first + i),
in the data's dtype (exact in f32, f16 and bf16).

What each driver prints, one line per case, in order:

  ok <hex>               the output's bytes in lowercase hex, as they lie in
                         memory (`-` for no bytes)
  error <code>           the rngtrk_status of the failed call (negative)
  ... offset=<n>         tracker cases add the named state's offset after
                         the draw (or after the failure: it must not move)
  unsupported <why>      a driver that cannot express the case: always a
                         test failure

About 10% of the cases are meant to fail (parameters out of range, an
offset that is not a multiple of 4, a box outside the tensor, a triton
counter of 2^63 or more, first + count past 2^64, a dtype the distribution
does not make, bad launch geometry or thread counts, overflowing tracker
offsets, ...); all three languages must report the same status.
"""
import argparse
import ctypes
import os
import random
import sys

U64_MAX = (1 << 64) - 1
STATE_NAME = "xlang-rng"  # the tracker cases' named state (the drivers spell it too)
KEYS = ("op", "layout", "dist", "dtype", "seed", "offset", "first", "count", "shape", "start", "box",
        "low", "high", "mean", "std", "p", "sm_count", "max_threads_per_sm", "numel", "threads")
OPS = ("sample", "slice", "dropout", "dslice", "tsample", "tslice", "tdropout")
COUNTS = (0, 1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 33, 63, 100, 127, 255, 256, 257, 1023)
# The parameters each distribution takes, in the spec's order (param_a, param_b).
PARAMETERS = {"uniform": ("low", "high"), "normal": ("mean", "std"), "bernoulli": ("p",)}


def _python_binding():
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "bindings", "python"))
    import rngtrk
    return rngtrk


class Kinds:
    """The library's layouts, distributions, dtypes, and which distribution
    makes which dtype, asked of the shared object `path`."""

    def __init__(self, path):
        lib = ctypes.CDLL(path)
        self.layouts = self._names(lib.rngtrk_layout_name)
        self.dists = self._names(lib.rngtrk_distribution_name)
        self.dtypes = self._names(lib.rngtrk_dtype_name)
        init = lib.rngtrk_sample_spec_init
        init.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int]
        init.restype = ctypes.c_int
        spec = ctypes.create_string_buffer(1024)  # room for any later spec; 48 bytes are written
        # dist -> the dtypes it makes (as rngtrk_sample_spec_init accepts them).
        self.makes = {d: [t for j, t in enumerate(self.dtypes) if init(spec, 48, 0, i, j) == 0]
                      for i, d in enumerate(self.dists)}
        # The data dtypes rngtrk_dropout takes: a call of no elements with each.
        dropout = lib.rngtrk_dropout
        dropout.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_void_p,
                            ctypes.c_void_p, ctypes.c_size_t]
        dropout.restype = ctypes.c_int
        state = ctypes.create_string_buffer(16)
        self.dropout_dtypes = []
        for j, t in enumerate(self.dtypes):
            init(spec, 48, 0, self.dists.index("bernoulli"), 0)
            ctypes.c_uint32.from_buffer(spec, 12).value = j  # the spec's dtype field
            if dropout(state, spec, 0, 0, None, None, 0) == 0:
                self.dropout_dtypes.append(t)
        if not self.layouts or not all(self.makes.values()) or "bernoulli" not in self.makes or \
                not self.dropout_dtypes:
            raise SystemExit(f"cases.py: the library's kinds look wrong: layouts {self.layouts}, "
                             f"makes {self.makes}, dropout {self.dropout_dtypes}")

    @staticmethod
    def _names(function):
        function.argtypes = [ctypes.c_int]
        function.restype = ctypes.c_char_p
        names = []
        while True:
            name = function(len(names))
            if name is None:
                return names
            names.append(name.decode("ascii"))


def kinds():
    """The Kinds of the library the Python binding loads (the one under test)."""
    return Kinds(_python_binding().library_path)


# -- valid requests ---------------------------------------------------------

def a_seed(rng):
    return rng.choice([0, 1, 42, U64_MAX, 1 << 32, (1 << 32) - 1, 1 << 63, rng.getrandbits(64),
                       rng.getrandbits(32), rng.randrange(10 ** 6)])


def an_offset(rng, layout, tracker):
    """A multiple of 4; small enough for triton's counter limit (2^63) and
    for a tracker to advance past."""
    small = 4 * rng.choice([0, 0, 1, 2, 3, 5, rng.randrange(1 << 10), rng.randrange(1 << 30)])
    if layout == "triton" or tracker:
        huge = 4 * rng.choice([rng.getrandbits(58), (1 << 58) - 1, 1 << 40])
    else:
        huge = 4 * rng.choice([rng.getrandbits(62), (1 << 62) - 1, (1 << 62) - 2, 1 << 61, 1 << 30])
    return rng.choice([small, small, huge])


def a_first(rng, layout, count):
    """A first index with first + count <= 2^64 (below 2^60 for triton)."""
    limit = (1 << 60) if layout == "triton" else (1 << 64)
    choices = [0, 0, 1, 2, 3, 5, 7, 255, 256, 257, 1023, rng.randrange(1 << 20), (1 << 32) - 3,
               rng.getrandbits(40), rng.getrandbits(59)]
    if layout != "triton":
        choices += [rng.getrandbits(63), limit - count - rng.randrange(3), limit - count]
    first = rng.choice(choices)
    if layout == "torch-eager-cuda" and first + count >= (1 << 64):
        first = (1 << 64) - 1 - count  # first + count must stay below 2^64 there
    return max(0, min(first, limit - count, U64_MAX))


def a_real(rng, low, high):
    return rng.choice([rng.uniform(low, high), round(rng.uniform(low, high), 3), float(rng.randint(-3, 3))])


def parameters(rng, dist, dtype, layout):
    """Valid parameters of `dist`, as {name: float}."""
    if dist == "uniform":
        kind = rng.randrange(8)
        if kind == 0:
            low, high = 0.0, 1.0
        elif kind == 1:
            low, high = -1.0, 1.0
        elif kind == 2:
            low = high = a_real(rng, -5, 5)  # an empty range
        elif kind == 3 and (dtype == "f64" or layout != "torch-eager-cuda" and dtype in ("f32", "f64")):
            low, high = -1e30, 1e30
        elif kind == 4:
            low, high = -0.0, rng.choice([1e-300, 5e-324, 1e-7, 2.5])
        else:
            low, high = sorted((a_real(rng, -100, 100), a_real(rng, -100, 100)))
        return {"low": low, "high": high}
    if dist == "normal":
        return {"mean": rng.choice([0.0, -0.0, 1.0, a_real(rng, -10, 10)]),
                "std": rng.choice([0.0, 1.0, 0.02, 2.5, 1e-3, rng.uniform(0, 100)])}
    if dist == "bernoulli":
        return {"p": rng.choice([0.0, 1.0, 0.5, 0.1, 0.9, 1e-7, 1 - 1e-9, rng.random()])}
    return {}  # bits (and any distribution this generator does not know)


def a_shape(rng):
    """(shape, start, box) of a small box of a 1- to 3-d tensor, at times a huge one."""
    ndim = rng.choice([1, 1, 2, 2, 3])
    shape, start, box = [], [], []
    for _ in range(ndim):
        dim = rng.choice([1, 2, 3, 4, 5, 7, 9, 16, 17, 33, 100, 1 << 20, (1 << 21) + 3])
        extent = rng.randint(0, min(dim, 6 if ndim > 1 else 40)) if rng.random() < 0.95 else 0
        shape.append(dim)
        start.append(rng.randint(0, dim - extent))
        box.append(extent)
    return shape, start, box


def geometry(rng, case):
    """The optional spec fields."""
    if case["layout"] == "torch-eager-cuda":
        if rng.random() < 0.5:
            case["sm_count"] = rng.choice([1, 2, 4, 108, 132, rng.randint(1, 300)])
        if rng.random() < 0.5:
            case["max_threads_per_sm"] = rng.choice([256, 511, 512, 1024, 1536, 2048, 4096])
    if "first" in case and rng.random() < (0.3 if case["layout"] == "torch-eager-cuda" else 0.1):
        end = case["first"] + case["count"]
        case["numel"] = rng.choice([0, end, end + rng.randrange(1, 1 << 20), end + rng.getrandbits(40)])
        case["numel"] = min(case["numel"], U64_MAX)
    elif case["op"].startswith("t") and rng.random() < 0.05:
        case["numel"] = rng.choice([1, 10 ** 9])  # not used by tracker draws
    if rng.random() < 0.15:
        case["threads"] = rng.choice([0, 1, 2, 3, 8, 64])


def valid_case(rng, kinds):
    op = rng.choice(OPS)
    layout = rng.choice(kinds.layouts)
    case = {"op": op, "layout": layout}
    if op == "tdropout":
        dist, dtype = "bernoulli", None
    elif op in ("dropout", "dslice"):
        dist, dtype = "bernoulli", rng.choice(kinds.dropout_dtypes)
        case["dtype"] = dtype
    else:
        dist = rng.choice(kinds.dists)
        dtype = rng.choice(kinds.makes[dist])
        case["dist"], case["dtype"] = dist, dtype
    tracker = op.startswith("t")
    case["seed"] = a_seed(rng)
    case["offset"] = an_offset(rng, layout, tracker)
    if op.endswith("slice"):
        case["shape"], case["start"], case["box"] = a_shape(rng)
    else:
        count = rng.choice(COUNTS)
        if not tracker:
            case["first"] = a_first(rng, layout, count)
            if layout == "triton" and rng.random() < 0.1:  # the last counter is 2^63 - 1, the limit's edge
                case["offset"] = 4 * rng.randrange(4)
                case["first"] = (1 << 63) - case["offset"] - count
        case["count"] = count
    case.update(parameters(rng, dist, dtype, layout))
    if op != "tdropout":
        geometry(rng, case)
    return case


# -- mistakes: requests the library refuses ---------------------------------

def spoil(rng, case, kinds):
    """`case` with one mistake the library must refuse, alike in every language."""
    op, layout = case["op"], case["layout"]
    tracker = op.startswith("t")
    mistakes = ["offset", "threads", "nan"]
    if case.get("dist", "bernoulli") in ("uniform", "normal", "bernoulli"):
        mistakes.append("parameter")
    if "dist" in case:  # (the drivers' dropout calls take only the dtypes dropout makes)
        mistakes.append("dtype")
    if op.endswith("slice"):
        mistakes += ["box", "box", "huge-tensor", "ndim"]
    else:
        mistakes.append("too-far" if not tracker else "tracker-overflow")
    if layout == "triton":
        mistakes += ["triton-counter", "triton-counter"]
    if layout == "torch-eager-cuda" and op != "tdropout":
        mistakes.append("launch")
        if "first" in case:
            mistakes.append("numel")
    if case.get("dtype") in ("f32", "f16", "bf16") and case.get("dist") == "uniform":
        mistakes.append("float-range")
    mistake = rng.choice(mistakes)
    if mistake == "threads" and op == "tdropout":
        mistake = "offset"  # Python's Tracker.dropout takes no threads
    if mistake == "offset":
        case["offset"] = 4 * rng.randrange(1 << 20) + rng.choice([1, 2, 3])
    elif mistake == "threads":
        case["threads"] = rng.choice([65, 100, (1 << 32) - 1])
    elif mistake == "nan":
        names = PARAMETERS.get(case.get("dist", "bernoulli"), ())
        if names:
            case[rng.choice(names)] = rng.choice([float("nan"), float("inf"), float("-inf")])
        else:
            case["offset"] = 6
    elif mistake == "parameter":
        dist = case.get("dist", "bernoulli")
        if dist == "uniform":
            case["low"], case["high"] = sorted((a_real(rng, -9, 9), a_real(rng, -9, 9)), reverse=True)
            if case["low"] == case["high"]:
                case["high"] = case["low"] - 0.5
        elif dist == "normal":
            case["std"] = rng.choice([-1.0, -1e-300, -0.5])
        else:
            case["p"] = rng.choice([1.5, -0.1, 1.0000001, -1e-300])
    elif mistake == "dtype":
        wrong = [t for t in kinds.dtypes if t not in kinds.makes[case["dist"]]]
        case["dtype"] = rng.choice(wrong)
    elif mistake == "box":
        d = rng.randrange(len(case["shape"]))
        if rng.random() < 0.5:
            case["start"][d] = case["shape"][d] - case["box"][d] + rng.randint(1, 3)
        else:
            case["box"][d] = case["shape"][d] - case["start"][d] + 1
    elif mistake == "huge-tensor":
        case["shape"] = [1 << 32, 1 << 32] + ([3] if rng.random() < 0.5 else [])
        case["start"] = [rng.getrandbits(32) for _ in case["shape"][:2]] + case["shape"][2:]
        case["start"][-1] = 0
        case["box"] = [1, 1] + ([3] if len(case["shape"]) == 3 else [])
    elif mistake == "ndim":
        n = rng.choice([0, 17])
        case["shape"], case["start"], case["box"] = [1] * n, [0] * n, [1] * n
    elif mistake == "too-far":  # first + count past 2^64
        case["count"] = max(case["count"], 2) + rng.randrange(3)
        case["first"] = (1 << 64) - case["count"] + rng.randint(1, case["count"] - 1)
        case.pop("numel", None)
    elif mistake == "tracker-overflow":
        case["count"] = max(case["count"], 1) + rng.randrange(3)
        case["offset"] = (1 << 64) - 4 * rng.randint(1, 2)  # no room for the draw
    elif mistake == "triton-counter":
        if "first" in case and rng.random() < 0.5:
            case["count"] = max(case["count"], 1)
            case["first"] = (1 << 63) - rng.randint(0, case["count"] - 1) + rng.randrange(1 << 20) * rng.randint(0, 1)
        else:
            case["offset"] = 4 * rng.choice([1 << 61, (1 << 62) - 1, rng.getrandbits(62) | (1 << 61)])
            if op.endswith("slice") and not any(case["box"]):
                case["box"] = [1] * len(case["box"])
                case["start"] = [0] * len(case["box"])
            elif "count" in case:
                case["count"] = max(case["count"], 1)
    elif mistake == "launch":
        if rng.random() < 0.5:
            case["sm_count"] = 0
        else:
            case["max_threads_per_sm"] = rng.choice([0, 1, 100, 255])
    elif mistake == "numel":
        case["count"] = max(case["count"], 1)
        case["numel"] = rng.randint(1, case["first"] + case["count"] - 1) if case["first"] + case["count"] > 1 else 0
        if case["numel"] == 0:
            case["first"], case["numel"] = 5, 3
    elif mistake == "float-range":
        case["low"], case["high"] = -3e38, 3e38
        if case["layout"] == "torch-eager-cuda" or case["dtype"] != "f32":
            case["low"], case["high"] = rng.choice([(-3e38, 3e38), (-1e5, 1e5), (0.0, 1e6)])
    return case


# -- the file ---------------------------------------------------------------

def _value(value):
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def line_of(case):
    """The case as one line of the case format (no newline)."""
    return " ".join(f"{key}={_value(case[key])}" for key in KEYS if key in case)


def parse(line):
    """{key: value string} of one case line."""
    case = {}
    for token in line.split():
        key, sep, value = token.partition("=")
        if not sep or key in case:
            raise ValueError(f"bad token {token!r}")
        case[key] = value
    return case


def generate(count, seed, kinds, invalid_share=0.1):
    """`count` case lines drawn from `seed`."""
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        case = valid_case(rng, kinds)
        if rng.random() < invalid_share:
            case = spoil(rng, case, kinds)
        lines.append(line_of(case))
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=None, help="default: a random seed, printed to stderr")
    opts = parser.parse_args()
    seed = random.SystemRandom().getrandbits(48) if opts.seed is None else opts.seed
    print(f"seed {seed}", file=sys.stderr)
    for line in generate(opts.cases, seed, kinds()):
        print(line)


if __name__ == "__main__":
    main()
