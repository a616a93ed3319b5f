# SPDX-License-Identifier: Apache-2.0
"""Dropout that keeps no mask: one pass forward, the mask drawn again in
backward from the 16-byte state it came from.

rngtrk's mask is a pure function of (state, element index), so backward
needs the state, not the mask: the gradient of x * (mask * scale) is
grad * (mask * scale), the dropout of grad with the same state (as
FlashAttention and Triton's low-memory dropout redraw theirs), and so is
forward-mode AD's tangent.  A dropout layer then saves no tensor for
backward (torch's F.dropout saves its mask, a byte or more per element).

Eager calls (rngtrk.torch.dropout, dropout_slice) run `DropoutFunction`
when autograd (reverse or forward mode) needs it, else the kernel alone.
While torch traces them they are the operators rngtrk::dropout /
rngtrk::tracker_dropout (_torch_ops), whose backward is the same redraw,
or, under a torch.func transform alone, the mask then a multiply (_ops).
All of them fill through _kernels.dropout_into.
"""
import torch
import torch.autograd.forward_ad

from ._kernels import dropout_into, increment, reserved


def _run(x, state, mask_spec, box):
    x = x.contiguous()
    return dropout_into(torch.empty_like(x), x, state, mask_spec, box)


class DropoutFunction(torch.autograd.Function):
    """x -> its dropout from `state`; backward and the forward-mode tangent:
    the same dropout of the gradient or tangent.  What it keeps for them is
    the state, the mask's spec and the box: no tensor."""

    @staticmethod
    def forward(ctx, x, state, mask_spec, box):
        ctx.redraw = (state, mask_spec, box)
        return _run(x, state, mask_spec, box)

    @staticmethod
    def backward(ctx, grad):
        # Through apply again: differentiable to any order (dropout is linear).
        return DropoutFunction.apply(grad, *ctx.redraw), None, None, None

    @staticmethod
    def jvp(ctx, tangent, *_):
        return _run(tangent, *ctx.redraw)


def _forward_ad():
    """Whether a forward-mode AD level is open (a dual x carries a tangent)."""
    return getattr(torch.autograd.forward_ad, "_current_level", -1) >= 0


def dropout_from_state(x, state, mask_spec, box, inplace):
    """The dropout of `x` with the mask `mask_spec` draws from `state` (the
    box `box` of a larger tensor's mask, or the whole): into x for
    `inplace` (through copy_, so torch's in-place rules and version counter
    hold), differentiable when autograd needs it, else the kernel alone."""
    if inplace:
        return x.copy_(_run(x, state, mask_spec, box))
    if (x.requires_grad and torch.is_grad_enabled()) or _forward_ad():
        return DropoutFunction.apply(x, state, mask_spec, box)
    return _run(x, state, mask_spec, box)


def dropout_from_tracker(x, tracker, mask_spec, box, inplace):
    """dropout_from_state from the tracker's state, which moves past the
    mask (the whole tensor's, for a box) once the dropout is made, one draw
    at a time (_kernels.reserved): a refused call leaves it, and x, as they
    were.  Returns (output, the state drawn from)."""
    step = increment(mask_spec, box[0] if box is not None else tuple(x.shape))
    out, start = reserved(tracker, step, lambda start: (dropout_from_state(x, start, mask_spec, box, False), start))
    return (x.copy_(out) if inplace else out), start
