/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rngtrk.h
 * The public C interface of librngtrk.
 *
 * rngtrk tracks named Philox4x32-10 random-number states for distributed
 * training: a tracker holds a default state and named states, forks into
 * them, advances them, and saves them as checkpoint bytes that every
 * language reads back.  Generation is a pure function of (seed, offset,
 * element index).
 *
 * Conventions (every function follows them):
 * - Functions that can fail return an `rngtrk_status`; `RNGTRK_OK` is 0 and
 *   every error is negative.  After a failure, `rngtrk_last_error()` gives a
 *   message for this thread.  A failed call changes nothing.
 * - A NULL pointer where a pointer is required is `RNGTRK_E_INVALID_ARGUMENT`.
 * - Handles are opaque.  Distinct trackers may be used from different
 *   threads at once; one tracker is not locked internally: callers must not
 *   call a mutating function on it while another thread uses it.  Functions
 *   taking `const rngtrk_tracker *` may run concurrently with each other.
 * - Structs that may grow start with `uint32_t struct_size` and are filled
 *   by an init function that takes the caller's `sizeof` (docs/abi.md).
 *
 * Sections, in the order a user meets them: errors and version; the 16-byte
 * state and its stream; the tracker; checkpoints; sampling; distributed
 * training; CUDA.
 *
 * This header is plain C99 and C++ and its preprocessed text is valid cffi
 * `cdef` input when `RNGTRK_API` is defined empty.
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

/* ========================================================================
 * Errors and version
 * ===================================================================== */

/* The version.  The Makefile reads these three lines; keep their form. */
#define RNGTRK_VERSION_MAJOR 0
#define RNGTRK_VERSION_MINOR 1
#define RNGTRK_VERSION_PATCH 0
/** The header's version as `MAJOR*10000 + MINOR*100 + PATCH`. */
#define RNGTRK_VERSION_NUMBER 100

/** What a call returned.  Values are stable: a code is never renumbered or
 *  reused, and new codes are only appended (docs/abi.md). */
typedef enum rngtrk_status {
    RNGTRK_OK = 0,                     /**< success */
    RNGTRK_E_INVALID_ARGUMENT = -1,    /**< NULL pointer, bad name, offset not a multiple of 4, ... */
    RNGTRK_E_DUPLICATE_NAME = -2,      /**< a named state with that name exists */
    RNGTRK_E_DUPLICATE_SEED = -3,      /**< another named state already uses that seed */
    RNGTRK_E_UNKNOWN_NAME = -4,        /**< no named state has that name */
    RNGTRK_E_FORK_ORDER = -5,          /**< restore of a fork that is not the innermost open one, or a call
                                            refused while a fork is open */
    RNGTRK_E_BUFFER_TOO_SMALL = -6,    /**< the caller's buffer cannot hold the result */
    RNGTRK_E_CORRUPT = -7,             /**< checkpoint bytes are damaged or malformed */
    RNGTRK_E_UNSUPPORTED_VERSION = -8, /**< checkpoint format version this library does not read */
    RNGTRK_E_OVERFLOW = -9,            /**< an offset, index or size would pass its range */
    RNGTRK_E_OUT_OF_MEMORY = -10,      /**< an allocation failed */
    RNGTRK_E_UNAVAILABLE = -11,        /**< the feature is not available here (e.g. no GPU) */
    RNGTRK_E_INTERNAL = -12,           /**< a bug in rngtrk; please report it */
    RNGTRK_E_WRONG_RANK = -13,         /**< checkpoint written by a rank whose streams differ */
    RNGTRK_E_IO = -14,                 /**< a file could not be read or written (see the message) */
    RNGTRK_E_STREAM_REUSE = -15,       /**< the ledger: a reservation overlaps numbers already handed out */
    RNGTRK_E_REPLAY_MISMATCH = -16,    /**< the ledger: a replay's reservations differ from the forward's */
    RNGTRK_STATUS_RANGE_ = 0x7FFFFFFF  /**< not a status: makes any int a valid value in C++ */
} rngtrk_status;

/** A fixed English description of `code`, needing no context.  Unknown
 *  codes give "unknown status code".  Never NULL; the string is static. */
RNGTRK_API const char *rngtrk_status_string(rngtrk_status code);

/** The detail message of the most recent failed call on this thread, or ""
 *  if none failed yet.  Successful calls leave it as it was, so read it
 *  right after the failure.  Never NULL; valid until the next rngtrk call on
 *  this thread.  Bindings copy it at once.  Always well-formed UTF-8: bytes
 *  of a file path or name that are not UTF-8 appear as `\xNN`, and a message
 *  longer than `RNGTRK_ERROR_MESSAGE_CAPACITY - 1` bytes is cut between
 *  characters and ends with "...".  A caller whose calls may run on another
 *  thread than the one reading the message (FFIs with thread pools) reads
 *  a tracker's copy instead: `rngtrk_tracker_last_error`. */
RNGTRK_API const char *rngtrk_last_error(void);

/** A buffer of this many bytes holds any detail message with its NUL. */
#define RNGTRK_ERROR_MESSAGE_CAPACITY 512

/** The library's version as `MAJOR*10000 + MINOR*100 + PATCH`; compare with
 *  `RNGTRK_VERSION_NUMBER` to detect a header/library mismatch. */
RNGTRK_API uint32_t rngtrk_version_number(void);

/** The library's version as "MAJOR.MINOR.PATCH".  Never NULL; static. */
RNGTRK_API const char *rngtrk_version_string(void);

/* ========================================================================
 * The 16-byte state and its stream
 * ===================================================================== */

/** A Philox4x32-10 state.  `offset` counts 32-bit outputs, as PyTorch's
 *  does; the stream functions and the tracker require it to be a multiple
 *  of 4.  Serialized as 16 bytes: seed (u64 LE) then offset (u64 LE), the
 *  layout of `torch.cuda.get_rng_state()`.  Its layout is frozen. */
typedef struct rngtrk_philox_state {
    uint64_t seed;   /**< the Philox key: (lo32(seed), hi32(seed)) */
    uint64_t offset; /**< 32-bit outputs consumed so far */
} rngtrk_philox_state;

/** Size in bytes of a serialized `rngtrk_philox_state`. */
#define RNGTRK_STATE_BYTES 16

/** Writes `state` as 16 bytes: seed u64 little-endian, then offset u64 LE.
 *  Returns `RNGTRK_OK`, or `RNGTRK_E_INVALID_ARGUMENT` if a pointer is NULL. */
RNGTRK_API rngtrk_status rngtrk_state_to_bytes(const rngtrk_philox_state *state, uint8_t out[16]);

/** Reads 16 bytes written by `rngtrk_state_to_bytes` (or by
 *  `torch.cuda.get_rng_state()`) into `*out`.  Any 16 bytes decode; the
 *  offset is checked where a state is used.  Returns `RNGTRK_OK`, or
 *  `RNGTRK_E_INVALID_ARGUMENT` if a pointer is NULL. */
RNGTRK_API rngtrk_status rngtrk_state_from_bytes(const uint8_t bytes[16], rngtrk_philox_state *out);

/** Writes `state` moved past `increment` 32-bit outputs, rounded up to a
 *  whole block of 4, to `*out` (which may be `state`): what every draw and
 *  `rngtrk_tracker_advance` do to a state, for callers that keep a state
 *  elsewhere (a framework's generator).  Returns `RNGTRK_OK`,
 *  `RNGTRK_E_INVALID_ARGUMENT` (NULL; state->offset not a multiple of 4) or
 *  `RNGTRK_E_OVERFLOW` (the offset would pass 2^64 - 1; `*out` unchanged).
 *  Added in 0.1. */
RNGTRK_API rngtrk_status rngtrk_state_advance(const rngtrk_philox_state *state, uint64_t increment,
                                              rngtrk_philox_state *out);

/** The Philox4x32-10 bijection (Salmon et al., Random123): `out` =
 *  Philox4x32-10(counter, key).  All pointers must be valid; this function
 *  does no checking (it is the primitive for users' own loops). */
RNGTRK_API void rngtrk_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]);

