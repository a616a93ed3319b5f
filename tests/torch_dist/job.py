# SPDX-License-Identifier: Apache-2.0
"""A small tensor- and data-parallel training job on torch.distributed
(gloo, CPU), run by tests/torch_dist/run.sh under torch.distributed.run.

    --phase train  : 4 ranks, tp=2 x dp=2, STEPS steps; checkpoints at step K
    --phase resume : 2 ranks, tp=2 x dp=1, resumes at step K

Each step, per rank:
  * a column-parallel linear layer: the rank holds 16 of the activation's 32
    columns;
  * dropout on the activation with rngtrk.torch.dropout_slice, drawn from a
    sharding-invariant tracker (one stream for the whole tensor, the same
    on every rank): an all_gather over the TP group must equal the
    unsharded mask drawn on one rank;
  * Megatron-style seeding from the process groups
    (model_parallel_cuda_manual_seed with tp_group, the CPU variant), a
    dropout on "model-parallel-rng", and one all_gather of tracker digests:
    data-parallel replicas must be equal, tensor-parallel shards different;
  * a backward pass and an SGD step with the gradient all-reduced over DP.

At step K every rank saves its trackers' state_dict() with torch.save.  The
resume phase loads them on another layout and must draw, at steps K..STEPS-1,
exactly the masks the uninterrupted run drew (rank 0 of the train phase
wrote them); the resume phase shards the activation by rows instead of
columns, and still gets them.  A rank given another tensor-parallel rank's
Megatron checkpoint is refused with WrongRankError, and takes it with
any_rank=True.  Any failed check raises, so the launcher exits non-zero.
"""
import argparse
import os
import sys
import traceback

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python"))
import rngtrk  # noqa: E402
import rngtrk.torch as rt  # noqa: E402
from rank_end import end_rank  # noqa: E402 (this folder)

BATCH, HIDDEN, FEATURES = 8, 32, 12
SEED = 1234
P = 0.25


def groups(tp_size, dp_size):
    """(this rank's tp rank, dp rank, tp group, dp group): tp fastest, as Megatron-LM."""
    rank = dist.get_rank()
    tp_groups = [dist.new_group([d * tp_size + t for t in range(tp_size)]) for d in range(dp_size)]
    dp_groups = [dist.new_group([d * tp_size + t for d in range(dp_size)]) for t in range(tp_size)]
    tp, dp = rank % tp_size, rank // tp_size
    return tp, dp, tp_groups[dp], dp_groups[tp]


def sharded_tracker():
    t = rngtrk.Tracker()
    t.add("sharded-dropout-rng", SEED + 99)  # the same stream on every rank
    return t


def step_masks(step_tracker, tp, tp_size, tp_group, by_rows):
    """This rank's box of the step's dropout mask, gathered over TP: the full mask."""
    if by_rows:
        rows = BATCH // tp_size
        start, local = (tp * rows, 0), (rows, HIDDEN)
    else:
        cols = HIDDEN // tp_size
        start, local = (0, tp * cols), (BATCH, cols)
    with step_tracker.fork("sharded-dropout-rng"):
        box = rt.dropout_slice(torch.ones(local), (BATCH, HIDDEN), start, P, tracker=step_tracker)
    pieces = [torch.empty(local) for _ in range(tp_size)]
    dist.all_gather(pieces, box, group=tp_group)
    return torch.cat(pieces, dim=0 if by_rows else 1)


def check(condition, message):
    if not condition:
        raise AssertionError(f"rank {dist.get_rank()}: {message}")


