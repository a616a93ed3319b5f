# SPDX-License-Identifier: Apache-2.0
"""One exception class per status code, carrying .code and the library's message."""
import pickle

import pytest

import rngtrk
from rngtrk import errors

EXPECTED = {
    -1: (rngtrk.InvalidArgumentError, ValueError),
    -2: (rngtrk.DuplicateNameError, ValueError),
    -3: (rngtrk.DuplicateSeedError, ValueError),
    -4: (rngtrk.UnknownNameError, KeyError),
    -5: (rngtrk.ForkOrderError, RuntimeError),
    -6: (rngtrk.BufferTooSmallError, ValueError),
    -7: (rngtrk.CorruptCheckpointError, ValueError),
    -8: (rngtrk.UnsupportedVersionError, ValueError),
    -9: (rngtrk.RngtrkOverflowError, OverflowError),
    -10: (rngtrk.RngtrkMemoryError, MemoryError),
    -11: (rngtrk.UnavailableError, RuntimeError),
    -12: (rngtrk.InternalError, RuntimeError),
    -13: (rngtrk.WrongRankError, ValueError),
    -14: (rngtrk.RngtrkIOError, OSError),
}


@pytest.mark.parametrize("code", sorted(EXPECTED))
def test_each_status_code_has_its_class_and_builtin_base(code):
    cls, builtin = EXPECTED[code]
    error = errors.error_for(code, "detail")
    assert type(error) is cls
    assert isinstance(error, rngtrk.RngtrkError) and isinstance(error, builtin)
    assert error.code == code == cls.code
    assert error.message == "detail"
    assert str(error) == f"{rngtrk.status_string(code)}: detail"


def test_an_unknown_code_from_a_newer_library_is_a_plain_rngtrk_error():
    error = errors.error_for(-99, "future")  # a code this binding does not know
    assert type(error) is rngtrk.RngtrkError and error.code == -99
    assert rngtrk.status_string(-99) == "unknown status code"


def test_status_strings_come_from_the_library():
    assert rngtrk.status_string(0) == "success"
    assert rngtrk.status_string(-4) == "unknown state name"


def test_raised_errors_carry_the_librarys_message(tracker):
    tracker.add("a", 1)
    with pytest.raises(rngtrk.DuplicateSeedError) as raised:
        tracker.add("b", 1)
    assert raised.value.code == -3
    assert "seed 1" in raised.value.message and '"a"' in raised.value.message
    with pytest.raises(KeyError) as raised:
        tracker.get_state("missing")
    assert str(raised.value) == 'unknown state name: no state named "missing"'


def test_errors_pickle_with_their_code_and_message():
    error = pickle.loads(pickle.dumps(errors.error_for(-7, "bad checksum")))
    assert type(error) is rngtrk.CorruptCheckpointError
    assert (error.code, error.message) == (-7, "bad checksum")


def test_each_status_class_enters_itself_and_a_refinement_does_not():
    # ERROR_CLASSES is filled by the classes themselves: one per status,
    # and a subclass that refines one (as rngtrk.torch's do) keeps it.
    assert all(cls.code == code and vars(cls)["code"] == code for code, cls in errors.ERROR_CLASSES.items())

    class Refined(rngtrk.InvalidArgumentError, AssertionError):
        """As rngtrk.torch.megatron's RankUnavailableError."""

    assert errors.ERROR_CLASSES[-1] is rngtrk.InvalidArgumentError and Refined.code == -1
    with pytest.raises(TypeError, match="is InvalidArgumentError's"):
        class Twin(rngtrk.RngtrkError):  # noqa: F841  (a second class for one status)
            code = rngtrk.InvalidArgumentError.code
    assert errors.ERROR_CLASSES[-1] is rngtrk.InvalidArgumentError


def test_a_path_that_is_not_utf8_comes_back_escaped_not_replaced(tmp_path):
    # os.fsencode turns the lone surrogate back into the byte 0xFF: the
    # library shows it as \xff, so the message decodes strictly.
    path = str(tmp_path / "no-such-folder") + "/\udcff\udcfe.rtck"
    with rngtrk.Tracker() as t, pytest.raises(rngtrk.RngtrkIOError) as caught:
        t.save_file(path)
    assert "no-such-folder/\\xff\\xfe.rtck" in caught.value.message
    assert "\ufffd" not in caught.value.message


def test_the_trackers_last_error_is_readable_from_another_thread():
    import threading
    t = rngtrk.Tracker()
    assert t.last_error() == ""
    raised = []

    def fail_there():
        try:
            t.get_state("not-added-on-that-thread")
        except rngtrk.UnknownNameError as e:
            raised.append(e.message)

    thread = threading.Thread(target=fail_there)
    thread.start()
    thread.join()
    assert raised and "not-added-on-that-thread" in raised[0]
    assert t.last_error() == raised[0]
    t.add("fine", 1)
    assert t.last_error() == raised[0]  # success keeps it
    t.close()
    with pytest.raises(rngtrk.InvalidArgumentError):
        t.last_error()
