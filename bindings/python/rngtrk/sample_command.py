"""python3 -m rngtrk sample: the C `rngtrk sample` in Python, with the same
flags, the same output byte for byte, the same one-line errors and the same
exit codes (0, 1 a data error, 2 a usage error); cargo's `sample` example
is the third.  tests/sample_commands_test.py holds the three to that.

The rules the three share (tools/cli/options.c is the reference): options
are "--name value" or "--name=value"; a misspelt option or value gets the
closest known name (edit distance at most a third of its letters, at least
2); whole numbers are decimal digits below 2^64; other numbers are
[+-] digits [. digits] [e [+-] digits] (or . digits), finite.  Values print
as C's %.9g (f32, f16, bf16) and %.17g (f64).  The help text is
tools/cli/sample_usage.txt (copied into _sample_usage.py).

Arguments are bytes, as C sees them: an argument that is not UTF-8 is echoed
back unchanged in an error.
"""
import struct
import sys

from ._library import ffi, lib
from ._sample_usage import USAGE

LAYOUTS = (b"stateless", b"nvfuser", b"torch-eager-cuda", b"triton")
DISTS = (b"bits", b"uniform", b"normal", b"bernoulli")
DTYPES = (b"u8", b"u32", b"u64", b"f16", b"bf16", b"f32", b"f64")
U8, U32, U64, F16, BF16, F32, F64 = range(7)  # DTYPES' indexes are the C enum values
MAKES = ((U32, U64), (F32, F64, F16, BF16), (F32, F64), (U8,))  # per distribution, the default first
PARAMS = ((), (b"--low", b"--high"), (b"--mean", b"--std"), (b"--p",))
ALL_PARAMS = (b"--low", b"--high", b"--mean", b"--std", b"--p")
CHUNK = 1 << 16  # elements per library call: bounded memory for any --count
U64_MAX = (1 << 64) - 1
# (name, kind, choices) in the C table's order: closest() breaks ties by it.
OPTIONS = ((b"--layout", "choice", LAYOUTS), (b"--dist", "choice", DISTS), (b"--dtype", "choice", DTYPES),
           (b"--seed", "u64", None), (b"--offset", "u64", None), (b"--first", "u64", None),
           (b"--count", "u64", None), (b"--low", "double", None), (b"--high", "double", None),
           (b"--mean", "double", None), (b"--std", "double", None), (b"--p", "double", None),
           (b"--sm-count", "u32_pos", None), (b"--max-threads-per-sm", "u32_pos", None),
           (b"--numel", "u64", None), (b"--bits", "flag", None))
# How each dtype's element is read (struct format) and printed.
READ = {U8: "<B", U32: "<I", U64: "<Q", F16: "<e", BF16: "<H", F32: "<f", F64: "<d"}
WIDTH = {U8: 1, U32: 4, U64: 8, F16: 2, BF16: 2, F32: 4, F64: 8}


