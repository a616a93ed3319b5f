# SPDX-License-Identifier: Apache-2.0
"""One rank of the multi-rank DCP jobs of test_torch_dcp.py (gloo on the CPU,
started by the test without torchrun: Debian's torch 2.x has no libuv, so
torchrun's TCPStore fails; the ranks meet through a FileStore file).

    dcp_job.py PHASE --rank R --world W --store FILE --dir DIR

Each rank seeds the process tracker as Megatron-LM does
(model_parallel_cuda_manual_seed with explicit ranks: tensor-parallel
fastest, then data-parallel; expert-parallel rank = the data-parallel rank
where the layout has expert parallelism, expert-tensor-parallel rank = the
tensor-parallel rank), draws, saves or loads through DCP, and writes what
it saw to DIR/PHASE/rank{R}.pt: draws per stream (the generator outside
every fork under "<generator>"), the outcome of each attempt (its error's
class names and message), tracker snapshots.  The test asserts on those
files; this script asserts nothing itself, so a wrong outcome is reported
by the test with its context.

Draw sizes: a named stream draws a size that depends on its name only (data-
parallel replicas draw alike, so they agree at save), the generator a size
that depends on the pipeline stage, like every stream whose seed depends on
it.  The pipeline phases (stages, stages_same, random_init) seed as
Megatron-LM's training setup does, stage by stage (seed + 100 pp, and 10 dp
with --data-parallel-random-init), and draw a stage-dependent amount from
the expert-parallel stream, whose seed is the same on (pp 1, ep 0) and (pp
0, ep 1).
"""
import argparse
import os
import sys
import traceback
import warnings

os.environ["RNGTRK_DEBUG"] = "1"  # rngtrk.torch.dcp's debug mode: every table written is decoded again
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bindings/python

import torch.distributed.checkpoint as dcp  # noqa: E402

import rngtrk  # noqa: E402
import rngtrk.torch as rt  # noqa: E402
from rngtrk.torch.dcp import RNGState  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "torch_dist"))
from rank_end import end_rank  # noqa: E402 (tests/torch_dist: how every rank job ends)

SEED = 1234
SAVE_AT = 2     # steps drawn before the save
AFTER = 3       # steps drawn after it (the continuation compared across runs)
GENERATOR = "<generator>"


def layout(world, tp, expert):
    """(tp rank, dp rank, ep rank, etp rank) of this rank."""
    rank = dist.get_rank()
    t, d = rank % tp, rank // tp
    return t, d, (d if expert else 0), t


def seed(world, tp, expert):
    t, _, e, et = layout(world, tp, expert)
    rt.model_parallel_cuda_manual_seed(SEED, tp_rank=t, ep_rank=e, etp_rank=et, force_reset_rng=True)
    return rt.get_cuda_rng_tracker()


def stream_size(name):
    return 3 + sum(name.encode()) % 5


def step(tracker):
    """One step's draws: {name: values} for every named stream, and the
    generator's (outside every fork)."""
    out = {}
    for name in tracker.tracker.names():
        with tracker.fork(name):
            out[name] = rt.rand(stream_size(name))
    out[GENERATOR] = rt.rand(2 + 2 * STAGE[0])
    return out


STAGE = [0]  # this rank's pipeline stage in the pipeline phases


def steps(tracker, n):
    return [step(tracker) for _ in range(n)]


