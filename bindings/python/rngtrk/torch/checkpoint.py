"""Activation checkpointing whose recomputation is proven to replay the
forward's random numbers (docs/ledger.md): Megatron-LM's and
TransformerEngine's `checkpoint` contract, with the ledger as witness.

    from rngtrk.torch.checkpoint import checkpoint
    tracker = rt.get_rng_state_tracker()
    tracker.tracker.set_ledger("raise")          # optional: the proof
    y = checkpoint(block, x)                     # block draws with rngtrk.torch ops
    y.sum().backward()                           # recompute: ReplayMismatchError if it draws differently

Forward: runs `function` without building a graph, after saving the
tracker's states (default and named; get_states), torch's CPU generator
state and, with CUDA, the CUDA generator's; with the tracker's ledger on it
takes a mark before and one after, which delimit the region.  Backward:
restores those states, recomputes inside `tracker.replay(mark)` — every
reservation must equal the forward's, in order — back-propagates, and puts
the states back as they were after the forward.
"""
import torch

from ..errors import InvalidArgumentError
from ._tracker import CudaRNGStatesTracker, get_rng_state_tracker


def _inner(tracker):
    tracker = tracker if tracker is not None else get_rng_state_tracker()
    return tracker.tracker if isinstance(tracker, CudaRNGStatesTracker) else tracker


def _snapshot(inner):
    return (inner.get_default(), inner.get_states(), torch.get_rng_state(),
            torch.cuda.get_rng_state() if torch.cuda.is_available() else None)


def _restore(inner, snap):
    inner.set_default(snap[0])
    inner.set_states(snap[1])
    torch.set_rng_state(snap[2])
    if snap[3] is not None:
        torch.cuda.set_rng_state(snap[3])


def _mark(inner):
    """A ledger mark, or None when the tracker's ledger is off."""
    try:
        return inner.mark()
    except InvalidArgumentError:
        return None


class _Checkpoint(torch.autograd.Function):
    @staticmethod
    def forward(ctx, function, inner, *args):
        ctx.function, ctx.inner = function, inner
        ctx.before = _snapshot(inner)
        ctx.mark = _mark(inner)
        with torch.no_grad():
            out = function(*args)
        if ctx.mark is not None:
            inner.mark()  # the region ends here
        tensors = [a for a in args if torch.is_tensor(a)]
        ctx.save_for_backward(*tensors)
        ctx.layout = [torch.is_tensor(a) for a in args]
        ctx.others = [a for a in args if not torch.is_tensor(a)]
        return out

    @staticmethod
    def backward(ctx, *grads):
        saved, others = iter(ctx.saved_tensors), iter(ctx.others)
        args = []
        for is_tensor in ctx.layout:  # the arguments in their order, tensors detached
            if is_tensor:
                t = next(saved)
                args.append(t.detach().requires_grad_(t.requires_grad))
            else:
                args.append(next(others))
        after = _snapshot(ctx.inner)
        _restore(ctx.inner, ctx.before)
        try:
            with torch.enable_grad():
                if ctx.mark is None:
                    out = ctx.function(*args)
                else:
                    with ctx.inner.replay(ctx.mark):
                        out = ctx.function(*args)
        finally:
            _restore(ctx.inner, after)
        outs = out if isinstance(out, tuple) else (out,)
        pairs = [(o, g) for o, g in zip(outs, grads) if torch.is_tensor(o) and o.requires_grad]
        if pairs:
            torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if torch.is_tensor(a) else None for a in args)


def checkpoint(function, *args, tracker=None):
    """`function(*args)` without keeping its activations; the backward pass
    recomputes it from the same random states (module text).  `tracker`:
    the process tracker by default, or a CudaRNGStatesTracker / Tracker."""
    return _Checkpoint.apply(function, _inner(tracker), *args)
