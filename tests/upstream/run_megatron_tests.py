#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs Megatron-LM's own RNG tests (tests/unit_tests/tensor_parallel/
test_random.py, from a checkout outside this project) against Megatron's
random.py, against it with rngtrk.torch.megatron.install(), and against
rngtrk.torch.megatron's names; prints one count line per mode.

    python3 tests/upstream/run_megatron_tests.py MEGATRON_LM_CHECKOUT [--modes upstream,install,names]
                                                 [--nproc N] [--emulate-cuda] [-- extra pytest arguments]

Nothing of Megatron-LM is copied: pytest runs its test file where it is.
megatron_plugin.py says what is imported how, and which stand-ins (ours)
replace the parts of Megatron-LM the test does not exercise.  With --nproc
N > 1 every mode runs on N gloo processes started by tests/torch_dist/launch.py
(rank 0's output is shown).  --emulate-cuda (CPU-only torch) puts a CPU stand-in
of the CUDA generator in place first (cuda_emulation.py).  Exits 1 if a test that Megatron's own random.py
passes fails in the install or names mode (the bar docs/pytorch.md sets)."""
import argparse
import os
import subprocess
import sys

from pytest_runs import Tally, environment, pytest_arguments

TEST = os.path.join("tests", "unit_tests", "tensor_parallel", "test_random.py")


def run(checkout, mode, nproc, extra, emulate_cuda=False):
    env = environment(MEGATRON_LM=checkout, RNGTRK_MEGATRON_MODE=mode, RNGTRK_EMULATE_CUDA="1" if emulate_cuda else "")
    pytest = pytest_arguments(checkout, os.path.join(checkout, TEST), "megatron_plugin", extra)
    if nproc > 1:
        # Rank 0's output is the one read (the others repeat it); the ranks
        # start directly (tests/torch_dist/launch.py: torch.distributed.run
        # needs libuv from torch 2.4 on, which Debian's torch lacks).
        launcher = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch_dist", "launch.py")
        command = [sys.executable, launcher, "--nproc", str(nproc), "--timeout", "1700", "--", sys.executable, *pytest]
    else:
        command = [sys.executable, *pytest]
    done = subprocess.run(command, env=env, cwd=checkout, capture_output=True, text=True, timeout=1800)
    return done.returncode, done.stdout + done.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", help="a Megatron-LM checkout")
    parser.add_argument("--modes", default="upstream,install,names")
    parser.add_argument("--nproc", type=int, default=1)
    parser.add_argument("--emulate-cuda", action="store_true",
                        help="on CPU-only torch, a CPU stand-in of the CUDA generator (cuda_emulation.py)")
    parser.add_argument("--verbose", action="store_true", help="print each mode's whole pytest output")
    args, extra = parser.parse_known_args()
    checkout = os.path.abspath(args.checkout)
    if not os.path.exists(os.path.join(checkout, TEST)):
        sys.exit(f"run_megatron_tests: {checkout} has no {TEST}")
    commit = subprocess.run(["git", "-C", checkout, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    import torch
    print(f"Megatron-LM {commit or '(not a git checkout)'}, torch {torch.__version__}, "
          f"CUDA {'yes' if torch.cuda.is_available() else 'emulated' if args.emulate_cuda else 'no'}, "
          f"{args.nproc} process(es)")
    tally = Tally()
    for mode in args.modes.split(","):
        code, output = run(checkout, mode, args.nproc, [e for e in extra if e != "--"], args.emulate_cuda)
        if args.verbose:
            print(output)
        if args.nproc > 1:  # rank 0's lines, without the launcher's prefix
            output = "\n".join(line[len("[rank0]: "):] for line in output.splitlines()
                               if line.startswith("[rank0]: "))
        tally.add(mode, code, output)
    tally.exit_if_worse("Megatron-LM's random.py")


if __name__ == "__main__":
    main()
