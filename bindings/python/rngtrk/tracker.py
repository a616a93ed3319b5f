# SPDX-License-Identifier: Apache-2.0
"""Tracker: named Philox states with TransformerEngine / Megatron-LM method names.

A thin layer over the C tracker: every rule (distinct seeds, fork order,
all-or-nothing updates, the checkpoint format) is the library's, so Python,
C and Rust behave the same.  docs/tracker.md states the rules.
"""
import contextlib
import os
import threading
import weakref
from collections import namedtuple

from ._library import ffi, lib
from ._names import dtype_size
from .buffers import pointer
from .distributed import origin_of, policy_value
from .errors import check, invalid
from .generation import fill, host_output
from .sampling import dropout_args, resolve_dtype, shapes, spec_for
from .state import PhiloxState, _u64, as_state

_advance = lib.rngtrk_tracker_advance
_new_tuple = tuple.__new__  # builds a PhiloxState from trusted C values, skipping checks
DEFAULT_FORK_NAME = "model-parallel-rng"  # Megatron-LM's and TransformerEngine's default
# Every open Tracker: rngtrk.torch's torch.get_rng_state() carries their
# states (a tracker's first draw may come after torch saved the state).
OPEN_TRACKERS = weakref.WeakSet()


def encode_name(name):
    """The NUL-terminated UTF-8 bytes the C layer takes; the library checks
    length and emptiness itself, the binding what C cannot see."""
    if not isinstance(name, str):
        raise TypeError(f"a state name must be a str, not {type(name).__name__}")
    if "\0" in name:
        raise invalid(f"state name {name!r} contains a NUL character")
    try:
        return name.encode("utf-8")
    except UnicodeEncodeError:
        raise invalid(f"state name {name!r} is not valid Unicode (lone surrogate)") from None


class _Fork:
    """The context manager returned by Tracker.fork: forks on entry and
    restores on exit, also when the body raises."""

    __slots__ = ("_tracker", "_name", "_text")

    def __init__(self, tracker, name):
        self._tracker = tracker
        self._name = encode_name(name)
        self._text = name

    # Tracker._call's rule (the C call under the lock on a live handle, then
    # check), written out flat as Tracker.advance is: every random region
    # forks, and the extra Python call costs a fork about 0.2 us of its 1.4
    # (bench/bench_python.py).
    def __enter__(self):
        tracker = self._tracker
        with tracker._lock:
            status = lib.rngtrk_tracker_fork(tracker._live(), self._name)
            if not status:
                tracker._open_forks.append(self._text)
        if status:
            check(status)
        return tracker

    def __exit__(self, exc_type, exc, traceback):
        tracker = self._tracker
        with tracker._lock:
            status = lib.rngtrk_tracker_restore(tracker._live(), self._name)
            if not status:
                tracker._open_forks.pop()
        if status:
            # If the body raised too, this error carries it as __context__.
            check(status)
        return False


# One overlap the ledger recorded in "record" mode: the later reservation's
# state name ("" for the default state), the seed, and both offset ranges
# with their sequence numbers (earlier_* None when the ledger's log no
# longer held the earlier one).
LedgerOverlap = namedtuple("LedgerOverlap", "name seed earlier_begin earlier_end earlier_sequence "
                                            "later_begin later_end later_sequence")
_LEDGER_MODES = {"off": lib.RNGTRK_LEDGER_OFF, "raise": lib.RNGTRK_LEDGER_RAISE, "record": lib.RNGTRK_LEDGER_RECORD}


def _free_handle(handle, _free=lib.rngtrk_tracker_free, _lib=lib):
    """The destructor ffi.gc runs for a tracker's handle.  It holds `lib`:
    cffi closes the library when its lib object goes, and at interpreter
    exit the modules that held it are cleared while trackers kept in other
    modules' globals are still to be collected (their free then jumped into
    unmapped code: a segfault at exit on Python 3.14)."""
    _free(handle)


