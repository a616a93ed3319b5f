# SPDX-License-Identifier: Apache-2.0
"""torch's own activation checkpointing replays rngtrk.torch's draws
(rngtrk.torch._rng_state_hook): torch.utils.checkpoint with use_reentrant
True and False and checkpoint_sequential recompute exactly the numbers the
forward drew — outside forks, in forks inside the checkpointed function,
and in a fork written around the checkpoint call — so gradients equal the
run without checkpointing and the trackers end where that run ends; with
the ledger on, the recompute is proven to draw what the forward drew, and a
recompute that draws otherwise raises ReplayMismatchError from backward.
Each test would fail without the hook (shown by running it with torch's
own two functions).  Runs on every torch (1.13 and newer, CPU-only);
test_torch_compile.py covers torch.compile, test_torch_cuda_compile.py CUDA."""
import io

import pytest

import rngtrk

torch = pytest.importorskip("torch", reason="PyTorch is not installed here (tools/install-deps.sh torch)")
import rngtrk.torch as rt  # noqa: E402  (after the skip)
from rngtrk.torch import _rng_state_hook  # noqa: E402
from torch.utils.checkpoint import checkpoint, checkpoint_sequential  # noqa: E402

pytestmark = pytest.mark.usefixtures("fresh_torch_trackers")
# With CUDA the drop-in's draws come from torch's CUDA generator, which the
# ledger does not see (docs/ledger.md): the ledger's own verdicts are CPU-only torch's.
ledger_sees_the_draws = pytest.mark.skipif(rt._generators.cuda_ready(), reason="torch has a CUDA device here: the "
                                           "process tracker draws from torch's CUDA generator, which the ledger does "
                                           "not see (docs/ledger.md)")

W = torch.randn(16, 16, generator=torch.Generator().manual_seed(7))


def seeded():
    rt.model_parallel_cuda_manual_seed(1234, tp_rank=1, ep_rank=0, etp_rank=0)
    return rt.get_cuda_rng_tracker()


def block(x):
    """Draws outside forks, in a fork, in a fork of the same name inside it
    (one stream: Megatron's double fork) and after: every case at once."""
    tracker = rt.get_cuda_rng_tracker()
    y = rt.dropout(x @ W, 0.5)
    with tracker.fork():
        y = rt.dropout(y, 0.5) * rt.rand(y.shape)
        with tracker.fork():
            y = y + rt.randn(y.shape)
    return rt.dropout(y.tanh(), 0.2)


def inputs():
    return torch.randn(8, 16, generator=torch.Generator().manual_seed(0)).requires_grad_()


def after(tracker):
    """Every state a tracker holds, as bytes (the generator included)."""
    return tracker.tracker.save(), tracker.generator_state()


def run(how, ledger=False):
    """(output, gradient, tracker afterwards) of one step of block() from
    the seeded state, checkpointed `how`."""
    tracker = seeded()
    tracker.tracker.set_ledger("raise" if ledger else "off")
    x = inputs()
    if how == "plain":
        out = block(x)
    elif how == "plain-in-fork":
        with tracker.fork():
            out = block(x)
    elif how in ("reentrant", "non-reentrant"):
        out = checkpoint(block, x, use_reentrant=how == "reentrant")
    elif how in ("reentrant-in-fork", "non-reentrant-in-fork"):
        with tracker.fork():
            out = checkpoint(block, x, use_reentrant=how.startswith("reentrant"))
    elif how == "sequential":
        layers = torch.nn.Sequential(*[Block() for _ in range(4)])
        out = checkpoint_sequential(layers, 2, x, **({} if torch.__version__ < "2" else {"use_reentrant": False}))
    elif how == "sequential-plain":
        out = torch.nn.Sequential(*[Block() for _ in range(4)])(x)
    out.sum().backward()
    return out.detach(), x.grad, after(tracker)


class Block(torch.nn.Module):
    def forward(self, x):
        return block(x)


def same(a, b):
    return torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]) and a[2] == b[2]


