#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One rank of run_megatron_checkpoints.py's jobs: Megatron-LM's own
save_checkpoint and load_checkpoint (megatron/training/checkpointing.py,
from a checkout outside this project) on gloo ranks, with or without
rngtrk.torch.megatron.install().

    megatron_checkpoint_job.py PHASE CHECKPOINT OUT --tp T --pp P
                               [--upstream] [--on-missing fresh]

PHASE save: Megatron's _set_random_seed, two steps of draws from every
tracker stream, save_checkpoint at iteration 2, then two more steps (the
continuation the other phases are held to).  PHASE load: _set_random_seed,
load_checkpoint, two steps.  Each rank writes OUT/rank{R}.pt: its layout,
the tracker's states (seed, offset) at save or right after the load, what
it drew afterwards, and the load's error if any.  This script asserts
nothing; the runner compares the files.

What is Megatron's and what is ours.  Megatron-LM's: save_checkpoint,
load_checkpoint and everything they call (dist_checkpointing's torch_dist
format, the args, parallel_state's groups, _set_random_seed, the
microbatch calculator).  Ours, because this runs on CPU-only torch:
* the model: one tensor, replicated (Megatron's ShardedTensor), so the
  checkpoint holds model state too;
* the CUDA generator: cuda_emulation.py (a 16-byte state; it draws nothing,
  so the draws are rngtrk's, inside the tracker's forks);
* three modules whose import needs Triton, which Debian does not package
  (a MoE paged stash and two Mamba kernels), stand in empty: nothing here
  calls them;
* argparse.BooleanOptionalAction accepts (and ignores) type=, which
  Megatron's arguments.py passes and Python 3.14 refuses;
* in checkpointing.py and dist_checkpointing's state_dict_saver, the
  tensors Megatron puts on the CUDA device for its collectives (the
  iteration's all_reduce, the save's failure flag) are made on the CPU,
  where gloo runs them.
"""
import argparse
import importlib.abc
import importlib.machinery
import os
import random
import sys
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))
TRITON_ONLY = ("megatron.core.transformer.moe.ops.paged_stash", "megatron.core.ssm.ops.common.causal_conv1d_varlen",
               "megatron.core.ssm.ops.mamba2.batch_invariant_decode")
SEED = 1234
ITERATION = 2
STEPS = 2


class _TritonOnly(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Empty modules in place of TRITON_ONLY: any function read from one
    does nothing."""

    def find_spec(self, name, path, target=None):
        return importlib.machinery.ModuleSpec(name, self) if name in TRITON_ONLY else None

    def create_module(self, spec):
        return types.ModuleType(spec.name)

    def exec_module(self, module):
        def absent(name):
            if name.startswith("__"):
                raise AttributeError(name)
            return lambda *args, **kwargs: None
        module.__getattr__ = absent


def _arguments_on_this_python():
    class BooleanOptional(argparse.BooleanOptionalAction):
        def __init__(self, *args, type=None, **kwargs):  # noqa: A002 (argparse's name)
            super().__init__(*args, **kwargs)
    argparse.BooleanOptionalAction = BooleanOptional


def _cpu_collectives(torch, modules):
    """The named modules' `torch`: the real one, but tensors asked for on
    the CUDA device are made on the CPU, and the current device is "cpu"."""
    class Cuda(types.ModuleType):
        def __getattr__(self, name):
            return getattr(torch.cuda, name)

        def current_device(self):
            return "cpu"

    class Torch(types.ModuleType):
        cuda = Cuda("torch.cuda")

        def __getattr__(self, name):
            return getattr(torch, name)

        def tensor(self, *args, device=None, **kwargs):
            return torch.tensor(*args, device="cpu" if device is not None else None, **kwargs)

    for module in modules:
        module.torch = Torch("torch")


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("phase", choices=("save", "load"))
    parser.add_argument("checkpoint")
    parser.add_argument("out")
    parser.add_argument("--checkout", required=True)
    parser.add_argument("--tp", type=int, required=True)
    parser.add_argument("--pp", type=int, required=True)
    parser.add_argument("--upstream", action="store_true", help="Megatron alone: no rngtrk install()")
    parser.add_argument("--on-missing", default=None)
    return parser.parse_args()


def stream_size(name):
    """Draws per step: by name only, so replicas draw alike."""
    return 3 + len(name) % 5


def step(tracker, rt, torch):
    """One step's draws from every stream: rngtrk's, inside the fork; under
    Megatron's own tracker (--upstream), whose forks swap the emulated CUDA
    generator and which nothing here can draw from, the generator's offset
    moves as a kernel's draw would move it."""
    out = {}
    for name in tracker.get_states():
        with tracker.fork(name):
            if rt is None:
                generator = torch.cuda.default_generators[0]
                generator.set_offset(generator.get_offset() + 4 * stream_size(name))
            else:
                out[name] = rt.rand(stream_size(name)).tolist()
    return out


def states(tracker):
    import struct
    return {name: struct.unpack("<QQ", bytes(state.tolist())) for name, state in tracker.get_states().items()}


def main():
    options = parse()
    sys.meta_path.insert(0, _TritonOnly())
    sys.path.insert(0, options.checkout)
    sys.path.insert(0, HERE)
    _arguments_on_this_python()
    import numpy as np
    import torch
    torch.distributed.init_process_group("gloo")
    if not options.upstream:
        import rngtrk.torch.megatron
        rngtrk.torch.megatron.install(on_missing=options.on_missing)
    from megatron.core import parallel_state, tensor_parallel
    from megatron.core.dist_checkpointing.mapping import ShardedTensor
    from megatron.core.dist_checkpointing.strategies import state_dict_saver
    from megatron.core.num_microbatches_calculator import init_num_microbatches_calculator
    from megatron.training import checkpointing
    from megatron.training.arguments import add_megatron_arguments
    from megatron.training.global_vars import set_args
    from megatron.training.initialize import _set_random_seed
    import cuda_emulation
    import rngtrk.torch as rt
    rt = None if options.upstream else rt
    _cpu_collectives(torch, (checkpointing, state_dict_saver))
    cuda_emulation.emulate()  # after the imports: some of Megatron's modules probe the device when imported
    # Megatron's own random.py (--upstream) reads the generator through torch.cuda.random, and bound
    # torch.cuda's _lazy_call, which sets it, when imported
    torch.cuda.random.get_rng_state, torch.cuda.random.set_rng_state = torch.cuda.get_rng_state, torch.cuda.set_rng_state
    if options.upstream:
        tensor_parallel.random._lazy_call = torch.cuda._lazy_call

    world, rank = torch.distributed.get_world_size(), torch.distributed.get_rank()
    parallel_state.initialize_model_parallel(options.tp, options.pp)
    args, _ = add_megatron_arguments(argparse.ArgumentParser(allow_abbrev=False)).parse_known_args([])
    vars(args).update(  # what Megatron's argument validation derives, and a checkpoint setting of this test
        tensor_model_parallel_size=options.tp, pipeline_model_parallel_size=options.pp, world_size=world,
        data_parallel_size=world // (options.tp * options.pp), seed=SEED, save=options.checkpoint,
        load=options.checkpoint, ckpt_format="torch_dist", use_dist_ckpt=True, no_save_optim=True,
        no_load_optim=True, save_tokenizer_assets=False, dist_ckpt_strictness="assume_ok_unexpected")
    set_args(args)
    init_num_microbatches_calculator(rank, None, args.data_parallel_size, 1, args.data_parallel_size)
    _set_random_seed(SEED)
    tracker = tensor_parallel.get_cuda_rng_tracker()

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.arange(4.0))

        def sharded_state_dict(self, prefix="", sharded_offsets=(), metadata=None):
            return {"weight": ShardedTensor.from_rank_offsets("weight", self.weight.data, replica_id=rank)}

    model = [Model()]
    record = {"rank": rank, "layout": (parallel_state.get_tensor_model_parallel_rank(),
                                       parallel_state.get_pipeline_model_parallel_rank(),
                                       parallel_state.get_data_parallel_rank()),
              "error": None}
    if options.phase == "save":
        for _ in range(ITERATION):
            step(tracker, rt, torch)
        record["states"] = states(tracker)
        checkpointing.save_checkpoint(ITERATION, model, None, None, num_floating_point_operations_so_far=0)
    else:
        before = states(tracker)
        try:
            checkpointing.load_checkpoint(model, None, None)
        except Exception as e:  # noqa: BLE001 (recorded for the runner)
            record["error"] = (type(e).__name__, str(e), traceback.format_exc())
        record["states"] = states(tracker)
        record["unchanged"] = record["states"] == before
    record["draws"] = [step(tracker, rt, torch) for _ in range(STEPS)]
    record["process"] = (random.random(), float(np.random.rand()), torch.rand(1).item())
    os.makedirs(options.out, exist_ok=True)
    torch.save(record, os.path.join(options.out, f"rank{rank}.pt"))
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
