"""Dropout that keeps no mask: one pass forward, the mask drawn again in
backward from the 16-byte state it came from.

rngtrk's mask is a pure function of (state, element index), so backward
needs the state, not the mask: the gradient of x * (mask * scale) is
grad * (mask * scale), the dropout of grad with the same state (as
FlashAttention and Triton's low-memory dropout redraw theirs).  A dropout
layer then saves no tensor for backward (torch's F.dropout saves its mask,
a byte or more per element).

Eager calls (rngtrk.torch.dropout, dropout_slice) run `DropoutFunction`
when x requires grad, else the kernel alone; while torch traces them they
are the operators rngtrk::dropout / rngtrk::tracker_dropout (_torch_ops),
whose backward is the same redraw.  Both fill through _kernels.dropout_into.
"""
import torch

from ._kernels import dropout_into, increment, source


def _run(x, state, mask_spec, box):
    x = x.contiguous()
    return dropout_into(torch.empty_like(x), x, state, mask_spec, box)


class DropoutFunction(torch.autograd.Function):
    """x -> its dropout from `state`; backward: grad's dropout from the same
    state.  What it keeps for backward is the state, the mask's spec and
    the box: no tensor."""

    @staticmethod
    def forward(ctx, x, state, mask_spec, box):
        ctx.redraw = (state, mask_spec, box)
        return _run(x, state, mask_spec, box)

    @staticmethod
    def backward(ctx, grad):
        state, mask_spec, box = ctx.redraw
        # Through apply again: differentiable to any order (dropout is linear).
        return DropoutFunction.apply(grad, state, mask_spec, box), None, None, None


def dropout_from_state(x, state, mask_spec, box, inplace):
    """The dropout of `x` with the mask `mask_spec` draws from `state` (the
    box `box` of a larger tensor's mask, or the whole): in place into x,
    differentiable when x requires grad, else the kernel alone."""
    if inplace:
        if x.is_contiguous():
            return dropout_into(x, x, state, mask_spec, box)
        return x.copy_(_run(x, state, mask_spec, box))
    if x.requires_grad and torch.is_grad_enabled():
        return DropoutFunction.apply(x, state, mask_spec, box)
    return _run(x, state, mask_spec, box)


def dropout_from_tracker(x, tracker, mask_spec, box, inplace):
    """dropout_from_state from the tracker's state, which then moves past the
    mask (the whole tensor's, for a box), once the output is made: a refused
    call leaves it as it was.  Returns (output, the state drawn from)."""
    step = increment(mask_spec, box[0] if box is not None else tuple(x.shape))
    start, commit = source(tracker)
    out = dropout_from_state(x, start, mask_spec, box, inplace)
    commit(step)
    return out, start
