# SPDX-License-Identifier: Apache-2.0
"""rngtrk.torch's draws and forks as torch operators (torch >= 2.4), so that
torch.compile, torch.export and torch.func trace them as ordinary ops
instead of breaking the graph or skipping the frame (docs/pytorch.md,
"torch.compile, torch.export and torch.func").

  rngtrk::sample(state, spec..., shape, box, out_device)
      a draw from an explicit state: a pure function of the 16-byte state
      tensor and its arguments, free to be recomputed, merged or reordered.
  rngtrk::tracker_sample(tick, tracker, forks, spec..., shape, box, out_device, *, device)
      a draw from a tracker, which it moves; returns (values, tick + 1).
  rngtrk::dropout(x, state, mask...) and
  rngtrk::tracker_dropout(tick, tracker, forks, x, mask..., *, device)
      dropout in one pass, the second returning (values, tick + 1, the
      16-byte state it drew from); their registered backward draws the mask
      again from that state (_dropout).
  rngtrk::state_from_words(seed_lo, seed_hi, offset_lo, offset_hi)
      a PhiloxState's 16 bytes from four 32-bit words (state_input).

A fork of a drop-in tracker has no operator: its entry and exit are
recorded while tracing, for the draws inside (fork_enter / fork_exit); a
CUDA tracker's fork is entered for real, outside the graph (_cuda_fork).

Why this shape:
* tracker_sample reads the tracker when it runs, not when it is traced, so
  a compiled function draws fresh numbers at every call.  It is tagged
  nondeterministic_seeded, as torch's own random ops are, and its keyword
  `device` names where the tracker's generator lives: torch's activation
  checkpointing under compile then saves that device's RNG state before the
  draw and replays the draw with it (run_and_save_rng_state /
  run_with_rng_state), and the CPU state carries rngtrk's states
  (_rng_state_hook), so the recompute draws the forward's numbers.
* It enters the forks open around it when it was traced (`forks`, outermost
  first) and leaves them again, itself: the draw does not depend on any
  other op having run, so a recompute of it never drags a fork's entry into
  the backward pass without its exit.  (A name forked again inside its own
  fork continues its one stream: the drop-in trackers' rule.)
* Each draw takes its tracker's `tick` tensor and returns the next value,
  which the caller writes back: the draws of one tracker form a chain of
  data dependencies, so no compiler merges two equal draws, drops one whose
  values are unused (the tracker must still move) or reorders them.
"""
import contextlib
import itertools
import weakref

import torch

from ..errors import UnavailableError
from ..state import STATE_BYTES, PhiloxState
from ._dynamo_watch import when_dynamo_imported
from ._dropout import dropout_from_state, dropout_from_tracker
from ._generators import StateFormatError, state_of, state_tensor
from ._kernels import NO_GEOMETRY, Spec, TORCH_DTYPES, draw_from_state, draw_from_tracker

AVAILABLE = hasattr(torch, "library") and hasattr(torch.library, "register_fake") and hasattr(torch, "compiler") \
    and hasattr(torch.compiler, "is_compiling")

_SPEC = "str layout, str dist, str dtype, float a, float b, int sm_count, int max_threads_per_sm"
_BOX = "SymInt[] shape, SymInt[] global_shape, SymInt[] start, Device out_device"


def tracing():
    """Whether torch is tracing the caller (torch.compile, torch.export,
    make_fx with fake or proxy tensors, functionalization, a functorch
    transform) rather than running it: then the ops go through the torch
    operators, otherwise straight to _kernels.  (A user's own dispatch mode,
    a FLOP counter, say, is not tracing: the ops run as they are.)"""
    if not AVAILABLE:
        return False
    if _is_compiling():  # (first: dynamo, which reads it as True, cannot trace the rest)
        return True
    if _interpreter_stack() is not None:
        return True
    # Any dispatch mode at all puts the Python key in the dispatcher's
    # thread-local set: one question answers the common eager case.
    if not _key_included(_PYTHON_KEY):
        return False
    return any(torch._C._get_dispatch_mode(key) is not None for key in _TRACING_MODES)