/** Writes `count` elements of the stream of `state`, starting at element
 *  index `first`, to `out`.  Element g is word (g mod 4) of
 *  Philox4x32-10(key = (lo32(seed), hi32(seed)), counter = (lo32(b), hi32(b), 0, 0))
 *  with b = offset/4 + g/4 (mod 2^64).  This equals cuRAND's
 *  `curand_init(seed, 0, offset)` followed by `curand()` calls, and
 *  PyTorch's stateless Philox layout.  The result depends only on
 *  (seed, offset, g): any slice equals the same slice of the whole.
 *  `out` may be NULL only when `count` is 0.
 *  Returns `RNGTRK_OK`; `RNGTRK_E_INVALID_ARGUMENT` for a NULL pointer or an
 *  offset that is not a multiple of 4; `RNGTRK_E_OVERFLOW` if first + count
 *  passes 2^64 or the output's byte size does not fit in size_t. */
RNGTRK_API rngtrk_status rngtrk_random_u32(const rngtrk_philox_state *state, uint64_t first, uint64_t count,
                                           uint32_t *out);

/** Like `rngtrk_random_u32`, but element g is (w & 0xFFFFFF) * 2^-24 for
 *  the stream word w: a float in the half-open range from 0 to 1, exact on
 *  every platform.  Same errors. */
RNGTRK_API rngtrk_status rngtrk_uniform_f32(const rngtrk_philox_state *state, uint64_t first, uint64_t count,
                                            float *out);

/* ========================================================================
 * The tracker
 *
 * A tracker has a default state (used outside any fork; (0, 0) when new)
 * and named states in insertion order, with pairwise distinct seeds (the
 * default state's seed may equal a named one: Megatron seeds
 * "data-parallel-rng" with the default seed).  fork(name) makes a named
 * state active; forks nest; restore(name) closes the innermost fork.  While
 * a named state is active it is advanced in place, so get_state and save
 * always see its live value.  Rules: docs/tracker.md.
 * ===================================================================== */

/** A tracker of named Philox states.  Opaque; create with `rngtrk_tracker_new`. */
typedef struct rngtrk_tracker rngtrk_tracker;

/** Longest allowed state name, in bytes (UTF-8, no NUL, at least 1 byte). */
#define RNGTRK_MAX_NAME_BYTES 255

/** Creates an empty tracker with default state (0, 0) into `*out`.  Free it
 *  with `rngtrk_tracker_free`.  Returns `RNGTRK_OK`,
 *  `RNGTRK_E_INVALID_ARGUMENT` (out is NULL) or `RNGTRK_E_OUT_OF_MEMORY`. */
RNGTRK_API rngtrk_status rngtrk_tracker_new(rngtrk_tracker **out);

/** Frees a tracker and everything it owns.  NULL is a no-op. */
RNGTRK_API void rngtrk_tracker_free(rngtrk_tracker *tracker);

/** The detail message of the most recent failed call that was given
 *  `tracker` (every `rngtrk_tracker_*` function that takes one), from
 *  whichever thread made it: the text `rngtrk_last_error()` gave on that
 *  thread, or "" if none failed yet.  For callers whose calls may run on
 *  another thread than the one that reads the message, such as koffi's
 *  async calls or Go without `runtime.LockOSThread` (docs/c-api.md).
 *  Successful calls leave it as it was; calls on the tracker from several
 *  threads at once replace each other's message.  Writes the message and a
 *  NUL to `dst` and its length (without the NUL) to `*out_len`; dst = NULL,
 *  capacity = 0 is a size query; `RNGTRK_ERROR_MESSAGE_CAPACITY` bytes
 *  always suffice.  Does not change the tracker's message, even when it
 *  fails.  Returns `RNGTRK_OK`; `RNGTRK_E_INVALID_ARGUMENT` (tracker or
 *  out_len NULL, dst NULL with capacity > 0); `RNGTRK_E_BUFFER_TOO_SMALL`
 *  (capacity < length + 1; `*out_len` still receives the length). */
RNGTRK_API rngtrk_status rngtrk_tracker_last_error(const rngtrk_tracker *tracker, char *dst, size_t capacity,
                                                   size_t *out_len);

/** Registers the named state (seed, 0), last in insertion order; allowed
 *  while forks are open (Megatron-LM allows it).  `name` is NUL-terminated
 *  UTF-8 of 1 to 255 bytes, copied.  Returns `RNGTRK_OK`;
 *  `RNGTRK_E_INVALID_ARGUMENT` (NULL, empty, too long or invalid UTF-8
 *  name); `RNGTRK_E_DUPLICATE_NAME`; `RNGTRK_E_DUPLICATE_SEED` (another
 *  named state uses `seed`); `RNGTRK_E_OUT_OF_MEMORY`.  A failed add
 *  changes nothing. */
RNGTRK_API rngtrk_status rngtrk_tracker_add(rngtrk_tracker *tracker, const char *name, uint64_t seed);

/** Makes the named state the active one, remembering what was active.
 *  Forks nest, and a name that is already open may be forked again
 *  (Megatron-LM's double fork): since a forked state advances in place, the
 *  nested fork simply continues that name's one stream, and no number is
 *  handed out twice.  Returns `RNGTRK_OK`; `RNGTRK_E_INVALID_ARGUMENT`;
 *  `RNGTRK_E_UNKNOWN_NAME`; `RNGTRK_E_OUT_OF_MEMORY`. */
RNGTRK_API rngtrk_status rngtrk_tracker_fork(rngtrk_tracker *tracker, const char *name);

/** Closes the innermost fork, which must be `name`: the advanced state stays
 *  in `name` and what was active before the fork is active again (with a
 *  name forked twice, the outer fork of it: the same stream, where the inner
 *  one left it).  Returns `RNGTRK_OK`; `RNGTRK_E_INVALID_ARGUMENT`;
 *  `RNGTRK_E_UNKNOWN_NAME`; `RNGTRK_E_FORK_ORDER` (no fork open, or `name`
 *  is not the innermost). */
RNGTRK_API rngtrk_status rngtrk_tracker_restore(rngtrk_tracker *tracker, const char *name);

/** Copies the named state into `*out`.  Returns `RNGTRK_OK`,
 *  `RNGTRK_E_INVALID_ARGUMENT` or `RNGTRK_E_UNKNOWN_NAME`. */
RNGTRK_API rngtrk_status rngtrk_tracker_get_state(const rngtrk_tracker *tracker, const char *name,
                                                  rngtrk_philox_state *out);

/** Replaces the named state by `*state` (allowed while it is forked).
 *  Returns `RNGTRK_OK`; `RNGTRK_E_INVALID_ARGUMENT` (NULL, or an offset that
 *  is not a multiple of 4); `RNGTRK_E_UNKNOWN_NAME`;
 *  `RNGTRK_E_DUPLICATE_SEED` (another named state uses that seed). */
RNGTRK_API rngtrk_status rngtrk_tracker_set_state(rngtrk_tracker *tracker, const char *name,
                                                  const rngtrk_philox_state *state);

/** Replaces all named states at once by `count` (name, state) pairs, in the
 *  given order; the default state is kept (TransformerEngine's set_states).
 *  Every pair is validated before anything changes.  Allowed while forks
 *  are open (Megatron-LM allows it) if every open fork's name is among the
 *  pairs: the fork then holds that name's new state.  `names` and `states`
 *  may be NULL only when `count` is 0.  Returns `RNGTRK_OK`;
 *  `RNGTRK_E_INVALID_ARGUMENT` (NULL, bad name, offset not a multiple of 4);
 *  `RNGTRK_E_DUPLICATE_NAME`; `RNGTRK_E_DUPLICATE_SEED`;
 *  `RNGTRK_E_FORK_ORDER` (an open fork's name is not among the pairs);
 *  `RNGTRK_E_OUT_OF_MEMORY`. */
RNGTRK_API rngtrk_status rngtrk_tracker_set_states(rngtrk_tracker *tracker, const char *const *names,
                                                   const rngtrk_philox_state *states, size_t count);

/** Writes the number of named states to `*out`.  Returns `RNGTRK_OK` or
 *  `RNGTRK_E_INVALID_ARGUMENT`. */
RNGTRK_API rngtrk_status rngtrk_tracker_count(const rngtrk_tracker *tracker, size_t *out);

/** Points `*out` at the name of the index-th named state (insertion order).
 *  The string is owned by the tracker and valid until the next call that
 *  changes the set of names (add, set_states, reset, load) or frees it.
 *  Returns `RNGTRK_OK`; `RNGTRK_E_INVALID_ARGUMENT` (NULL, or index >= count). */
