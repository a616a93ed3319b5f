# SPDX-License-Identifier: Apache-2.0
"""The bad-input matrix of docs/errors.md, from Python: each bad call raises
its documented exception and changes nothing; nothing crashes."""
import pytest

import rngtrk
from rngtrk import PhiloxState

from conftest import snapshot

M64 = (1 << 64) - 1


@pytest.fixture
def t():
    with rngtrk.Tracker() as tracker:
        tracker.add("a", 1)
        yield tracker


@pytest.mark.parametrize("call, error", [
    (lambda t: t.add(None, 1), TypeError),                          # None where a name goes
    (lambda t: t.add("", 2), rngtrk.InvalidArgumentError),          # empty name
    (lambda t: t.add("x" * 256, 2), rngtrk.InvalidArgumentError),   # 256-byte name
    (lambda t: t.add("\udcff", 2), rngtrk.InvalidArgumentError),    # not valid UTF-8
    (lambda t: t.add(b"\xff", 2), TypeError),                       # bytes are not names
    (lambda t: t.get_state(None), TypeError),
    (lambda t: t.set_state("a", PhiloxState(1, M64 - 2)), rngtrk.InvalidArgumentError),  # offset not a multiple of 4
    (lambda t: t.set_default(None), TypeError),
    (lambda t: t.load(None), TypeError),
    (lambda t: t.load(b"RNGTRKCK"), rngtrk.CorruptCheckpointError),
    (lambda t: t.random_u32(1 << 62), rngtrk.RngtrkOverflowError),  # bytes past size_t
    (lambda t: rngtrk.random_u32(PhiloxState(1, 0), 1 << 63), rngtrk.RngtrkOverflowError),
    (lambda t: rngtrk.sample(PhiloxState(1, 0), 1 << 62, dtype="f64"), rngtrk.RngtrkOverflowError),
    (lambda t: rngtrk.random_u32(PhiloxState(1, 0), 2, first=M64), rngtrk.RngtrkOverflowError),
])
def test_bad_calls_raise_and_change_nothing(t, call, error):
    before = snapshot(t)
    with pytest.raises(error):
        call(t)
    assert snapshot(t) == before


def test_offsets_near_2_to_the_64(t):
    t.set_state("a", PhiloxState(1, M64 - 3))
    with t.fork("a"):
        before = snapshot(t)
        with pytest.raises(rngtrk.RngtrkOverflowError):
            t.advance(1)
        assert snapshot(t) == before


def test_use_after_close_and_double_close():
    t = rngtrk.Tracker()
    t.close()
    t.close()
    for call in (t.save, t.names, lambda: t.add("b", 2), lambda: t.fork("a").__enter__(), t.digest,
                 lambda: t.load(b""), lambda: t.sample(4)):
        with pytest.raises(rngtrk.InvalidArgumentError, match="closed"):
            call()


def test_restoring_a_fork_twice_and_loading_inside_a_fork(t):
    fork = t.fork("a")
    fork.__enter__()
    data = t.save()
    before = snapshot(t)
    with pytest.raises(rngtrk.ForkOrderError):
        t.load(data)
    assert snapshot(t) == before
    fork.__exit__(None, None, None)
    after = snapshot(t)
    with pytest.raises(rngtrk.ForkOrderError):
        fork.__exit__(None, None, None)
    assert snapshot(t) == after


@pytest.mark.parametrize("call, name", [
    (lambda t: rngtrk.sample(PhiloxState(1, 0), 4, lo=0.5), "sample"),
    (lambda t: rngtrk.sample_slice(PhiloxState(1, 0), (4,), (0,), (4,), sigma=2), "sample_slice"),
    (lambda t: rngtrk.offset_increment(4, sm=1), "offset_increment"),
    (lambda t: t.sample(4, probability=0.5), "Tracker.sample"),
    (lambda t: t.sample_slice((4,), (0,), (4,), mu=0), "Tracker.sample_slice"),
])
def test_an_unknown_keyword_names_the_public_function(t, call, name):
    before = snapshot(t)
    with pytest.raises(TypeError, match=rf"^{name}\(\) got an unexpected keyword argument"):
        call(t)
    assert snapshot(t) == before


def test_without_numpy_import_works_and_generation_names_numpy_and_its_package():
    from conftest import run_python
    code = ("import sys; sys.modules['numpy'] = None\n"  # `import numpy` now raises ImportError
            "import rngtrk\n"
            "t = rngtrk.Tracker(); t.add('a', 1)\n"  # the tracker needs no numpy
            "try:\n"
            "    rngtrk.uniform_f32(rngtrk.PhiloxState(0, 0), 4)\n"
            "except ImportError as e:\n"
            "    print(e)\n")
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert "needs numpy" in result.stdout and "python3-numpy" in result.stdout
