# SPDX-License-Identifier: Apache-2.0
"""A second implementation of rngtrk's sampling (docs/streams.md), element by
element, in plain Python, for the shared vectors.  It follows the formulas,
not the C++ code: one element at a time, no batches, no SIMD.

float32 arithmetic is emulated by rounding each double result to float32
(exact for +, - and * of float32 operands: double has more than 2*24+2 bits,
so the double rounding is innocuous).  Half-precision conversion uses
struct's 'e' format (IEEE binary16, round to nearest even).
"""
import struct
from fractions import Fraction

M32 = (1 << 32) - 1
M64 = (1 << 64) - 1

LAYOUTS = {"stateless": 0, "nvfuser": 1, "torch-eager-cuda": 2, "triton": 3}
DISTS = {"bits": 0, "uniform": 1, "normal": 2, "bernoulli": 3}
DTYPES = {"u8": 0, "u32": 1, "u64": 2, "f16": 3, "bf16": 4, "f32": 5, "f64": 6}
HEX_DIGITS = {"u8": 2, "u32": 8, "u64": 16, "f16": 4, "bf16": 4, "f32": 8, "f64": 16}


def philox(ctr, key):
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & M32, p1 & M32, ((p0 >> 32) ^ c3 ^ k1) & M32, p0 & M32
        k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
    return (c0, c1, c2, c3)


# --- the two float formats --------------------------------------------------

class F32:
    mant, bias, mask, one, magic = 23, 127, 0x7FFFFF, 0x3F800000, 0x5F3759DF
    recip_steps, rsqrt_steps, log_terms, sin_terms, cos_terms = 3, 3, 4, 4, 5

    @staticmethod
    def r(x):
        return struct.unpack("<f", struct.pack("<f", x))[0]

    @staticmethod
    def bits(x):
        return struct.unpack("<I", struct.pack("<f", x))[0]

    @staticmethod
    def from_bits(u):
        return struct.unpack("<f", struct.pack("<I", u & M32))[0]


class F64:
    mant, bias, mask, one, magic = 52, 1023, (1 << 52) - 1, 0x3FF0000000000000, 0x5FE6EB50C7B537A9
    recip_steps, rsqrt_steps, log_terms, sin_terms, cos_terms = 4, 4, 10, 8, 9

    @staticmethod
    def r(x):
        return x

    @staticmethod
    def bits(x):
        return struct.unpack("<Q", struct.pack("<d", x))[0]

    @staticmethod
    def from_bits(u):
        return struct.unpack("<d", struct.pack("<Q", u & M64))[0]


ODD_RECIPROCAL = [1.0 / k for k in (3, 5, 7, 9, 11, 13, 15, 17, 19, 21)]
INV_FACTORIAL = [1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320,
                 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800.0,
                 1.0 / 87178291200.0, 1.0 / 1307674368000.0, 1.0 / 20922789888000.0,
                 1.0 / 355687428096000.0, 1.0 / 6402373705728000.0]
LN2_HI, LN2_LO = 0.693145751953125, 1.4286068203094172321e-06
HALF_PI = 1.5707963267948966192


def ln(F, x):
    """ln x = e ln 2 + 2 atanh(s), s = (m - 1)/(m + 1), per docs/streams.md."""
    r = F.r
    b = F.bits(x)
    e = (b >> F.mant) - F.bias
    m = F.from_bits((b & F.mask) | F.one)
    if m > r(1.4142135623730950488):
        m, e = r(m * 0.5), e + 1
    f = r(m - 1.0)
    d = r(2.0 + f)
    y = r(r(0.5858) - r(r(0.2427) * r(d - r(1.7071))))
    for _ in range(F.recip_steps):
        y = r(y * r(2.0 - r(d * y)))
    s = r(f * y)
    s2 = r(s * s)
    series = r(ODD_RECIPROCAL[F.log_terms - 1])
    for i in range(F.log_terms - 2, -1, -1):
        series = r(r(ODD_RECIPROCAL[i]) + r(s2 * series))
    two_s = r(s + s)
    ln_m = r(two_s + r(two_s * r(s2 * series)))
    ef = float(e)
    return r(r(ef * r(LN2_HI)) + r(ln_m + r(ef * r(LN2_LO))))


def sqrt(F, x):
    r = F.r
    y = F.from_bits(F.magic - (F.bits(x) >> 1))
    half_x = r(0.5 * x)
    for _ in range(F.rsqrt_steps):
        y = r(y * r(1.5 - r(r(half_x * y) * y)))
    s = r(x * y)
    return r(s + r(r(x - r(s * s)) * r(0.5 * y)))


