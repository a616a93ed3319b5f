/* SPDX-License-Identifier: Apache-2.0 */
// Twice<V>: two values of a lane type V (det_math.h, simd_lanes.h) as one
// lane type, every operation applied to both.  The normal transform runs
// its two Box-Muller pairs per Philox block as one Twice: the functions'
// long dependency chains (Newton steps, series) then come in twos,
// interleaved op by op, so a CPU has two independent chains in flight
// where one would leave it waiting on latency.  The values are exactly
// those of the two separate calls.
#pragma once

#include <type_traits>

#include "det_math.h"

namespace rngtrk {
namespace det {
// Internal linkage: see det_math.h.
namespace {

template <class V>
struct Twice {
    V a, b;
    Twice() = default;
    Twice(V first, V second) : a(first), b(second) {}
    // A constant in both (an element or bit value: V(x)).
    template <class X, class = typename std::enable_if<std::is_arithmetic<X>::value>::type>
    explicit Twice(X x) : a(V(x)), b(V(x)) {}
};

#define RNGTRK_TWICE_BINARY(op)                                                            \
    template <class V>                                                                     \
    RNGTRK_FLATTEN auto operator op(const Twice<V> &x, const Twice<V> &y) {                        \
        return Twice<decltype(x.a op y.a)>(x.a op y.a, x.b op y.b);                        \
    }
RNGTRK_TWICE_BINARY(+)
RNGTRK_TWICE_BINARY(-)
RNGTRK_TWICE_BINARY(*)
RNGTRK_TWICE_BINARY(&)
RNGTRK_TWICE_BINARY(|)
RNGTRK_TWICE_BINARY(^)
RNGTRK_TWICE_BINARY(==)
RNGTRK_TWICE_BINARY(>)
RNGTRK_TWICE_BINARY(<)
#undef RNGTRK_TWICE_BINARY

template <class V>
RNGTRK_FLATTEN Twice<V> operator<<(const Twice<V> &x, int n) {
    return Twice<V>(x.a << n, x.b << n);
}
template <class V>
RNGTRK_FLATTEN Twice<V> operator>>(const Twice<V> &x, int n) {
    return Twice<V>(x.a >> n, x.b >> n);
}

template <class V>
RNGTRK_FLATTEN auto bits(const Twice<V> &x) {
    return Twice<decltype(bits(x.a))>(bits(x.a), bits(x.b));
}
template <class U>
RNGTRK_FLATTEN auto from_bits(const Twice<U> &x) {
    return Twice<decltype(from_bits(x.a))>(from_bits(x.a), from_bits(x.b));
}
template <class M, class V>
RNGTRK_FLATTEN Twice<V> select(const Twice<M> &m, const Twice<V> &x, const Twice<V> &y) {
    return Twice<V>(select(m.a, x.a, y.a), select(m.b, x.b, y.b));
}
template <class M>
RNGTRK_FLATTEN Twice<M> mask_xor(const Twice<M> &x, const Twice<M> &y) {
    return Twice<M>(mask_xor(x.a, y.a), mask_xor(x.b, y.b));
}
template <class U>
RNGTRK_FLATTEN auto int_to_float(const Twice<U> &x) {
    return Twice<decltype(int_to_float(x.a))>(int_to_float(x.a), int_to_float(x.b));
}
template <class U>
RNGTRK_FLATTEN auto uint_to_float(const Twice<U> &x) {
    return Twice<decltype(uint_to_float(x.a))>(uint_to_float(x.a), uint_to_float(x.b));
}
template <class V, class U>
RNGTRK_FLATTEN void split_floor(const Twice<V> &t, Twice<V> *whole, Twice<U> *q) {
    split_floor(t.a, &whole->a, &q->a);
    split_floor(t.b, &whole->b, &q->b);
}
template <class V>
RNGTRK_FLATTEN Twice<V> mul_add_exact(const Twice<V> &x, const Twice<V> &y, const Twice<V> &z) {
    return Twice<V>(mul_add_exact(x.a, y.a, z.a), mul_add_exact(x.b, y.b, z.b));
}

template <class V>
struct Lanes<Twice<V>> {
    using F = typename Lanes<V>::F;
    using U = Twice<typename Lanes<V>::U>;
    using M = Twice<typename Lanes<V>::M>;
};

}  // namespace
}  // namespace det
}  // namespace rngtrk