@pytest.mark.parametrize("ledger", [False, True], ids=["ledger-off", "ledger-raise"])
@pytest.mark.parametrize("how", ["reentrant", "non-reentrant"])
def test_a_checkpointed_block_recomputes_the_forwards_numbers(how, ledger):
    assert same(run(how, ledger), run("plain"))


@pytest.mark.parametrize("ledger", [False, True], ids=["ledger-off", "ledger-raise"])
@pytest.mark.parametrize("how", ["reentrant-in-fork", "non-reentrant-in-fork"])
def test_a_fork_around_the_checkpoint_call_is_entered_again_for_the_recompute(how, ledger):
    """Megatron-LM's sequence-parallel block forks around the call: the
    fork is closed when backward recomputes, and the block forks the same
    name again inside, which must continue the stream as in the forward."""
    assert same(run(how, ledger), run("plain-in-fork"))


@pytest.mark.parametrize("ledger", [False, True], ids=["ledger-off", "ledger-raise"])
def test_checkpoint_sequential_recomputes_the_forwards_numbers(ledger):
    assert same(run("sequential", ledger), run("sequential-plain"))


@pytest.mark.parametrize("how", ["reentrant", "non-reentrant", "reentrant-in-fork", "non-reentrant-in-fork"])
def test_torch_alone_recomputes_other_numbers(how):
    """What torch does without rngtrk's states in its RNG state: the tests
    above fail."""
    reference = run("plain-in-fork" if how.endswith("in-fork") else "plain")
    _rng_state_hook.uninstall()
    try:
        checkpointed = run(how)
    finally:
        _rng_state_hook.install()
    assert torch.equal(checkpointed[0], reference[0]), "the forward draws the same"
    assert not torch.equal(checkpointed[1], reference[1]), "the recompute draws other masks"


@ledger_sees_the_draws
@pytest.mark.parametrize("how", ["reentrant", "non-reentrant"])
def test_a_recompute_that_draws_otherwise_raises_from_backward(how):
    tracker = seeded()
    tracker.tracker.set_ledger("raise")
    calls = []

    def drifting(x):
        calls.append(1)
        if len(calls) == 2:  # the recompute: one draw more, first
            rt.rand(8)
        return block(x)

    out = checkpoint(drifting, inputs(), use_reentrant=how == "reentrant")
    # (torch 1.13's non-reentrant checkpoint wraps it in a RuntimeError that names it)
    with pytest.raises((rngtrk.ReplayMismatchError, RuntimeError),
                       match="expected state '\\(default\\)' seed 1234 offsets \\[0, 128\\)"):
        out.sum().backward()


def test_a_recompute_that_stops_early_is_no_error():
    """torch's non-reentrant checkpoint stops recomputing once backward has
    what it needs: a draw after that is not repeated, and the ledger's
    replay accepts that."""
    if not hasattr(torch.utils.checkpoint, "set_checkpoint_early_stop"):
        pytest.skip(f"torch {torch.__version__}'s non-reentrant checkpoint never stops early")
    tracker = seeded()
    tracker.tracker.set_ledger("raise")

    def tail_unused(x):
        y = rt.dropout(x @ W, 0.5)
        rt.rand(64)  # nothing backward needs depends on it
        return y

    x = inputs()
    checkpoint(tail_unused, x, use_reentrant=False).sum().backward()
    got = x.grad, after(tracker)
    tracker.tracker.set_ledger("off")
    seeded()  # the same step without checkpointing
    x = inputs()
    tail_unused(x).sum().backward()
    assert torch.equal(got[0], x.grad) and got[1] == after(tracker)


def test_fork_rng_rewinds_rngtrks_states():
    tracker = seeded()
    before = after(tracker)
    with torch.random.fork_rng():
        first = rt.rand(8)
        with tracker.fork():
            rt.rand(8)
    assert after(tracker) == before, "fork_rng puts torch's RNG state back, rngtrk's included"
    assert torch.equal(rt.rand(8), first)


@ledger_sees_the_draws
def test_a_draw_after_fork_rng_rewound_is_reuse():
    """Outside a backward pass a rewind is a rewind: the same numbers again."""
    tracker = seeded()
    tracker.tracker.set_ledger("raise")
    with torch.random.fork_rng():
        rt.rand(8)
    with pytest.raises(rngtrk.StreamReuseError):
        rt.rand(8)


