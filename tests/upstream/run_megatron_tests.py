#!/usr/bin/env python3
"""Runs Megatron-LM's own RNG tests (tests/unit_tests/tensor_parallel/
test_random.py, from a checkout outside this project) against Megatron's
random.py, against it with rngtrk.torch.megatron.install(), and against
rngtrk.torch.megatron's names; prints one count line per mode.

    python3 tests/upstream/run_megatron_tests.py MEGATRON_LM_CHECKOUT [--modes upstream,install,names]
                                                 [--nproc N] [-- extra pytest arguments]

Nothing of Megatron-LM is copied: pytest runs its test file where it is.
megatron_plugin.py says what is imported how, and which stand-ins (ours)
replace the parts of Megatron-LM the test does not exercise.  With --nproc
N > 1 every mode runs under torch.distributed.run on N gloo processes (rank
0's output is shown).  Exits 1 if a test that Megatron's own random.py
passes fails in the install or names mode (the bar docs/pytorch.md sets)."""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TEST = os.path.join("tests", "unit_tests", "tensor_parallel", "test_random.py")


def run(checkout, mode, nproc, extra, test=None):
    env = dict(os.environ, MEGATRON_LM=checkout, RNGTRK_MEGATRON_MODE=mode,
               PYTHONPATH=os.pathsep.join([HERE, os.path.join(REPO, "bindings", "python")]))
    pytest = ["-m", "pytest", "-p", "megatron_plugin", "--noconftest", "-q", "-rA", "-p", "no:cacheprovider",
              "--rootdir", checkout, test or os.path.join(checkout, TEST), *extra]
    if nproc > 1:
        # Rank 0's output is the one read (the others repeat it); the
        # rendezvous is static on 127.0.0.1, whatever the machine's name resolves to.
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        command = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", "--node_rank", "0",
                   "--nproc_per_node", str(nproc), "--master_addr", "127.0.0.1", "--master_port", str(port),
                   "--redirects", "2", "--tee", "1", "--no_python", sys.executable, *pytest]
    else:
        command = [sys.executable, *pytest]
    done = subprocess.run(command, env=env, cwd=checkout, capture_output=True, text=True, timeout=1800)
    return done.returncode, done.stdout + done.stderr


INT_STATE_LINES = re.compile(r'^\s*rng_tracker\.set_states\(\{"state1": 1234\}\)\n'
                             r'\s*assert rng_tracker\.get_states\(\)\["state1"\] == 1234\n', re.M)


def without_int_state(checkout, workdir):
    """test_random.py without the two lines of test_cuda_rng_states_tracker
    that store the int 1234 as a state (rngtrk's one allowed difference),
    written to `workdir` at run time, or None if the lines are not there."""
    with open(os.path.join(checkout, TEST)) as f:
        text = f.read()
    changed, count = INT_STATE_LINES.subn("", text)
    if count != 1:
        return None
    path = os.path.join(workdir, "test_random_without_int_state.py")
    with open(path, "w") as f:
        f.write(changed)
    return path


def outcomes(output):
    """{test id: "passed" / "failed"} from pytest's -rA lines."""
    found = {}
    for word, test in re.findall(r"^(PASSED|FAILED|ERROR) (\S+)", output, re.M):
        found[test.split("::")[-1]] = "passed" if word == "PASSED" else "failed"
    return found


def counts(output):
    found = {}
    for number, word in re.findall(r"(\d+) (passed|failed|error|errors|skipped)", output):
        found[word.rstrip("s") if word.startswith("error") else word] = int(number)
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", help="a Megatron-LM checkout")
    parser.add_argument("--modes", default="upstream,install,names")
    parser.add_argument("--nproc", type=int, default=1)
    parser.add_argument("--verbose", action="store_true", help="print each mode's whole pytest output")
    parser.add_argument("--without-int-state", action="store_true",
                        help="also run test_cuda_rng_states_tracker without its two int-state lines")
    args, extra = parser.parse_known_args()
    checkout = os.path.abspath(args.checkout)
    if not os.path.exists(os.path.join(checkout, TEST)):
        sys.exit(f"run_megatron_tests: {checkout} has no {TEST}")
    commit = subprocess.run(["git", "-C", checkout, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    import torch
    print(f"Megatron-LM {commit or '(not a git checkout)'}, torch {torch.__version__}, "
          f"CUDA {'yes' if torch.cuda.is_available() else 'no'}, {args.nproc} process(es)")
    runs = [(mode, None, []) for mode in args.modes.split(",")]
    if args.without_int_state:
        import tempfile
        variant = without_int_state(checkout, tempfile.mkdtemp(prefix="rngtrk-megatron-"))
        if variant is None:
            print("without-int-state: the two int-state lines were not found; variant not run")
        else:
            runs += [(mode, variant, ["-k", "test_cuda_rng_states_tracker"]) for mode in args.modes.split(",")
                     if mode != "upstream"]
    results, worse = {}, []
    for mode, test, selection in runs:
        code, output = run(checkout, mode, args.nproc, [e for e in extra if e != "--"] + selection, test)
        if args.verbose:
            print(output)
        if args.nproc > 1:  # rank 0's lines, without torch.distributed.run's prefix
            output = "\n".join(line[len("[default0]:"):] for line in output.splitlines()
                               if line.startswith("[default0]:"))
        if test is not None:
            mode += " (test_cuda_rng_states_tracker without its int-state lines)"
        summary = [line for line in output.splitlines() if re.search(r"\d+ (passed|failed|errors?)\b.* in [\d.]+s", line)]
        found = counts(summary[-1] if summary else "")
        failures = [line for line in output.splitlines() if line.startswith(("FAILED", "ERROR"))]
        if test is None:
            results[mode] = outcomes(output)
        print(f"{mode}: {found.get('passed', 0)} passed, {found.get('failed', 0) + found.get('error', 0)} failed, "
              f"{found.get('skipped', 0)} skipped (pytest exit {code})")
        for line in failures:
            print(f"    {line[:200]}")
    for mode in ("install", "names"):
        if "upstream" in results and mode in results:
            worse += [f"{mode}: {t}" for t, r in results["upstream"].items() if r == "passed" and
                      results[mode].get(t) != "passed"]
    if worse:
        print("fails where Megatron-LM's random.py passes: " + ", ".join(worse))
        sys.exit(1)


if __name__ == "__main__":
    main()
