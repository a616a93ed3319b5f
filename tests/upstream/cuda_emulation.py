# SPDX-License-Identifier: Apache-2.0
"""A CPU stand-in for torch's default CUDA generator (ours, not PyTorch's
code), so that upstream RNG tests whose CUDA use is only the generator's
state can run on CPU-only torch.

emulate() makes torch.cuda report one device whose default generator is an
EmulatedGenerator: a 16-byte state, seed then offset as two little-endian
u64 (torch.cuda.get_rng_state()'s layout), that manual_seed sets to
(seed, 0), and whose get_offset/set_offset read and write the offset
(torch 2.1 and later).  It draws nothing: a test that runs a CUDA kernel still fails,
and says so.  The functions replaced are the generator's (get/set_rng_state,
manual_seed[_all], initial_seed, default_generators, _lazy_call) and the
device queries they need (is_available, device_count, current_device,
init, is_current_stream_capturing), and synchronize, a no-op (no kernel
ever runs; Megatron-LM's checkpoint writer calls it before a save)."""
import struct

import torch


class EmulatedGenerator:
    """The default CUDA generator's state, on the CPU."""

    def __init__(self):
        self._seed, self._offset = 67280421310721, 0  # torch's default seed

    def manual_seed(self, seed):
        self._seed, self._offset = int(seed) & (2 ** 64 - 1), 0
        return self

    def initial_seed(self):
        return self._seed

    def get_state(self):
        return torch.frombuffer(bytearray(struct.pack("<QQ", self._seed, self._offset)), dtype=torch.uint8)

    def get_offset(self):
        return self._offset

    def set_offset(self, offset):
        self._offset = int(offset)

    def set_state(self, state):
        if not isinstance(state, torch.Tensor) or state.dtype != torch.uint8 or state.numel() != 16:
            raise RuntimeError("RNG state must be a torch.ByteTensor of 16 bytes")
        self._seed, self._offset = struct.unpack("<QQ", state.contiguous().numpy().tobytes())
        return self

    @property
    def device(self):
        return torch.device("cuda", 0)


GENERATOR = EmulatedGenerator()


def emulate():
    """Replaces torch.cuda's generator functions (module text); returns the generator."""
    cuda = torch.cuda
    cuda.is_available = lambda: True
    cuda.device_count = lambda: 1
    cuda.current_device = lambda: 0
    cuda.init = lambda: None
    cuda._lazy_init = lambda: None
    cuda._lazy_call = lambda callable, **kwargs: callable()
    cuda.is_current_stream_capturing = lambda: False
    cuda.synchronize = lambda device=None: None
    cuda.default_generators = (GENERATOR,)
    cuda.manual_seed = lambda seed: GENERATOR.manual_seed(seed) and None
    cuda.manual_seed_all = cuda.manual_seed
    cuda.initial_seed = GENERATOR.initial_seed
    cuda.get_rng_state = lambda device="cuda": GENERATOR.get_state()
    cuda.set_rng_state = lambda new_state, device="cuda": GENERATOR.set_state(new_state) and None
    return GENERATOR