def transforming():
    """Whether a torch.func transform (grad, vmap, ...) is what traces the
    caller, with no compiler and no tracing mode: torch 2.14's operators
    with registered autograd do not run under those transforms."""
    return (AVAILABLE and not torch.compiler.is_compiling()  # (first: dynamo cannot trace the rest)
            and torch._C._functorch.peek_interpreter_stack() is not None
            and all(torch._C._get_dispatch_mode(key) is None for key in _TRACING_MODES))


_TRACING_MODES = tuple(getattr(torch._C._TorchDispatchModeKey, key) for key in ("FAKE", "PROXY", "FUNCTIONAL")
                       if AVAILABLE and hasattr(torch._C._TorchDispatchModeKey, key))
_PYTHON_KEY = torch._C.DispatchKey.Python
# (Looked up once: every eager draw asks.)
if AVAILABLE:
    _is_compiling = torch.compiler.is_compiling
    _interpreter_stack = torch._C._functorch.peek_interpreter_stack
    _key_included = torch._C._dispatch_tls_is_dispatch_key_included


# -- trackers by number (operators take ints, not objects) ------------------------------

_TRACKERS = weakref.WeakValueDictionary()  # number -> tracker


def register(tracker):
    """Gives `tracker` the number the operators name it by, the tick tensor
    its draws chain through and the list of forks entered while tracing
    (once: a drop-in tracker when it is made, a plain rngtrk.Tracker at its
    first draw outside a traced function).  Returns the number."""
    key = getattr(tracker, "_torch_key", None)
    if key is not None:
        return key
    if tracing():
        # Without fullgraph dynamo runs the caller as it is instead (the
        # draw then names the tracker); with it, rngtrk's error says why.
        if torch.compiler.is_compiling():
            _at_compile_time(_refuse_unnamed_tracker_in_fullgraph)
        raise TypeError(_UNNAMED)
    key = next(_KEYS)
    with torch.inference_mode(False):  # (a tick made in inference mode could not be written by a later step)
        tracker._torch_tick = torch.zeros((), dtype=torch.int64)
    tracker._torch_forks = []  # outermost first
    tracker._torch_key = key
    _TRACKERS[key] = tracker
    return key


_KEYS = itertools.count(1)  # never reused: a graph naming a tracker that is gone says so
_UNNAMED = ("rngtrk.torch: a tracker torch.compile cannot name yet: a plain rngtrk.Tracker that has not drawn through "
            "rngtrk.torch outside a compiled function, or a tracker made inside one (seed the process tracker, "
            "model_parallel_cuda_manual_seed, before compiling); draw from it, or make it, once outside the "
            "compiled function first")


def _tracker(key):
    tracker = _TRACKERS.get(key)
    if tracker is None:
        from ..errors import invalid
        raise invalid(f"rngtrk.torch: tracker number {key} is gone (a compiled function outlived its tracker)")
    return tracker


def _box(global_shape, start, shape):
    return None if not global_shape else (tuple(global_shape), tuple(start), tuple(shape))


def _sample(state, layout, dist, dtype, a, b, sm_count, max_threads_per_sm, shape, global_shape, start, out_device):
    spec = Spec(layout, dist, dtype, a, b, sm_count, max_threads_per_sm)
    return draw_from_state(state_of(state), spec, tuple(shape), _box(global_shape, start, shape), out_device)


@contextlib.contextmanager
def _inside(tracker, forks):
    """The forks a traced draw was made in (outermost first), entered for
    the draw and left after it, also when it raises."""
    entered = []
    try:
        for name in forks:
            tracker._enter(name)
            entered.append(name)
        yield
    finally:
        for name in reversed(entered):
            tracker._leave(name)


def _tracker_sample(tick, key, forks, layout, dist, dtype, a, b, sm_count, max_threads_per_sm, shape, global_shape,
                    start, out_device, *, device):
    tracker = _tracker(key)
    spec = Spec(layout, dist, dtype, a, b, sm_count, max_threads_per_sm)
    with _inside(tracker, forks):
        out = draw_from_tracker(tracker, spec, tuple(shape), _box(global_shape, start, shape), out_device)
    return out, tick + 1


def _mask_spec(layout, p, sm_count, max_threads_per_sm):
    return Spec(layout, "bernoulli", "u8", p, 0.0, sm_count, max_threads_per_sm)