RNGTRK_API rngtrk_status rngtrk_tracker_name_at(const rngtrk_tracker *tracker, size_t index, const char **out);

/** Writes the number of open forks to `*out` (0 outside any fork).  Returns
 *  `RNGTRK_OK` or `RNGTRK_E_INVALID_ARGUMENT`. */
RNGTRK_API rngtrk_status rngtrk_tracker_fork_depth(const rngtrk_tracker *tracker, size_t *out);

/** Drops every named state and its seed; the default state becomes (0, 0)
 *  and the origin is cleared.  Returns `RNGTRK_OK`,
 *  `RNGTRK_E_INVALID_ARGUMENT`, or `RNGTRK_E_FORK_ORDER`. */
RNGTRK_API rngtrk_status rngtrk_tracker_reset(rngtrk_tracker *tracker);

/** Sets the default state to (seed, 0), like `torch.manual_seed`.  Named
 *  states are untouched; allowed while a fork is open (the default becomes
 *  active again when every fork is restored).  Returns `RNGTRK_OK` or
 *  `RNGTRK_E_INVALID_ARGUMENT`. */
RNGTRK_API rngtrk_status rngtrk_tracker_manual_seed(rngtrk_tracker *tracker, uint64_t seed);

/** Copies the default state into `*out`.  Returns `RNGTRK_OK` or
 *  `RNGTRK_E_INVALID_ARGUMENT`. */
RNGTRK_API rngtrk_status rngtrk_tracker_get_default(const rngtrk_tracker *tracker, rngtrk_philox_state *out);

/** Replaces the default state (e.g. by a `torch.cuda.get_rng_state()`
 *  value).  Returns `RNGTRK_OK` or `RNGTRK_E_INVALID_ARGUMENT` (NULL, or an
 *  offset that is not a multiple of 4). */
RNGTRK_API rngtrk_status rngtrk_tracker_set_default(rngtrk_tracker *tracker, const rngtrk_philox_state *state);

/** Copies the active state into `*out`: the innermost forked state, or the
 *  default state when no fork is open.  Returns `RNGTRK_OK` or
 *  `RNGTRK_E_INVALID_ARGUMENT`. */
RNGTRK_API rngtrk_status rngtrk_tracker_active_state(const rngtrk_tracker *tracker, rngtrk_philox_state *out);

/** Reserves `increment` outputs of the active state: copies the active state
 *  into `*out_before` (if not NULL), then adds `increment` rounded up to a
 *  multiple of 4 to its offset (PyTorch's philox_cuda_state rule).  Draw
 *  the reserved numbers from `*out_before`.  Returns `RNGTRK_OK`;
 *  `RNGTRK_E_INVALID_ARGUMENT` (tracker is NULL); `RNGTRK_E_OVERFLOW` if the
 *  offset would pass 2^64 - 1 (nothing changes). */
RNGTRK_API rngtrk_status rngtrk_tracker_advance(rngtrk_tracker *tracker, uint64_t increment,
                                                rngtrk_philox_state *out_before);

/* ========================================================================
 * Checkpoints (format: docs/checkpoint-format.md)
 * ===================================================================== */

/** Writes the tracker's checkpoint bytes to `dst` and their length to
 *  `*out_len`.  Pass dst = NULL, capacity = 0 to learn the length (a size
 *  query: it returns `RNGTRK_OK`).  Open forks are not recorded; named
 *  states are recorded with their live values.  Returns `RNGTRK_OK`;
 *  `RNGTRK_E_INVALID_ARGUMENT` (tracker or out_len NULL, or dst NULL with
 *  capacity > 0); `RNGTRK_E_BUFFER_TOO_SMALL` (capacity < length;
 *  `*out_len` still receives the length, nothing is written to dst). */
RNGTRK_API rngtrk_status rngtrk_tracker_save(const rngtrk_tracker *tracker, uint8_t *dst, size_t capacity,
                                             size_t *out_len);

/** Replaces the tracker's default and named states by those in checkpoint
 *  bytes `src[0..len)`.  Everything is validated first; on any error the
 *  tracker is exactly as before.  `src` may be NULL only when len is 0.
 *  Returns `RNGTRK_OK`; `RNGTRK_E_INVALID_ARGUMENT` (NULL);
 *  `RNGTRK_E_FORK_ORDER` (a fork is open); `RNGTRK_E_CORRUPT` (truncated,
 *  bad magic, bad checksum, bad or duplicate name or seed, offset not a
 *  multiple of 4, trailing bytes); `RNGTRK_E_UNSUPPORTED_VERSION`;
 *  `RNGTRK_E_WRONG_RANK` (see `rngtrk_tracker_load_flags`);
 *  `RNGTRK_E_OUT_OF_MEMORY`. */
RNGTRK_API rngtrk_status rngtrk_tracker_load(rngtrk_tracker *tracker, const uint8_t *src, size_t len);

/** Flag of `rngtrk_tracker_load_flags`: load another rank's checkpoint. */
#define RNGTRK_LOAD_ANY_RANK 1

/** `rngtrk_tracker_load` with flags.  A checkpoint that records an origin
 *  (format version 2 or 3) is refused with `RNGTRK_E_WRONG_RANK` when this
 *  tracker has an origin whose streams differ: another policy, base seed or
 *  flags, or another coordinate the policy's seeds depend on (megatron and
 *  derived: pp, tp, ep, etp, dp with DATA_PARALLEL_RANDOM_INIT, whether
 *  each remat axis is on and its rank when on; slapo: pp, tp, dp); the
 *  message names every coordinate that differs.  `RNGTRK_LOAD_ANY_RANK`
 *  loads it anyway.  After a load the tracker takes the checkpoint's origin
 *  (none for version 1).  Other statuses as `rngtrk_tracker_load`. */
RNGTRK_API rngtrk_status rngtrk_tracker_load_flags(rngtrk_tracker *tracker, const uint8_t *src, size_t len,
                                                   uint32_t flags);

/** Saves the tracker's checkpoint to the file `path`, crash-safely: the
 *  bytes go to `path` + ".rngtrk-tmp" in the same folder, which is flushed
 *  (fsync), renamed over `path`, and the folder is flushed.  After a crash
 *  at any moment `path` holds either the previous checkpoint or the new
 *  one, never a mix.  Two processes must not save to the same path at
 *  once.  Returns `RNGTRK_OK`; `RNGTRK_E_INVALID_ARGUMENT` (NULL);
 *  `RNGTRK_E_IO` (with the system's reason; the previous file is
 *  untouched); `RNGTRK_E_OUT_OF_MEMORY`. */
RNGTRK_API rngtrk_status rngtrk_tracker_save_file(const rngtrk_tracker *tracker, const char *path);

/** Loads the checkpoint file `path` (as `rngtrk_tracker_load_flags` with
 *  `flags`).  The header is read first: a file that is not a checkpoint, or
 *  whose size disagrees with its declared length, is refused before the
 *  rest is read (so memory stays bounded by the checkpoint's real size).
 *  Returns `RNGTRK_OK`; `RNGTRK_E_IO` (cannot open or read, or not a
 *  regular file); and the statuses of `rngtrk_tracker_load_flags`.  On any
 *  error the tracker is unchanged. */
RNGTRK_API rngtrk_status rngtrk_tracker_load_file(rngtrk_tracker *tracker, const char *path, uint32_t flags);

/** Describes checkpoint bytes without a tracker, as the one line of
 *  canonical JSON every rngtrk tool prints (`rngtrk inspect`, Python's
 *  `checkpoint_to_json`, Rust's `checkpoint_to_json`): format_version, the
 *  default state, the named states in stored order and, for a version-2 or
 *  -3 checkpoint, its origin, flags by name (docs/cli.md).  The bytes are validated exactly
 *  as `rngtrk_tracker_load` validates them.  Writes the JSON and a
 *  terminating NUL to `dst` and the JSON's length (without the NUL) to
 *  `*out_len`; dst = NULL, capacity = 0 is a size query.  Returns
 *  `RNGTRK_OK`; `RNGTRK_E_INVALID_ARGUMENT` (NULL); `RNGTRK_E_CORRUPT`,
 *  `RNGTRK_E_UNSUPPORTED_VERSION` (with the exact reason);
 *  `RNGTRK_E_BUFFER_TOO_SMALL` (capacity < length + 1; `*out_len` still
 *  receives the length); `RNGTRK_E_OUT_OF_MEMORY`. */
