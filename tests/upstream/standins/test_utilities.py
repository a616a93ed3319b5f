# SPDX-License-Identifier: Apache-2.0
"""Stand-in for Megatron-LM's tests/unit_tests/test_utilities.py (rngtrk's
harness): Utils.initialize_model_parallel(tp, pp) sets the stand-in
parallel_state to this process's place in a tp x pp layout.  One process
(no torch.distributed) is rank 0 of every group; under
torch.distributed.run it joins a gloo world and makes real tensor-parallel
groups, so collectives over them work on the CPU."""
import os

import torch


class Utils:
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    inited = False

    @staticmethod
    def initialize_distributed():
        if Utils.world_size > 1 and not torch.distributed.is_initialized():
            torch.distributed.init_process_group("gloo")
        Utils.inited = True

    @staticmethod
    def initialize_model_parallel(tensor_model_parallel_size=1, pipeline_model_parallel_size=1,
                                  virtual_pipeline_model_parallel_size=None, **kwargs):
        from megatron.core import parallel_state
        Utils.initialize_distributed()
        tp, pp = tensor_model_parallel_size, pipeline_model_parallel_size
        world, rank = Utils.world_size, Utils.rank
        group, size = None, 1
        if world > 1:
            if world % (tp * pp):
                raise RuntimeError(f"world size {world} is not divisible by tp {tp} x pp {pp}")
            for start in range(0, world, tp):  # every rank makes every group, in the same order
                ranks = list(range(start, start + tp))
                made = torch.distributed.new_group(ranks)
                if rank in ranks:
                    group, size = made, tp
        tp_rank = rank % tp if world > 1 else 0
        parallel_state._set(tp_rank=tp_rank, tp_size=size if world > 1 else tp, tp_group=group,
                            pp_rank=(rank // tp) % pp if world > 1 else 0, dp_rank=0, ep_rank=0)
        Utils.inited = True

    @staticmethod
    def destroy_model_parallel():
        from megatron.core import parallel_state
        parallel_state.destroy_model_parallel()
        Utils.inited = False