def train(args):
    tp_size, dp_size = 2, 2
    tp, dp, tp_group, dp_group = groups(tp_size, dp_size)
    rt.model_parallel_cuda_manual_seed(SEED, tp_group=tp_group, ep_rank=0, etp_rank=0, force_reset_rng=True)
    megatron = rt.get_cuda_rng_tracker()
    check(megatron.tracker.get_state("model-parallel-rng").seed == SEED + 2718 + tp, "seeds from the TP group")
    shard = sharded_tracker()
    weight = torch.full((FEATURES, HIDDEN // tp_size), 0.01 * (tp + 1), requires_grad=True)
    recorded = []
    for step in range(args.steps):
        if step == args.save_at:
            torch.save({"megatron": megatron.state_dict(), "sharded": {rt.CHECKPOINT_KEY: shard.save()}},
                       os.path.join(args.dir, f"rank{dist.get_rank()}.pt"))
        x = torch.arange(BATCH * FEATURES, dtype=torch.float32).reshape(BATCH, FEATURES) / 100 + dp
        h = x @ weight
        drawn_from = shard.get_state("sharded-dropout-rng")
        mask = step_masks(shard, tp, tp_size, tp_group, by_rows=False)
        # The gathered mask equals the unsharded mask drawn here alone.
        unsharded = rt.dropout(torch.ones(BATCH, HIDDEN), P, state=drawn_from)
        check(torch.equal(mask, unsharded), f"step {step}: the TP shards' masks are the unsharded mask")
        recorded.append(mask)
        cols = HIDDEN // tp_size
        y = h * mask[:, tp * cols:(tp + 1) * cols]
        with megatron.fork():
            y = rt.dropout(y, 0.1)  # per-TP-rank stream, Megatron's tensor-parallel region
        y.sum().backward()
        with torch.no_grad():
            dist.all_reduce(weight.grad, group=dp_group)
            weight -= 0.001 * weight.grad
            weight.grad.zero_()
        # Desync detection: one all_gather of 8-byte digests.
        digests = [torch.zeros(1, dtype=torch.int64) for _ in range(dist.get_world_size())]
        dist.all_gather(digests, torch.tensor([megatron.tracker.digest() - (1 << 63)], dtype=torch.int64))
        table = {(r % tp_size, r // tp_size): int(d) for r, d in enumerate(digests)}
        check(table[(tp, 0)] == table[(tp, 1)], f"step {step}: data-parallel replicas have equal trackers")
        check(table[(0, dp)] != table[(1, dp)], f"step {step}: tensor-parallel shards have different trackers")
    if dist.get_rank() == 0:
        torch.save(recorded, os.path.join(args.dir, "masks.pt"))


def resume(args):
    tp_size, dp_size = 2, 1
    tp, dp, tp_group, dp_group = groups(tp_size, dp_size)
    rank = dist.get_rank()
    rt.model_parallel_cuda_manual_seed(SEED, tp_group=tp_group, ep_rank=0, etp_rank=0, force_reset_rng=True)
    megatron = rt.get_cuda_rng_tracker()
    # The old rank with the same tp (rank = dp * 2 + tp, dp 0) has the same streams.
    same = torch.load(os.path.join(args.dir, f"rank{tp}.pt"))
    megatron.load_state_dict(same["megatron"])
    other = torch.load(os.path.join(args.dir, f"rank{1 - tp}.pt"))
    before = megatron.tracker.save()
    try:
        megatron.load_state_dict(other["megatron"])
        check(False, "another TP rank's checkpoint must be refused")
    except rngtrk.WrongRankError:
        pass
    check(megatron.tracker.save() == before, "a refused load changes nothing")
    taker = rt.CudaRNGStatesTracker()
    taker.tracker.seed_rank("megatron", SEED, tp=tp)
    taker.load_state_dict(other["megatron"], any_rank=True)  # told to: taken, with the other rank's origin
    check(taker.tracker.origin().tp == 1 - tp, "any_rank=True takes the other rank's checkpoint")
    # The sharding-invariant tracker is the same on every old rank: take rank 0's.
    shard = rngtrk.Tracker()
    shard.load(same["sharded"][rt.CHECKPOINT_KEY])
    check(shard.save() == torch.load(os.path.join(args.dir, "rank0.pt"))["sharded"][rt.CHECKPOINT_KEY],
          "every rank saved the same sharded tracker")
    recorded = torch.load(os.path.join(args.dir, "masks.pt"))
    for step in range(args.save_at, args.steps):
        mask = step_masks(shard, tp, tp_size, tp_group, by_rows=True)
        check(torch.equal(mask, recorded[step]), f"step {step}: the resumed run draws what the first run drew")
    if rank == 0:
        print(f"resumed on tp=2 x dp=1 (rows instead of columns): steps {args.save_at}..{args.steps - 1} "
              "drew the first run's masks; WrongRankError for another TP rank's checkpoint", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--phase", choices=["train", "resume"], required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--save-at", type=int, default=3)
    args = parser.parse_args()
    dist.init_process_group("gloo")
    try:
        (train if args.phase == "train" else resume)(args)
        dist.barrier()
    except BaseException:
        traceback.print_exc()
        end_rank(1)
    end_rank()


if __name__ == "__main__":
    main()
