# SPDX-License-Identifier: Apache-2.0
"""One process of run_accelerate.py's jobs: Hugging Face Accelerate's own
Accelerator.save_state / load_state (from a checkout outside this project)
on gloo processes, as it is (--mode asis) or with
rngtrk.torch.accelerate.register(accelerator) (--mode rngtrk).

    python3 tests/torch_dist/launch.py --nproc N -- \
        python3 tests/upstream/accelerate_job.py --phase save|load --mode asis|rngtrk \
            --dir CKPT --out RESULTS [--on-missing raise|fresh] [--variant plain|cudakey|tamper] [--k K]

save: set_seed(1000+rank), a few draws, accelerator.save_state(CKPT), then K
draws per generator (Python random, NumPy global, torch CPU) written to
RESULTS/expected_rank{r}.json: the continuation a resume must reproduce.
load: set_seed(5000+rank) (something else), accelerator.load_state(CKPT), K
draws, each generator classified per rank as
  restored  = equals this rank's expected continuation,
  unchanged = equals what the generators would have given without the load
              (the load left them alone),
  other     = neither (e.g. rngtrk's fresh derived state);
written to RESULTS/load_{tag}_rank{r}.json (the runner compares them).
The draws are of doubles, so equal lists mean equal generator states.
--variant cudakey: rank 0 copies CKPT to CKPT_cudakey and adds a
"torch_cuda_manual_seed" entry to every random_states_{i}.pkl, as a GPU
checkpoint has, and the job loads that on this CPU-only torch.
--variant tamper: rank 0 copies CKPT to CKPT_tamper and rewrites every
random_states_{i}.pkl with states of seed 999+i, so Accelerate's own restore
and rngtrk's disagree: whichever wins shows in the verdict.
"""
import argparse
import json
import logging
import os
import random
import shutil
import warnings

import numpy as np
import torch
import torch.distributed as dist

from accelerate import Accelerator  # noqa: E402
from accelerate.utils import InitProcessGroupKwargs, set_seed  # noqa: E402


