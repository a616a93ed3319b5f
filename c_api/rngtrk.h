/*
 * rngtrk.h — the public C interface of librngtrk.
 *
 * rngtrk tracks named Philox4x32-10 random-number states for distributed
 * training: a tracker holds a default state and named states, forks into
 * them, advances them, and saves them as checkpoint bytes that every language
 * reads back.  Generation is a pure function of (seed, offset, element index).
 *
 * Conventions (every function follows them):
 *   - Functions that can fail return an rngtrk_status; RNGTRK_OK is 0 and
 *     every error is negative.  After a failure, rngtrk_last_error() gives a
 *     message for this thread.  A failed call changes nothing.
 *   - A NULL pointer where a pointer is required is RNGTRK_E_INVALID_ARGUMENT.
 *   - Handles are opaque.  Distinct trackers may be used from different
 *     threads at once; one tracker is not locked internally: callers must not
 *     call a mutating function on it while another thread uses it.  Functions
 *     taking `const rngtrk_tracker *` may run concurrently with each other.
 *
 * This header is plain C99 and C++ and its preprocessed text is valid cffi
 * `cdef` input when RNGTRK_API is defined empty.
 */
#ifndef RNGTRK_H
#define RNGTRK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The one export macro.  Only symbols marked with it leave the library. */
#ifndef RNGTRK_API
#  if defined(_WIN32)
#    define RNGTRK_API
#  else
#    define RNGTRK_API __attribute__((visibility("default")))
#  endif
#endif

/* ------------------------------------------------------------------------
 * Version.  The Makefile reads these three lines; keep their form.
 * ---------------------------------------------------------------------- */
#define RNGTRK_VERSION_MAJOR 0
#define RNGTRK_VERSION_MINOR 1
#define RNGTRK_VERSION_PATCH 0
/* MAJOR*10000 + MINOR*100 + PATCH */
#define RNGTRK_VERSION_NUMBER 100

/* ------------------------------------------------------------------------
 * Status codes.  Values are stable: a code is never renumbered or reused.
 * ---------------------------------------------------------------------- */
typedef enum rngtrk_status {
    RNGTRK_OK = 0,
    RNGTRK_E_INVALID_ARGUMENT = -1,    /* NULL pointer, bad name, offset not a multiple of 4, ... */
    RNGTRK_E_DUPLICATE_NAME = -2,      /* a named state with that name exists */
    RNGTRK_E_DUPLICATE_SEED = -3,      /* another named state already uses that seed */
    RNGTRK_E_UNKNOWN_NAME = -4,        /* no named state has that name */
    RNGTRK_E_FORK_ORDER = -5,          /* fork/restore out of order, or refused while a fork is open */
    RNGTRK_E_BUFFER_TOO_SMALL = -6,    /* the caller's buffer cannot hold the result */
    RNGTRK_E_CORRUPT = -7,             /* checkpoint bytes are damaged or malformed */
    RNGTRK_E_UNSUPPORTED_VERSION = -8, /* checkpoint format version this library does not read */
    RNGTRK_E_OVERFLOW = -9,            /* an offset, index or size would pass its range */
    RNGTRK_E_OUT_OF_MEMORY = -10,      /* an allocation failed */
    RNGTRK_E_UNAVAILABLE = -11,        /* the feature is not available here (e.g. no GPU) */
    RNGTRK_E_INTERNAL = -12            /* a bug in rngtrk; please report it */
} rngtrk_status;

/* ------------------------------------------------------------------------
 * Types.
 * ---------------------------------------------------------------------- */

/* A tracker of named Philox states.  Opaque; create with rngtrk_tracker_new. */
typedef struct rngtrk_tracker rngtrk_tracker;

/* A Philox4x32-10 state.  `offset` counts 32-bit outputs, as PyTorch's does;
 * the stream functions and the tracker require it to be a multiple of 4.
 * Serialized as 16 bytes: seed (u64 LE) then offset (u64 LE) — the layout of
 * torch.cuda.get_rng_state(). */
typedef struct rngtrk_philox_state {
    uint64_t seed;
    uint64_t offset;
} rngtrk_philox_state;

/* Size in bytes of a serialized rngtrk_philox_state. */
#define RNGTRK_STATE_BYTES 16
/* Longest allowed state name, in bytes (UTF-8, no NUL, at least 1 byte). */
#define RNGTRK_MAX_NAME_BYTES 255