RNGTRK_API rngtrk_status rngtrk_checkpoint_json(const uint8_t *src, size_t len, char *dst, size_t capacity,
                                                size_t *out_len);

/** `rngtrk_checkpoint_json` of the checkpoint file `path`, read as
 *  `rngtrk_tracker_load_file` reads it (header first).  A size query reads
 *  the file; call again to get the text.  Returns as
 *  `rngtrk_checkpoint_json`, plus `RNGTRK_E_IO`. */
RNGTRK_API rngtrk_status rngtrk_checkpoint_file_json(const char *path, char *dst, size_t capacity,
                                                     size_t *out_len);

/* ========================================================================
 * Sampling: distributions, dtypes and stream layouts (docs/streams.md)
 *
 * A sample spec says how elements are made from a state.  Every element is
 * a pure function of (seed, offset, element index g), so a range equals
 * the same range of a longer call, and an n-d slice equals the same box
 * cut out of the whole tensor.
 * ===================================================================== */

/** How element indices map to Philox counters (formulas: docs/streams.md). */
typedef enum rngtrk_layout {
    RNGTRK_LAYOUT_STATELESS = 0,        /**< PyTorch's stateless Philox; cuRAND subsequence 0 */
    RNGTRK_LAYOUT_NVFUSER = 1,          /**< nvFuser's uniform_philox / rand_like (Thunder) */
    RNGTRK_LAYOUT_TORCH_EAGER_CUDA = 2, /**< torch.rand / Tensor.uniform_ on a CUDA device */
    RNGTRK_LAYOUT_TRITON = 3,           /**< Triton's tl.randint / tl.rand: element g is counter offset + g
                                             (added in 0.1) */
    RNGTRK_LAYOUT_RANGE_ = 0x7FFFFFFF   /**< not a layout: any int is a valid value in C++ */
} rngtrk_layout;

/** What each element is. */
typedef enum rngtrk_distribution {
    RNGTRK_DIST_BITS = 0,           /**< raw words: dtype U32 or U64 */
    RNGTRK_DIST_UNIFORM = 1,        /**< from low up to high: F32, F64, F16, BF16; param_a = low, param_b = high */
    RNGTRK_DIST_NORMAL = 2,         /**< Box-Muller: F32, F64, F16, BF16 (the F32 value rounded); param_a = mean, param_b = std */
    RNGTRK_DIST_BERNOULLI = 3,      /**< keep mask (U8: 1 = keep) with keep probability param_a */
    RNGTRK_DIST_RANGE_ = 0x7FFFFFFF /**< not a distribution: any int is a valid value in C++ */
} rngtrk_distribution;

/** The element type of an output. */
typedef enum rngtrk_dtype {
    RNGTRK_DTYPE_U8 = 0,             /**< uint8_t */
    RNGTRK_DTYPE_U32 = 1,            /**< uint32_t */
    RNGTRK_DTYPE_U64 = 2,            /**< uint64_t */
    RNGTRK_DTYPE_F16 = 3,            /**< IEEE binary16, written as its uint16_t bits */
    RNGTRK_DTYPE_BF16 = 4,           /**< bfloat16, written as its uint16_t bits */
    RNGTRK_DTYPE_F32 = 5,            /**< float */
    RNGTRK_DTYPE_F64 = 6,            /**< double */
    RNGTRK_DTYPE_RANGE_ = 0x7FFFFFFF /**< not a dtype: any int is a valid value in C++ */
} rngtrk_dtype;

/** Bytes of one element of `dtype` (1, 2, 4 or 8), or 0 for a value that
 *  is not a dtype. */
RNGTRK_API size_t rngtrk_dtype_size(rngtrk_dtype dtype);

/** The name of `layout`: "stateless", "nvfuser", "torch-eager-cuda" or
 *  "triton", the spelling every rngtrk tool and binding uses.  NULL for a
 *  value that is not a layout.  Layouts are numbered from 0 without gaps, so
 *  asking for 0, 1, 2, ... until NULL lists them all.  The string is static.
 *  Added in 0.1. */
RNGTRK_API const char *rngtrk_layout_name(rngtrk_layout layout);

/** Writes the layout called `name` (NUL-terminated; the exact spelling of
 *  `rngtrk_layout_name`) to `*out`.  Returns `RNGTRK_OK`, or
 *  `RNGTRK_E_INVALID_ARGUMENT` (NULL, or no layout has that name: the
 *  message lists the names; `*out` is left as it was).  Added in 0.1. */
RNGTRK_API rngtrk_status rngtrk_layout_from_name(const char *name, rngtrk_layout *out);

/** The name of `distribution` ("bits", "uniform", "normal", "bernoulli"), or
 *  NULL; numbered and listed as layouts are.  Static.  Added in 0.1. */
RNGTRK_API const char *rngtrk_distribution_name(rngtrk_distribution distribution);

/** The distribution called `name`; returns as `rngtrk_layout_from_name`.
 *  Added in 0.1. */
RNGTRK_API rngtrk_status rngtrk_distribution_from_name(const char *name, rngtrk_distribution *out);

/** The name of `dtype` ("u8", "u32", "u64", "f16", "bf16", "f32", "f64"), or
 *  NULL; numbered and listed as layouts are.  Static.  Added in 0.1. */
RNGTRK_API const char *rngtrk_dtype_name(rngtrk_dtype dtype);

/** The dtype called `name`; returns as `rngtrk_layout_from_name`.  Added in
 *  0.1. */
RNGTRK_API rngtrk_status rngtrk_dtype_from_name(const char *name, rngtrk_dtype *out);

/** What to sample.  A growable struct (docs/abi.md): fill it with
 *  `rngtrk_sample_spec_init` (or `RNGTRK_SAMPLE_SPEC_INIT`), then change the
 *  parameters.  The library reads only the first `struct_size` bytes;
 *  fields the caller's struct lacks take the defaults shown. */
typedef struct rngtrk_sample_spec {
    uint32_t struct_size;        /**< the caller's sizeof(rngtrk_sample_spec), set by the init function */
    uint32_t layout;             /**< an rngtrk_layout */
    uint32_t distribution;       /**< an rngtrk_distribution */
    uint32_t dtype;              /**< an rngtrk_dtype */
    double param_a;              /**< uniform: low (0); normal: mean (0); bernoulli: p (0.5) */
    double param_b;              /**< uniform: high (1); normal: std (1) */
    uint32_t sm_count;           /**< torch-eager-cuda: multiprocessors (132, an H100) */
    uint32_t max_threads_per_sm; /**< torch-eager-cuda: threads per multiprocessor (2048) */
    uint64_t numel;              /**< torch-eager-cuda range calls: elements of the whole tensor, which sets
                                      the launch; 0 (the default) means first + count */
    uint32_t threads;            /**< CPU threads one call may use (1, the default: only the caller's); calls
                                      of at least 2^20 elements are split into this many parts (at most 64),
                                      with the same bits.  Added in 0.1: a struct_size of 48 reads as 1. */
    uint32_t reserved;           /**< must be 0 */
} rngtrk_sample_spec;

/** The size of the first published `rngtrk_sample_spec` (up to `numel`):
 *  the smallest `struct_size` the library accepts. */
#define RNGTRK_SAMPLE_SPEC_MIN_SIZE 48

/** Fills the caller's spec of `spec_size` bytes (its `sizeof`): exactly
 *  `spec_size` bytes are written, struct_size = spec_size, the given kinds
 *  and the defaults shown above, zero in any bytes past the fields this
 *  library knows.  Returns `RNGTRK_OK`, or `RNGTRK_E_INVALID_ARGUMENT`
 *  (NULL; spec_size below `RNGTRK_SAMPLE_SPEC_MIN_SIZE` or past 2^32 - 1;
 *  an unknown value; a dtype the distribution does not make: BITS takes
 *  U32/U64, UNIFORM and NORMAL F32/F64/F16/BF16, BERNOULLI U8). */
RNGTRK_API rngtrk_status rngtrk_sample_spec_init(rngtrk_sample_spec *spec, size_t spec_size, rngtrk_layout layout,
                                                 rngtrk_distribution distribution, rngtrk_dtype dtype);

/** `rngtrk_sample_spec_init` with the size the caller compiled. */
#define RNGTRK_SAMPLE_SPEC_INIT(spec, layout, distribution, dtype) \
    rngtrk_sample_spec_init((spec), sizeof *(spec), (layout), (distribution), (dtype))