class Recorder(logging.Handler):
    """Every record that reaches the accelerate loggers in this process."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(f"{record.levelname} {record.name}: {record.getMessage()}")


def draws(k):
    return {"python": [random.random() for _ in range(k)],
            "numpy": np.random.random(k).tolist(),
            "torch": torch.rand(k, dtype=torch.float64).tolist()}


def snapshot():
    return random.getstate(), np.random.get_state(), torch.get_rng_state()


def restore(s):
    random.setstate(s[0])
    np.random.set_state(s[1])
    torch.set_rng_state(s[2])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--phase", choices=("save", "load"), required=True)
    p.add_argument("--mode", choices=("asis", "rngtrk"), required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--on-missing", choices=("raise", "fresh"), default="raise")
    p.add_argument("--variant", choices=("plain", "cudakey", "tamper"), default="plain")
    p.add_argument("--k", type=int, default=4)
    a = p.parse_args()

    recorder = Recorder()
    alog = logging.getLogger("accelerate")
    alog.setLevel(logging.INFO)
    alog.addHandler(recorder)

    accelerator = Accelerator(cpu=True, kwargs_handlers=[InitProcessGroupKwargs(backend="gloo")])
    rank, world = accelerator.process_index, accelerator.num_processes
    assert dist.is_initialized() and dist.get_backend() == "gloo" and dist.get_world_size() == world \
        == int(os.environ["WORLD_SIZE"]) and dist.get_rank() == rank == int(os.environ["RANK"]), \
        (dist.is_initialized() and dist.get_backend(), world, rank)
    if rank == 0:
        print(f"WORLD backend={dist.get_backend()} size={dist.get_world_size()} "
              f"distributed_type={accelerator.distributed_type} device={accelerator.device}", flush=True)

    obj = None
    if a.mode == "rngtrk":
        from rngtrk.torch.accelerate import register
        obj = register(accelerator, on_missing=a.on_missing)

    # A model and an optimizer so that save_state/load_state do their usual work too.
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt = accelerator.prepare(model, opt)
    os.makedirs(a.out, exist_ok=True)

    if a.phase == "save":
        set_seed(1000 + rank)
        draws(3)  # a few draws before the save
        accelerator.save_state(a.dir)
        expected = draws(a.k)
        with open(os.path.join(a.out, f"expected_rank{rank}.json"), "w") as f:
            json.dump(expected, f)
        accelerator.wait_for_everyone()
        if rank == 0:
            print("SAVED", sorted(os.listdir(a.dir)), "rngtrk_dcp:",
                  sorted(os.listdir(os.path.join(a.dir, "rngtrk_dcp"))) if a.mode == "rngtrk" else "-", flush=True)
        return

    ckpt = a.dir
    if a.variant != "plain":
        ckpt = a.dir.rstrip("/") + "_" + a.variant
        if rank == 0:
            shutil.rmtree(ckpt, ignore_errors=True)
            shutil.copytree(a.dir, ckpt)
            for name in os.listdir(ckpt):
                if name.startswith("random_states_"):
                    path = os.path.join(ckpt, name)
                    states = torch.load(path, weights_only=False)
                    if a.variant == "cudakey":
                        states["torch_cuda_manual_seed"] = [torch.zeros(16, dtype=torch.uint8)]
                    else:
                        kept = snapshot()
                        set_seed(999 + int(name.split("_")[-1].split(".")[0]))
                        states.update(random_state=random.getstate(), numpy_random_seed=np.random.get_state(),
                                      torch_manual_seed=torch.get_rng_state())
                        restore(kept)
                    torch.save(states, path)
        accelerator.wait_for_everyone()

    mine = os.path.join(ckpt, f"random_states_{rank}.pkl")
    diag = {"random_states_file": os.path.exists(mine)}
    if diag["random_states_file"]:
        diag["random_states_keys"] = sorted(torch.load(mine, weights_only=False))

    set_seed(5000 + rank)
    before = snapshot()
    unchanged = draws(a.k)
    restore(before)

    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        recorder.records.clear()
        try:
            accelerator.load_state(ckpt)
        except Exception as e:  # noqa: BLE001  (recorded per rank)
            error = f"{type(e).__module__}.{type(e).__name__}: {e}"
    got = draws(a.k)

    exp_path = os.path.join(a.out, f"expected_rank{rank}.json")
    expected = json.load(open(exp_path)) if os.path.exists(exp_path) else None
    verdict = {}
    for g in got:
        if expected is not None and got[g] == expected[g]:
            verdict[g] = "restored"
        elif got[g] == unchanged[g]:
            verdict[g] = "unchanged"
        else:
            verdict[g] = "other"
    ours = [w for w in caught if w.category.__module__.startswith("rngtrk")]
    result = {
        "rank": rank, "world": world, "mode": a.mode, "on_missing": a.on_missing if a.mode == "rngtrk" else None,
        "ckpt": os.path.basename(ckpt), **diag, "verdict": verdict, "error": error,
        "accelerate_log_random": [r for r in recorder.records if "random states" in r],
        "rngtrk_warnings": [f"{w.category.__name__}: {str(w.message).splitlines()[0]}" for w in ours],
        "fresh_process": list(obj.last.fresh_process) if obj is not None and obj.last is not None and not error
        else None,
        "first_draws": {g: got[g][0] for g in got},
    }
    tag = f"{a.mode}{'_' + a.on_missing if a.mode == 'rngtrk' else ''}{'' if a.variant == 'plain' else '_' + a.variant}_n{world}"
    with open(os.path.join(a.out, f"load_{tag}_rank{rank}.json"), "w") as f:
        json.dump(result, f, indent=1)
    print("RESULT " + json.dumps(result), flush=True)
    # a collective after the load: every rank is still in step (and none hangs)
    dist.barrier()


if __name__ == "__main__":
    main()