class Recorder:
    def __init__(self):
        self.data = {"rank": dist.get_rank(), "outcomes": {}, "draws": {}, "snapshots": {}, "fresh": {}, "states": {},
                     "warnings": {}}

    def attempt(self, label, fn):
        """Runs fn(); records ("ok", None) or the error's class names and message."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                fn()
                outcome = ("ok", None, "")
            except Exception as e:  # recorded for the test to judge
                outcome = ("error", [c.__name__ for c in type(e).__mro__], str(e))
        self.data["outcomes"][label] = outcome
        self.data["warnings"][label] = [(type(w.message).__name__, str(w.message)) for w in caught
                                        if "RNGState" in str(w.message)]
        return outcome[0] == "ok"

    def snapshot(self, label, tracker):
        self.data["snapshots"][label] = tracker.state_dict()[rt.CHECKPOINT_KEY]

    def save(self, path):
        torch.save(self.data, path)


def path(args, name):
    return os.path.join(args.dir, name)


def train(args, rec):
    """4 ranks, tp=2 x dp=2 with expert parallelism over dp: checkpoints at
    SAVE_AT (RNGState, and the two naive ways), then the uninterrupted
    continuation; then ranks that disagree on one stream try to save."""
    tracker = seed(4, 2, expert=True)
    steps(tracker, SAVE_AT)
    rec.snapshot("at_save", tracker)
    rec.attempt("save", lambda: dcp.save({"rng": RNGState()}, checkpoint_id=path(args, "main")))
    rec.attempt("save_generator_off", lambda: dcp.save({"rng": RNGState(generator=False)},
                                                       checkpoint_id=path(args, "main_no_generator")))
    rec.attempt("naive_bytes", lambda: dcp.save({"rng": tracker.state_dict()}, checkpoint_id=path(args, "naive_bytes")))
    rec.attempt("naive_tensors", lambda: dcp.save({"rng": tracker.get_states()},
                                                  checkpoint_id=path(args, "naive_tensors")))
    rec.snapshot("after_saves", tracker)
    rec.data["draws"]["after"] = steps(tracker, AFTER)
    # Rank 2 (tp 0, dp 1) draws once more from "model-parallel-rng": rank 0
    # holds that stream too, at another position now.
    if dist.get_rank() == 2:
        with tracker.fork("model-parallel-rng"):
            rt.rand(1)
    rec.snapshot("before_disagreeing_save", tracker)
    rec.attempt("disagreeing_save", lambda: dcp.save({"rng": RNGState()}, checkpoint_id=path(args, "disagree")))
    rec.snapshot("after_disagreeing_save", tracker)


def load_main(rec, tracker, label, args, checkpoint="main", **options):
    state = RNGState(**options)
    ok = rec.attempt(label, lambda: dcp.load({"rng": state}, checkpoint_id=path(args, checkpoint)))
    rec.data["fresh"][label] = tuple(tuple(s) for s in state.fresh)
    return ok


def same(args, rec):
    """4 ranks, the saving layout: the naive ways first, then RNGState."""
    tracker = seed(4, 2, expert=True)
    # 1. {"rng": tracker.state_dict()}: one rank's bytes come back on every rank.
    naive = {"rng": tracker.state_dict()}
    dcp.load(naive, checkpoint_id=path(args, "naive_bytes"))
    rec.data["naive_bytes_loaded"] = naive["rng"][rt.CHECKPOINT_KEY]
    rec.attempt("naive_bytes_load", lambda: tracker.load_state_dict(naive["rng"]))
    rec.attempt("naive_bytes_any_rank", lambda: tracker.load_state_dict(naive["rng"], any_rank=True))
    rec.snapshot("naive_bytes_any_rank", tracker)
    # 2. {"rng": tracker.get_states()} (what frameworks put in their state
    # dicts): the tensors of one rank fill every rank's, silently.
    tracker = seed(4, 2, expert=True)
    states = tracker.get_states()
    dcp.load({"rng": states}, checkpoint_id=path(args, "naive_tensors"))
    tracker.set_states(states)
    rec.snapshot("naive_tensors", tracker)
    # 3. RNGState: every rank's own streams, at their positions.
    tracker = seed(4, 2, expert=True)
    load_main(rec, tracker, "load", args)
    rec.snapshot("loaded", tracker)
    rec.data["draws"]["after"] = steps(tracker, AFTER)


def fewer(args, rec):
    """2 ranks, tp=2 x dp=1 (expert-parallel rank 0): every stream existed.
    Then saves "two" at once, for the data-parallel growth, and draws on."""
    tracker = seed(2, 2, expert=False)
    load_main(rec, tracker, "load", args)
    rec.snapshot("loaded", tracker)
    rec.attempt("save_two", lambda: dcp.save({"rng": RNGState()}, checkpoint_id=path(args, "two")))
    rec.data["draws"]["after"] = steps(tracker, AFTER)


def more(args, rec):
    """4 ranks, tp=4 x dp=1: tensor-parallel ranks 2 and 3 are new."""
    tracker = seed(4, 4, expert=False)
    rec.snapshot("seeded", tracker)
    load_main(rec, tracker, "load_raise", args)
    rec.snapshot("after_raise", tracker)
    # "fresh" under warnings-as-errors: the new ranks' warnings are errors
    # before anything changes, on every rank (issue 41).
    def warnings_as_errors():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            dcp.load({"rng": RNGState(on_missing="fresh")}, checkpoint_id=path(args, "main"))
    rec.attempt("load_fresh_warnings_as_errors", warnings_as_errors)
    rec.snapshot("after_fresh_warnings_as_errors", tracker)
    load_main(rec, tracker, "load_fresh", args, on_missing="fresh")
    rec.snapshot("after_fresh", tracker)
    rec.data["draws"]["after"] = steps(tracker, AFTER)


def growth(args, rec):
    """4 ranks, tp=2 x dp=2 (no expert parallelism), from the 2-rank "two":
    new data-parallel replicas."""
    tracker = seed(4, 2, expert=False)
    rec.snapshot("seeded", tracker)
    load_main(rec, tracker, "load_raise", args, checkpoint="two")
    rec.snapshot("after_raise", tracker)
    load_main(rec, tracker, "load_generator_off", args, checkpoint="two", generator=False)
    rec.data["draws"]["generator_off"] = steps(tracker, AFTER)
    tracker = seed(4, 2, expert=False)
    load_main(rec, tracker, "load_fresh", args, checkpoint="two", on_missing="fresh")
    rec.data["draws"]["fresh"] = steps(tracker, AFTER)


def one(args, rec):
    """1 rank: tp=1 x dp=1."""
    tracker = seed(1, 1, expert=False)
    load_main(rec, tracker, "load", args)
    rec.data["draws"]["after"] = steps(tracker, AFTER)
    tracker = seed(1, 1, expert=False)
    load_main(rec, tracker, "load_no_generator_checkpoint", args, checkpoint="main_no_generator")
    load_main(rec, tracker, "load_no_generator_checkpoint_off", args, checkpoint="main_no_generator",
              generator=False)
    rec.data["draws"]["generator_off"] = steps(tracker, AFTER)


def eight(args, rec):
    """8 ranks, tp=2 x dp=4 (no expert parallelism), from the 2-rank "two"."""
    tracker = seed(8, 2, expert=False)
    load_main(rec, tracker, "load", args, checkpoint="two", generator=False)
    rec.data["draws"]["after"] = steps(tracker, AFTER)


def stage_layout():
    """pp 2 x dp 2 (tp 1), expert parallelism over dp: (pp, dp, ep)."""
    rank = dist.get_rank()
    pp, dp = rank // 2, rank % 2
    STAGE[0] = pp
    return pp, dp, dp


def seed_stage(random_init=False):
    """Megatron-LM's training setup (megatron/training/initialize.py
    _set_random_seed): the stage's seed given to model_parallel_cuda_manual_seed,
    or, with data-parallel random init, the tracker seeded with the rank's
    true coordinates (seed_rank), which model_parallel_cuda_manual_seed's
    shifted seed cannot tell apart."""
    pp, dp, ep = stage_layout()
    if not random_init:
        rt.model_parallel_cuda_manual_seed(SEED + 100 * pp, tp_rank=0, ep_rank=ep, etp_rank=0, force_reset_rng=True)
        return rt.get_cuda_rng_tracker()
    rt.model_parallel_cuda_manual_seed(SEED, tp_rank=0, ep_rank=ep, etp_rank=0, force_reset_rng=True)
    tracker = rt.get_cuda_rng_tracker()
    tracker.seed_rank("megatron", SEED, pp=pp, dp=dp * 10, ep=ep, dp_random_init=True)
    return tracker


def stage_steps(tracker, n):
    """steps() plus the stage's own expert draws: stage 1 has more expert layers."""
    out = []
    for _ in range(n):
        out.append(step(tracker))
        with tracker.fork("expert-parallel-rng"):
            out[-1]["<experts>"] = rt.rand(4 + 4 * STAGE[0])
    return out