/** Writes elements [first, first + count) of `spec`'s tensor for `state`
 *  to `out` (count elements of the dtype, aligned to the dtype's size;
 *  `out_capacity` is its size in bytes).  `out` may be NULL only when count
 *  is 0.  Returns `RNGTRK_OK`; `RNGTRK_E_INVALID_ARGUMENT` (NULL; `out` not
 *  aligned to its element size; a bad spec: struct_size, a non-zero byte
 *  past the fields this library knows, or reserved; bad parameters:
 *  low > high, std < 0, p outside 0..1, non-finite values; an offset that
 *  is not a multiple of 4; numel < first + count);
 *  `RNGTRK_E_BUFFER_TOO_SMALL` (out_capacity < count * element size);
 *  `RNGTRK_E_OVERFLOW` (first + count passes 2^64). */
RNGTRK_API rngtrk_status rngtrk_sample(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                       uint64_t first, uint64_t count, void *out, size_t out_capacity);

/** The most dimensions of a tensor (sample slices, DTensor shapes) and of a
 *  device mesh that the library takes.  Added in 0.1. */
#define RNGTRK_MAX_NDIM 16

/** Writes the box from `start` of extent `local_shape` of an n-d tensor of
 *  `global_shape` (row-major, `ndim` dimensions, 1 <= ndim <= RNGTRK_MAX_NDIM) to `out`,
 *  row-major in the box: the same bits as cutting the box out of the whole
 *  tensor.  For the torch-eager-cuda layout the whole tensor's element
 *  count is the product of global_shape (spec->numel is not used).  Returns
 *  as `rngtrk_sample`, and `RNGTRK_E_INVALID_ARGUMENT` for a box outside
 *  the tensor; `RNGTRK_E_OVERFLOW` if the tensor has 2^64 elements or more. */
RNGTRK_API rngtrk_status rngtrk_sample_slice(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                             size_t ndim, const uint64_t *global_shape, const uint64_t *start,
                                             const uint64_t *local_shape, void *out, size_t out_capacity);

/** Dropout in one pass: `out[i] = in[i] / p` if element first + i is kept
 *  (the bernoulli mask of `spec`, whose distribution must be BERNOULLI and
 *  dtype F32), else 0.  The scale is the float 1/p, multiplied in.  `in`
 *  and `out` hold `count` floats and may be the same array.  Returns as
 *  `rngtrk_sample`. */
RNGTRK_API rngtrk_status rngtrk_dropout_f32(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                            uint64_t first, uint64_t count, const float *in, float *out);

/** Dropout in one pass over f32, f16 or bf16 data, as torch's
 *  `x * mask * scale` computes it.  `spec`'s distribution must be BERNOULLI
 *  with param_a = p, the KEEP probability (0 <= p <= 1), and its dtype is
 *  the data's: `RNGTRK_DTYPE_F32` (float), `RNGTRK_DTYPE_F16` or
 *  `RNGTRK_DTYPE_BF16` (uint16_t bits).  Element first + i is kept where
 *  the bernoulli mask of the same spec with dtype U8 (`rngtrk_sample`,
 *  every layout and its numel/geometry rules) has 1, and
 *  `out[i] = round(float(in[i]) * (kept ? scale : 0.0f))`: computed in float
 *  and rounded once to the dtype (nearest even; f32 needs no rounding).
 *  `scale` is 1.0 / p computed in double, rounded to float and then to the
 *  dtype (what `torch.tensor(1.0 / p, dtype=...)` gives).  So a dropped
 *  element is `in[i] * 0`: a NaN stays NaN, a negative value or -0 gives
 *  -0, an infinity gives NaN (which NaN, its sign and payload, is the
 *  platform's: the CPU's or the GPU's float multiply; f16 keeps no
 *  payload); `rngtrk_dropout_f32` writes +0 there instead, and takes
 *  1.0f / (float)p as its scale (the same float when p is a float value).
 *  p = 0 is accepted and keeps nothing: every element is `in[i] * 0` (the
 *  infinite scale is never used).  A p so small that the dtype's 1/p is
 *  infinite (f16: below about 1/65520) makes kept elements infinite (NaN
 *  for a kept 0), and dropped ones `in[i] * 0` (a mask multiplied by that
 *  scale first would give NaN there).  `in` and `out` hold `count`
 *  elements of the dtype, aligned to its size, and are the same array (in
 *  place) or apart: arrays that partly overlap are refused; either may be
 *  NULL only when count is 0.  `out_capacity` is out's size in bytes.
 *  Returns `RNGTRK_OK`; `RNGTRK_E_INVALID_ARGUMENT` (NULL; `in` or `out`
 *  not aligned to the element size; `in` and `out` partly overlapping; a
 *  bad spec: struct_size, a non-zero
 *  byte past the fields this library knows, reserved, a distribution other
 *  than BERNOULLI, a dtype other than F32, F16 or BF16 (the message names
 *  it), p outside 0..1 or not finite, torch-eager-cuda's sm_count or
 *  max_threads_per_sm, threads above 64; an offset that is not a multiple
 *  of 4; numel < first + count); `RNGTRK_E_BUFFER_TOO_SMALL`
 *  (out_capacity < count * element size); `RNGTRK_E_OVERFLOW` (first +
 *  count passes 2^64; the triton layout's counter reaches 2^63).  A refused
 *  call writes nothing.  Added in 0.1. */
RNGTRK_API rngtrk_status rngtrk_dropout(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                        uint64_t first, uint64_t count, const void *in, void *out,
                                        size_t out_capacity);

/** `rngtrk_dropout` of the box from `start` of extent `local_shape` of an
 *  n-d tensor of `global_shape` (row-major, `ndim` dimensions,
 *  1 <= ndim <= RNGTRK_MAX_NDIM): element i of `in` and `out` (row-major in
 *  the box) takes the keep flag of its global row-major index, so every
 *  rank's box equals the same box of the whole tensor's dropout.  For the
 *  torch-eager-cuda layout the whole tensor's element count is the product
 *  of global_shape (spec->numel is not used), as `rngtrk_sample_slice`.
 *  `in` and `out` hold the box's elements and are the same array or apart,
 *  or NULL when the box is empty.  Returns as `rngtrk_dropout`, and
 *  `RNGTRK_E_INVALID_ARGUMENT` for a box outside the tensor, ndim 0 or
 *  above RNGTRK_MAX_NDIM, or a NULL shape; `RNGTRK_E_OVERFLOW` if the
 *  tensor has 2^64 elements or more.  Added in 0.1. */
RNGTRK_API rngtrk_status rngtrk_dropout_slice(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                              size_t ndim, const uint64_t *global_shape, const uint64_t *start,
                                              const uint64_t *local_shape, const void *in, void *out,
                                              size_t out_capacity);

/** The offset a tracker moves by when it draws a tensor of `numel`
 *  elements with `spec` (what the layout consumes): stateless
 *  4 * ceil(numel / E) (E = 2 for 64-bit dtypes, else 4); nvfuser 4;
 *  torch-eager-cuda 4 * ((numel - 1) / (256 * G * U) + 1), 0 when numel is
 *  0; triton 4 * ceil(numel / 4) (one counter per element).  The table:
 *  docs/streams.md.  Returns `RNGTRK_OK`, `RNGTRK_E_INVALID_ARGUMENT` or
 *  `RNGTRK_E_OVERFLOW`. */
RNGTRK_API rngtrk_status rngtrk_sample_offset_increment(const rngtrk_sample_spec *spec, uint64_t numel,
                                                        uint64_t *out);

/** The CPU code path generation uses here: "scalar", "avx2" or "avx512",
 *  chosen at load time from cpuid, or forced by the environment variable
 *  `RNGTRK_CPU=scalar|avx2|avx512` (a path the CPU lacks falls back to the
 *  best it has; off x86-64 it is always "scalar").  Every path gives the
 *  same bits.  Never NULL; static. */
RNGTRK_API const char *rngtrk_cpu_path(void);

/** Draws a 1-D tensor of `count` elements with `spec` from the tracker's
 *  active state and advances it by what the layout consumes
 *  (`rngtrk_sample_offset_increment`).  The state drawn from goes to
 *  `*out_before` if not NULL.  On any error nothing moves.  Returns as
 *  `rngtrk_sample`, plus `RNGTRK_E_OVERFLOW` if the offset would pass
 *  2^64 - 1.  For the torch-eager-cuda layout the tensor is the `count`
 *  elements (spec->numel is not used). */
