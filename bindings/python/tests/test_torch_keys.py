# SPDX-License-Identifier: Apache-2.0
"""PyTorch's stateless PRNG keys (torch.func._random, torch 2.14 of Debian
unstable) and rngtrk's states (rngtrk.torch.key_from_state /
state_from_key): the key (seed, o) is the state (seed, 4 * o).  Against
torch itself where it has the module: its uniform from a key equals
rngtrk's stateless uniform from the state (every float dtype, ranges,
seeds past 2^63); its fold_in and split equal rngtrk.fold_in read as a
key; and what differs (a chain of fold_in, normal) is shown, as
docs/pytorch.md says.  The conversions alone need uint64 tensors (torch >=
2.3); torch 1.13 refuses them clearly."""
import random

import pytest

import rngtrk

torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
import rngtrk.torch as rt  # noqa: E402
from rngtrk.torch._generators import StateFormatError  # noqa: E402

HAS_UINT64 = hasattr(torch, "uint64")
try:
    from torch.func import _random as keys  # noqa: E402
except ImportError:
    keys = None
needs_uint64 = pytest.mark.skipif(not HAS_UINT64, reason=f"torch {torch.__version__} has no uint64 tensors (2.3)")
needs_keys = pytest.mark.skipif(keys is None, reason=f"torch {torch.__version__} has no torch.func._random")

CASES = [(42, 0), (7, 12), (2**64 - 1, 2**40), (2**63 + 5, 4 * 977)] + \
    [(random.Random(i).getrandbits(64), 4 * random.Random(i).getrandbits(40)) for i in range(8)]


@pytest.mark.skipif(HAS_UINT64, reason="this torch has uint64 tensors")
def test_without_uint64_the_conversions_say_so():
    with pytest.raises(rngtrk.UnavailableError, match="uint64"):
        rt.key_from_state(rngtrk.PhiloxState(1, 0))