def test_a_plain_tracker_drawn_from_is_restored_too():
    t = rngtrk.Tracker()
    t.manual_seed(99)
    x = inputs()

    def f(x):
        return rt.dropout(x @ W, 0.5, tracker=t)

    start = t.save()
    reference = f(x)
    reference.sum().backward()
    expected, end = x.grad.clone(), t.save()
    t.load(start)
    x.grad = None
    checkpoint(f, x, use_reentrant=False).sum().backward()
    assert torch.equal(x.grad, expected) and t.save() == end


def test_the_saved_state_pickles_as_torchs_own():
    tracker = seeded()
    state = torch.get_rng_state()
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)
    assert type(loaded) is torch.Tensor and torch.equal(loaded, _rng_state_hook.torch_get_rng_state())
    rt.rand(8)
    moved = after(tracker)
    torch.set_rng_state(loaded)  # a tensor the hook never saw: torch's state only
    assert after(tracker) == moved, "rngtrk's states stay where they are"


@ledger_sees_the_draws
def test_a_recompute_that_raises_is_abandoned_and_its_tracker_put_back():
    """A backward that restores the saved state by hand (as Megatron-LM's
    checkpoint does, with no finally) and raises mid-recompute: the next
    draw finds the replay abandoned and the tracker where the forward left
    it, so it draws new numbers, not the recompute's again."""
    class Recomputed(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.saved = torch.get_rng_state()
            return x * rt.rand(x.shape)

        @staticmethod
        def backward(ctx, grad):
            torch.set_rng_state(ctx.saved)
            rt.rand(grad.shape)  # the forward's draw again (the ledger's replay proves it)
            raise ValueError("the recompute failed")

    tracker = seeded()
    tracker.tracker.set_ledger("raise")
    x = inputs()
    out = Recomputed.apply(x)
    with pytest.raises(ValueError, match="the recompute failed"):
        out.sum().backward()
    late = rt.rand(8)  # no StreamReuseError: not the recompute's numbers
    tracker.tracker.set_ledger("off")
    seeded()  # the reference: the forward's draw, then this one
    rt.rand(x.shape)
    assert torch.equal(late, rt.rand(8)), "the draw after the failed backward continues the forward's stream"


@ledger_sees_the_draws
@pytest.mark.parametrize("reentrant", [True, False], ids=["reentrant", "non-reentrant"])
def test_a_plain_trackers_fork_around_the_checkpoint_is_entered_again(reentrant):
    """rngtrk.Tracker's own fork() written around the call, the ledger
    proving the recompute: the recompute draws in the fork again."""
    def step(checkpointed):
        t = rngtrk.Tracker()
        t.manual_seed(99)
        t.add("dropout", 5)
        t.set_ledger("raise")
        x = inputs()

        def f(x):
            return rt.dropout(x @ W, 0.5, tracker=t) * rt.rand(8, 16, tracker=t)
        with t.fork("dropout"):
            out = checkpoint(f, x, use_reentrant=reentrant) if checkpointed else f(x)
        out.sum().backward()
        return x.grad, t.save()

    got, expected = step(True), step(False)
    assert torch.equal(got[0], expected[0]) and got[1] == expected[1]


def test_rngtrks_own_checkpoint_and_a_torch_checkpoint_inside_it_replay_once():
    """Megatron's checkpoint (rngtrk.torch.megatron's) saves the states
    itself and opens its own replay; a torch checkpoint inside it adds its
    own, nested: both recomputes draw the forward's numbers."""
    import rngtrk.torch.megatron as m
    reference = run("plain")
    tracker = seeded()
    tracker.tracker.set_ledger("raise")
    x = inputs()
    out = m.checkpoint(lambda x: checkpoint(block, x, use_reentrant=False), False, x)
    out.sum().backward()
    assert torch.equal(out.detach(), reference[0]) and torch.equal(x.grad, reference[1])
    assert after(tracker) == reference[2]
