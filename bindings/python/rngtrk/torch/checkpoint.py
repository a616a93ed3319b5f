# SPDX-License-Identifier: Apache-2.0
"""Activation checkpointing whose recomputation is proven to replay the
forward's random numbers (docs/ledger.md), with the ledger as witness.

    from rngtrk.torch.checkpoint import checkpoint
    tracker = rt.get_rng_state_tracker()
    tracker.tracker.set_ledger("raise")          # optional: the proof
    y = checkpoint(block, x)                     # block draws with rngtrk.torch ops
    y.sum().backward()                           # recompute: ReplayMismatchError if it draws differently

Megatron-LM's signature, checkpoint(function, distribute_saved_activations,
*args), is rngtrk.torch.megatron.checkpoint, built on the same function.

Forward: runs `function` without building a graph, after saving every
random state (torch's CPU generator, the generator forks swap, and the
tracker's named states: rngtrk.torch._tracker.capture_all) and the forks
open around the call; with the tracker's ledger on it takes a mark before
and one after, which delimit the region.  Backward: restores those states,
recomputes inside the same forks (so a name the function forks again
continues its stream, as in the forward) and inside `tracker.replay(mark)`
(every reservation must equal the forward's, in order), back-propagates,
and puts the states back as they were.  Arguments
may mix tensors and other values, in any order.
"""
import torch

from ..errors import InvalidArgumentError
from ._rng_state_hook import torch_get_rng_state, torch_set_rng_state
from ._tracker import RngtrkStatesTracker, capture_all, open_forks, process_tracker, reopened, restore_all


class RandomStates:
    """What a checkpoint saves and restores of one tracker (a drop-in
    tracker, or a plain rngtrk.Tracker), and its ledger."""

    def __init__(self, tracker):
        self.tracker = tracker
        self.ledger = tracker.tracker if isinstance(tracker, RngtrkStatesTracker) else tracker

    def capture(self):
        """Every random state, and the forks open now (outermost first)."""
        if isinstance(self.tracker, RngtrkStatesTracker):
            return capture_all(self.tracker), open_forks(self.tracker)
        inner = self.tracker
        return (torch_get_rng_state(), inner.get_default(), inner.get_states()), ()

    def restore(self, saved):
        states, _ = saved
        if isinstance(self.tracker, RngtrkStatesTracker):
            restore_all(self.tracker, *states)
            return
        inner = self.tracker
        torch_set_rng_state(states[0])
        inner.set_default(states[1])
        inner.set_states(states[2])

    def reopened(self, saved):
        """The forks that were open at `saved`, entered again (a context
        manager): the recompute runs where the forward ran, so a name it
        forks again continues the same stream."""
        return reopened(self.tracker, saved[1])

    def mark(self):
        """A ledger mark, or None when the tracker's ledger is off."""
        try:
            return self.ledger.mark()
        except InvalidArgumentError:
            return None


def save_arguments(ctx, args):
    """Tensors through save_for_backward, other values beside them."""
    ctx.save_for_backward(*(a for a in args if torch.is_tensor(a)))
    ctx.argument_is_tensor = [torch.is_tensor(a) for a in args]
    ctx.other_arguments = [a for a in args if not torch.is_tensor(a)]


def load_arguments(ctx):
    """The arguments in their order, tensors detached (keeping requires_grad)."""
    saved, others = iter(ctx.saved_tensors), iter(ctx.other_arguments)
    args = []
    for is_tensor in ctx.argument_is_tensor:
        if is_tensor:
            t = next(saved)
            args.append(t.detach().requires_grad_(t.requires_grad))
        else:
            args.append(next(others))
    return args


class Recompute(torch.autograd.Function):
    """forward(function, states: RandomStates, hooks, *args); `hooks` (or
    None) may split the saved input after the forward (`after_forward(ctx,
    args)`) and join the saved tensors again before the recompute
    (`before_backward(ctx)`), and bracket both passes (`enter()`,
    `leave()`): Megatron's distribute_saved_activations and
    is_checkpointing()."""

    @staticmethod
    def forward(ctx, function, states, hooks, *args):
        if hooks is not None:
            hooks.enter()
        ctx.function, ctx.states, ctx.hooks = function, states, hooks
        ctx.before = states.capture()
        ctx.mark = states.mark()
        with torch.no_grad():
            out = function(*args)
        if ctx.mark is not None:
            states.ledger.mark()  # the region ends here
        if hooks is not None:
            hooks.after_forward(ctx, args)
        save_arguments(ctx, args)
        if hooks is not None:
            hooks.leave()
        return out

    @staticmethod
    def backward(ctx, *grads):
        if not torch.autograd._is_checkpoint_valid():
            raise RuntimeError("Checkpointing is not compatible with .grad(), please use .backward() if possible")
        hooks, states = ctx.hooks, ctx.states
        if hooks is not None:
            hooks.enter()
            hooks.before_backward(ctx)
        args = load_arguments(ctx)
        after = states.capture()
        states.restore(ctx.before)
        try:
            with torch.enable_grad(), states.reopened(ctx.before):
                if ctx.mark is None:
                    out = ctx.function(*args)
                else:
                    with states.ledger.replay(ctx.mark):
                        out = ctx.function(*args)
        finally:
            states.restore(after)
        outs = out if isinstance(out, tuple) else (out,)
        pairs = [(o, g) for o, g in zip(outs, grads) if torch.is_tensor(o) and o.requires_grad]
        if pairs:
            torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        if hooks is not None:
            hooks.leave()
        return (None, None, None) + tuple(a.grad if torch.is_tensor(a) else None for a in args)


def _states(tracker):
    if tracker is None:
        tracker = process_tracker()
    return RandomStates(tracker)


def checkpoint(function, *args, tracker=None):
    """`function(*args)` without keeping its activations; the backward pass
    recomputes it from the same random states (module text).  `tracker`:
    the process tracker by default, or a drop-in tracker or an rngtrk.Tracker."""
    return Recompute.apply(function, _states(tracker), None, *args)
