# SPDX-License-Identifier: Apache-2.0
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
    PhiloxState or any form rngtrk.torch.state_of takes; a list (or tuple)
    of them gives a batch of keys, shape (n, 2), as torch.func._random.split
    makes.  A state whose offset is not a multiple of 4 has no key:
    InvalidArgumentError (in a batch, naming its index)."""
    dtype = _uint64()
    if isinstance(state, (list, tuple)) and not isinstance(state, PhiloxState):
        rows = [_key_words(one, f"state {i}") for i, one in enumerate(state)]
        return torch.tensor(rows, dtype=dtype, device=device).reshape(len(rows), 2)
    return torch.tensor(_key_words(state, "state"), dtype=dtype, device=device)


def _key_words(state, what):
    state = state_of(state, what)
    if state.offset % KEY_NUMBERS_PER_OFFSET:
        raise invalid(f"{what}: offset {state.offset} is not a multiple of {KEY_NUMBERS_PER_OFFSET}: a torch "
                      f"key's offset counts blocks of {KEY_NUMBERS_PER_OFFSET} numbers, so no key stands for it")
    return [state.seed, state.offset // KEY_NUMBERS_PER_OFFSET]


def state_from_key(key):
    """The PhiloxState (seed, 4 * offset) of one torch.func._random key (a
    uint64 tensor of shape (2,), on any device), or the list of them of a
    batch of keys, shape (n, 2) (what torch.func._random.split gives).
    Another dtype or shape is a StateFormatError; an offset whose 4 *
    offset passes 2^64 - 1 an RngtrkOverflowError (in a batch, naming its
    row), and nothing is returned."""
    dtype = _uint64()
    if not isinstance(key, torch.Tensor):
        raise TypeError(f"a key is a uint64 tensor [seed, offset] (torch.func._random.key), not a "
                        f"{type(key).__name__}")
    shape = tuple(key.shape)
    if key.dtype != dtype or not (shape == (2,) or (len(shape) == 2 and shape[1] == 2)):
        raise StateFormatError(f"a key is a uint64 tensor of shape (2,), and a batch of keys one of shape "
                               f"(n, 2) (torch.func._random), not {key.dtype} of shape {shape}")
    words = key.detach().cpu().view(torch.int64).tolist()  # (uint64 tolist is not on every torch)
    if len(shape) == 1:
        return _state_of_words(words, "key")
    return [_state_of_words(row, f"key {i} of the batch") for i, row in enumerate(words)]


def _state_of_words(words, what):
    seed, offset = (w % (1 << 64) for w in words)
    if offset >= (1 << 64) // KEY_NUMBERS_PER_OFFSET:
        raise RngtrkOverflowError(f"{what}: offset {offset}: {KEY_NUMBERS_PER_OFFSET} x offset passes 2^64 - 1, "
                                  "past any PhiloxState")
    return PhiloxState(seed, offset * KEY_NUMBERS_PER_OFFSET)