RNGTRK_API rngtrk_status rngtrk_tracker_sample(rngtrk_tracker *tracker, const rngtrk_sample_spec *spec, uint64_t count,
                                               void *out, size_t out_capacity, rngtrk_philox_state *out_before);

/** Like `rngtrk_tracker_sample` for one box of an n-d tensor: every rank
 *  holding a box of the same tensor calls it with its own box; the active
 *  state advances by what the whole tensor consumes, the same on every
 *  rank. */
RNGTRK_API rngtrk_status rngtrk_tracker_sample_slice(rngtrk_tracker *tracker, const rngtrk_sample_spec *spec,
                                                     size_t ndim, const uint64_t *global_shape,
                                                     const uint64_t *start, const uint64_t *local_shape, void *out,
                                                     size_t out_capacity, rngtrk_philox_state *out_before);

/** `rngtrk_dropout_f32` of `count` elements from the tracker's active
 *  state, advancing it as `rngtrk_tracker_sample` would. */
RNGTRK_API rngtrk_status rngtrk_tracker_dropout_f32(rngtrk_tracker *tracker, const rngtrk_sample_spec *spec,
                                                    uint64_t count, const float *in, float *out,
                                                    rngtrk_philox_state *out_before);

/* ========================================================================
 * Distributed training (docs/distributed.md): key derivation, seeding
 * policies, rank-aware checkpoints, desync detection, PyTorch DTensor
 * offsets and boxes
 * ===================================================================== */

/** fold_in(state, d): the state (w0 | w1 << 32, w2 | w3 << 32) of
 *  Philox4x32-10(key(state->seed), counter = state->offset / 4 + d).  One
 *  step of PyTorch's stateless fold_in: torch.func._random.fold_in of the
 *  key (seed, offset / 4) is the key whose two words are this result's
 *  seed and offset as they are, so a chain of fold_in is not torch's
 *  (docs/pytorch.md).  Returns `RNGTRK_OK` or `RNGTRK_E_INVALID_ARGUMENT`
 *  (NULL). */
RNGTRK_API rngtrk_status rngtrk_fold_in(const rngtrk_philox_state *state, uint64_t d, rngtrk_philox_state *out);

/** How each rank's seeds are made. */
typedef enum rngtrk_seed_policy {
    RNGTRK_POLICY_MEGATRON = 0, /**< Megatron-LM main: seed + 100 pp (+ 10 dp), + 2718 + tp, + 1024 + 100 ep + etp,
                                     and the remat states */
    RNGTRK_POLICY_SLAPO = 1,    /**< slapo's set_random_seed */
    RNGTRK_POLICY_DERIVED = 2,  /**< ours: fold_in per mesh axis; recommended */
    RNGTRK_POLICY_RANGE_ = 0x7FFFFFFF /**< not a policy: any int is a valid value in C++ */
} rngtrk_seed_policy;

/** Flag of `rngtrk_tracker_seed_rank` (megatron, derived; slapo refuses
 *  it, its seeds always depend on dp): every seed differs per data-parallel
 *  rank. */
#define RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT 1
/** Flag of `rngtrk_tracker_seed_rank` (slapo; megatron and derived refuse
 *  it): the default state takes the tp seed. */
#define RNGTRK_SEED_ALWAYS_ENABLE_TP_SEED 2

/** The name of `policy`: "megatron", "slapo" or "derived", the spelling
 *  every rngtrk tool and binding uses.  NULL for a value that is not a
 *  policy.  Policies are numbered from 0 without gaps, so asking for 0, 1,
 *  2, ... until NULL lists them all.  The string is static.  Never fails
 *  otherwise.  Added in 0.1. */
RNGTRK_API const char *rngtrk_seed_policy_name(rngtrk_seed_policy policy);

/** Writes the policy called `name` (NUL-terminated; the exact spelling of
 *  `rngtrk_seed_policy_name`) to `*out`.  Returns `RNGTRK_OK`, or
 *  `RNGTRK_E_INVALID_ARGUMENT` (NULL, or no policy has that name: the
 *  message lists the names; `*out` is left as it was).  Added in 0.1. */
RNGTRK_API rngtrk_status rngtrk_seed_policy_from_name(const char *name, rngtrk_seed_policy *out);

/** The name of `flag`, which must be exactly one known RNGTRK_SEED_* bit:
 *  "dp-random-init" (RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT) or
 *  "always-enable-tp-seed" (RNGTRK_SEED_ALWAYS_ENABLE_TP_SEED).  NULL for 0,
 *  for a bit this library does not know, and for several bits at once:
 *  asking for each of the 32 bits lists the flags.  The string is static.
 *  Added in 0.1. */
RNGTRK_API const char *rngtrk_seed_flag_name(uint32_t flag);

/** A rank's coordinates in the parallel layout.  A growable struct: fill it
 *  with `rngtrk_parallel_rank_init` (coordinates 0, remat axes off), then
 *  set them.  The remat axes are Megatron-LM's weight-rematerialisation
 *  groups (GTP_remat for dense weights, EGTP_remat for expert weights): a
 *  group size of 0 or 1 means the axis is off (no state; its rank must be
 *  0); from 2 on, the rank must be below the size.  A caller whose struct
 *  ends at `etp` (24 bytes) has both axes off. */
typedef struct rngtrk_parallel_rank {
    uint32_t struct_size;     /**< the caller's sizeof(rngtrk_parallel_rank), set by the init function */
    uint32_t tp;              /**< tensor-parallel rank */
    uint32_t pp;              /**< pipeline-parallel rank */
    uint32_t dp;              /**< data-parallel rank */
    uint32_t ep;              /**< expert-parallel rank */
    uint32_t etp;             /**< expert-tensor-parallel rank */
    uint32_t gtp_remat;       /**< rank in the GTP_remat group (added in 0.1) */
    uint32_t gtp_remat_size;  /**< size of the GTP_remat group; 0 or 1: off (added in 0.1) */
    uint32_t egtp_remat;      /**< rank in the expert GTP_remat group (added in 0.1) */
    uint32_t egtp_remat_size; /**< size of the expert GTP_remat group; 0 or 1: off (added in 0.1) */
} rngtrk_parallel_rank;

/** The size of the first published `rngtrk_parallel_rank` (up to `etp`). */
#define RNGTRK_PARALLEL_RANK_MIN_SIZE 24

/** Fills the caller's rank of `rank_size` bytes with struct_size and zeros
 *  (exactly `rank_size` bytes are written).  Returns `RNGTRK_OK` or
 *  `RNGTRK_E_INVALID_ARGUMENT` (NULL; a size below
 *  `RNGTRK_PARALLEL_RANK_MIN_SIZE` or past 2^32 - 1). */
RNGTRK_API rngtrk_status rngtrk_parallel_rank_init(rngtrk_parallel_rank *rank, size_t rank_size);

/** `rngtrk_parallel_rank_init` with the size the caller compiled. */
#define RNGTRK_PARALLEL_RANK_INIT(rank) rngtrk_parallel_rank_init((rank), sizeof *(rank))

/** Seeds the tracker as `policy` seeds this rank: the default state becomes
 *  (default seed, 0) and the named states are replaced (set_states) by the
 *  policy's, in the order upstream adds them: megatron and derived give
 *  "data-parallel-rng", "model-parallel-rng", "expert-parallel-rng", then
 *  "gtp-remat-rng" when the GTP_remat axis is on and "egtp-remat-rng" when
 *  the expert one is; slapo gives "model-parallel-rng".  The formulas:
 *  docs/distributed.md.  The tracker records the origin (policy, seed,
 *  flags, rank) and writes it into its checkpoints.  Returns `RNGTRK_OK`;
 *  `RNGTRK_E_INVALID_ARGUMENT` (NULL; an unknown policy or flag; a flag the
 *  policy does not read, such as ALWAYS_ENABLE_TP_SEED with megatron; a
 *  remat rank not below its group's size, or not 0 in a group of size 0 or
 *  1; a remat axis on with slapo, which has no remat state: the message
 *  names the problem and the values; a bad struct_size);
 *  `RNGTRK_E_DUPLICATE_SEED` (two named states of this rank would share a
 *  seed: the policy collides here, nothing changes);
 *  `RNGTRK_E_FORK_ORDER` (an open fork's state is not among the policy's,
 *  as set_states). */