def stages(args, rec):
    """4 ranks, pp 2 x dp 2 (ep over dp): (pp 1, ep 0) and (pp 0, ep 1) hold
    expert states with one seed number but are different streams, drawn
    unevenly; then the same with data-parallel random init, where (pp 0,
    dp 10) meets (pp 1, dp 0)."""
    tracker = seed_stage()
    rec.data["expert_seed"] = tracker.tracker.get_state("expert-parallel-rng").seed
    stage_steps(tracker, SAVE_AT)
    rec.snapshot("at_save", tracker)
    rec.attempt("save", lambda: dcp.save({"rng": RNGState()}, checkpoint_id=path(args, "stages")))
    rec.data["draws"]["after"] = stage_steps(tracker, AFTER)
    tracker = seed_stage(random_init=True)
    rec.data["random_init_seed"] = tracker.tracker.get_state("model-parallel-rng").seed
    stage_steps(tracker, SAVE_AT)
    rec.snapshot("random_init_at_save", tracker)
    rec.attempt("save_random_init", lambda: dcp.save({"rng": RNGState()}, checkpoint_id=path(args, "random_init")))
    rec.data["draws"]["random_init_after"] = stage_steps(tracker, AFTER)


def stages_same(args, rec):
    """The layout of stages: each rank continues every stream exactly."""
    tracker = seed_stage()
    load_main(rec, tracker, "load", args, checkpoint="stages")
    rec.snapshot("loaded", tracker)
    rec.data["draws"]["after"] = stage_steps(tracker, AFTER)
    tracker = seed_stage(random_init=True)
    load_main(rec, tracker, "load_random_init", args, checkpoint="random_init")
    rec.snapshot("random_init_loaded", tracker)
    rec.data["draws"]["random_init_after"] = stage_steps(tracker, AFTER)


PHASES = {f.__name__: f for f in (train, same, fewer, more, growth, one, eight, stages, stages_same)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("phase", choices=sorted(PHASES))
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--store", required=True)
    parser.add_argument("--dir", required=True)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", message="torch.distributed is")  # DCP's single-process note
    dist.init_process_group("gloo", init_method=f"file://{args.store}", rank=args.rank, world_size=args.world)
    rec = Recorder()
    try:
        PHASES[args.phase](args, rec)
        out = os.path.join(args.dir, args.phase)
        os.makedirs(out, exist_ok=True)
        rec.save(os.path.join(out, f"rank{args.rank}.pt"))
        dist.barrier()
    except BaseException:
        traceback.print_exc()
        end_rank(1)  # the other ranks would wait in a collective forever
    end_rank()


if __name__ == "__main__":
    main()