class _Exit(Exception):
    """A one-line error: `code` is the exit status."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def _usage(message):
    return _Exit(2, message)


def _distance(a, b):
    """Edit distance of two byte strings (as the C tool: 'infinite' at 64+)."""
    if len(a) >= 64 or len(b) >= 64:
        return None
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        diagonal, row[0] = row[0], i
        for j in range(1, len(b) + 1):
            up = row[j]
            row[j] = min(diagonal + (a[i - 1] != b[j - 1]), up + 1, row[j - 1] + 1)
            diagonal = up
    return row[len(b)]


def _closest(word, names):
    best, best_distance = None, None
    for name in names:
        d = _distance(word, name)
        if d is not None and (best_distance is None or d < best_distance):
            best, best_distance = name, d
    if best is None:
        return None
    allowed = len(best) // 3 if len(best) // 3 > 2 else 2
    return best if best_distance <= allowed else None


def _is_decimal(text):
    i, n, digits = 0, len(text), 0
    if i < n and text[i] in b"+-":
        i += 1
    while i < n and text[i:i + 1].isdigit():
        i, digits = i + 1, digits + 1
    if i < n and text[i:i + 1] == b".":
        i += 1
        while i < n and text[i:i + 1].isdigit():
            i, digits = i + 1, digits + 1
    if digits == 0:
        return False
    if i < n and text[i] in b"eE":
        i += 1
        if i < n and text[i] in b"+-":
            i += 1
        if not (i < n and text[i:i + 1].isdigit()):
            return False
        while i < n and text[i:i + 1].isdigit():
            i += 1
    return i == n


def _parse_u64(name, text):
    if text.startswith(b"-"):
        raise _usage(b"%s must not be negative: %s" % (name, text))
    if not text or not all(48 <= c <= 57 for c in text):
        raise _usage(b"%s needs a whole number, not '%s'" % (name, text))
    value = int(text)
    if value > U64_MAX:
        raise _usage(b"%s is too large: %s (at most 2^64 - 1)" % (name, text))
    return value


def _parse_value(name, kind, choices, text):
    if kind == "u64":
        return _parse_u64(name, text)
    if kind == "u32_pos":
        value = _parse_u64(name, text)
        if value == 0:
            raise _usage(b"%s must be at least 1" % name)
        if value > 0xFFFFFFFF:
            raise _usage(b"%s is too large: %s (at most 4294967295)" % (name, text))
        return value
    if kind == "double":
        bare = text[1:] if text[:1] in (b"+", b"-") else text
        if not _is_decimal(text):
            finite = bare.lower() not in (b"inf", b"infinity", b"nan")
            raise _usage(b"%s needs a number, not '%s'" % (name, text) if finite
                         else b"%s must be a finite number, not '%s'" % (name, text))
        value = float(text.decode("ascii"))
        if value in (float("inf"), float("-inf")):
            raise _usage(b"%s must be a finite number, not '%s'" % (name, text))
        return value
    # a choice
    if text in choices:
        return choices.index(text)
    listing = b", ".join(choices)
    guess = _closest(text, choices)
    if guess is not None:
        raise _usage(b"%s: unknown value '%s' (did you mean '%s'?); one of %s" % (name, text, guess, listing))
    raise _usage(b"%s: unknown value '%s'; one of %s" % (name, text, listing))


def _parse_options(args):
    """{name: value} of the given options (flags: True)."""
    names = [o[0] for o in OPTIONS]
    given = {}
    i = 0
    while i < len(args):
        arg = args[i]
        eq = arg.find(b"=") if arg.startswith(b"--") else -1
        length = eq if eq >= 0 else len(arg)
        name = arg[:min(length, 63)]
        option = next((o for o in OPTIONS if o[0] == name), None) if length < 64 else None
        if option is None:
            guess = _closest(name, names)
            if not arg.startswith(b"-"):
                raise _usage(b"unexpected argument '%s'" % arg)
            if guess is not None:
                raise _usage(b"unknown option %s (did you mean %s?)" % (name, guess))
            raise _usage(b"unknown option %s (see rngtrk help sample)" % name)
        name, kind, choices = option
        if name in given:
            raise _usage(b"%s is given twice" % name)
        if kind == "flag":
            if eq >= 0:
                raise _usage(b"%s takes no value" % name)
            given[name] = True
            i += 1
            continue
        if eq >= 0:
            value = arg[eq + 1:]
        elif i + 1 < len(args):
            i += 1
            value = args[i]
        else:
            raise _usage(b"%s needs a value" % name)
        given[name] = _parse_value(name, kind, choices, value)
        i += 1
    return given


def _library_failure(status):
    what = ffi.string(lib.rngtrk_status_string(status))
    detail = ffi.string(lib.rngtrk_last_error())
    message = detail if detail.startswith(what) else what + b": " + detail
    bad_arguments = status in (lib.RNGTRK_E_INVALID_ARGUMENT, lib.RNGTRK_E_OVERFLOW)
    return _Exit(2 if bad_arguments else 1, message)


def _printer(dtype):
    """A function from one element, as READ unpacks it, to its output line."""
    if dtype == BF16:
        return lambda v: b"%.9g\n" % struct.unpack("<f", struct.pack("<I", v << 16))[0]
    if dtype in (F16, F32):
        return lambda v: b"%.9g\n" % v
    if dtype == F64:
        return lambda v: b"%.17g\n" % v
    return lambda v: b"%d\n" % v


def _lines(buffer, dtype, count, raw):
    """The output of `count` elements in `buffer` (little-endian host)."""
    width = WIDTH[dtype]
    data = ffi.buffer(buffer, count * width)
    if raw:  # every dtype's bits, as an unsigned integer of its width
        fmt = {1: "<B", 2: "<H", 4: "<I", 8: "<Q"}[width]
        return b"".join(b"%0*x\n" % (2 * width, v) for (v,) in struct.iter_unpack(fmt, data))
    show = _printer(dtype)
    return b"".join(show(v) for (v,) in struct.iter_unpack(READ[dtype], data))


def _sample(args, out):
    given = _parse_options(args)
    if b"--seed" not in given or b"--count" not in given:
        raise _usage(b"needs --seed and --count (see rngtrk help sample)")
    layout, dist = given.get(b"--layout", 0), given.get(b"--dist", 1)
    dtype = given.get(b"--dtype", MAKES[dist][0])
    if dtype not in MAKES[dist]:
        listing = b", ".join(DTYPES[d] for d in MAKES[dist])
        raise _usage(b"--dist %s makes --dtype %s, not %s" % (DISTS[dist], listing, DTYPES[dtype]))
    for name in ALL_PARAMS:
        if name in given and name not in PARAMS[dist]:
            raise _usage(b"%s does not apply to --dist %s" % (name, DISTS[dist]))
    seed, offset = given[b"--seed"], given.get(b"--offset", 0)
    first, count, numel = given.get(b"--first", 0), given[b"--count"], given.get(b"--numel", 0)
    if offset % 4 != 0:
        raise _usage(b"--offset must be a multiple of 4 (offsets count 32-bit outputs, 4 per block)")
    if count > U64_MAX - first:
        raise _usage(b"--first + --count must stay below 2^64")
    if numel != 0 and numel < first + count:
        raise _usage(b"--numel %d is smaller than --first + --count (%d)" % (numel, first + count))

    spec = ffi.new("rngtrk_sample_spec *")
    status = lib.rngtrk_sample_spec_init(spec, ffi.sizeof("rngtrk_sample_spec"), layout, dist, dtype)
    if status != 0:
        raise _library_failure(status)
    if dist == 1:
        spec.param_a, spec.param_b = given.get(b"--low", 0.0), given.get(b"--high", 1.0)
    elif dist == 2:
        spec.param_a, spec.param_b = given.get(b"--mean", 0.0), given.get(b"--std", 1.0)
    elif dist == 3:
        spec.param_a = given.get(b"--p", 0.5)
    if b"--sm-count" in given:
        spec.sm_count = given[b"--sm-count"]
    if b"--max-threads-per-sm" in given:
        spec.max_threads_per_sm = given[b"--max-threads-per-sm"]
    # The whole request is one tensor, drawn in chunks that each see its size.
    spec.numel = numel if numel else first + count
    state = ffi.new("rngtrk_philox_state *", {"seed": seed, "offset": offset})
    buffer = ffi.new("unsigned char[]", CHUNK * 8)
    raw = given.get(b"--bits", False)
    done = 0
    while True:  # the first call checks the whole request before anything prints
        part = min(count - done, CHUNK)
        status = lib.rngtrk_sample(state, spec, first + done, part, buffer, len(buffer))
        if status != 0:
            raise _library_failure(status)
        if part == 0:
            return 0
        try:
            out.write(_lines(buffer, dtype, part, raw))
        except OSError:
            raise _Exit(1, b"cannot write the output") from None
        done += part
        if done == count:
            return 0


def run(args, out, err):
    """Runs `rngtrk sample` with `args` (bytes, the options only), writing
    to the binary streams `out` and `err`; returns the exit status."""
    if any(a in (b"--help", b"-h") for a in args):
        out.write(USAGE.encode("utf-8"))
        return 0
    try:
        code = _sample(args, out)
        out.flush()
        return code
    except _Exit as e:
        err.write(b"rngtrk sample: " + e.message + b"\n")
        return e.code
    except OSError:
        err.write(b"rngtrk sample: cannot write the output\n")
        return 1


if __name__ == "__main__":
    import os
    sys.exit(run([os.fsencode(a) for a in sys.argv[1:]], sys.stdout.buffer, sys.stderr.buffer))
