"""Fixes from the predictors/generators audit: ``tsafrir-estimates`` option ranges
(no uninitialised estimates, no internal errors, one-line errors naming the option,
no numpy warning first) and its spec in the header; ``learned`` predictions capped
(finite, the same on the Python and compiled paths); ``lublin`` Gamma shapes out of
floating-point range and the ``procs``-too-small message; the count of raised
estimates on both paths."""

from __future__ import annotations

import math
import random
import warnings
from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab.cli import main
from schedlab.errors import UsageError
from schedlab.formats import tsafrir_estimates as T
from schedlab.sim import online_linear
from schedlab.sim.online_linear import linear_prediction
from schedlab.sim.result import estimate_notes


def _swf(path: Path, seed: int, n: int, p_unknown_req: float) -> Path:
    """A small SWF of ``n`` jobs on 8 processors, users 1, 2 and -1, a share
    ``p_unknown_req`` of unknown requested times (the audit's generator)."""
    rnd = random.Random(seed)
    lines = ["; Version: 2.2", "; MaxProcs: 8", "; MaxNodes: 8"]
    t = 0
    for i in range(1, n + 1):
        t += rnd.choice([0, 0, 0, 1, 5, 10, 30, 60, 100])
        run = rnd.choice([0, 1, 5, 10, 30, 60, 61, 100, 200, 300, 1000])
        size = rnd.randint(1, 8)
        r = rnd.random()
        if r < p_unknown_req:
            req = -1
        elif r < p_unknown_req + 0.05:
            req = 0
        else:
            req = rnd.choice([run, run + 1, max(run // 2, 1), run * 3 + 10, 60, 120, 3600])
        user = rnd.choice([1, 2, -1])
        lines.append(f"{i} {t} -1 {run} {size} -1 -1 {size} {req} -1 1 {user} -1 -1 -1 -1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


def _runs(n: int = 2000, seed: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.round(rng.lognormal(6, 2, n).clip(0, 200_000))


def _usage_error(**options: object) -> str:
    """The one-line error of ``assign`` with ``options``; no numpy warning first."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UsageError) as info:
            T.assign(_runs(), seed=1, **options)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("generator tsafrir-estimates: option")
    return message


# ---------------------------------------------------------------- tsafrir-estimates


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("tail_b", 300.0),
        ("tail_b", 1e300),
        ("tail_b", -1e300),
        ("tail_b", 1000.0),
        ("tail_b", -1000.0),
        ("tail_a", 1e300),
        ("tail_a", 1e-320),
        ("head_b", 1e300),
        ("head_b", -1e300),
        ("head_a", 1e308),
        ("head_c", 1e308),
        ("time_shape", math.inf),
        ("time_shape", 1e308),
        ("max_estimate", 1e17),
        ("max_estimate", 1e16),
        ("max_estimate", math.inf),
    ],
)
def test_out_of_range_model_options_are_one_line_errors(name: str, value: float) -> None:
    message = _usage_error(**{name: value})
    assert f"option {name}=" in message or f"{name}=" in message.split(":")[1], message


def test_the_documented_bounds_are_accepted() -> None:
    run = _runs()
    for options in (
        {"tail_b": T.MAX_EXPONENT},
        {"tail_b": -T.MAX_EXPONENT},
        {"tail_a": T.MAX_FACTOR, "head_a": T.MAX_FACTOR, "head_c": T.MAX_FACTOR, "max_share": 0.2},
        {"tail_a": 1 / T.MAX_FACTOR, "max_share": 0.3},
        {"head_b": T.MAX_HEAD_B, "max_share": 0.3},
        {"head_b": -T.MAX_HEAD_B},
        {"time_shape": T.MAX_TIME_SHAPE},
        {"max_estimate": T.MAX_ESTIMATE},
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            estimate, _ = T.assign(run, seed=2, **options)
        assert np.isfinite(estimate).all(), options
        assert (estimate >= run).all(), options
        assert (estimate == np.round(estimate)).all(), options


def test_a_steep_tail_gives_deterministic_estimates_at_least_the_run_time(
    tmp_path: Path,
) -> None:
    run = _runs()
    first, _ = T.assign(run, seed=0, tail_b=T.MAX_EXPONENT, bins=500)
    second, _ = T.assign(run, seed=0, tail_b=T.MAX_EXPONENT, bins=500)
    assert np.array_equal(first, second)
    assert (first >= run).all() and (first >= 1).all()


def test_tail_b_300_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    base = _swf(tmp_path / "base.swf", 3, 300, 0.3)
    out = tmp_path / "out.swf"
    with pytest.raises(SystemExit) as info:
        main(["convert", f"tsafrir-estimates:base={base},tail_b=300,replace=yes", str(out)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Warning" not in err, err
    assert err.startswith("schedlab: error: generator tsafrir-estimates: option tail_b=300"), err


def test_the_spec_is_recorded_in_the_header(tmp_path: Path) -> None:
    base = _swf(tmp_path / "base.swf", 3, 300, 0.3)
    (tmp_path / "with.swf").write_text(
        base.read_text().replace("; Version: 2.2\n", "; Version: 2.2\n; Conversion: by hand\n")
    )
    spec = f"tsafrir-estimates:base={tmp_path / 'with.swf'},seed=1,max_share=0.5,head_share=0.7"
    out = tmp_path / "out.swf"
    schedlab.write(schedlab.read(spec), out)
    header = schedlab.read(out).header
    assert header.get("Conversion") == f"schedlab {spec}"
    assert any("by hand" in note for note in header.get_all("Note"))
    # A generator base: its own spec is inside the outer one.
    inner = "tsafrir-estimates:base=lublin:jobs=50;seed=2,seed=1,bins=30"
    w = schedlab.read(inner)
    assert w.header.get("Conversion") == f"schedlab {inner}"
    assert any("schedlab lublin:jobs=50,seed=2" in note for note in w.header.get_all("Note"))


def test_apply_notes_the_non_default_options() -> None:
    w = schedlab.read("lublin:jobs=60,seed=3")
    notes = T.apply(w, seed=4, max_share=0.5, head_share=0.7).header.get_all("Note")
    assert any("max_share=0.5" in n and "head_share=0.7" in n for n in notes), notes


# ---------------------------------------------------------------- learned


def test_linear_prediction_is_capped_in_log_space() -> None:
    huge = [1e3, 0.0]
    assert linear_prediction(huge, [1.0, 0.0], 10.0, math.nan) == online_linear.MAX_PREDICTION
    assert linear_prediction([math.inf], [1.0], 10.0, math.nan) == online_linear.MAX_PREDICTION
    assert linear_prediction(huge, [1.0, 0.0], 10.0, 3600.0) == 3600.0
    # Below the cap: unchanged.
    assert linear_prediction([0.5], [1.0], 10.0, math.nan) == math.expm1(5.0)
    assert online_linear.MAX_PREDICTION == 1e12


@pytest.mark.parametrize("kernel", ["python", "compiled"])
def test_a_runaway_learned_model_gives_finite_estimates(tmp_path: Path, kernel: str) -> None:
    if kernel == "compiled":
        pytest.importorskip("numba")
    w = schedlab.read(_swf(tmp_path / "ovf.swf", 12, 100, 0.6))
    r = schedlab.simulate(
        w,
        estimator="learned",
        estimator_options={"rate": 10},
        backfill_options={"kernel": kernel},
    )
    estimate = np.asarray(r.estimate, dtype=float)
    assert np.isfinite(estimate).all()
    assert estimate.max() == online_linear.MAX_PREDICTION  # the model ran away: capped


def test_a_runaway_learned_model_is_the_same_on_both_paths(tmp_path: Path) -> None:
    pytest.importorskip("numba")
    w = schedlab.read(_swf(tmp_path / "ovf.swf", 12, 100, 0.6))
    runs = [
        schedlab.simulate(
            w,
            estimator="learned",
            estimator_options={"rate": 10},
            backfill_options={"kernel": kernel},
        )
        for kernel in ("python", "compiled")
    ]
    python, compiled = runs
    assert compiled.stats["whole_run"] and not python.stats["whole_run"]
    assert np.array_equal(np.asarray(python.start), np.asarray(compiled.start))
    assert np.array_equal(np.asarray(python.estimate), np.asarray(compiled.estimate))


# ---------------------------------------------------------------- lublin


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        ("lublin:a1=1e308,types=no", ["a1=1e+308"]),
        ("lublin:a2=1e308,types=no", ["a2=1e+308"]),
        ("lublin:a1_inter=1e308", ["a1_inter=1e+308"]),
        ("lublin:anum=1e308,types=no", ["anum=1e+308"]),
        ("lublin:aarr=1e308,types=no", ["aarr=1e+308"]),
    ],
)
def test_gamma_shapes_beyond_float_range_are_one_line_errors(
    spec: str, names: list[str], capsys: pytest.CaptureFixture
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["info", spec])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("schedlab: error: generator lublin: option"), err
    for name in names:
        assert name in err, err


def test_procs_too_small_names_only_the_option_below() -> None:
    with pytest.raises(UsageError) as info:
        schedlab.read("lublin:procs=31")
    message = str(info.value)
    assert "umed_inter=0.954196 (it follows procs) falls below ulow_inter=1" in message, message
    assert "uhi_inter=" not in message.split(";")[0], message
    assert "procs must be at least 32" in message


# ---------------------------------------------------------------- raised estimates


def _tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.swf"
    path.write_text(
        "; Version: 2.2\n; MaxProcs: 4\n"
        "1 0 -1 0 1 -1 -1 1 0.001 -1 1 1 -1 -1 -1 -1 -1 -1\n"
        "2 0 -1 5 1 -1 -1 1 0.001 -1 1 2 -1 -1 -1 -1 -1 -1\n"
        "3 1 -1 5 1 -1 -1 1 10 -1 1 3 -1 -1 -1 -1 -1 -1\n"
    )
    return path


@pytest.mark.parametrize("estimator", ["easy++", "learned", "requested"])
def test_an_estimate_of_exactly_1_ms_is_not_raised_on_the_python_path(
    tmp_path: Path, estimator: str
) -> None:
    w = schedlab.read(_tiny(tmp_path))
    r = schedlab.simulate(w, estimator=estimator, backfill_options={"kernel": "python"})
    assert r.stats["estimates_raised"] == 0


def _zero_runs(tmp_path: Path) -> Path:
    """Jobs of one user with run times of 0: easy++ predicts 0 for the later ones,
    raised to 1 ms."""
    path = tmp_path / "zero.swf"
    lines = [
        f"{k + 1} {10 * k} -1 0 1 -1 -1 1 100 -1 1 7 -1 -1 -1 -1 -1 -1\n" for k in range(6)
    ]
    path.write_text("; Version: 2.2\n; MaxProcs: 4\n" + "".join(lines))
    return path


@pytest.mark.parametrize("estimator", ["easy++", "learned"])
@pytest.mark.parametrize("workload", ["tiny", "zero"])
def test_raised_estimates_are_counted_the_same_on_both_paths(
    tmp_path: Path, estimator: str, workload: str
) -> None:
    pytest.importorskip("numba")
    w = schedlab.read(_tiny(tmp_path) if workload == "tiny" else _zero_runs(tmp_path))
    python, compiled = (
        schedlab.simulate(w, estimator=estimator, backfill_options={"kernel": kernel})
        for kernel in ("python", "compiled")
    )
    assert compiled.stats["whole_run"]
    assert compiled.stats["estimates_raised"] == python.stats["estimates_raised"]
    assert estimate_notes(compiled) == estimate_notes(python)
    if workload == "tiny":
        assert python.stats["estimates_raised"] == 0
    elif estimator == "easy++":
        assert python.stats["estimates_raised"] > 0


def test_without_a_count_the_engine_counts_the_estimates_at_submission(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole run that does not count its raised predictions (a third party's:
    ``estimates_raised`` left ``None``) gets the estimates at submission of at most
    1 ms counted, the only evidence left."""
    pytest.importorskip("numba")
    from schedlab.policies.backfill import easy_compiled

    w = schedlab.read(_tiny(tmp_path))
    counted = schedlab.simulate(w, estimator="easy++", backfill_options={"kernel": "compiled"})
    assert counted.stats["whole_run"] and counted.stats["estimates_raised"] == 0
    original = easy_compiled.prediction_outcome

    def uncounted(*args, **kwargs):
        fields = original(*args, **kwargs)
        fields.pop("estimates_raised", None)
        return fields

    monkeypatch.setattr(easy_compiled, "prediction_outcome", uncounted)
    r = schedlab.simulate(w, estimator="easy++", backfill_options={"kernel": "compiled"})
    assert r.stats["whole_run"] and r.stats["estimates_raised"] == 2
    assert any("raised to 1 ms" in note for note in estimate_notes(r))
    assert not any("raised to 1 ms" in note for note in estimate_notes(counted))