@needs_uint64
def test_a_key_is_the_seed_and_the_offset_in_blocks_of_four():
    for seed, offset in CASES:
        state = rngtrk.PhiloxState(seed, offset)
        key = rt.key_from_state(state)
        assert key.dtype == torch.uint64 and tuple(key.shape) == (2,)
        assert key.view(torch.int64).tolist() == [w - (1 << 64) if w >= 1 << 63 else w for w in (seed, offset // 4)]
        assert rt.state_from_key(key) == state
    assert rt.key_from_state(rt.state_tensor(rngtrk.PhiloxState(3, 8))).view(torch.int64).tolist() == [3, 2]


@needs_uint64
def test_states_without_a_key_and_keys_without_a_state_are_refused():
    with pytest.raises(rngtrk.InvalidArgumentError, match="offset 6 is not a multiple of 4"):
        rt.key_from_state(rngtrk.PhiloxState(1, 6))
    with pytest.raises(rngtrk.RngtrkOverflowError, match="passes 2\\^64"):
        rt.state_from_key(torch.tensor([1, 2**62], dtype=torch.uint64))
    for shape in [(3,), (2, 3), (2, 2, 2), ()]:
        with pytest.raises(StateFormatError, match="shape"):
            rt.state_from_key(torch.zeros(shape, dtype=torch.uint64))
    with pytest.raises(ValueError, match="uint64"):
        rt.state_from_key(torch.tensor([1, 2]))
    with pytest.raises(TypeError, match="not a tuple"):
        rt.state_from_key((1, 2))


@needs_uint64
def test_a_batch_of_keys_is_a_list_of_states_and_back():
    states = [rngtrk.PhiloxState(seed, offset) for seed, offset in CASES]
    batch = rt.key_from_state(states)
    assert batch.dtype == torch.uint64 and tuple(batch.shape) == (len(CASES), 2)
    assert [rt.key_from_state(s).view(torch.int64).tolist() for s in states] == batch.view(torch.int64).tolist()
    assert rt.state_from_key(batch) == states
    assert rt.key_from_state(tuple(states)).view(torch.int64).tolist() == batch.view(torch.int64).tolist()
    assert rt.key_from_state([rt.state_tensor(states[0]), states[1].to_bytes()]).view(torch.int64).tolist() == \
        batch[:2].view(torch.int64).tolist(), "any form state_of takes"
    empty = rt.key_from_state([])
    assert tuple(empty.shape) == (0, 2) and rt.state_from_key(empty) == []
    assert rt.state_from_key(batch[1:2]) == [states[1]], "a batch of one is a list"


@needs_uint64
def test_a_bad_row_of_a_batch_is_named():
    with pytest.raises(rngtrk.InvalidArgumentError, match="state 2: offset 6 is not a multiple of 4"):
        rt.key_from_state([rngtrk.PhiloxState(1, 0), rngtrk.PhiloxState(2, 4), rngtrk.PhiloxState(3, 6)])
    with pytest.raises(TypeError, match="state 1 is a int"):
        rt.key_from_state([rngtrk.PhiloxState(1, 0), 7])
    with pytest.raises(rngtrk.RngtrkOverflowError, match="key 1 of the batch: offset"):
        rt.state_from_key(torch.tensor([[1, 2], [3, 2**62]], dtype=torch.uint64))


@needs_keys
def test_torchs_split_is_a_batch_state_from_key_reads():
    """split(key, n) is a batch; its keys whose offset a PhiloxState holds
    (most fold_in offsets are 2^62 or more: the test above) read as the
    states of its rows, and a batch with a row past it names that row."""
    overflowed = held = 0
    for seed, offset in CASES:
        split = keys.split(rt.key_from_state(rngtrk.PhiloxState(seed, offset)), 8)
        assert tuple(split.shape) == (8, 2)
        fits = [i for i in range(8) if split[i, 1].view(torch.int64).item() % (1 << 64) < 1 << 62]
        if len(fits) < 8:
            overflowed += 1
            with pytest.raises(rngtrk.RngtrkOverflowError, match=f"key {min(set(range(8)) - set(fits))} of the batch"):
                rt.state_from_key(split)
        rows = split[fits]
        theirs = rt.state_from_key(rows)
        held += len(theirs)
        assert theirs == [rt.state_from_key(row) for row in rows]
        assert rt.key_from_state(theirs).view(torch.int64).tolist() == rows.view(torch.int64).tolist()
    assert overflowed and held, (overflowed, held)


@needs_keys
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_torchs_uniform_from_a_key_is_rngtrks_from_the_state(dtype):
    for seed, offset in CASES:
        state = rngtrk.PhiloxState(seed, offset)
        theirs = keys.uniform(rt.key_from_state(state), 5, 37, dtype=dtype)
        assert torch.equal(theirs, rt.rand(5, 37, state=state, dtype=dtype)), (seed, offset)
    theirs = keys.uniform(keys.key(9), 64, low=-2.0, high=3.0, dtype=dtype)
    ours = torch.empty(64, dtype=dtype)
    rngtrk.sample(rngtrk.PhiloxState(9, 0), 64, dist="uniform", low=-2.0, high=3.0, out=ours)
    assert torch.equal(theirs, ours), "a range: the same bits"


@needs_keys
def test_torchs_fold_in_and_split_are_rngtrks_fold_in_read_as_a_key():
    for seed, offset in CASES:
        key = rt.key_from_state(rngtrk.PhiloxState(seed, offset))
        for d in (0, 1, 2, 2**63 + 3):
            ours = rngtrk.fold_in(rngtrk.PhiloxState(seed, offset), d)
            expected = [w - (1 << 64) if w >= 1 << 63 else w for w in ours]
            assert keys.fold_in(key, d).view(torch.int64).tolist() == expected, (seed, offset, d)
        split = keys.split(key, 3)
        assert [k.view(torch.int64).tolist() for k in split] == \
            [keys.fold_in(key, d).view(torch.int64).tolist() for d in range(3)]


@needs_keys
def test_what_differs_a_chain_of_fold_in_and_normal():
    """rngtrk.fold_in's result is torch's key as it is, its offset in
    blocks, which rngtrk reads as numbers: a second fold_in of it reads
    another counter than torch's second fold_in, so the derived policy's
    chain is not torch's; and most keys fold_in makes have an offset of
    2^62 or more, which no PhiloxState holds.  torch's normal uses its own
    transform, not rngtrk's Box-Muller."""
    state = rngtrk.PhiloxState(1234, 0)
    once = rngtrk.fold_in(state, 1)
    torchs = keys.fold_in(keys.fold_in(rt.key_from_state(state), 1), 5)
    assert torchs.view(torch.int64).tolist() != [w - (1 << 64) if w >= 1 << 63 else w
                                                 for w in rngtrk.fold_in(once, 5)]
    big = next(k for k in keys.split(keys.key(7), 16) if k.view(torch.int64)[1].item() < 0 or
               k.view(torch.int64)[1].item() >= 1 << 62)
    with pytest.raises(rngtrk.RngtrkOverflowError):
        rt.state_from_key(big)
    assert not torch.equal(keys.normal(keys.key(42), 64), rt.randn(64, state=rngtrk.PhiloxState(42, 0)))