class Tracker:
    """Named Philox states: a default state plus named ones, forks, checkpoints.

    Use `with Tracker() as t:` or call close(); the handle is also freed when
    the object is garbage collected.  Calls on one tracker from several
    threads are serialised by a lock."""

    def __init__(self):
        out = ffi.new("rngtrk_tracker **")
        check(lib.rngtrk_tracker_new(out))
        self._handle = ffi.gc(out[0], _free_handle)
        self._lock = threading.Lock()
        self._scratch = ffi.new("rngtrk_philox_state *")  # an out-parameter, used under the lock
        self._ledger_mode = "off"  # as set_ledger last set it (rngtrk.torch asks it on every torch RNG save)
        self._open_forks = []  # names of the forks entered through fork(), outermost first
        OPEN_TRACKERS.add(self)

    # -- lifetime ---------------------------------------------------------
    def close(self):
        """Frees the C tracker now.  Later calls raise InvalidArgumentError;
        closing twice is allowed."""
        with self._lock:
            if self._handle is not None:
                ffi.release(self._handle)
                self._handle = None
        OPEN_TRACKERS.discard(self)

    @property
    def closed(self):
        return self._handle is None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, traceback):
        self.close()
        return False

    def _live(self):
        handle = self._handle
        if handle is None:
            raise invalid("the tracker is closed")
        return handle

    def _call(self, function, *args):
        """Runs function(handle, *args), a C call on this tracker, under the
        lock, and raises the library's error for a failed status
        (InvalidArgumentError once the tracker is closed)."""
        with self._lock:
            status = function(self._live(), *args)
        if status:
            check(status)  # the message is thread-local: no lock needed

    def last_error(self):
        """The message of the most recent failed call on this tracker, from
        whichever thread made it ("" if none failed yet): the text its
        exception carried.  (Exceptions already carry their message; this is
        for code that learns of a failure some other way.)"""
        text = ffi.new("char[]", lib.RNGTRK_ERROR_MESSAGE_CAPACITY)
        length = ffi.new("size_t *")
        with self._lock:
            check(lib.rngtrk_tracker_last_error(self._live(), text, len(text), length))
        return ffi.string(text, length[0]).decode("utf-8")

    def _read_state(self, call, *args):
        """Calls `call(handle, *args, &out)` and returns out as a PhiloxState.
        (advance runs this on every draw, so it avoids needless layers.)"""
        with self._lock:
            handle = self._handle
            if handle is None:
                raise invalid("the tracker is closed")
            scratch = self._scratch
            status = call(handle, *args, scratch)
            if status:
                check(status)
            return _new_tuple(PhiloxState, (scratch.seed, scratch.offset))

    # -- TransformerEngine / Megatron-LM interface ------------------------
    def add(self, name, seed):
        """Registers the named state (seed, 0), also while forks are open (as
        Megatron-LM allows).  Raises DuplicateNameError, DuplicateSeedError
        (another named state uses `seed`) or InvalidArgumentError; a failed
        add changes nothing."""
        encoded, seed = encode_name(name), _u64(seed, "seed")
        self._call(lib.rngtrk_tracker_add, encoded, seed)

    def fork(self, name=DEFAULT_FORK_NAME):
        """A context manager: makes the named state active inside the `with`
        block and restores on exit, even when the block raises.  Forks nest,
        and a name that is already open may be forked again (Megatron-LM's
        double fork): the state advances in place, so the inner fork goes on
        with that name's one stream and no number is drawn twice.  Raises
        UnknownNameError; ForkOrderError on exit if this fork is not the
        innermost open one."""
        return _Fork(self, name)

    def get_states(self):
        """A new dict {name: 16 bytes} of every named state, in insertion
        order: a snapshot that later forks and draws do not change."""
        with self._lock:
            handle = self._live()
            states = {}
            name_out = ffi.new("const char **")
            raw = ffi.new("uint8_t[16]")
            for index in range(self._count(handle)):
                check(lib.rngtrk_tracker_name_at(handle, index, name_out))
                check(lib.rngtrk_tracker_get_state(handle, name_out[0], self._scratch))
                check(lib.rngtrk_state_to_bytes(self._scratch, raw))
                states[ffi.string(name_out[0]).decode("utf-8")] = bytes(ffi.buffer(raw))
            return states

    def set_states(self, states):
        """Replaces every named state by those of the mapping {name: state}
        (states as 16 bytes or PhiloxState), in its order; the default state
        is kept.  Inside forks (Megatron-LM allows it) the open forks' names
        must stay (ForkOrderError otherwise).  All or nothing: on any error
        nothing changes."""
        if not hasattr(states, "items"):
            raise TypeError(f"set_states takes a mapping of name to state, not {type(states).__name__}")
        pairs = [(encode_name(name), as_state(state)) for name, state in states.items()]
        names = [ffi.new("char[]", encoded) for encoded, _ in pairs]
        c_names = ffi.new("const char *[]", names) if pairs else ffi.NULL
        c_states = (ffi.new("rngtrk_philox_state[]", [(s.seed, s.offset) for _, s in pairs])
                    if pairs else ffi.NULL)
        self._call(lib.rngtrk_tracker_set_states, c_names, c_states, len(pairs))

    def reset(self):
        """Drops every named state and seed; the default state becomes (0, 0).
        Raises ForkOrderError while a fork is open."""
        self._call(lib.rngtrk_tracker_reset)

    def is_initialized(self):
        """Whether any named state exists (Megatron-LM's is_initialized)."""
        return len(self) > 0

    # -- more state access ------------------------------------------------
    def manual_seed(self, seed):
        """Sets the default state to (seed, 0), like torch.manual_seed."""
        seed = _u64(seed, "seed")
        self._call(lib.rngtrk_tracker_manual_seed, seed)

    def active_state(self):
        """The innermost forked state, or the default state outside any fork."""
        return self._read_state(lib.rngtrk_tracker_active_state)

    def advance(self, increment):
        """Reserves `increment` outputs of the active state and returns the
        state to draw them from (the state before the advance).  The offset
        moves by `increment` rounded up to a multiple of 4.  Raises
        RngtrkOverflowError past 2**64 - 1 (nothing changes)."""
        # Called for every random op, so written out flat (see bench/bench_python.py).
        increment = _u64(increment, "increment")
        with self._lock:
            handle = self._handle
            if handle is None:
                raise invalid("the tracker is closed")
            scratch = self._scratch
            status = _advance(handle, increment, scratch)
            if status:
                check(status)
            return _new_tuple(PhiloxState, (scratch.seed, scratch.offset))

    def get_state(self, name):
        """The named state as a PhiloxState (UnknownNameError if absent)."""
        return self._read_state(lib.rngtrk_tracker_get_state, encode_name(name))

    def set_state(self, name, state):
        """Replaces the named state (allowed while it is forked); `state` is a
        PhiloxState or its 16 bytes."""
        encoded, state = encode_name(name), as_state(state)
        self._call(lib.rngtrk_tracker_set_state, encoded, state._as_c())

    def get_default(self):
        """The default state (active outside any fork)."""
        return self._read_state(lib.rngtrk_tracker_get_default)

    def set_default(self, state):
        """Replaces the default state, e.g. by torch.cuda.get_rng_state()."""
        state = as_state(state)
        self._call(lib.rngtrk_tracker_set_default, state._as_c())

    @property
    def open_forks(self):
        """The names of the forks open through fork(), outermost first (a
        fork entered through the C API directly is not among them)."""
        return tuple(self._open_forks)

    @property
    def fork_depth(self):
        """The number of open forks (0 outside any fork)."""
        out = ffi.new("size_t *")
        self._call(lib.rngtrk_tracker_fork_depth, out)
        return out[0]

    def names(self):
        """The names of the named states, in insertion order."""
        with self._lock:
            handle = self._live()
            name_out = ffi.new("const char **")
            names = []
            for index in range(self._count(handle)):
                check(lib.rngtrk_tracker_name_at(handle, index, name_out))
                names.append(ffi.string(name_out[0]).decode("utf-8"))
            return names

    def _count(self, handle):
        out = ffi.new("size_t *")
        check(lib.rngtrk_tracker_count(handle, out))
        return out[0]

    def __len__(self):
        with self._lock:
            return self._count(self._live())

    def __contains__(self, name):
        if not isinstance(name, str) or "\0" in name:
            return False
        try:
            encoded = name.encode("utf-8")
        except UnicodeEncodeError:
            return False
        with self._lock:
            return lib.rngtrk_tracker_get_state(self._live(), encoded, self._scratch) == lib.RNGTRK_OK

    def __iter__(self):
        return iter(self.names())

    def __repr__(self):
        if self._handle is None:
            return "<rngtrk.Tracker closed>"
        return f"<rngtrk.Tracker default={self.get_default()!r} names={self.names()!r}>"

    # -- checkpoints ------------------------------------------------------
    def save(self):
        """The checkpoint bytes (docs/checkpoint-format.md).  Open forks are
        not recorded; named states are recorded with their live values."""
        length = ffi.new("size_t *")
        with self._lock:
            handle = self._live()
            check(lib.rngtrk_tracker_save(handle, ffi.NULL, 0, length))
            buffer = ffi.new("uint8_t[]", length[0])
            check(lib.rngtrk_tracker_save(handle, buffer, length[0], length))
        return bytes(ffi.buffer(buffer, length[0]))

    def load(self, data, any_rank=False):
        """Replaces the default and named states by those of checkpoint bytes
        (bytes, bytearray, memoryview, numpy uint8 array).  Everything is
        validated first: on CorruptCheckpointError, UnsupportedVersionError,
        WrongRankError (a checkpoint of another rank; any_rank=True takes it)
        or ForkOrderError the tracker is exactly as before."""
        try:
            view = memoryview(data)
        except TypeError:
            raise TypeError(f"load takes checkpoint bytes, not {type(data).__name__}") from None
        if not view.c_contiguous:
            raise invalid("checkpoint bytes must be C-contiguous")
        source = ffi.from_buffer("uint8_t[]", view) if view.nbytes else ffi.NULL
        if any_rank:
            self._call(lib.rngtrk_tracker_load_flags, source, view.nbytes, lib.RNGTRK_LOAD_ANY_RANK)
        else:
            self._call(lib.rngtrk_tracker_load, source, view.nbytes)

    def save_file(self, path):
        """Saves the checkpoint to `path` crash-safely (temporary file, fsync,
        rename): after a crash the file is the old checkpoint or the new one."""
        encoded = os.fsencode(path)
        if b"\0" in encoded:
            raise invalid("path contains a NUL byte")
        self._call(lib.rngtrk_tracker_save_file, encoded)

    def load_file(self, path, any_rank=False):
        """Loads the checkpoint file at `path` (see load); header checked first."""
        encoded = os.fsencode(path)
        if b"\0" in encoded:
            raise invalid("path contains a NUL byte")
        self._call(lib.rngtrk_tracker_load_file, encoded, lib.RNGTRK_LOAD_ANY_RANK if any_rank else 0)

    # -- drawing from the active state ------------------------------------
    def random_u32(self, count, out=None):
        """Reserves `count` outputs of the active state (advance) and returns
        them as uint32: written into `out` if given (a C-contiguous, writable
        uint32 numpy array of `count` elements), else into a new array.  `out`
        is checked before the state moves."""
        result, buffer = host_output(count, out, "u32")
        fill(lib.rngtrk_random_u32, "u32", self.advance(count), 0, buffer)
        return result

    def sample(self, count, out=None, *, layout="stateless", dist="uniform", dtype=None, **params):
        """Draws a 1-D tensor of `count` elements (see rngtrk.sample) from the
        active state and advances it by what the layout consumes; returns
        the output.  `out` is checked before the state moves."""
        dtype = resolve_dtype(out, dtype)
        spec = spec_for("Tracker.sample", layout, dist, dtype, params)
        result, buffer = host_output(count, out, dtype)
        self._call(lib.rngtrk_tracker_sample, spec, buffer.count, pointer(buffer), buffer.count * dtype_size(dtype),
                   ffi.NULL)
        return result

    def sample_slice(self, global_shape, start, local_shape, out=None, *, layout="stateless", dist="uniform",
                     dtype=None, **params):
        """This rank's box of a tensor (see rngtrk.sample_slice), drawn from the
        active state, which advances by what the whole tensor consumes: the
        same on every rank holding a box of it."""
        dtype = resolve_dtype(out, dtype)
        spec = spec_for("Tracker.sample_slice", layout, dist, dtype, params)
        ndim, c_dims, count, box = shapes(global_shape, start, local_shape)
        result, buffer = host_output(count, out, dtype)
        self._call(lib.rngtrk_tracker_sample_slice, spec, ndim, c_dims[0], c_dims[1], c_dims[2], pointer(buffer),
                   buffer.count * dtype_size(dtype), ffi.NULL)
        return result.reshape(box) if out is None else result

    def dropout(self, x, out=None, *, p, layout="stateless"):
        """Dropout of the f32 values `x` (numpy array or CPU tensor) with keep
        probability `p`, from the active state, which advances as a draw of
        x.size elements would: out = x / p where kept, else 0.  `out`
        defaults to a new array; `out=x` works in place."""
        spec, source, result, target = dropout_args("Tracker.dropout", x, out, p, layout)
        self._call(lib.rngtrk_tracker_dropout_f32, spec, source.count, ffi.cast("float *", source.pointer),
                   ffi.cast("float *", target.pointer), ffi.NULL)
        return result

    def origin(self):
        """Who this tracker's states belong to (set by seed_rank, carried by
        checkpoints of format 2 and 3): an Origin(policy, seed, flags, tp,
        pp, dp, ep, etp, gtp_remat, gtp_remat_size, egtp_remat,
        egtp_remat_size), or None."""
        with self._lock:
            return origin_of(self._live())

    def seed_rank(self, policy, seed, *, tp=0, pp=0, dp=0, ep=0, etp=0, gtp_remat=0, gtp_remat_size=0,
                  egtp_remat=0, egtp_remat_size=0, dp_random_init=False, always_enable_tp_seed=False):
        """Seeds this tracker as `policy` ("megatron", "slapo", "derived")
        seeds the rank at these coordinates; checkpoints then record it.

        megatron and derived add "gtp-remat-rng" when gtp_remat_size is 2 or
        more (Megatron-LM's GTP_remat group; gtp_remat is the rank in it)
        and "egtp-remat-rng" likewise for the expert group; a size of 0 or 1
        is off.  dp_random_init is read by megatron and derived,
        always_enable_tp_seed by slapo; a flag the policy does not read, a
        remat rank outside its group or an unknown policy raises
        InvalidArgumentError naming it, and nothing changes."""
        value = policy_value(policy)
        rank = ffi.new("rngtrk_parallel_rank *")
        check(lib.rngtrk_parallel_rank_init(rank, ffi.sizeof("rngtrk_parallel_rank")))
        rank.tp, rank.pp, rank.dp, rank.ep, rank.etp = (_u64(v, "coordinate") for v in (tp, pp, dp, ep, etp))
        rank.gtp_remat, rank.gtp_remat_size, rank.egtp_remat, rank.egtp_remat_size = (
            _u64(v, "coordinate") for v in (gtp_remat, gtp_remat_size, egtp_remat, egtp_remat_size))
        flags = (lib.RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT if dp_random_init else 0) | \
                (lib.RNGTRK_SEED_ALWAYS_ENABLE_TP_SEED if always_enable_tp_seed else 0)
        self._call(lib.rngtrk_tracker_seed_rank, value, _u64(seed, "seed"), rank, flags)

    # -- the reservation ledger (docs/ledger.md) ----------------------------

    def set_ledger(self, mode="raise", capacity=0):
        """Turns the ledger "off", or on in mode "raise" (a reservation that
        reuses numbers raises StreamReuseError, nothing changes) or "record"
        (handed out, and listed by ledger_overlaps()).  Starts it empty;
        `capacity` (0: 2^20) bounds the reservations kept for replays."""
        if mode not in _LEDGER_MODES:
            raise invalid(f"ledger mode must be one of {', '.join(_LEDGER_MODES)}, not {mode!r}")
        self._call(lib.rngtrk_tracker_set_ledger, _LEDGER_MODES[mode], _u64(capacity, "capacity"))
        self._ledger_mode = mode

    @property
    def ledger_mode(self):
        """The ledger's mode: "off", "raise" or "record"."""
        return self._ledger_mode

    @contextlib.contextmanager
    def ledger(self, mode="raise", capacity=0):
        """The ledger on for the block (and off after it):

            with tracker.ledger("raise"):
                train_step()        # reused numbers raise StreamReuseError
        """
        self.set_ledger(mode, capacity)
        try:
            yield self
        finally:
            self.set_ledger("off")

    def mark(self):
        """A position in the ledger; a region runs from a mark to the next
        mark taken.  Take one before a checkpointed forward, and one after."""
        out = ffi.new("uint64_t *")
        self._call(lib.rngtrk_tracker_ledger_mark, out)
        return out[0]

    def ledger_position(self):
        """The ledger's position: the number of the next reservation, or
        during a replay the one the replay is at.  Takes no mark: no region
        ends there.  InvalidArgumentError when the ledger is off."""
        out = ffi.new("uint64_t *")
        self._call(lib.rngtrk_tracker_ledger_position, out)
        return out[0]

    @contextlib.contextmanager
    def replay(self, mark):
        """Replays the region of `mark`: inside the block every reservation
        must equal the forward's, in order (ReplayMismatchError at the first
        that differs, and at the end if the block drew less).  Restore the
        states the forward started from before entering it."""
        self._call(lib.rngtrk_tracker_replay_begin, _u64(mark, "mark"))
        try:
            yield self
        except BaseException:
            with self._lock:
                lib.rngtrk_tracker_replay_end(self._live())  # the body's error wins
            raise
        self._call(lib.rngtrk_tracker_replay_end)

    @contextlib.contextmanager
    def replay_prefix(self, position):
        """A replay that may stop early: inside the block every reservation
        must equal, in order, the one recorded at the same place from
        `position` (a ledger_position() or a mark) on, as far as the block
        draws (ReplayMismatchError at the first that differs); drawing less
        is not an error.  For recomputation whose region has no known end
        (docs/ledger.md)."""
        self._call(lib.rngtrk_tracker_replay_prefix_begin, _u64(position, "position"))
        try:
            yield self
        finally:
            with self._lock:
                lib.rngtrk_tracker_replay_end(self._live())  # cannot fail for a prefix replay

    def ledger_overlaps(self):
        """The overlaps "record" mode recorded, as LedgerOverlap tuples."""
        count = ffi.new("size_t *")
        with self._lock:
            status = lib.rngtrk_tracker_ledger_overlaps(self._live(), ffi.NULL, 0, count)
            if status not in (0, lib.RNGTRK_E_BUFFER_TOO_SMALL):
                check(status)
            items = ffi.new("rngtrk_overlap[]", max(count[0], 1))
            check(lib.rngtrk_tracker_ledger_overlaps(self._live(), items, count[0], count))
        out = []
        for o in items[0:count[0]]:
            known = bool(o.earlier_known)
            out.append(LedgerOverlap(ffi.string(o.name).decode("utf-8"), o.seed,
                                     o.earlier_begin if known else None, o.earlier_end if known else None,
                                     o.earlier_sequence if known else None, o.later_begin, o.later_end,
                                     o.later_sequence))
        return out

    def digest(self):
        """A 64-bit fingerprint of the states: allgather it to find ranks
        whose trackers went out of sync."""
        out = ffi.new("uint64_t *")
        self._call(lib.rngtrk_tracker_digest, out)
        return out[0]

    def uniform_f32(self, count, out=None):
        """Like random_u32, as float32 uniforms in [0, 1)."""
        result, buffer = host_output(count, out, "f32")
        fill(lib.rngtrk_uniform_f32, "f32", self.advance(count), 0, buffer)
        return result