RNGTRK_API rngtrk_status rngtrk_tracker_seed_rank(rngtrk_tracker *tracker, rngtrk_seed_policy policy, uint64_t seed,
                                                  const rngtrk_parallel_rank *rank, uint32_t flags);

/** Who a tracker's states belong to: set by `rngtrk_tracker_seed_rank`,
 *  written into checkpoints (format version 2, or 3 with a remat axis on)
 *  and checked on load.  A growable struct: initialise it with
 *  `rngtrk_origin_init` before `rngtrk_tracker_get_origin` fills it.  It
 *  records every coordinate a policy uses; a remat axis that is off reads
 *  0 and 0 (a size of 1 is recorded as 0). */
typedef struct rngtrk_origin {
    uint32_t struct_size; /**< the caller's sizeof(rngtrk_origin), set by the init function */
    uint32_t present;     /**< 0: no owner (never seeded by a policy); the other fields are 0 */
    uint32_t policy;      /**< an rngtrk_seed_policy */
    uint32_t flags;       /**< RNGTRK_SEED_* */
    uint64_t seed;        /**< the base seed */
    uint32_t tp;          /**< the rank's coordinates, as in rngtrk_parallel_rank */
    uint32_t pp;          /**< pipeline-parallel rank */
    uint32_t dp;          /**< data-parallel rank */
    uint32_t ep;          /**< expert-parallel rank */
    uint32_t etp;         /**< expert-tensor-parallel rank */
    uint32_t reserved;    /**< 0 */
    uint32_t gtp_remat;       /**< rank in the GTP_remat group (added in 0.1; 0 in a 48-byte struct) */
    uint32_t gtp_remat_size;  /**< its size; 0 when the axis is off (added in 0.1) */
    uint32_t egtp_remat;      /**< rank in the expert GTP_remat group (added in 0.1) */
    uint32_t egtp_remat_size; /**< its size; 0 when the axis is off (added in 0.1) */
} rngtrk_origin;

/** The size of the first published `rngtrk_origin` (up to `reserved`). */
#define RNGTRK_ORIGIN_MIN_SIZE 48

/** Fills the caller's origin of `origin_size` bytes with struct_size and
 *  zeros.  Returns as `rngtrk_parallel_rank_init` (minimum
 *  `RNGTRK_ORIGIN_MIN_SIZE`). */
RNGTRK_API rngtrk_status rngtrk_origin_init(rngtrk_origin *origin, size_t origin_size);

/** `rngtrk_origin_init` with the size the caller compiled. */
#define RNGTRK_ORIGIN_INIT(origin) rngtrk_origin_init((origin), sizeof *(origin))

/** Copies the tracker's origin into `*out`, whose struct_size must be set
 *  (by `rngtrk_origin_init`): exactly struct_size bytes are written, zero
 *  past the fields this library knows.  Returns `RNGTRK_OK` or
 *  `RNGTRK_E_INVALID_ARGUMENT` (NULL, or a struct_size below
 *  `RNGTRK_ORIGIN_MIN_SIZE`). */
RNGTRK_API rngtrk_status rngtrk_tracker_get_origin(const rngtrk_tracker *tracker, rngtrk_origin *out);

/** A 64-bit fingerprint of the states a checkpoint records (default and
 *  named states, in order; not the origin): equal trackers give equal
 *  digests, so ranks can compare trackers with one allgather of 8 bytes.
 *  Returns `RNGTRK_OK` or `RNGTRK_E_INVALID_ARGUMENT`. */
RNGTRK_API rngtrk_status rngtrk_tracker_digest(const rngtrk_tracker *tracker, uint64_t *out);

/** The kind of a DTensor placement on one mesh dimension. */
typedef enum rngtrk_placement_kind {
    RNGTRK_PLACEMENT_REPLICATE = 0,      /**< Replicate() */
    RNGTRK_PLACEMENT_SHARD = 1,          /**< Shard(dim) */
    RNGTRK_PLACEMENT_PARTIAL = 2,        /**< Partial(): for random ops, like Replicate */
    RNGTRK_PLACEMENT_RANGE_ = 0x7FFFFFFF /**< not a kind: any int is a valid value in C++ */
} rngtrk_placement_kind;

/** A DTensor placement on one mesh dimension (an array element; its layout
 *  is frozen). */
typedef struct rngtrk_placement {
    uint32_t kind; /**< an rngtrk_placement_kind */
    uint32_t dim;  /**< the tensor dimension, for RNGTRK_PLACEMENT_SHARD */
} rngtrk_placement;

/** Which first-shard size DTensor offsets use. */
typedef enum rngtrk_offset_rule {
    RNGTRK_OFFSET_RULE_TORCH = 0,          /**< upstream PyTorch, byte for byte */
    RNGTRK_OFFSET_RULE_EXACT = 1,          /**< corrected: a dim sharded twice is chunked twice */
    RNGTRK_OFFSET_RULE_RANGE_ = 0x7FFFFFFF /**< not a rule: any int is a valid value in C++ */
} rngtrk_offset_rule;

/** PyTorch's OffsetBasedRNGTracker offsets for a random op on a DTensor of
 *  `global_shape` (ndim dims) placed on a mesh (mesh_ndim dims of
 *  mesh_shape; this rank at `coord`; one placement per mesh dim), starting
 *  from `offset`: `*pre` = offset + round_up4(shard_linear_idx * numel of
 *  the first shard), `*post` = offset + round_up4(numel).  Returns
 *  `RNGTRK_OK`; `RNGTRK_E_INVALID_ARGUMENT` (NULL, coord outside the mesh,
 *  Shard of a dim the tensor lacks, unknown kind or rule);
 *  `RNGTRK_E_OVERFLOW`. */
RNGTRK_API rngtrk_status rngtrk_dtensor_offsets(size_t mesh_ndim, const uint64_t *mesh_shape, const uint64_t *coord,
                                                const rngtrk_placement *placements, size_t ndim,
                                                const uint64_t *global_shape, uint64_t offset, rngtrk_offset_rule rule,
                                                uint64_t *pre, uint64_t *post);

/** This rank's box of a DTensor: `start` and `local_shape` (ndim each) as
 *  DTensor computes them (placements in mesh-dim order, each Shard cutting
 *  the current range like torch.chunk; Replicate and Partial keep it).
 *  Feed them to `rngtrk_sample_slice` for sharding-invariant values.
 *  Returns as `rngtrk_dtensor_offsets`. */
RNGTRK_API rngtrk_status rngtrk_dtensor_local_box(size_t mesh_ndim, const uint64_t *mesh_shape,
                                                  const uint64_t *coord, const rngtrk_placement *placements,
                                                  size_t ndim, const uint64_t *global_shape, uint64_t *start,
                                                  uint64_t *local_shape);

/* ========================================================================
 * The reservation ledger (docs/ledger.md): catching reused random numbers
 * and proving that a recomputation replays the forward's draws exactly
 * ===================================================================== */

/** What the ledger does with a reservation that overlaps an earlier one. */
typedef enum rngtrk_ledger_mode {
    RNGTRK_LEDGER_OFF = 0,              /**< no ledger (the default): nothing recorded, no cost */
    RNGTRK_LEDGER_RAISE = 1,            /**< refuse it: RNGTRK_E_STREAM_REUSE, nothing changes */
    RNGTRK_LEDGER_RECORD = 2,           /**< hand it out and record the overlap */
    RNGTRK_LEDGER_RANGE_ = 0x7FFFFFFF   /**< not a mode: any int is a valid value in C++ */
} rngtrk_ledger_mode;

/** One recorded overlap (RNGTRK_LEDGER_RECORD): a later reservation whose
 *  offset range on `seed` overlapped an earlier one.  Ranges are offsets
 *  [begin, end); sequences number the reservations from 0. */
typedef struct rngtrk_overlap {
    uint64_t seed;
    uint64_t earlier_begin, earlier_end, earlier_sequence; /**< 0 when earlier_known is 0 */
    uint64_t later_begin, later_end, later_sequence;
    uint32_t earlier_known; /**< 0: the earlier reservation had left the ledger's log (its capacity) */
    uint32_t reserved;      /**< 0 */
    char name[RNGTRK_MAX_NAME_BYTES + 1]; /**< the later reservation's state; "" for the default state */
} rngtrk_overlap;

