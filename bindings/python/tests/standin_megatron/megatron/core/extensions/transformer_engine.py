# SPDX-License-Identifier: Apache-2.0
"""Stand-in: Megatron's wrapper of TransformerEngine's tracker class."""
import transformer_engine as te


class TECudaRNGStatesTracker(te.pytorch.distributed.CudaRNGStatesTracker):
    def __init__(self, is_inference_rng_tracker=False):
        super().__init__()
        self.is_inference_rng_tracker = is_inference_rng_tracker