/* ------------------------------------------------------------------------
 * Errors and version.
 * ---------------------------------------------------------------------- */

/* A fixed English description of `code`, needing no context.  Unknown codes
 * give "unknown status code".  Never NULL; the string is static. */
RNGTRK_API const char *rngtrk_status_string(rngtrk_status code);

/* The detail message of the most recent failed call on this thread, or ""
 * if none failed yet.  Successful calls leave it as it was, so read it right
 * after the failure.  Never NULL; valid until the next rngtrk call on this
 * thread.  Bindings copy it at once. */
RNGTRK_API const char *rngtrk_last_error(void);

/* The library's version as MAJOR*10000 + MINOR*100 + PATCH; compare with
 * RNGTRK_VERSION_NUMBER to detect a header/library mismatch. */
RNGTRK_API uint32_t rngtrk_version_number(void);

/* The library's version as "MAJOR.MINOR.PATCH".  Never NULL; static. */
RNGTRK_API const char *rngtrk_version_string(void);

/* ------------------------------------------------------------------------
 * The 16-byte state codec.
 * ---------------------------------------------------------------------- */

/* Writes `state` as 16 bytes: seed u64 little-endian, then offset u64 LE.
 * Returns RNGTRK_OK, or RNGTRK_E_INVALID_ARGUMENT if a pointer is NULL. */
RNGTRK_API rngtrk_status rngtrk_state_to_bytes(const rngtrk_philox_state *state,
                                               uint8_t out[16]);

/* Reads 16 bytes written by rngtrk_state_to_bytes (or by
 * torch.cuda.get_rng_state()) into `*out`.  Any 16 bytes decode; the offset
 * is checked where a state is used.  Returns RNGTRK_OK, or
 * RNGTRK_E_INVALID_ARGUMENT if a pointer is NULL. */
RNGTRK_API rngtrk_status rngtrk_state_from_bytes(const uint8_t bytes[16],
                                                 rngtrk_philox_state *out);

/* ------------------------------------------------------------------------
 * Generation.
 * ---------------------------------------------------------------------- */

/* The Philox4x32-10 bijection (Salmon et al., Random123): `out` =
 * Philox4x32-10(counter, key).  All pointers must be valid; this function
 * does no checking (it is the primitive for users' own loops). */
RNGTRK_API void rngtrk_philox4x32_10(const uint32_t counter[4], const uint32_t key[2],
                                     uint32_t out[4]);

/* Writes `count` elements of the stream of `state`, starting at element
 * index `first`, to `out`.  Element g is word (g % 4) of
 * Philox4x32-10(key = (lo32(seed), hi32(seed)),
 *              counter = (lo32(b), hi32(b), 0, 0)),  b = offset/4 + g/4 (mod 2^64).
 * This equals cuRAND's curand_init(seed, 0, offset) followed by curand()
 * calls, and PyTorch's stateless Philox layout.  The result depends only on
 * (seed, offset, g): any slice equals the same slice of the whole.
 *   `out` may be NULL only when `count` is 0.
 * Returns RNGTRK_OK; RNGTRK_E_INVALID_ARGUMENT for a NULL pointer or
 * state->offset % 4 != 0; RNGTRK_E_OVERFLOW if first + count > 2^64 or the
 * output's byte size does not fit in size_t. */
RNGTRK_API rngtrk_status rngtrk_random_u32(const rngtrk_philox_state *state, uint64_t first,
                                           uint64_t count, uint32_t *out);

/* Like rngtrk_random_u32, but element g is (w & 0xFFFFFF) * 2^-24 for the
 * stream word w: a float in [0, 1), exact on every platform.  Same errors. */
RNGTRK_API rngtrk_status rngtrk_uniform_f32(const rngtrk_philox_state *state, uint64_t first,
                                            uint64_t count, float *out);

/* ------------------------------------------------------------------------
 * The tracker.
 *
 * A tracker has a default state (used outside any fork; (0, 0) when new)
 * and named states in insertion order, with pairwise distinct seeds (the
 * default state's seed may equal a named one: Megatron seeds
 * "data-parallel-rng" with the default seed).  fork(name) makes a named
 * state active; forks nest; restore(name) closes the innermost fork.  While
 * a named state is active it is advanced in place, so get_state and save
 * always see its live value.
 * ---------------------------------------------------------------------- */

