# SPDX-License-Identifier: Apache-2.0
"""Megatron-LM's activation checkpointing over rngtrk's trackers:
checkpoint(function, distribute_saved_activations, *args),
CheckpointWithoutOutput and CheckpointWithoutOutputManager, with
Megatron's signatures and behaviour (megatron/core/tensor_parallel/random.py).

Both save every random state with rngtrk.torch.megatron._get_all_rng_states
(copies: a recompute replays exactly), recompute inside the forks that were
open around the forward (so a name forked again inside continues its
stream; Megatron's own functions recompute outside them) and, when the
process tracker's ledger is on, prove the recompute drew what the forward
drew (docs/ledger.md).
install() leaves Megatron's own checkpoint functions in place; they reach
rngtrk's states through the module functions it replaces.

Where this differs from Megatron's: no cuda_graphs warm-up/capture checks
(they are Megatron's internal state); a discarded output gets its values
back by a copy into its own storage (Megatron compiles a C++ extension that
swaps the storage's pointer; both keep every view of the output valid);
the FP8 recompute contexts come from TransformerEngine when it is
importable, and are skipped otherwise (Megatron's fail without it).
"""
import contextlib

import torch

from ._tracker import is_rngtrk_tracker, open_forks, reopened
from .checkpoint import RandomStates, Recompute, load_arguments, save_arguments

_m = None  # rngtrk.torch.megatron, whose RNG functions these call: handed in by bind() (it imports this module)


def bind(megatron):
    global _m
    _m = megatron


def _tensor_parallel():
    """(world size, rank, group) of Megatron's tensor-parallel group."""
    state, reason = _m._parallel_state()
    if state is None:
        raise _m.RankUnavailableError("distribute_saved_activations needs Megatron's tensor-parallel group, and "
                                      f"megatron.core.parallel_state cannot be imported ({reason})")
    return (state.get_tensor_model_parallel_world_size(), state.get_tensor_model_parallel_rank(),
            state.get_tensor_model_parallel_group())


class _MegatronHooks:
    """Megatron's checkpoint around rngtrk's Recompute: is_checkpointing()
    and distribute_saved_activations (the first argument kept as this
    tensor-parallel rank's 1-D chunk between forward and backward)."""

    def __init__(self, distribute):
        self.distribute = bool(distribute)

    def enter(self):
        _m._set_checkpointing()

    def leave(self):
        _m._unset_checkpointing()

    def after_forward(self, ctx, args):
        if not self.distribute:
            return
        first = args[0] if args else None
        if not torch.is_tensor(first):
            raise TypeError("distribute_saved_activations splits the first argument, which must be a tensor")
        size, rank, _ = _tensor_parallel()
        ctx.input_0_shape = first.data.shape
        flat = first.data.reshape(-1)
        chunk = flat.numel() // size
        first.data = flat[rank * chunk:(rank + 1) * chunk].clone()

    def before_backward(self, ctx):
        if not self.distribute:
            return
        size, _, group = _tensor_parallel()
        first = ctx.saved_tensors[0]
        if size > 1:
            pieces = [torch.empty_like(first.data) for _ in range(size)]
            torch.distributed.all_gather(pieces, first.data.contiguous(), group=group)
            whole = torch.cat(pieces)
        else:
            whole = first.data
        first.data = whole.view(ctx.input_0_shape)


def checkpoint(function, distribute_saved_activations, *args):
    """Megatron's checkpoint: `function(*args)` without keeping its
    activations, recomputed in backward from the same random states; with
    distribute_saved_activations the first argument is kept as this
    tensor-parallel rank's chunk until then."""
    states = RandomStates(_m.get_cuda_rng_tracker())
    return Recompute.apply(function, states, _MegatronHooks(distribute_saved_activations), *args)


def _storage(tensor):
    """The tensor's untyped storage (torch >= 2.0, or 1.13's spelling)."""
    if hasattr(tensor, "untyped_storage"):
        return tensor.untyped_storage()
    return tensor.storage().untyped()


def _fp8_contexts(ckpt, recompute_phase):
    """TransformerEngine's FP8 recompute contexts, as Megatron enters them,
    when TE is importable; nothing otherwise."""
    if not ckpt.fp8:
        return contextlib.nullcontext(), contextlib.nullcontext()
    try:
        from transformer_engine.pytorch.distributed import activation_recompute_forward
        from transformer_engine.pytorch.fp8 import fp8_autocast
    except ImportError:
        return contextlib.nullcontext(), contextlib.nullcontext()
    recompute = activation_recompute_forward(activation_recompute=True, recompute_phase=recompute_phase)
    if not recompute_phase:
        return recompute, contextlib.nullcontext()
    return recompute, fp8_autocast(enabled=ckpt.ctx.fp8, fp8_recipe=ckpt.ctx.fp8_recipe)


def _fp8_state():
    try:
        from transformer_engine.pytorch.fp8 import FP8GlobalStateManager
    except ImportError:
        return False, None
    enabled = FP8GlobalStateManager.is_fp8_enabled()
    return enabled, FP8GlobalStateManager.get_fp8_recipe() if enabled else None


