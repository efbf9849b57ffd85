"""What the notes say about estimates, and how options read numbers.

* An estimator giving ``NaN`` for jobs whose requested time is known is told
  apart from a requested time that is unknown (whose note keeps its text), and
  the note names the fallback the engine really used (a positive ``MaxRuntime``,
  else the run time).
* Estimates below 1 ms (zero and negative included) are raised to 1 ms, as
  before, and now counted and noted, by the engine's loop and by the whole runs
  alike (same counts, same notes, same schedule).
* An ``int`` option (and ``depth``) takes a whole number written with a decimal
  point or an exponent, from text as from Python; ``3.5`` is refused the same
  way from both.
* ``compute_metrics(names="a,b")`` takes comma-separated names.
"""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import schedlab
from schedlab.errors import UsageError
from schedlab.model import SWF_FIELDS, Workload
from schedlab.plugin_types import OptionSpec
from schedlab.sim import MIN_ESTIMATE
from schedlab.sim.result import estimate_notes
from schedlab.testing import run_cli

HPC2N = "HPC2N-2002_excerpt-3170jobs_alea.swf"
KEYS = (
    "estimate_fallbacks",
    "estimate_fallbacks_requested_known",
    "estimates_raised",
    "estimates_raised_negative",
)


class NoEstimate:
    """A plugin estimator with no estimate for any job."""

    name = "bad-est"

    def estimates(self, table: Any) -> list[float]:
        return [math.nan] * len(table.run_time)


