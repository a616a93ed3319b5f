# SPDX-License-Identifier: Apache-2.0
"""What the upstream-test runners share: running pytest on an upstream test
file and reading its outcome."""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

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


def regressions(results, baseline="upstream"):
    """Tests the baseline passes that another mode does not."""
    worse = []
    for mode, found in results.items():
        if mode != baseline and baseline in results:
            worse += [f"{mode}: {t}" for t, r in results[baseline].items() if r == "passed" and found.get(t) != "passed"]
    return worse


class Tally:
    """The modes' outcomes."""

    def __init__(self):
        self.results = {}

    def add(self, mode, code, output):
        """Records and prints one mode's run."""
        self.results[mode] = outcomes(output)
        report(mode, code, output)

    def exit_if_worse(self, baseline):
        """Exits 1, naming them, if a mode fails a test `baseline` passes."""
        worse = regressions(self.results)
        if worse:
            print(f"fails where {baseline} passes: " + ", ".join(worse))
            sys.exit(1)