def _dropout(x, state, layout, p, sm_count, max_threads_per_sm, global_shape, start):
    box = _box(global_shape, start, tuple(x.shape))
    return dropout_from_state(x, state_of(state), _mask_spec(layout, p, sm_count, max_threads_per_sm), box, False)


def _tracker_dropout(tick, key, forks, x, layout, p, sm_count, max_threads_per_sm, global_shape, start, *, device):
    tracker = _tracker(key)
    box = _box(global_shape, start, tuple(x.shape))
    with _inside(tracker, forks):
        out, drawn_from = dropout_from_tracker(x, tracker, _mask_spec(layout, p, sm_count, max_threads_per_sm), box,
                                               False)
    return out, tick + 1, state_tensor(drawn_from)


def _fake_output(dtype, shape, out_device):
    return torch.empty(shape, dtype=TORCH_DTYPES[dtype], device=out_device)


# What runs outside every graph: functions behind torch._dynamo.disable,
# wrapped once dynamo is imported (_dynamo_watch).  Dynamo breaks the graph
# at a call of one and runs it as it is; an operator's implementation, which
# the dispatcher calls while a compiled function runs (dynamo.explain runs
# its graphs with dynamo's frame hook still on), is never traced.
_OUTSIDE = {}   # function name -> that function behind torch._dynamo.disable
_HIDDEN = []    # the functions to wrap


def outside_graphs(function):
    """`function`, called through its torch._dynamo.disable wrapper once
    dynamo is imported."""
    _HIDDEN.append(function)
    name = function.__name__

    def run(*args, **kwargs):
        return _OUTSIDE.get(name, function)(*args, **kwargs)
    run.__name__ = run.__qualname__ = name
    return run


def _hide_from_dynamo(dynamo):
    for function in _HIDDEN:
        _OUTSIDE[function.__name__] = dynamo.disable(function)


_WORD = 1 << 32


def _state_from_words(seed_lo, seed_hi, offset_lo, offset_hi):
    state = PhiloxState(seed_lo + _WORD * seed_hi, offset_lo + _WORD * offset_hi)
    return torch.frombuffer(bytearray(state.to_bytes()), dtype=torch.uint8)


