"""The lublin run-time cut-off follows the reference program (``m_lublin99.c``:
``do { hg = hyper_gamma(a1, b1, a2, b2, p); } while (hg > TOO_MUCH_TIME)``): a draw
above ``max_log_runtime`` is redrawn whole, branch included, so ``log(run time)`` is
the hyper-Gamma mixture conditioned on the cut-off. The "too small" error fires only
when no branch open to a job meets the cut-off. With estimates, ``MaxRuntime`` (the
most the system allows) covers every requested time.

Reference values are computed here by numeric integration, independently of the
generator.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import schedlab
from schedlab.errors import UsageError
from schedlab.formats import lublin

#: Whole-sample parameters, typed from the reference program.
WHOLE = {"serial_prob": 0.244, "pow2_prob": 0.576, "ulow": 0.8, "umed": 4.5, "uhi": 7.0,
         "uprob": 0.86, "a1": 4.2, "b1": 0.94, "a2": 312.0, "b2": 0.03, "pa": -0.0054,
         "pb": 0.78}  # fmt: skip


def size_pmf(p: dict[str, float], max_size: int) -> np.ndarray:
    """Exact probability of each size 0..max_size under the model."""

    def cdf(x: float) -> float:
        first = np.clip((x - p["ulow"]) / (p["umed"] - p["ulow"]), 0, 1)
        second = np.clip((x - p["umed"]) / (p["uhi"] - p["umed"]), 0, 1)
        return float(p["uprob"] * first + (1 - p["uprob"]) * second)

    pmf = np.zeros(max_size + 1)
    pmf[1] += p["serial_prob"]
    other = 1.0 - p["serial_prob"] - p["pow2_prob"]
    for k in range(int(math.log2(max_size)) + 1):
        pmf[2**k] += p["pow2_prob"] * (cdf(k + 0.5) - cdf(k - 0.5))
    for s in range(1, max_size + 1):
        pmf[s] += other * (cdf(math.log2(s + 0.5)) - cdf(math.log2(s - 0.5)))
    return pmf


def below(shape: float, scale: float, limit: float) -> tuple[float, float]:
    """(P(X <= limit), E[exp(X); X <= limit]) for X ~ Gamma(shape, scale)."""
    x = np.linspace(1e-9, limit, 400_001)
    pdf = np.exp((shape - 1) * np.log(x) - x / scale - math.lgamma(shape) - shape * math.log(scale))
    return float(np.trapezoid(pdf, x)), float(np.trapezoid(pdf * np.exp(x), x))


def reference_mean(limit: float, p: dict[str, float] = WHOLE, procs: int = 128) -> float:
    """Mean run time of the mixture conditioned on hyper-Gamma <= limit."""
    c1, e1 = below(p["a1"], p["b1"], limit)
    c2, e2 = below(p["a2"], p["b2"], limit)
    mix = np.clip(p["pa"] * np.arange(procs + 1) + p["pb"], 0, 1)
    per_size = (mix * e1 + (1 - mix) * e2) / (mix * c1 + (1 - mix) * c2)
    return float(np.sum(size_pmf(p, procs) * per_size))


def test_a_lower_cut_off_conditions_the_mixture_not_each_branch():
    run = schedlab.read("lublin:jobs=200000,seed=11,types=no,max_log_runtime=9").to_arrays()[
        "run_time"
    ]
    expected = reference_mean(9.0)  # 866 s; redrawing inside the branch gives 1943 s
    assert 850 < expected < 880
    assert run.mean() == pytest.approx(expected, rel=0.04)
    assert run.max() <= math.exp(9)
    # Serial jobs: the long branch Gamma(312, 0.03) meets 9 with probability 0.25, so
    # it holds 0.2254 * 0.2516 / (0.2254 * 0.2516 + 0.7746 * 0.9824) = 6.9 % of them,
    # its draws all above e**7 while the short branch's are there only 4 % of the time.
    nodes = schedlab.read("lublin:jobs=200000,seed=11,types=no,max_log_runtime=9").to_arrays()[
        "allocated_processors"
    ]
    c1, _ = below(4.2, 0.94, 9.0)
    c1_above_7 = c1 - below(4.2, 0.94, 7.0)[0]
    c2, _ = below(312, 0.03, 9.0)
    p = 0.78 - 0.0054
    long_share = (1 - p) * c2 / ((1 - p) * c2 + p * c1)
    expected_above_7 = long_share + (1 - long_share) * c1_above_7 / c1
    serial = run[nodes == 1]
    assert (serial > math.exp(7)).mean() == pytest.approx(expected_above_7, abs=0.01)


def test_default_cut_off_mean_run_time():
    run = schedlab.read("lublin:jobs=200000,seed=3,types=no").to_arrays()["run_time"]
    assert run.mean() == pytest.approx(reference_mean(12.0), rel=0.03)


@pytest.mark.parametrize(
    "spec",
    [
        "lublin:types=no,jobs=10000,max_log_runtime=8",  # the long branch meets 8 only 0.4 %
        "lublin:jobs=5000,a2_inter=300",  # interactive long branch never below 12
        "lublin:jobs=5000,max_log_runtime=8",  # batch long branch: 4e-8 below 8
    ],
)
def test_a_cut_off_one_branch_meets_generates(spec):
    workload = schedlab.read(spec).to_arrays()
    cut = float(spec.split("max_log_runtime=")[1]) if "max_log_runtime" in spec else 12.0
    assert workload["run_time"].max() <= math.exp(cut)
    assert len(workload["run_time"]) == int(spec.split("jobs=")[1].split(",")[0])


def test_max_log_runtime_8_matches_the_reference_mean():
    run = schedlab.read("lublin:jobs=200000,seed=5,types=no,max_log_runtime=8").to_arrays()[
        "run_time"
    ]
    assert run.mean() == pytest.approx(reference_mean(8.0), rel=0.04)


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        ("lublin:max_log_runtime=0.5,types=no", ("a1, b1, a2, b2, pa, pb", "128 nodes")),
        ("lublin:max_log_runtime=0.2", ("a1_inter", "pb_inter")),
        ("lublin:types=no,a1=600,b1=0.03,a2=500,b2=0.03", ("max_log_runtime=12", "a1, b1")),
    ],
)
def test_a_cut_off_no_branch_meets_is_a_one_line_error(spec, names):
    with pytest.raises(UsageError) as info:
        schedlab.read(spec)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("generator lublin: option max_log_runtime="), message
    assert "too small for the run-time parameters" in message
    for name in names:
        assert name in message, message


def test_too_small_cut_off_on_the_command_line_exits_2(capsys):
    from schedlab.cli import main

    with pytest.raises(SystemExit) as info:
        main(["info", "lublin:types=no,max_log_runtime=0.5"])
    assert info.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("schedlab: error: generator lublin: option max_log_runtime=0.5")


def test_gamma_cdf_against_numeric_integration():
    for shape, scale, x in ((4.2, 0.94, 8.0), (312, 0.03, 8.0), (312, 0.03, 9.0),
                            (639.1, 0.0156, 8.0), (0.5, 2.0, 0.3), (7.073, 0.6856, 0.5),
                            (4.2, 0.94, 0.5), (2.0, 1.0, 25.0)):  # fmt: skip
        numeric, _ = below(shape, scale, x)
        if shape < 1:  # integrable singularity at 0: closed form for shape 0.5
            numeric = math.erf(math.sqrt(x / scale))
        assert lublin.gamma_cdf(shape, scale, x) == pytest.approx(numeric, rel=1e-4, abs=1e-12)
    assert lublin.gamma_cdf(312, 0.001, 29.0) == 1.0
    assert lublin.gamma_cdf(312, 0.03, 0.5) < 1e-200


# --------------------------------------------------------------------------- MaxRuntime


def requested_and_limit(workload: schedlab.Workload) -> tuple[np.ndarray, int]:
    return workload.to_arrays()["requested_time"], workload.header.max_runtime


def test_lublin_estimates_stay_within_max_runtime():
    requested, limit = requested_and_limit(
        schedlab.read("lublin:jobs=20000,seed=2,estimates=tsafrir")
    )
    assert requested.max() == 172_800  # M = 48 h, the most popular estimate
    assert limit == 172_800
    # Without estimates the header keeps exp(max_log_runtime).
    assert schedlab.read("lublin:jobs=20000,seed=2").header.max_runtime == 162_754


def test_wrapper_raises_max_runtime_to_cover_its_estimates():
    w = schedlab.read("tsafrir-estimates:base=lublin:jobs=5000;seed=2,seed=2")
    requested, limit = requested_and_limit(w)
    assert requested.max() <= limit == 172_800
    assert any("MaxRuntime raised from 162754 to 172800" in n for n in w.header.get_all("Note"))
    # Jobs longer than M keep their run time rounded up to a minute: still covered.
    from schedlab.formats import tsafrir_estimates
    from schedlab.model import Header, Workload

    header = Header()
    header.set("MaxRuntime", 5000)
    run = np.array([10.0, 100.0, 2000.0, 4000.0, 7170.0])
    base = Workload.from_arrays({"job_number": np.arange(1.0, 6.0), "run_time": run}, header)
    w = tsafrir_estimates.apply(base, max_estimate=3600)
    requested, limit = requested_and_limit(w)
    assert requested.max() == 7200 and limit == 7200
    # An absent MaxRuntime stays absent (unknown stays unknown).
    bare = Workload.from_arrays({"job_number": np.arange(1.0, 6.0), "run_time": run}, Header())
    assert tsafrir_estimates.apply(bare, max_estimate=3600).header.max_runtime is None


def test_wrapped_and_generated_estimates_validate_clean(tmp_path):
    from click.testing import CliRunner
    from schedlab.cli import cli

    runner = CliRunner()
    for spec in (
        "lublin:jobs=20000,seed=2,estimates=tsafrir",
        "tsafrir-estimates:base=lublin:jobs=5000;seed=2,seed=2",
    ):
        out = tmp_path / "w.swf"
        result = runner.invoke(cli, ["convert", spec, str(out)])
        assert result.exit_code == 0, result.output
        back = schedlab.read(str(out))
        requested = back.to_arrays()["requested_time"]
        assert requested.max() <= back.header.max_runtime
        result = runner.invoke(cli, ["validate", "--strict", str(out)])
        assert result.exit_code == 0, result.output
        assert "0 error(s), 0 warning(s)" in result.output
