"""What the upstream-test runners share: running pytest on an upstream test
file, reading its outcome, and the variant without the int-state lines."""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# The two lines of Megatron-LM's and slapo's test_cuda_rng_states_tracker that
# store the int 1234 as a state (rngtrk's one allowed difference, docs/pytorch.md).
INT_STATE_LINES = re.compile(r'^\s*rng_tracker\.set_states\(\{"state1": 1234\}\)\n'
                             r'\s*assert rng_tracker\.get_states\(\)\["state1"\] == 1234\n', re.M)


def environment(**variables):
    """os.environ with `variables` and rngtrk's Python package and these
    plugins on PYTHONPATH."""
    return dict(os.environ, **variables,
                PYTHONPATH=os.pathsep.join([HERE, os.path.join(REPO, "bindings", "python")]))


def pytest_arguments(checkout, test, plugin, extra=()):
    """python3's arguments for pytest on `test` with our `plugin` (and no
    conftest of the checkout's), -rA so that every outcome is listed."""
    return ["-m", "pytest", "-p", plugin, "--noconftest", "-q", "-rA", "-p", "no:cacheprovider",
            "--rootdir", checkout, test, *extra]


def without_int_state(test, workdir):
    """The test file without the two int-state lines, written to `workdir`
    at run time, or None if the lines are not there."""
    with open(test) as f:
        text = f.read()
    changed, count = INT_STATE_LINES.subn("", text)
    if count != 1:
        return None
    path = os.path.join(workdir, os.path.basename(test)[:-3] + "_without_int_state.py")
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
    """{"passed": n, "failed": n, "skipped": n} from pytest's last summary line."""
    summary = [line for line in output.splitlines() if re.search(r"\d+ (passed|failed|errors?)\b.* in [\d.]+s", line)]
    found = {}
    for number, word in re.findall(r"(\d+) (passed|failed|error|errors|skipped)", summary[-1] if summary else ""):
        found[word.rstrip("s") if word.startswith("error") else word] = int(number)
    return found


def report(mode, code, output):
    """Prints the count line of one mode and its failures."""
    found = counts(output)
    print(f"{mode}: {found.get('passed', 0)} passed, {found.get('failed', 0) + found.get('error', 0)} failed, "
          f"{found.get('skipped', 0)} skipped (pytest exit {code})")
    for line in output.splitlines():
        if line.startswith(("FAILED", "ERROR")):
            print(f"    {line[:200]}")


def regressions(results, allowed=None, baseline="upstream"):
    """Tests the baseline passes that another mode does not; `allowed`
    {mode: set of tests} are failures of the one allowed difference (their
    variant without the int-state lines passed in that mode)."""
    worse = []
    for mode, found in results.items():
        if mode != baseline and baseline in results:
            worse += [f"{mode}: {t}" for t, r in results[baseline].items()
                      if r == "passed" and found.get(t) != "passed" and t not in (allowed or {}).get(mode, ())]
    return worse


VARIANT_TEST = "test_cuda_rng_states_tracker"  # the test whose int-state lines the variant drops


class Tally:
    """The modes' outcomes, and the allowed failures of VARIANT_TEST (its
    variant without the int-state lines passed in that mode)."""

    def __init__(self):
        self.results, self.allowed = {}, {}

    def add(self, mode, code, output, variant=False):
        """Records and prints one run: a mode on the whole file, or its variant."""
        if variant:
            if outcomes(output).get(VARIANT_TEST) == "passed":
                self.allowed.setdefault(mode, set()).add(VARIANT_TEST)
            mode += f" ({VARIANT_TEST} without its int-state lines)"
        else:
            self.results[mode] = outcomes(output)
        report(mode, code, output)

    def exit_if_worse(self, baseline):
        """Exits 1, naming them, if a mode fails a test `baseline` passes."""
        worse = regressions(self.results, self.allowed)
        if worse:
            print(f"fails where {baseline} passes: " + ", ".join(worse))
            sys.exit(1)