class Tiny:
    """A plugin estimator giving negative, zero and sub-millisecond estimates for
    two jobs in three, the requested time for the others."""

    name = "tiny"

    def __init__(self, low: tuple[float, ...] = (-5.0, 0.0, 1e-4)) -> None:
        self.low = low

    def estimates(self, table: Any) -> list[float]:
        low = self.low
        return [
            low[(i // 3) % len(low)] if i % 3 else r for i, r in enumerate(table.requested_time)
        ]


@pytest.fixture(scope="module")
def hpc2n(swf_dir: Path) -> Workload:
    return schedlab.read(swf_dir / HPC2N)


def altered(w: Workload, **columns: Any) -> Workload:
    """``w`` in memory with some of its columns replaced (header copied)."""
    arrays = w.to_arrays()
    data = {name: np.array(arrays[name], dtype=np.float64) for name in SWF_FIELDS}
    data.update({name: np.asarray(v, dtype=np.float64) for name, v in columns.items()})
    return Workload.from_arrays(data, header=w.header.copy())


def run(w: Workload, estimator: Any, kernel: str = "python", per_pass: bool = True) -> Any:
    """EASY on ``kernel``; ``per_pass`` keeps the engine's loop (no whole run)."""
    from whole_run_checks import simulate_run

    return simulate_run(w, "fcfs", "easy", {"kernel": kernel}, per_pass, estimator=estimator)


def counts(result: Any) -> tuple[int, ...]:
    return tuple(result.stats[k] for k in KEYS)


# -- fallbacks: the true reason, the fallback used -----------------------------------


def test_nan_estimator_on_a_trace_with_requested_times_says_so(hpc2n: Workload) -> None:
    result = schedlab.simulate(hpc2n, "fcfs", "easy", estimator=NoEstimate(), progress=False)
    n = result.stats["jobs_simulated"]
    assert counts(result) == (n, n, 0, 0)
    assert estimate_notes(result) == [
        f"estimates fell back for {n:,} of {n:,} jobs: the 'bad-est' estimator gave no "
        "estimate (NaN) for them, though their requested time is known, so the scheduler "
        "used their actual run times (perfect estimates for these jobs)"
    ]
    # the built-in estimators have nothing to say on this log
    for name in ("requested", "actual", "user-average"):
        plain = schedlab.simulate(hpc2n, "fcfs", "easy", estimator=name, progress=False)
        assert estimate_notes(plain) == [] and counts(plain) == (0, 0, 0, 0), name


def test_unknown_and_known_requested_times_get_a_note_each(hpc2n: Workload) -> None:
    requested = hpc2n.to_arrays()["requested_time"].copy()
    requested[::4] = -1  # unknown (SWF's -1)
    w = altered(hpc2n, requested_time=requested)
    w.header.set("MaxRuntime", 3600)
    result = schedlab.simulate(w, "fcfs", "easy", estimator=NoEstimate(), progress=False)
    n = result.stats["jobs_simulated"]
    unknown = int(np.count_nonzero(~(result.workload.to_arrays()["requested_time"] >= 0)))
    assert 0 < unknown < n
    assert counts(result) == (n, n - unknown, 0, 0)
    assert estimate_notes(result) == [
        # today's text for the jobs whose requested time is unknown, byte for byte
        f"estimates fell back for {unknown:,} of {n:,} jobs: the 'bad-est' estimator had "
        "no value for them (requested time unknown), so the scheduler used the header's "
        "MaxRuntime (3600)",
        f"estimates fell back for {n - unknown:,} of {n:,} jobs: the 'bad-est' estimator "
        "gave no estimate (NaN) for them, though their requested time is known, so the "
        "scheduler used the header's MaxRuntime (3600)",
    ]
    assert np.all(result.estimate == 3600.0)


def test_a_maxruntime_of_zero_is_not_the_fallback_named(hpc2n: Workload) -> None:
    w = altered(hpc2n, requested_time=np.full(len(hpc2n.to_arrays()), -1.0))
    w.header.set("MaxRuntime", 0)  # not used by the engine: the run times are
    result = schedlab.simulate(w, "fcfs", "easy", progress=False)
    n = result.stats["jobs_simulated"]
    np.testing.assert_array_equal(result.estimate, np.maximum(result.end - result.start, 1e-3))
    assert estimate_notes(result) == [
        f"estimates fell back for {n:,} of {n:,} jobs: the 'requested' estimator had no "
        "value for them (requested time unknown), so the scheduler used their actual run "
        "times (perfect estimates for these jobs)"
    ]


# -- estimates below 1 ms: counted and noted, schedule unchanged ----------------------


def test_estimates_below_a_millisecond_are_counted_and_noted(hpc2n: Workload) -> None:
    result = schedlab.simulate(hpc2n, "fcfs", "easy", estimator=Tiny(), progress=False)
    n = result.stats["jobs_simulated"]
    # (HPC2N's requested times are all known and above 1 ms)
    given = np.array(Tiny().estimates(SimpleNamespace(requested_time=[60.0] * n)))
    low = int(np.count_nonzero(given < MIN_ESTIMATE))
    negative = int(np.count_nonzero(given < 0))
    assert 0 < negative < low
    assert counts(result) == (0, 0, low, negative)
    assert estimate_notes(result) == [
        f"{low:,} of {n:,} estimates were below 1 ms ({negative:,} negative) and were "
        "raised to 1 ms, the shortest estimate the scheduler uses"
    ]
    # the same schedule as estimates of 1 ms given as such (which are not noted)
    exact = schedlab.simulate(
        hpc2n, "fcfs", "easy", estimator=Tiny((MIN_ESTIMATE,)), progress=False
    )
    assert estimate_notes(exact) == [] and counts(exact) == (0, 0, 0, 0)
    np.testing.assert_array_equal(result.start, exact.start)
    np.testing.assert_array_equal(result.estimate, exact.estimate)


def test_a_requested_time_of_zero_is_noted_as_a_fact(hpc2n: Workload) -> None:
    requested = hpc2n.to_arrays()["requested_time"].copy()
    requested[:5] = 0
    w = altered(hpc2n, requested_time=requested)
    result = schedlab.simulate(w, "fcfs", "easy", kill=False, progress=False)
    n = result.stats["jobs_simulated"]
    assert counts(result) == (0, 0, 5, 0)
    assert estimate_notes(result) == [
        f"5 of {n:,} estimates were below 1 ms (0 negative) and were raised to 1 ms, the "
        "shortest estimate the scheduler uses"
    ]


# -- every path: the same counts and notes --------------------------------------------


@pytest.mark.parametrize("estimator", [NoEstimate, Tiny], ids=["nan", "tiny"])
def test_whole_runs_count_and_note_as_the_engine_loop(hpc2n: Workload, estimator: type) -> None:
    pytest.importorskip("numba")
    requested = hpc2n.to_arrays()["requested_time"].copy()
    requested[::5] = -1
    w = altered(hpc2n, requested_time=requested)
    python = run(w, estimator())
    per_pass = run(w, estimator(), "compiled")
    whole = run(w, estimator(), "compiled", per_pass=False)
    assert whole.stats["whole_run"] is True and python.stats["whole_run"] is False
    assert counts(python)[1 if estimator is NoEstimate else 2] > 0
    for other in (per_pass, whole):
        assert counts(other) == counts(python)
        assert estimate_notes(other) == estimate_notes(python)
        np.testing.assert_array_equal(other.start, python.start)


@pytest.mark.parametrize("estimator", ["user-average", "easy++", "learned"])
def test_predictions_raised_in_a_whole_run_are_counted_as_in_the_loop(
    hpc2n: Workload, estimator: str
) -> None:
    pytest.importorskip("numba")
    arrays = hpc2n.to_arrays()
    run_time = arrays["run_time"].copy()
    run_time[::3] = 0  # users with jobs of 0 s: predictions of 0 s
    requested = arrays["requested_time"].copy()
    requested[::7] = -1  # and no requested time for some: fallbacks
    w = altered(hpc2n, run_time=run_time, requested_time=requested)
    python = run(w, estimator)
    whole = run(w, estimator, "compiled", per_pass=False)
    assert whole.stats["whole_run"] is True and python.stats["whole_run"] is False
    assert counts(whole) == counts(python)
    assert counts(python)[2] > 0 and counts(python)[3] == 0
    assert estimate_notes(whole) == estimate_notes(python)
    np.testing.assert_array_equal(whole.start, python.start)


# -- int options: whole numbers written as decimals ------------------------------------


@pytest.mark.parametrize(
    ("text", "value"), [("3.0", 3), ("3e2", 300), (" 4.00 ", 4), ("-0.0", 0), ("1000.0", 1000)]
)
def test_an_int_option_takes_a_whole_number_written_as_a_decimal(text: str, value: int) -> None:
    option = OptionSpec("window", int, 2)
    got = option.convert(text, "estimator x")
    assert got == value and type(got) is int
    assert option.convert(float(text.replace("_", "")), "estimator x") == value


@pytest.mark.parametrize("raw", ["3.5", "3.0000000000000001", "inf", "nan", "1e400"])
def test_an_int_option_refuses_a_fraction_from_text_as_from_python(raw: str) -> None:
    option = OptionSpec("window", int, 2)
    for given in (raw, float(raw)):  # text and Python: the same refusal
        if given == 3.0:  # (as a float, 3.0000000000000001 is 3.0: taken)
            assert option.convert(given, "estimator x") == 3
            continue
        with pytest.raises(UsageError) as caught:
            option.convert(given, "estimator x")
        expected = f"estimator x: option window={given!r}: expected int (a whole number)"
        assert str(caught.value) == expected
    # text that is no number keeps its message; booleans are refused as before
    with pytest.raises(UsageError, match=r"invalid literal for int\(\) with base 10: 'x'"):
        option.convert("x", "estimator x")
    with pytest.raises(UsageError, match="not a boolean"):
        option.convert(True, "estimator x")


def test_depth_takes_3_0_on_the_command_line_and_in_python(
    capsys: pytest.CaptureFixture[str], swf_dir: Path, hpc2n: Workload
) -> None:
    code, _, err = run_cli(
        capsys, "simulate", str(swf_dir / HPC2N), "-b", "depth", "-B", "depth=3.0"
    )
    assert code == 0, err
    code, _, err = run_cli(
        capsys, "simulate", str(swf_dir / HPC2N), "-b", "depth", "-B", "depth=3.5"
    )
    assert code == 2
    assert "backfill depth: option depth='3.5': expected integer or 'all' (a whole number)" in err
    spec = schedlab.get_registry().get("backfill", "depth")
    assert spec.parse_options({"depth": 3.0}, "backfill") == {"depth": 3}
    assert spec.parse_options({"depth": "3e0"}, "backfill") == {"depth": 3}
    with pytest.raises(UsageError, match=r"depth=3\.5: expected integer or 'all' \(a whole"):
        spec.parse_options({"depth": 3.5}, "backfill")


# -- compute_metrics: comma-separated names -------------------------------------------


def test_compute_metrics_takes_comma_separated_names(hpc2n: Workload) -> None:
    listed = schedlab.compute_metrics(hpc2n, names=["wait", "bounded-slowdown"])
    text = schedlab.compute_metrics(hpc2n, names="wait, bounded-slowdown")
    assert text.to_dict()["metrics"] == listed.to_dict()["metrics"]
    assert text.to_dict()["rows"] == listed.to_dict()["rows"]
    with pytest.raises(UsageError, match="give at least one metric name"):
        schedlab.compute_metrics(hpc2n, names=" , ")
