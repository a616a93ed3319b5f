#!/usr/bin/env python3
"""Runs slapo's own RNG tests (tests/test_random.py, from a checkout outside
this project) against slapo's random.py and against it with
rngtrk.torch.slapo.install(); prints one count line per mode.

    python3 tests/upstream/run_slapo_tests.py SLAPO_CHECKOUT [--modes upstream,install]
                                              [--emulate-cuda] [--without-int-state] [-- pytest arguments]

Nothing of slapo is copied: pytest runs its test file where it is
(slapo_plugin.py says how it is imported).  Both of slapo's tests read
torch's CUDA generator: on CPU-only torch --emulate-cuda puts a CPU
stand-in of it in place (cuda_emulation.py, ours).  --without-int-state
also runs test_cuda_rng_states_tracker without its two lines that store
the int 1234 as a state (rngtrk's one allowed difference; a failure of
that test is accepted when the variant passes).  Exits 1 if a
test that slapo's random.py passes fails with install()."""
import argparse
import os
import subprocess
import sys
import tempfile

from pytest_runs import Tally, environment, pytest_arguments, without_int_state

TEST = os.path.join("tests", "test_random.py")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", help="a slapo checkout")
    parser.add_argument("--modes", default="upstream,install")
    parser.add_argument("--emulate-cuda", action="store_true")
    parser.add_argument("--without-int-state", action="store_true")
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
    modes = args.modes.split(",")
    runs = [(mode, test, []) for mode in modes]
    if args.without_int_state:
        variant = without_int_state(test, tempfile.mkdtemp(prefix="rngtrk-slapo-"))
        if variant is None:
            print("without-int-state: the two int-state lines were not found; variant not run")
        else:
            runs += [(mode, variant, ["-k", "test_cuda_rng_states_tracker"]) for mode in modes if mode != "upstream"]
    tally = Tally()
    for mode, path, selection in runs:
        env = environment(SLAPO=checkout, RNGTRK_SLAPO_MODE=mode, RNGTRK_EMULATE_CUDA="1" if args.emulate_cuda else "")
        done = subprocess.run([sys.executable, *pytest_arguments(checkout, path, "slapo_plugin", extra + selection)],
                              env=env, cwd=checkout, capture_output=True, text=True, timeout=600)
        output = done.stdout + done.stderr
        if args.verbose:
            print(output)
        tally.add(mode, done.returncode, output, variant=path != test)
    tally.exit_if_worse("slapo's random.py")

if __name__ == "__main__":
    main()