if AVAILABLE and not hasattr(torch.ops.rngtrk, "sample"):
    _lib = torch.library.Library("rngtrk", "DEF")
    _lib.define(f"sample(Tensor state, {_SPEC}, {_BOX}) -> Tensor")
    # They read and write generators on the host: no CUDA graph may capture
    # them (the tag, where torch has it, makes inductor's CUDA graphs leave
    # them out; elsewhere a capture raises rngtrk's UnavailableError).
    _HOST = (torch.Tag.cudagraph_unsafe,) if hasattr(torch.Tag, "cudagraph_unsafe") else ()
    _lib.define(f"tracker_sample(Tensor tick, int tracker, str[] forks, {_SPEC}, {_BOX}, *, Device device) "
                "-> (Tensor, Tensor)", tags=(torch.Tag.nondeterministic_seeded, *_HOST))
    # A PhiloxState's two u64 as four 32-bit words: a compiled function that
    # takes the state as an argument has them as symbolic ints from its
    # second state on, and a seed of 2^63 or more fits no int64 kernel
    # argument; split here, each word is computed by the graph's Python
    # wrapper and passes to this operator whole.
    _lib.define("state_from_words(SymInt seed_lo, SymInt seed_hi, SymInt offset_lo, SymInt offset_hi) -> Tensor")
    for _name, _impl in (("sample", _sample), ("tracker_sample", _tracker_sample),
                         ("state_from_words", _state_from_words)):
        _lib.impl(_name, outside_graphs(_impl), "CompositeExplicitAutograd")

    @torch.library.register_fake("rngtrk::state_from_words", lib=_lib)
    def _(seed_lo, seed_hi, offset_lo, offset_hi):
        return torch.empty(STATE_BYTES, dtype=torch.uint8)

    # Dropout in one pass, whose backward draws the mask again: from the
    # explicit state, or from the state the tracker draw returns (16 bytes
    # saved for backward, no mask).
    _DROPOUT = "str layout, float p, int sm_count, int max_threads_per_sm, SymInt[] global_shape, SymInt[] start"
    _lib.define(f"dropout(Tensor x, Tensor state, {_DROPOUT}) -> Tensor")
    _lib.define(f"tracker_dropout(Tensor tick, int tracker, str[] forks, Tensor x, {_DROPOUT}, *, Device device) "
                "-> (Tensor, Tensor, Tensor)", tags=(torch.Tag.nondeterministic_seeded, *_HOST))
    _lib.impl("dropout", outside_graphs(_dropout), "CompositeExplicitAutograd")
    _lib.impl("tracker_dropout", outside_graphs(_tracker_dropout), "CompositeExplicitAutograd")

    @torch.library.register_fake("rngtrk::dropout", lib=_lib)
    def _(x, state, layout, p, sm_count, max_threads_per_sm, global_shape, start):
        return torch.empty_like(x, memory_format=torch.contiguous_format)

    @torch.library.register_fake("rngtrk::tracker_dropout", lib=_lib)
    def _(tick, key, forks, x, layout, p, sm_count, max_threads_per_sm, global_shape, start, *, device):
        return (torch.empty_like(x, memory_format=torch.contiguous_format), torch.empty_like(tick),
                torch.empty(STATE_BYTES, dtype=torch.uint8))

    def _save_state(ctx, state, mask_args):
        ctx.save_for_backward(state)
        ctx.mask_args = mask_args

    def _redraw(ctx, grad):
        state, = ctx.saved_tensors
        return torch.ops.rngtrk.dropout(grad, state, *ctx.mask_args)

    def _dropout_setup(ctx, inputs, output):
        _save_state(ctx, inputs[1], inputs[2:])

    def _dropout_backward(ctx, grad):
        return (_redraw(ctx, grad),) + (None,) * 7

    def _tracker_dropout_setup(ctx, inputs, output, keyword_only_inputs=None):
        ctx.mark_non_differentiable(output[1], output[2])
        _save_state(ctx, output[2], inputs[4:])

    def _tracker_dropout_backward(ctx, grad, grad_tick, grad_state):
        return (None, None, None, _redraw(ctx, grad)) + (None,) * 6

    torch.library.register_autograd("rngtrk::dropout", _dropout_backward, setup_context=_dropout_setup, lib=_lib)
    torch.library.register_autograd("rngtrk::tracker_dropout", _tracker_dropout_backward,
                                    setup_context=_tracker_dropout_setup, lib=_lib)

    @torch.library.register_fake("rngtrk::sample", lib=_lib)
    def _(state, layout, dist, dtype, a, b, sm_count, max_threads_per_sm, shape, global_shape, start, out_device):
        return _fake_output(dtype, shape, out_device)

    @torch.library.register_fake("rngtrk::tracker_sample", lib=_lib)
    def _(tick, key, forks, layout, dist, dtype, a, b, sm_count, max_threads_per_sm, shape, global_shape, start,
          out_device, *, device):
        return _fake_output(dtype, shape, out_device), torch.empty_like(tick)




# -- what the ops call ---------------------------------------------------------------------

def _spec_args(spec):
    return (spec.layout, spec.dist, spec.dtype, float(spec.a), float(spec.b), int(spec.sm_count),
            int(spec.max_threads_per_sm))


def _box_args(shape, box):
    if box is None:
        return list(shape), [], []
    return list(box[2]), list(box[0]), list(box[1])


def traceable_state(state):
    """Whether torch.compile can read `state` while it traces: a state
    tensor always; a PhiloxState (a tuple subclass) from torch 2.7 on."""
    return isinstance(state, torch.Tensor) or (_READS_TUPLE_SUBCLASSES and isinstance(state, PhiloxState))


