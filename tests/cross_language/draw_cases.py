#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Python driver of the cross-language draw test: each case of a case
file (format: cases.py) drawn through the public Python API (rngtrk.sample,
rngtrk.sample_slice, rngtrk.dropout, rngtrk.dropout_slice, rngtrk.Tracker),
one result line per case.  run.py calls `result` in its own process; by hand:

    draw_cases.py CASE_FILE
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bindings", "python"))
sys.path.insert(0, HERE)

import numpy  # noqa: E402
import rngtrk  # noqa: E402

from cases import STATE_NAME, parse  # noqa: E402

REALS = ("low", "high", "mean", "std", "p")
WHOLES = ("sm_count", "max_threads_per_sm", "numel", "threads")


def _dims(text):
    return [int(v) for v in text.split(",")] if text else []


def _dropout_input(count, dtype="f32"):
    """in[i] = float((i * 7) % 23) - 11, as f32, f16 or bf16 (its bits in uint16)."""
    values = ((numpy.arange(count, dtype=numpy.uint64) * 7) % 23).astype(numpy.float32) - numpy.float32(11)
    if dtype == "f16":
        return values.astype(numpy.float16)
    if dtype == "bf16":
        return (values.view(numpy.uint32) >> 16).astype(numpy.uint16)  # exact: small integers
    return values


def _spec(case):
    """The keyword arguments of the case's spec."""
    spec = {"layout": case["layout"]}
    if "dist" in case:
        spec["dist"], spec["dtype"] = case["dist"], case["dtype"]
    spec.update({k: float(case[k]) for k in REALS if k in case})
    spec.update({k: int(case[k]) for k in WHOLES if k in case})
    return spec


def _dropout_spec(case):
    """Tracker.dropout's keywords: p and layout only."""
    spec = _spec(case)
    if set(spec) != {"layout", "p"}:
        raise NotImplementedError("Tracker.dropout takes p and layout only")
    return spec


def _dropout_keywords(case):
    """rngtrk.dropout's and dropout_slice's keywords: the data dtype, p,
    layout and the optional spec fields."""
    spec = _spec(case)
    spec["dtype"] = case["dtype"]
    return spec


def _draw(case):
    """The output array of a sample, slice or dropout case."""
    state = rngtrk.PhiloxState(int(case["seed"]), int(case["offset"]))
    op = case["op"]
    if op == "sample":
        return rngtrk.sample(state, int(case["count"]), int(case["first"]), **_spec(case))
    if op == "slice":
        return rngtrk.sample_slice(state, _dims(case["shape"]), _dims(case["start"]), _dims(case["box"]),
                                   **_spec(case))
    if op == "dropout":
        return rngtrk.dropout(state, _dropout_input(int(case["count"]), case["dtype"]), first=int(case["first"]),
                              **_dropout_keywords(case))
    if op == "dslice":
        box = _dims(case["box"])
        count = 1
        for n in box:
            count *= n
        x = _dropout_input(count, case["dtype"]).reshape(box)
        return rngtrk.dropout_slice(state, _dims(case["shape"]), _dims(case["start"]), x, **_dropout_keywords(case))
    raise NotImplementedError(f"op {op}")


def _tracker_draw(tracker, case):
    """The output array of a tracker case, drawn inside the fork."""
    op = case["op"]
    if op == "tsample":
        return tracker.sample(int(case["count"]), **_spec(case))
    if op == "tslice":
        return tracker.sample_slice(_dims(case["shape"]), _dims(case["start"]), _dims(case["box"]), **_spec(case))
    if op == "tdropout":
        return tracker.dropout(_dropout_input(int(case["count"])), **_dropout_spec(case))
    raise NotImplementedError(f"op {op}")


def _hex(array):
    return array.tobytes().hex() or "-"


def result(line):
    """The result line of one case line (no newline)."""
    try:
        case = parse(line)
        if not case["op"].startswith("t"):
            try:
                return "ok " + _hex(_draw(case))
            except rngtrk.RngtrkError as error:
                return f"error {error.code}"
        with rngtrk.Tracker() as tracker:
            tracker.add(STATE_NAME, int(case["seed"]))
            try:
                tracker.set_state(STATE_NAME, rngtrk.PhiloxState(int(case["seed"]), int(case["offset"])))
                with tracker.fork(STATE_NAME):
                    out = "ok " + _hex(_tracker_draw(tracker, case))
            except rngtrk.RngtrkError as error:
                out = f"error {error.code}"
            return f"{out} offset={tracker.get_state(STATE_NAME).offset}"
    except Exception as error:  # a bad line, or the binding refused what C takes: a difference to report
        return f"unsupported {type(error).__name__}: {error}".replace("\n", " ")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="ascii") as f:
        for line in f:
            print(result(line))


if __name__ == "__main__":
    main()