/** Turns the tracker's ledger on (or off) and starts it empty.  While on,
 *  every reservation — rngtrk_tracker_advance and every tracker-level draw
 *  — records (state, seed, offset range, sequence number) and is checked:
 *  outside a replay, a range overlapping an earlier one on the same seed is
 *  refused (RAISE: RNGTRK_E_STREAM_REUSE naming the state, both ranges and
 *  the earlier reservation's number; nothing changes) or recorded (RECORD).
 *  `capacity` (0: 2^20) bounds the log of reservations replays compare
 *  against (oldest dropped first) and the merged ranges kept per seed (past
 *  it, new ranges are no longer recorded).  The ledger survives
 *  set_states, reset and load, and is not written into checkpoints.
 *  Returns `RNGTRK_OK` or `RNGTRK_E_INVALID_ARGUMENT` (unknown mode, a
 *  replay open). */
RNGTRK_API rngtrk_status rngtrk_tracker_set_ledger(rngtrk_tracker *tracker, rngtrk_ledger_mode mode, uint64_t capacity);

/** A position in the ledger: the number of the next reservation.  A region
 *  runs from a mark to the next mark taken (or to now).  Returns
 *  `RNGTRK_OK` or `RNGTRK_E_INVALID_ARGUMENT` (ledger off, a replay open). */
RNGTRK_API rngtrk_status rngtrk_tracker_ledger_mark(rngtrk_tracker *tracker, uint64_t *out);

/** Starts replaying the region of `mark`: until rngtrk_tracker_replay_end,
 *  every reservation must equal, in order, the one recorded at the same
 *  place of the region (same state, seed and range); the first that differs
 *  fails with RNGTRK_E_REPLAY_MISMATCH (expected and actual in the message)
 *  and changes nothing.  This is the contract of activation recomputation:
 *  restore the states saved before the forward, replay, end.  Returns
 *  `RNGTRK_OK`, `RNGTRK_E_INVALID_ARGUMENT` (ledger off, not a mark, a
 *  replay already open) or `RNGTRK_E_REPLAY_MISMATCH` (the log no longer
 *  holds the region). */
RNGTRK_API rngtrk_status rngtrk_tracker_replay_begin(rngtrk_tracker *tracker, uint64_t mark);

/** The ledger's position in `*out`: the number of the next reservation,
 *  or during a replay the number of the reservation the replay is at (its
 *  draws stand for those: a recompute nested in a replayed one replays
 *  from there).  Takes no mark: no region ends there.  Returns `RNGTRK_OK`
 *  or `RNGTRK_E_INVALID_ARGUMENT` (ledger off, `out` NULL). */
RNGTRK_API rngtrk_status rngtrk_tracker_ledger_position(const rngtrk_tracker *tracker, uint64_t *out);

/** Starts a replay that may stop early: until rngtrk_tracker_replay_end,
 *  every reservation must equal, in order, the one recorded at the same
 *  place from `position` on (a position or a mark taken earlier), as far as
 *  the replay goes; rngtrk_tracker_replay_end then accepts fewer
 *  reservations than were recorded since.  For recomputation whose region
 *  has no known end (torch's activation checkpointing, which may also stop
 *  a recompute once it has what backward needs: docs/ledger.md).  Returns
 *  `RNGTRK_OK`, `RNGTRK_E_INVALID_ARGUMENT` (ledger off, a position past
 *  the ledger's, a replay already open) or `RNGTRK_E_REPLAY_MISMATCH` (the
 *  log no longer holds the reservations from `position`). */
RNGTRK_API rngtrk_status rngtrk_tracker_replay_prefix_begin(rngtrk_tracker *tracker, uint64_t position);

/** Ends the open replay; `RNGTRK_E_REPLAY_MISMATCH` if a replay begun by
 *  rngtrk_tracker_replay_begin made fewer reservations than the region
 *  holds (the replay ends either way). */
RNGTRK_API rngtrk_status rngtrk_tracker_replay_end(rngtrk_tracker *tracker);

/** The overlaps RECORD mode recorded: `*count` is set to their number;
 *  up to `capacity` are written to `out` (NULL with capacity 0 asks for the
 *  count).  `RNGTRK_E_BUFFER_TOO_SMALL` when capacity < count. */
RNGTRK_API rngtrk_status rngtrk_tracker_ledger_overlaps(const rngtrk_tracker *tracker, rngtrk_overlap *out,
                                                        size_t capacity, size_t *count);

/* ========================================================================
 * CUDA (docs/cuda.md)
 *
 * Device memory in, device memory out, on the caller's stream (`stream` is
 * a cudaStream_t; NULL means the default stream): launches are
 * asynchronous, with no hidden synchronisation and no allocation.  The bits
 * equal rngtrk_sample's.  Without a usable device (or in a library built
 * without CUDA) every function returns RNGTRK_E_UNAVAILABLE and
 * rngtrk_last_error() says why.
 * ===================================================================== */

/** `RNGTRK_OK` if the CUDA functions can run here, else
 *  `RNGTRK_E_UNAVAILABLE`. */
RNGTRK_API rngtrk_status rngtrk_cuda_available(void);

/** `rngtrk_sample` into device memory `device_out` on `stream`.  Statuses
 *  as `rngtrk_sample`, plus `RNGTRK_E_UNAVAILABLE` (no device, or a launch
 *  failed).  A misaligned pointer is refused before any launch: on the
 *  device it would fault and poison the process's CUDA context. */
RNGTRK_API rngtrk_status rngtrk_cuda_sample(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                            uint64_t first, uint64_t count, void *device_out, size_t out_capacity,
                                            void *stream);

/** `rngtrk_sample_slice` into device memory on `stream`. */
RNGTRK_API rngtrk_status rngtrk_cuda_sample_slice(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                                  size_t ndim, const uint64_t *global_shape, const uint64_t *start,
                                                  const uint64_t *local_shape, void *device_out, size_t out_capacity,
                                                  void *stream);

/** `rngtrk_dropout_f32` with `device_in` and `device_out` in device memory. */
RNGTRK_API rngtrk_status rngtrk_cuda_dropout_f32(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                                 uint64_t first, uint64_t count, const float *device_in,
                                                 float *device_out, void *stream);

/** `rngtrk_dropout` with `device_in` and `device_out` in device memory, on
 *  `stream`: one kernel that reads the input and writes the output (no mask
 *  in memory), the same bits as the CPU (which NaN aside: a GPU's
 *  multiply writes its canonical NaN, with its own sign).  Statuses as `rngtrk_dropout`, plus
 *  `RNGTRK_E_UNAVAILABLE` (no device, a library built without CUDA, or a
 *  launch failed).  Every check, misaligned pointers included, happens
 *  before any launch.  Added in 0.1. */
RNGTRK_API rngtrk_status rngtrk_cuda_dropout(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                             uint64_t first, uint64_t count, const void *device_in, void *device_out,
                                             size_t out_capacity, void *stream);

/** `rngtrk_dropout_slice` with `device_in` and `device_out` in device
 *  memory, on `stream`, in one kernel.  Statuses as `rngtrk_dropout_slice`,
 *  plus `RNGTRK_E_UNAVAILABLE`.  Added in 0.1. */
RNGTRK_API rngtrk_status rngtrk_cuda_dropout_slice(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                                   size_t ndim, const uint64_t *global_shape, const uint64_t *start,
                                                   const uint64_t *local_shape, const void *device_in,
                                                   void *device_out, size_t out_capacity, void *stream);

/** Graph-safe sampling: the kernel reads the state from `device_state` (two
 *  uint64_t in device memory: seed, offset) when it runs, not when it is
 *  launched, so a captured CUDA graph draws from the current state on every
 *  replay.  Pair it with `rngtrk_cuda_advance_graphsafe` in the same
 *  capture. */
RNGTRK_API rngtrk_status rngtrk_cuda_sample_graphsafe(const uint64_t *device_state, const rngtrk_sample_spec *spec,
                                                      uint64_t first, uint64_t count, void *device_out,
                                                      size_t out_capacity, void *stream);

/** Adds `increment` rounded up to a multiple of 4 to `device_state[1]` on
 *  the device, in stream order (PyTorch's philox_cuda_state under
 *  capture). */
RNGTRK_API rngtrk_status rngtrk_cuda_advance_graphsafe(uint64_t *device_state, uint64_t increment, void *stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RNGTRK_H */
