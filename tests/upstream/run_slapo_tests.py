#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs slapo's own RNG tests (tests/test_random.py, from a checkout outside
this project) against slapo's random.py and against it with
rngtrk.torch.slapo.install(); prints one count line per mode.

    python3 tests/upstream/run_slapo_tests.py SLAPO_CHECKOUT [--modes upstream,install]
                                              [--emulate-cuda] [-- pytest arguments]

Nothing of slapo is copied: pytest runs its test file where it is
(slapo_plugin.py says how it is imported).  Both of slapo's tests read
torch's CUDA generator: on CPU-only torch --emulate-cuda puts a CPU
stand-in of it in place (cuda_emulation.py, ours).  Exits 1 if a test
that slapo's random.py passes fails with install()."""
import argparse
import os
import subprocess
import sys

from pytest_runs import Tally, environment, pytest_arguments

TEST = os.path.join("tests", "test_random.py")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", help="a slapo checkout")
    parser.add_argument("--modes", default="upstream,install")
    parser.add_argument("--emulate-cuda", action="store_true")
    parser.add_argument("--verbose", action="store_true", help="print each mode's whole pytest output")
    args, extra = parser.parse_known_args()
    extra = [e for e in extra if e != "--"]
    checkout = os.path.abspath(args.checkout)
    test = os.path.join(checkout, TEST)
    if not os.path.exists(test):
        sys.exit(f"run_slapo_tests: {checkout} has no {TEST}")
    commit = subprocess.run(["git", "-C", checkout, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    import torch
    print(f"slapo {commit or '(not a git checkout)'}, torch {torch.__version__}, "
          f"CUDA {'yes' if torch.cuda.is_available() else 'emulated' if args.emulate_cuda else 'no'}")
    tally = Tally()
    for mode in args.modes.split(","):
        env = environment(SLAPO=checkout, RNGTRK_SLAPO_MODE=mode, RNGTRK_EMULATE_CUDA="1" if args.emulate_cuda else "")
        done = subprocess.run([sys.executable, *pytest_arguments(checkout, test, "slapo_plugin", extra)],
                              env=env, cwd=checkout, capture_output=True, text=True, timeout=600)
        output = done.stdout + done.stderr
        if args.verbose:
            print(output)
        tally.add(mode, done.returncode, output)
    tally.exit_if_worse("slapo's random.py")

if __name__ == "__main__":
    main()