def state_input(state):
    """A traceable explicit state as the operator's 16-byte uint8 CPU
    tensor: a state tensor as given (torch.cuda.get_rng_state()'s form), or
    a PhiloxState written out."""
    if isinstance(state, torch.Tensor):
        if state.dtype != torch.uint8 or state.numel() != STATE_BYTES:
            raise StateFormatError(f"state: a state tensor is {STATE_BYTES} uint8 values (torch.cuda.get_rng_state()), "
                                   f"not {state.numel()} of {state.dtype}")
        return state.reshape(STATE_BYTES).cpu()
    if not isinstance(state, PhiloxState):  # 16 bytes, a torch.Generator: concrete (not dynamo, which refuses them)
        state = state_of(state)
    seed, offset = state
    # Word by word, not state_tensor(state): dynamo traces this arithmetic on
    # the two ints (symbolic ones too), where PhiloxState.to_bytes() is a C
    # call it cannot follow.
    return torch.ops.rngtrk.state_from_words(seed % _WORD, seed // _WORD, offset % _WORD, offset // _WORD)


class NotCompilableError(UnavailableError, AssertionError):
    """What torch.compile cannot hold with eager's numbers, refused while
    it compiles (with fullgraph=True; without it the part runs outside the
    graph instead).  Also an AssertionError: the one kind of exception
    dynamo passes through as it is, so the user reads this message rather
    than dynamo's wrapper of it."""


class StateNotCompilableError(NotCompilableError, TypeError):
    """A state dynamo cannot read (a PhiloxState before torch 2.7, 16
    bytes, a torch.Generator) under torch.compile(fullgraph=True): also the
    TypeError of a state of a kind a call cannot take."""


def _fullgraph(ctx):
    """Whether the compilation `ctx` (dynamo's comptime context) may not
    break the graph (fullgraph=True)."""
    tx = getattr(ctx, "_ComptimeContext__tx", None)
    return bool(getattr(tx, "one_graph", False) or getattr(tx, "error_on_graph_break", False))


def _refuse_state_in_fullgraph(ctx):
    if _fullgraph(ctx):
        raise StateNotCompilableError(
            f"rngtrk.torch: torch.compile(fullgraph=True) on torch {torch.__version__} cannot read this state (a "
            f"PhiloxState before torch 2.7, whose dynamo reads no tuple subclass; 16 bytes; a torch.Generator); "
            f"pass it as a tensor, rngtrk.torch.state_tensor(state), or compile without fullgraph (the draw then runs "
            f"outside the graph)")


class TrackerNotCompilableError(NotCompilableError, TypeError):
    """A tracker that no torch operator names yet (register), under
    torch.compile(fullgraph=True): also the TypeError of a tracker of a kind
    the call cannot take there."""


def _refuse_unnamed_tracker_in_fullgraph(ctx):
    if _fullgraph(ctx):
        raise TrackerNotCompilableError(_UNNAMED)


def _refuse_fork_in_fullgraph(ctx):
    if _fullgraph(ctx):
        raise NotCompilableError(
            "rngtrk.torch: torch.compile(fullgraph=True) cannot hold a fork of a CUDA tracker: the fork swaps "
            "torch's CUDA generator on the host for torch's own random ops inside it, and nothing in a graph fixes "
            "where those run relative to the swap (other numbers than eager's). Compile without fullgraph (the "
            "fork then runs outside the graph, with eager's numbers), compile the code inside the fork, or draw "
            "with an explicit state (state=); torch's own random ops in compiled code give eager's numbers only "
            "with torch._inductor.config.fallback_random = True")


def _at_compile_time(check):
    """Runs check(ctx) while dynamo compiles the caller (comptime)."""
    from torch._dynamo.comptime import comptime
    comptime(check)


@outside_graphs
def _draw_state_eagerly(state, spec, shape, box, device):
    return draw_from_state(state_of(state), spec, shape, box, device)


@outside_graphs
def _dropout_state_eagerly(x, state, spec, box):
    return dropout_from_state(x, state_of(state), spec, box, False)


@outside_graphs
def _enter_eagerly(tracker, name):
    tracker._enter(name)


@outside_graphs
def _leave_eagerly(tracker, name):
    tracker._leave(name)


when_dynamo_imported(_hide_from_dynamo)


def draw_untraceable(state, spec, shape, box, device):
    """A draw from an explicit state dynamo cannot read (a PhiloxState
    before torch 2.7): refused under fullgraph (StateNotCompilableError),
    otherwise made outside the graph, with eager's numbers."""
    _at_compile_time(_refuse_state_in_fullgraph)
    return _draw_state_eagerly(state, spec, shape, box, device)


def dropout_untraceable(x, state, spec, box):
    """draw_untraceable for dropout."""
    _at_compile_time(_refuse_state_in_fullgraph)
    return _dropout_state_eagerly(x, state, spec, box)


_READS_TUPLE_SUBCLASSES = tuple(int(v) for v in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 7)


def sample_op(state, spec, shape, box, device):
    """rngtrk::sample: draw_from_state as a torch operator."""
    shape_args = _box_args(shape, box)
    return torch.ops.rngtrk.sample(state_input(state), *_spec_args(spec), *shape_args, torch.device(device))


def tracker_sample_op(tracker, spec, shape, box, device):
    """rngtrk::tracker_sample: draw_from_tracker as a torch operator, inside
    the forks traced around it, chained through the tracker's tick."""
    key = register(tracker)
    generator_device = torch.device("cuda" if getattr(tracker, "_cuda", False) else "cpu")
    out, tick = torch.ops.rngtrk.tracker_sample(tracker._torch_tick, key, list(tracker._torch_forks),
                                                *_spec_args(spec), *_box_args(shape, box), torch.device(device),
                                                device=generator_device)
    tracker._torch_tick.copy_(tick)
    return out


def _cuda_fork(tracker):
    """Whether a fork of `tracker` swaps torch's CUDA generator, and so
    cannot be traced: torch's own random ops in it (F.dropout) draw from
    that generator, and nothing in a graph fixes where they run relative to
    a swap (measured on an H200, torch 2.11: a traced CUDA fork compiled
    into one graph drew other numbers than eager and left other states).
    Under dynamo such a fork is entered and left outside the graph, for
    real, at the place eager enters it (dynamo breaks the graph there; a
    break inside a `with` statement makes it run the caller's frame as it
    is and compile the functions it calls); with fullgraph=True it is
    refused while compiling.  Other tracing (make_fx, non-strict
    torch.export, torch.func), which cannot break, refuses it too."""
    if not getattr(tracker, "_cuda", False):
        return False
    if not torch.compiler.is_compiling():
        raise NotImplementedError("rngtrk.torch: a fork of a CUDA tracker cannot be traced outside "
                                  "torch.compile (torch's own random ops in it would not see the forked "
                                  "generator); trace the code inside the fork, or use torch.compile")
    _at_compile_time(_refuse_fork_in_fullgraph)
    return True


def _dropout_args(spec, box):
    global_shape, start = ([], []) if box is None else (list(box[0]), list(box[1]))
    return spec.layout, float(spec.a), int(spec.sm_count), int(spec.max_threads_per_sm), global_shape, start


def dropout_op(x, state, spec, box):
    """rngtrk::dropout: dropout_from_state as a torch operator (`spec` the
    mask's)."""
    return torch.ops.rngtrk.dropout(x, state_input(state), *_dropout_args(spec, box))


def tracker_dropout_op(tracker, x, spec, box):
    """rngtrk::tracker_dropout: dropout_from_tracker as a torch operator,
    inside the forks traced around it, chained through the tracker's tick."""
    key = register(tracker)
    generator_device = torch.device("cuda" if getattr(tracker, "_cuda", False) else "cpu")
    out, tick, _ = torch.ops.rngtrk.tracker_dropout(tracker._torch_tick, key, list(tracker._torch_forks), x,
                                                    *_dropout_args(spec, box), device=generator_device)
    tracker._torch_tick.copy_(tick)
    return out


def fork_enter(tracker, name):
    """A fork's entry while torch traces: recorded for the draws inside,
    which enter the fork themselves; a CUDA tracker's is entered for real,
    outside the graph (_cuda_fork)."""
    register(tracker)
    if _cuda_fork(tracker):
        _enter_eagerly(tracker, name)
        return
    tracker._torch_forks.append(name)


def fork_exit(tracker, name):
    register(tracker)
    if _cuda_fork(tracker):
        _leave_eagerly(tracker, name)
        return
    tracker._torch_forks.pop()


__all__ = ["AVAILABLE", "tracing", "transforming", "register", "state_input", "sample_op", "tracker_sample_op",
           "dropout_op", "tracker_dropout_op", "fork_enter", "fork_exit", "draw_untraceable", "dropout_untraceable",
           "NotCompilableError", "StateNotCompilableError", "TrackerNotCompilableError", "NO_GEOMETRY"]