/* Creates an empty tracker with default state (0, 0) into `*out`.
 * Free it with rngtrk_tracker_free.  Returns RNGTRK_OK,
 * RNGTRK_E_INVALID_ARGUMENT (out is NULL) or RNGTRK_E_OUT_OF_MEMORY. */
RNGTRK_API rngtrk_status rngtrk_tracker_new(rngtrk_tracker **out);

/* Frees a tracker and everything it owns.  NULL is a no-op. */
RNGTRK_API void rngtrk_tracker_free(rngtrk_tracker *tracker);

/* Registers the named state (seed, 0), last in insertion order.
 * `name`: NUL-terminated UTF-8, 1 to 255 bytes; copied.
 * Returns RNGTRK_OK; RNGTRK_E_INVALID_ARGUMENT (NULL, empty, too long or
 * invalid UTF-8 name); RNGTRK_E_DUPLICATE_NAME; RNGTRK_E_DUPLICATE_SEED
 * (another named state uses `seed`); RNGTRK_E_FORK_ORDER (a fork is open);
 * RNGTRK_E_OUT_OF_MEMORY.  A failed add changes nothing. */
RNGTRK_API rngtrk_status rngtrk_tracker_add(rngtrk_tracker *t, const char *name, uint64_t seed);

/* Makes the named state the active one, remembering what was active.
 * Returns RNGTRK_OK; RNGTRK_E_INVALID_ARGUMENT; RNGTRK_E_UNKNOWN_NAME;
 * RNGTRK_E_FORK_ORDER if `name` is already forked (a nested fork of the same
 * state would replay its numbers); RNGTRK_E_OUT_OF_MEMORY. */
RNGTRK_API rngtrk_status rngtrk_tracker_fork(rngtrk_tracker *t, const char *name);

/* Closes the innermost fork, which must be `name`: the advanced state stays
 * in `name` and what was active before the fork is active again.
 * Returns RNGTRK_OK; RNGTRK_E_INVALID_ARGUMENT; RNGTRK_E_UNKNOWN_NAME;
 * RNGTRK_E_FORK_ORDER (no fork open, or `name` is not the innermost). */
RNGTRK_API rngtrk_status rngtrk_tracker_restore(rngtrk_tracker *t, const char *name);

/* Copies the named state into `*out`.
 * Returns RNGTRK_OK, RNGTRK_E_INVALID_ARGUMENT or RNGTRK_E_UNKNOWN_NAME. */
RNGTRK_API rngtrk_status rngtrk_tracker_get_state(const rngtrk_tracker *t, const char *name,
                                                  rngtrk_philox_state *out);

/* Replaces the named state by `*state` (allowed while it is forked).
 * Returns RNGTRK_OK; RNGTRK_E_INVALID_ARGUMENT (NULL, or offset % 4 != 0);
 * RNGTRK_E_UNKNOWN_NAME; RNGTRK_E_DUPLICATE_SEED (another named state uses
 * that seed). */
RNGTRK_API rngtrk_status rngtrk_tracker_set_state(rngtrk_tracker *t, const char *name,
                                                  const rngtrk_philox_state *state);

/* Replaces all named states at once by `count` (name, state) pairs, in the
 * given order; the default state is kept (TransformerEngine's set_states).
 * Every pair is validated before anything changes.  `names` and `states`
 * may be NULL only when `count` is 0.
 * Returns RNGTRK_OK; RNGTRK_E_INVALID_ARGUMENT (NULL, bad name, offset not
 * a multiple of 4); RNGTRK_E_DUPLICATE_NAME; RNGTRK_E_DUPLICATE_SEED;
 * RNGTRK_E_FORK_ORDER (a fork is open); RNGTRK_E_OUT_OF_MEMORY. */
RNGTRK_API rngtrk_status rngtrk_tracker_set_states(rngtrk_tracker *t, const char *const *names,
                                                   const rngtrk_philox_state *states,
                                                   size_t count);

/* Writes the number of named states to `*out`.
 * Returns RNGTRK_OK or RNGTRK_E_INVALID_ARGUMENT. */
RNGTRK_API rngtrk_status rngtrk_tracker_count(const rngtrk_tracker *t, size_t *out);

/* Points `*out` at the name of the index-th named state (insertion order).
 * The string is owned by the tracker and valid until the next call that
 * changes the set of names (add, set_states, reset, load) or frees it.
 * Returns RNGTRK_OK; RNGTRK_E_INVALID_ARGUMENT (NULL, or index >= count). */