def sincos_2pi(F, v):
    r = F.r
    t = r(4.0 * v)
    q = int(t)
    f = r(t - q)
    fold = f > 0.5
    g = r(1.0 - f) if fold else f
    x = r(g * r(HALF_PI))
    x2 = r(x * x)
    sp = 0.0
    for k in range(F.sin_terms, -1, -1):
        c = r(INV_FACTORIAL[2 * k + 1])
        sp = r((c if k % 2 == 0 else -c) + r(x2 * sp))
    sp = r(x * sp)
    cp = 0.0
    for k in range(F.cos_terms, -1, -1):
        c = r(INV_FACTORIAL[2 * k])
        cp = r((c if k % 2 == 0 else -c) + r(x2 * cp))
    s0, c0 = (cp, sp) if fold else (sp, cp)
    s1, c1 = (c0, s0) if q % 2 else (s0, c0)
    return (-s1 if q >= 2 else s1), (-c1 if q in (1, 2) else c1)


def box_muller_from(F, x, ub):
    """Box-Muller from the logarithm's argument x in (0, 1]."""
    r = F.r
    rad = sqrt(F, r(-2.0 * ln(F, x)))
    s, c = sincos_2pi(F, ub)
    return r(rad * c), r(rad * s)


def box_muller(F, ua, ub):
    return box_muller_from(F, F.r(1.0 - ua), ub)


def f16_bits(x):
    try:
        return struct.unpack("<H", struct.pack("<e", x))[0]
    except OverflowError:  # rounds past 65504: infinity
        return 0xFC00 if x < 0 else 0x7C00


def bf16_bits(x):
    b = F32.bits(x)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF


def f16_value(h):
    return struct.unpack("<e", struct.pack("<H", h))[0]


def bf16_value(h):
    return F32.from_bits(h << 16)


def float_bits(dtype, value):
    """The bits of a float32 (or, for f64, double) value in `dtype`: f16 and
    bf16 round it to nearest even."""
    return {"f16": f16_bits, "bf16": bf16_bits, "f32": F32.bits, "f64": F64.bits}[dtype](value)


# --- one-rounding multiply-add (torch-eager-cuda's uniform) -------------------

def fma_f64(a, b, c):
    """a * b + c rounded once to double (int / int is correctly rounded)."""
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def fma_f32(a, b, c):
    """a * b + c rounded once to float, to nearest, ties to even."""
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    near = F32.bits(F32.r(float(exact)))  # within one float of the answer
    best = None
    for bits in (near - 1, near, near + 1):
        v = F32.from_bits(bits)
        if v != v or v in (float("inf"), float("-inf")):
            continue
        d = abs(Fraction(v) - exact)
        if best is None or d < best[0] or (d == best[0] and bits % 2 == 0):
            best = (d, bits, v)
    return best[2]


# --- uniforms of words ------------------------------------------------------

def u_curand_f32(w):
    return F32.r(F32.r(F32.r(float(w)) * 2.0 ** -32) + 2.0 ** -33)


def u_curand_f64(a, b):
    z = a ^ ((b << 21) & M64)
    return float(z) * 2.0 ** -53 + 2.0 ** -54


def u_triton_f32(w):
    """Triton's uint_to_uniform_float: the word as int32, x < 0 -> -x - 1,
    as float32, times float32(4.6566127342e-10)."""
    x = w - (1 << 32) if w >= 1 << 31 else w
    if x < 0:
        x = -x - 1
    return F32.r(F32.r(float(x)) * F32.r(4.6566127342e-10))


def u01_f32(layout, w):
    """The [0, 1) float a layout feeds to normal and bernoulli."""
    if layout == "triton":
        return u_triton_f32(w)
    if layout == "stateless":
        return (w & 0xFFFFFF) * 2.0 ** -24
    u = u_curand_f32(w)
    return 0.0 if u == 1.0 else u


def u01_f64(layout, a, b):
    if layout in ("stateless", "triton"):
        return float(((a << 32) | b) & ((1 << 53) - 1)) * 2.0 ** -53
    u = u_curand_f64(a, b)
    return 0.0 if u == 1.0 else u


# --- one element --------------------------------------------------------------

