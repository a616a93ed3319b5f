"""PyTorch's stateless PRNG keys (torch.func._random) and rngtrk's states.

A Philox4x32-10 key of torch.func._random is a uint64 tensor (seed,
offset) whose offset counts Philox blocks of four 32-bit numbers; a
PhiloxState's offset counts the numbers.  So the key (seed, o) is the
state (seed, 4 * o), and a state whose offset is not a multiple of 4 has
no key.  Under that reading torch's uniform from a key is rngtrk's
stateless uniform from the state, every float dtype and range, and
torch's fold_in(key, d) (split(key, n)[d]) is the key of
rngtrk.fold_in(state, d) read as a key: (seed', offset') as they are,
the offset in blocks.  docs/pytorch.md, "PyTorch's stateless keys",
says what was measured, and what differs (normal).
"""
import torch

from ..errors import RngtrkOverflowError, UnavailableError, invalid
from ..state import PhiloxState
from ._generators import StateFormatError, state_of

KEY_NUMBERS_PER_OFFSET = 4  # a key's offset counts blocks of 4 32-bit numbers
_UINT64 = getattr(torch, "uint64", None)  # torch >= 2.3


def _uint64():
    if _UINT64 is None:
        raise UnavailableError(f"torch {torch.__version__} has no uint64 tensors, the dtype of PyTorch's "
                               "stateless keys (torch >= 2.3)")
    return _UINT64


def key_from_state(state, *, device=None):
    """The torch.func._random key (a uint64 tensor [seed, offset / 4] on
    `device`, default CPU) that draws what `state` draws.  `state`: a
    PhiloxState or any form rngtrk.torch.state_of takes.  A state whose
    offset is not a multiple of 4 has no key: InvalidArgumentError."""
    dtype = _uint64()
    state = state_of(state)
    if state.offset % KEY_NUMBERS_PER_OFFSET:
        raise invalid(f"state offset {state.offset} is not a multiple of {KEY_NUMBERS_PER_OFFSET}: a torch key's "
                      f"offset counts blocks of {KEY_NUMBERS_PER_OFFSET} numbers, so no key stands for it")
    return torch.tensor([state.seed, state.offset // KEY_NUMBERS_PER_OFFSET], dtype=dtype, device=device)


def state_from_key(key):
    """The PhiloxState (seed, 4 * offset) of one torch.func._random key (a
    uint64 tensor of shape (2,), on any device).  A batch of keys, another
    dtype or shape is a StateFormatError; an offset whose 4 * offset passes
    2^64 - 1 an RngtrkOverflowError."""
    dtype = _uint64()
    if not isinstance(key, torch.Tensor):
        raise TypeError(f"a key is a uint64 tensor [seed, offset] (torch.func._random.key), not a "
                        f"{type(key).__name__}")
    if key.dtype != dtype or tuple(key.shape) != (2,):
        raise StateFormatError(f"a key is a uint64 tensor of shape (2,) (torch.func._random.key), not "
                               f"{key.dtype} of shape {tuple(key.shape)}; index a batch of keys first")
    words = key.detach().cpu().view(torch.int64).tolist()  # (uint64 tolist is not on every torch)
    seed, offset = (w % (1 << 64) for w in words)
    if offset >= (1 << 64) // KEY_NUMBERS_PER_OFFSET:
        raise RngtrkOverflowError(f"key offset {offset}: {KEY_NUMBERS_PER_OFFSET} x offset passes 2^64 - 1, "
                                  "past any PhiloxState")
    return PhiloxState(seed, offset * KEY_NUMBERS_PER_OFFSET)