RNGTRK_API rngtrk_status rngtrk_tracker_name_at(const rngtrk_tracker *t, size_t index,
                                                const char **out);

/* Writes the number of open forks to `*out` (0 outside any fork).
 * Returns RNGTRK_OK or RNGTRK_E_INVALID_ARGUMENT. */
RNGTRK_API rngtrk_status rngtrk_tracker_fork_depth(const rngtrk_tracker *t, size_t *out);

/* Drops every named state and its seed; the default state becomes (0, 0).
 * Returns RNGTRK_OK, RNGTRK_E_INVALID_ARGUMENT, or RNGTRK_E_FORK_ORDER. */
RNGTRK_API rngtrk_status rngtrk_tracker_reset(rngtrk_tracker *t);

/* Sets the default state to (seed, 0), like torch.manual_seed.  Named
 * states are untouched; allowed while a fork is open (the default becomes
 * active again when every fork is restored).
 * Returns RNGTRK_OK or RNGTRK_E_INVALID_ARGUMENT. */
RNGTRK_API rngtrk_status rngtrk_tracker_manual_seed(rngtrk_tracker *t, uint64_t seed);

/* Copies the default state into `*out`.
 * Returns RNGTRK_OK or RNGTRK_E_INVALID_ARGUMENT. */
RNGTRK_API rngtrk_status rngtrk_tracker_get_default(const rngtrk_tracker *t,
                                                    rngtrk_philox_state *out);

/* Replaces the default state (e.g. by a torch.cuda.get_rng_state() value).
 * Returns RNGTRK_OK or RNGTRK_E_INVALID_ARGUMENT (NULL, offset % 4 != 0). */
RNGTRK_API rngtrk_status rngtrk_tracker_set_default(rngtrk_tracker *t,
                                                    const rngtrk_philox_state *state);

/* Copies the active state into `*out`: the innermost forked state, or the
 * default state when no fork is open.
 * Returns RNGTRK_OK or RNGTRK_E_INVALID_ARGUMENT. */
RNGTRK_API rngtrk_status rngtrk_tracker_active_state(const rngtrk_tracker *t,
                                                     rngtrk_philox_state *out);

/* Reserves `increment` outputs of the active state: copies the active state
 * into `*out_before` (if not NULL), then adds `increment` rounded up to a
 * multiple of 4 to its offset (PyTorch's philox_cuda_state rule).  Draw the
 * reserved numbers from `*out_before`.
 * Returns RNGTRK_OK; RNGTRK_E_INVALID_ARGUMENT (t is NULL);
 * RNGTRK_E_OVERFLOW if the offset would pass 2^64 - 1 (nothing changes). */
RNGTRK_API rngtrk_status rngtrk_tracker_advance(rngtrk_tracker *t, uint64_t increment,
                                                rngtrk_philox_state *out_before);

/* Writes the tracker's checkpoint bytes (format: docs/checkpoint-format.md)
 * to `dst` and their length to `*out_len`.  Pass dst = NULL, capacity = 0
 * to learn the length (a size query: it returns RNGTRK_OK).  Open forks are
 * not recorded; named states are recorded with their live values.
 * Returns RNGTRK_OK; RNGTRK_E_INVALID_ARGUMENT (t or out_len NULL, or dst
 * NULL with capacity > 0); RNGTRK_E_BUFFER_TOO_SMALL (capacity < length;
 * `*out_len` still receives the length, nothing is written to dst). */
RNGTRK_API rngtrk_status rngtrk_tracker_save(const rngtrk_tracker *t, uint8_t *dst,
                                             size_t capacity, size_t *out_len);

/* Replaces the tracker's default and named states by those in checkpoint
 * bytes `src[0..len)`.  Everything is validated first; on any error the
 * tracker is exactly as before.  `src` may be NULL only when len is 0.
 * Returns RNGTRK_OK; RNGTRK_E_INVALID_ARGUMENT (NULL); RNGTRK_E_FORK_ORDER
 * (a fork is open); RNGTRK_E_CORRUPT (truncated, bad magic, bad checksum,
 * bad or duplicate name or seed, offset not a multiple of 4, trailing
 * bytes); RNGTRK_E_UNSUPPORTED_VERSION; RNGTRK_E_OUT_OF_MEMORY. */
RNGTRK_API rngtrk_status rngtrk_tracker_load(rngtrk_tracker *t, const uint8_t *src, size_t len);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RNGTRK_H */