class Spec:
    def __init__(self, layout, dist, dtype, a=None, b=None, sm_count=132, max_threads_per_sm=2048, numel=0):
        self.layout, self.dist, self.dtype = layout, dist, dtype
        self.a = a if a is not None else (0.5 if dist == "bernoulli" else 0.0)
        self.b = b if b is not None else (1.0 if dist in ("uniform", "normal") else 0.0)
        self.sm_count, self.max_threads_per_sm, self.numel = sm_count, max_threads_per_sm, numel

    @property
    def per_block(self):
        return 2 if self.dtype in ("u64", "f64") else 4

    def launch(self, numel):
        """torch-eager-cuda's (T, U)."""
        blocks = (numel + 255) // 256
        grid = max(1, min(blocks, self.sm_count * (self.max_threads_per_sm // 256)))
        return 256 * grid, self.per_block


def counter_and_unit(spec, seed, offset, g, numel):
    """(Philox words, unit index c) of element g, from the layout formulas."""
    B = offset // 4
    E = spec.per_block
    key = (seed & M32, seed >> 32)
    if spec.layout == "triton":
        c64 = (offset + g) & M64  # the offset itself plus g: one block per element
        return philox((c64 & M32, c64 >> 32, 0, 0), key), 0
    if spec.layout == "stateless":
        blk = (B + g // E) & M64
        ctr = (blk & M32, blk >> 32, 0, 0)
        c = g % E
    elif spec.layout == "nvfuser":
        n = g // E
        ctr = (B & M32, B >> 32, n & M32, n >> 32)
        c = g % E
    else:
        T, U = spec.launch(numel)
        t, k, i = g % T, g // (T * U), (g % (T * U)) // T
        blk = (B + k) & M64
        ctr = (blk & M32, blk >> 32, t & M32, t >> 32)
        c = i
    return philox(ctr, key), c


def element_bits(spec, seed, offset, g, numel):
    """The bit pattern of element g."""
    w, c = counter_and_unit(spec, seed, offset, g, numel)
    L, dt = spec.layout, spec.dtype
    unit = (lambda j: (w[2 * j], w[2 * j + 1])) if spec.per_block == 2 else (lambda j: w[j])
    if spec.dist == "bits":
        return w[c] if dt == "u32" else (w[2 * c] << 32) | w[2 * c + 1]
    if spec.dist == "bernoulli":
        return 1 if u01_f32(L, w[c]) < F32.r(spec.a) else 0
    if spec.dist == "normal" and L == "triton":
        # One value per element from its own block: Triton's inputs, z0.
        if dt != "f64":
            u1 = max(F32.r(1e-7), u_triton_f32(w[0]))
            z = box_muller_from(F32, u1, u_triton_f32(w[1]))[0]
            return float_bits(dt, F32.r(F32.r(spec.a) + F32.r(F32.r(spec.b) * z)))
        z = box_muller(F64, u01_f64(L, w[0], w[1]), u01_f64(L, w[2], w[3]))[0]
        return F64.bits(spec.a + spec.b * z)
    if spec.dist == "normal":
        # f16 and bf16: the f32 value, rounded to nearest even.
        F = F64 if dt == "f64" else F32
        pick = (lambda j: u01_f64(L, *unit(j))) if dt == "f64" else (lambda j: u01_f32(L, unit(j)))
        z0, z1 = box_muller(F, pick(c & ~1), pick(c | 1))
        z = z1 if c & 1 else z0
        value = F.r(F.r(spec.a) + F.r(F.r(spec.b) * z))
        return float_bits(dt, value)
    # uniform
    if dt == "f64":
        a, b = unit(c)
        low, high = spec.a, spec.b
        rng = high - low
        if L in ("stateless", "triton"):
            v = low + u01_f64(L, a, b) * rng
        elif L == "nvfuser":
            v = low + u01_f64(L, a, b) * rng
        else:
            v = fma_f64(u_curand_f64(a, b), rng, low)
            v = low if v == high else v
        return F64.bits(v)
    r = F32.r
    low, high = r(spec.a), r(spec.b)
    rng = r(high - low)
    if L == "torch-eager-cuda" and dt != "f32":
        # PyTorch holds from and to in the dtype, and (to - from) rounded to it.
        to16, value16 = (f16_bits, f16_value) if dt == "f16" else (bf16_bits, bf16_value)
        low, high = value16(to16(low)), value16(to16(high))
        rng = value16(to16(r(high - low)))
    word = w[c]
    if L == "stateless":
        bits_kept = {"f32": 24, "f16": 11, "bf16": 8}[dt]
        u = (word & ((1 << bits_kept) - 1)) * 2.0 ** -bits_kept
    elif L in ("nvfuser", "triton"):
        u = u01_f32(L, word)
    else:
        u = u_curand_f32(word)
    v = fma_f32(u, rng, low) if L == "torch-eager-cuda" else r(low + r(u * rng))
    if dt == "f32":
        if L == "torch-eager-cuda" and v == high:
            v = low
        return F32.bits(v)
    to16 = f16_bits if dt == "f16" else bf16_bits
    h = to16(v)
    if L in ("torch-eager-cuda", "triton") and h == to16(high):
        h = to16(low)
    return h


def sample_bits(spec, seed, offset, first, count):
    numel = (spec.numel or first + count) if spec.layout == "torch-eager-cuda" else 0
    return [element_bits(spec, seed, offset, g, numel) for g in range(first, first + count)]


def offset_increment(spec, numel):
    E = spec.per_block
    if spec.layout == "stateless":
        return 4 * ((numel + E - 1) // E)
    if spec.layout == "nvfuser":
        return 4
    if spec.layout == "triton":
        return 4 * ((numel + 3) // 4)
    if numel == 0:
        return 0
    T, U = spec.launch(numel)
    return 4 * ((numel - 1) // (T * U) + 1)