class CheckpointWithoutOutputFunction(torch.autograd.Function):
    """Runs the function without a graph and saves its arguments; backward
    back-propagates through the outputs the recompute made."""

    @staticmethod
    def forward(ctx, run_function, checkpoint_without_output_obj, *args):
        ctx.fp8, ctx.fp8_recipe = _fp8_state() if checkpoint_without_output_obj.fp8 else (False, None)
        recompute, _ = _fp8_contexts(checkpoint_without_output_obj, recompute_phase=False)
        with torch.no_grad(), recompute:
            outputs = run_function(*args)
        save_arguments(ctx, args)
        checkpoint_without_output_obj.ctx = ctx
        return outputs

    @staticmethod
    def backward(ctx, *grads):
        inputs, outputs = ctx.inputs, ctx.outputs
        torch.autograd.backward(outputs, grads)
        ctx.outputs = None
        ctx.inputs = None
        return (None, None) + tuple(i.grad if isinstance(i, torch.Tensor) else None for i in inputs)


class CheckpointWithoutOutputManager:
    """Recomputes several CheckpointWithoutOutput regions, in forward order,
    from one hook (Megatron's)."""

    def __init__(self):
        self.checkpoints = []
        self.is_last_layer_in_recompute_block = False

    def add_checkpoint(self, ckpt):
        """Adds a checkpoint that has run."""
        if not isinstance(ckpt, CheckpointWithoutOutput):
            raise TypeError("Expected CheckpointWithoutOutput object")
        if ckpt.outputs is None:
            raise ValueError("CheckpointWithoutOutput must call checkpoint() before adding")
        self.checkpoints.append(ckpt)

    def discard_all_outputs_and_register_unified_recompute(self, hook_tensor):
        """Releases every output and recomputes them all when hook_tensor's
        gradient is computed."""
        for ckpt in self.checkpoints:
            ckpt._discard_outputs()
        if hook_tensor.requires_grad:
            hook_tensor.register_hook(self._unified_recompute_hook)

    def _unified_recompute_hook(self, grad_output):
        for ckpt in self.checkpoints:
            ckpt._recompute(None)


class CheckpointWithoutOutput:
    """Checkpoints a function and releases its output's memory; the output
    is recomputed, from the same random states, when a chosen tensor's
    gradient is computed (Megatron's class; module text for the differences)."""

    def __init__(self, fp8=False, ckpt_manager=None, retain_input_tensors=False):
        self.fp8 = fp8 is not None  # Megatron's rule: the default False enables the FP8 path too
        self.ckpt_manager = ckpt_manager
        self.retain_input_tensors = retain_input_tensors
        self.run_function = None
        self.rng_states = None
        self.ctx = None
        self.outputs = None
        self._ledger = self._mark = None

    def checkpoint(self, run_function, *args):
        """Runs run_function(*args) without a graph and returns its outputs."""
        self.run_function = run_function
        self.rng_states = _m._get_all_rng_states()
        tracker = _m.get_cuda_rng_tracker()
        self.open_forks = open_forks(tracker)
        self._ledger = RandomStates(tracker) if is_rngtrk_tracker(tracker) else None
        self._mark = self._ledger.mark() if self._ledger is not None else None
        if self.retain_input_tensors:
            self._saved_input_ptrs = {_storage(t).data_ptr() for t in args if isinstance(t, torch.Tensor)}
        outputs = CheckpointWithoutOutputFunction.apply(run_function, self, *args)
        if self._mark is not None:
            self._ledger.ledger.mark()  # the region ends here
        self.outputs = (outputs,) if isinstance(outputs, torch.Tensor) else outputs
        if self.ckpt_manager is not None:
            self.ckpt_manager.add_checkpoint(self)
        return outputs

    def _recompute(self, _):
        """The hook: recomputes the outputs and gives the discarded ones their values back."""
        if self.ctx is None:
            return  # recomputed already
        if not torch.autograd._is_checkpoint_valid():
            raise RuntimeError("Checkpointing is not compatible with .grad(), please use .backward() if possible")
        with _m._fork_rng():
            _m._set_all_rng_states(*self.rng_states)
            recompute, fp8 = _fp8_contexts(self, recompute_phase=True)
            inputs = load_arguments(self.ctx)
            replay = self._ledger.ledger.replay(self._mark) if self._mark is not None else contextlib.nullcontext()
            with torch.enable_grad(), reopened(_m.get_cuda_rng_tracker(), self.open_forks), replay, fp8, recompute:
                outputs = self.run_function(*inputs)
        self.run_function = None
        self.rng_states = None
        if isinstance(outputs, torch.Tensor):
            outputs = (outputs,)
        for output, recomputed in zip(self.outputs, outputs):
            target, source = _storage(output), _storage(recomputed)
            if target.data_ptr() != source.data_ptr() or target.size() != source.size():
                # Into the output's own storage: every view of it (saved by
                # later ops for their backward) sees the values, and no
                # version counter moves.
                target.resize_(source.size())
                target.copy_(source)
        self.ctx.outputs = outputs
        self.ctx.inputs = inputs
        self.outputs = None
        self.ctx = None

    def _discard_outputs(self):
        """Releases the outputs' storage, keeping outputs that share an
        input's storage when retain_input_tensors."""
        for output in self.outputs:
            storage = _storage(output)
            if self.retain_input_tensors and storage.data_ptr() in self._saved_input_ptrs:
                continue
            storage.resize_(0)

    def discard_output_and_register_recompute(self, hook_tensor):
        """Releases the outputs and recomputes them when hook_tensor's
        gradient is computed (with a manager: the manager does both)."""
        if self.ckpt_manager is not None:
            return
        self._discard_outputs()
        if hook_tensor.requires_grad:
            hook_tensor.register_hook(self._recompute)
