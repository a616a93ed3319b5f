# SPDX-License-Identifier: Apache-2.0
"""The GPU check of rngtrk.torch.dcp (docs/pytorch.md, "Distributed
checkpoints (DCP)"): torch's own CUDA generator and every named stream
through torch.distributed.checkpoint, on one GPU that the ranks share (gloo).

    RNGTRK_LIBRARY=build/librngtrk.so python3 tests/torch_dist/dcp_cuda_job.py

It starts the ranks itself (FileStore rendezvous, no torchrun), one phase
after another, and prints one PASS or FAIL line per check, then a summary;
it exits 1 if any check failed, 2 if it cannot run (no CUDA device).

  save  2 ranks, tp=2: draws with torch's own CUDA ops (torch.rand,
        F.dropout) inside forks of every named state and outside them (the
        CUDA generator, the stage's stream: the same draws on every rank),
        saves with RNGState,
        draws on (the uninterrupted continuation); also a graph-safe
        tracker (use_cudagraphable_rng=True) saved the same way.
  load2 2 ranks, tp=2: every stream and the CUDA generator continue bit for
        bit; the graph-safe tracker too, its live generators kept; with
        process=True, torch's CPU generator and Python's as well.
  load1 1 rank, tp=1: every stream it holds existed (rank 0's).
  load3 3 ranks, tp=3: rank 2's model- and expert-parallel streams are
        new: on_missing="raise" fails on all 3 ranks with nothing changed
        (tracker and CUDA generator); "fresh" starts them at offset 0 and
        every other stream continues, the CUDA generator included (the
        stage's stream, which rank 2 continues where the checkpoint holds it).

Needs PyTorch >= 2.2 with CUDA; rngtrk's library may be built with CUDA=0
(only torch's own ops draw on the device).  --cpu-dry-run runs the same
phases without a GPU (rngtrk.torch's ops on the CPU, where the tracker's
default state plays the CUDA generator; no graph-safe checks): a check of
this script's plumbing, not of CUDA.
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
import traceback
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
BINDING = os.path.join(HERE, "..", "..", "bindings", "python")
sys.path.insert(0, HERE)
from rank_end import end_rank  # noqa: E402 (this folder)
SEED = 1234
AFTER = 3


# -- one rank ------------------------------------------------------------------------------

def rank_main(args):
    sys.path.insert(0, BINDING)
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    import torch.distributed.checkpoint as dcp

    import rngtrk.torch as rt
    from rngtrk.torch.dcp import FreshStreamWarning, MissingStreamError, RNGState

    warnings.filterwarnings("ignore", message="torch.distributed is")
    cuda = not args.cpu_dry_run
    if cuda:
        torch.cuda.set_device(0)

    def rand(n):
        return torch.rand(n, device="cuda").cpu() if cuda else rt.rand(n)

    def dropout(n):
        return F.dropout(torch.ones(n, device="cuda"), 0.5).cpu() if cuda else rt.dropout(torch.ones(n), 0.5)

    def generator_now(tracker):
        return torch.cuda.get_rng_state() if cuda else rt.state_tensor(tracker.generator_state())
    dist.init_process_group("gloo", init_method=f"file://{args.store}", rank=args.rank, world_size=args.world)
    rank, world = dist.get_rank(), dist.get_world_size()
    checks = []

    def check(name, condition, detail=""):
        checks.append((name, bool(condition), detail))

    def seed(graph_safe=False):
        rt.model_parallel_cuda_manual_seed(SEED, tp_rank=rank, ep_rank=0, etp_rank=rank, force_reset_rng=True,
                                           use_cudagraphable_rng=graph_safe)
        return rt.get_cuda_rng_tracker()

    def step(tracker):
        out = {}
        for name in tracker.tracker.names():
            with tracker.fork(name):
                out[name] = torch.cat([rand(7), dropout(9)])
        out["<generator>"] = rand(3)  # the stage's stream: every rank of it draws alike (pp 0 here)
        return out

    def steps(tracker):
        return [step(tracker) for _ in range(AFTER)]

    def process_draws():
        return {"torch-cpu": torch.rand(4), "python": torch.tensor([random.random() for _ in range(2)])}

    def equal(a, b, names=None):
        return all(torch.equal(x[n], y[n]) for x, y in zip(a, b) for n in (names or x))

    def path(name):
        return os.path.join(args.dir, name)

    record_file = os.path.join(args.dir, f"save-rank{rank}.pt")
    if args.phase == "save":
        tracker = seed()
        steps(tracker)
        dcp.save({"rng": RNGState()}, checkpoint_id=path("main"))
        record = {"after": steps(tracker)}
        if cuda:
            tracker = seed(graph_safe=True)
            check("graph-safe tracker on this torch", tracker.graph_safe)
            steps(tracker)
            dcp.save({"rng": RNGState()}, checkpoint_id=path("graphsafe"))
            record["graphsafe_after"] = steps(tracker)
        tracker = seed()
        torch.manual_seed(SEED + rank)  # the process's own generators, per rank (process=True)
        random.seed(SEED + rank)
        steps(tracker)
        dcp.save({"rng": RNGState(process=True)}, checkpoint_id=path("process"))
        record["process_after"] = (steps(tracker), process_draws())
        torch.save(record, record_file)
        check("saved", True)
    else:
        recorded = {r: torch.load(os.path.join(args.dir, f"save-rank{r}.pt"), weights_only=False)
                    for r in range(2)}
    if args.phase == "load2":
        tracker = seed()
        state = RNGState()
        dcp.load({"rng": state}, checkpoint_id=path("main"))
        check("every stream and the CUDA generator continue bit for bit",
              equal(steps(tracker), recorded[rank]["after"]) and state.fresh == ())
    if args.phase == "load2":
        tracker = seed()
        torch.manual_seed(0)
        random.seed(0)
        dcp.load({"rng": RNGState(process=True)}, checkpoint_id=path("process"))
        after, process = recorded[rank]["process_after"]
        check("process=True: every stream, the CUDA generator, torch's CPU generator and Python's continue",
              equal(steps(tracker), after) and equal([process_draws()], [process]))
    if args.phase == "load2" and cuda:
        tracker = seed(graph_safe=True)
        live = {name: id(g) for name, g in tracker.states_.items()}
        dcp.load({"rng": RNGState()}, checkpoint_id=path("graphsafe"))
        check("graph-safe: the live generators are kept",
              {name: id(g) for name, g in tracker.states_.items()} == live)
        check("graph-safe: every stream and the CUDA generator continue bit for bit",
              equal(steps(tracker), recorded[rank]["graphsafe_after"]))
    if args.phase == "load1":
        tracker = seed()
        dcp.load({"rng": RNGState()}, checkpoint_id=path("main"))
        check("one rank continues rank 0's streams and generator", equal(steps(tracker), recorded[0]["after"]))
    if args.phase == "load3":
        tracker = seed()
        before = (tracker.state_dict(), generator_now(tracker))
        try:
            dcp.load({"rng": RNGState()}, checkpoint_id=path("main"))
            check("on_missing='raise' raises on every rank", False, "no error")
        except MissingStreamError as e:
            text = str(e)
            check("on_missing='raise' raises on every rank, naming rank 2's new streams",
                  f"'model-parallel-rng' (seed {SEED + 2720}, megatron seed {SEED} tp 2 pp 0) on rank 2" in text
                  and f"'expert-parallel-rng' (seed {SEED + 1026}, megatron seed {SEED} pp 0 ep 0 etp 2) on rank 2"
                  in text and "generator" not in text.split("They belong")[0], text)
        after = (tracker.state_dict(), generator_now(tracker))
        check("on_missing='raise' changes nothing (tracker and CUDA generator)",
              after[0] == before[0] and torch.equal(after[1], before[1]))
        state = RNGState(on_missing="fresh")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dcp.load({"rng": state}, checkpoint_id=path("main"))
        warned = any(isinstance(w.message, FreshStreamWarning) for w in caught)
        drawn = steps(tracker)
        if rank < 2:
            check("on_missing='fresh': an old rank's streams all continue",
                  equal(drawn, recorded[rank]["after"]) and state.fresh == () and not warned)
        else:
            fresh_names = {s.name for s in state.fresh}
            check("on_missing='fresh': rank 2 reports its new streams and warns",
                  fresh_names == {"model-parallel-rng", "expert-parallel-rng"} and warned, repr(state.fresh))
            check("on_missing='fresh': the shared stream and the stage's CUDA generator continue",
                  equal(drawn, recorded[0]["after"], ["data-parallel-rng", "<generator>"]))
            again = steps(seed())  # a tracker seeded now draws from offset 0
            check("on_missing='fresh': the new streams start at offset 0",
                  equal(drawn, again, ["model-parallel-rng", "expert-parallel-rng"]))
    dist.barrier()
    gathered = [None] * world
    dist.all_gather_object(gathered, checks)
    if rank == 0:
        for r, rank_checks in enumerate(gathered):
            for name, passed, detail in rank_checks:
                print(f"{'PASS' if passed else 'FAIL'} {args.phase} rank {r}: {name}"
                      + ("" if passed or not detail else f" ({detail[:300]})"), flush=True)
    dist.barrier()
    end_rank()


# -- the driver ----------------------------------------------------------------------------

def run_phase(phase, world, folder, timeout, extra):
    store = os.path.join(folder, f"store-{phase}")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, __file__, "--phase", phase, "--rank", str(r), "--world", str(world),
                               "--store", store, "--dir", folder] + extra, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env=env) for r in range(world)]
    outputs, ok = [], True
    deadline = time.monotonic() + timeout
    for p in procs:
        try:
            outputs.append(p.communicate(timeout=max(1, deadline - time.monotonic()))[0])
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            outputs.append("")
            print(f"FAIL {phase}: did not finish in {timeout} s", flush=True)
            return False
    for r, (p, out) in enumerate(zip(procs, outputs)):
        lines = [line for line in out.splitlines() if line.startswith(("PASS", "FAIL"))]
        for line in lines:
            print(line, flush=True)
        if p.returncode or any(line.startswith("FAIL") for line in lines):
            ok = False
        if p.returncode:
            print(f"FAIL {phase} rank {r}: exited {p.returncode}\n{out[-3000:]}", flush=True)
    return ok


def driver(dry_run):
    try:
        import torch
    except ImportError:
        print("FAIL: torch cannot be imported")
        return 2
    extra = ["--cpu-dry-run"] if dry_run else []
    if dry_run:
        print(f"torch {torch.__version__}, a CPU dry run (no CUDA check)", flush=True)
    elif not torch.cuda.is_available():
        print(f"SKIP: torch {torch.__version__} sees no CUDA device; this check needs one")
        return 2
    else:
        print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name(0)}", flush=True)
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        results = [run_phase("save", 2, folder, 60, extra)]
        if results[0]:
            results += [run_phase("load2", 2, folder, 50, extra), run_phase("load1", 1, folder, 50, extra),
                        run_phase("load3", 3, folder, 50, extra)]
    passed = all(results)
    what = "a CPU dry run" if dry_run else "CUDA"
    print(f"{'PASS' if passed else 'FAIL'}: rngtrk.torch.dcp on {what} ({time.monotonic() - start:.0f} s)")
    return 0 if passed else 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--phase")
    parser.add_argument("--rank", type=int)
    parser.add_argument("--world", type=int)
    parser.add_argument("--store")
    parser.add_argument("--dir")
    parser.add_argument("--cpu-dry-run", action="store_true")
    args = parser.parse_args()
    if args.phase is None:
        sys.exit(driver(args.cpu_dry_run))
    try:
        rank_main(args)
    except BaseException:
        traceback.print_exc()
        end_rank(1)  # the other ranks would wait in a collective forever


if __name__ == "__main__":
    main()
