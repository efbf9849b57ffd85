"""Shared fixtures.

Real-data tests read ``../shared/data`` beside the checkout (never copied into the
project). If it is missing the suite fails loudly instead of skipping: a run that
silently skipped the real-data tests would prove nothing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The suite's helper modules (``platform_sim_check``, ``platform_strategies``,
# ``workload_rows``) are imported by name: with ``--import-mode=importlib`` the
# tests folder is not on ``sys.path`` by itself.
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))

# The suite tests schedlab's own plugins: third-party plugins installed in the same
# environment (CI installs examples/schedlab-slurm) must not leak into it. Tests of
# plugin discovery clear this variable themselves.
os.environ["SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD"] = "1"
SHARED_DATA = Path(os.environ.get("SCHEDLAB_SHARED_DATA", ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The folder of real public traces (``../shared/data``); an error if absent."""
    if not SHARED_DATA.is_dir():
        pytest.fail(
            f"real trace data not found at {SHARED_DATA}: put shared/ beside the checkout "
            "or set SCHEDLAB_SHARED_DATA",
            pytrace=False,
        )
    return SHARED_DATA


@pytest.fixture(scope="session")
def swf_dir(shared_data: Path) -> Path:
    """``../shared/data/swf``."""
    return shared_data / "swf"


@pytest.fixture()
def registry():
    """A fresh registry from the installed entry points of the schedlab distribution
    only: third-party plugins installed in the environment cannot leak in."""
    from importlib import metadata

    from schedlab.registry import build_registry

    own = [
        ep
        for ep in metadata.entry_points(group="schedlab")
        if ep.dist is not None and ep.dist.metadata["Name"] == "schedlab"
    ]
    return build_registry(entry_points=own, strict=True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """In CI (``CI`` set) a skipped test is a failure: every optional engine the tests
    use (pyarrow, dask, matplotlib ...) is in the ``dev`` extra CI installs, so a skip
    there means something is missing, and a silent skip would prove nothing."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, which must run every test: {report.longrepr}"


class ConservativeRuns:
    """Conservative backfilling on one of its three implementations: ``"reference"``
    (the straightforward algorithm), ``"python"`` (the fast path) or ``"compiled"``
    (the numba kernels), recording every reservation each job held."""

    def run(self, w: Any, mode: str, policy: str = "fcfs", **kw: Any) -> tuple[Any, dict]:
        """The result and ``{job: [reservation times, in order]}``."""
        from schedlab.policies.backfill.conservative import Conservative
        from schedlab.policies.backfill.reference import ReferenceConservative
        from schedlab.sim.runner import run_simulation

        seen: dict[str, Any] = {}

        def inspect(engine: Any) -> None:
            engine.state.reservation_log = {}
            seen["engine"] = engine

        backfill = kw.pop("backfill", None)
        if backfill is None:
            backfill = (
                ReferenceConservative()
                if mode == "reference"
                else Conservative(kernel="compiled" if mode == "compiled" else "python")
            )
        result = run_simulation(
            w,
            policy=policy,
            backfill=backfill,
            procs=kw.pop("procs", None),
            estimator=kw.pop("estimator", "requested"),
            kill=kw.pop("kill", True),
            dependencies=False,
            policy_options=None,
            backfill_options=kw.pop("backfill_options", None),
            estimator_options=None,
            registry=None,
            progress=False,
            inspect=inspect,
        )
        assert not kw, f"unknown options {sorted(kw)}"
        if mode != "python" or not isinstance(backfill, str):
            assert result.stats["kernel"] == ("compiled" if mode == "compiled" else "python")
        log = {
            j: [t for _, t in moves] for j, moves in seen["engine"].state.reservation_log.items()
        }
        return result, log

    def assert_same(self, w: Any, policy: str = "fcfs", mode: str = "python", **kw: Any) -> None:
        """``mode`` gives the reference's schedule and every reservation it made."""
        if mode == "compiled":
            pytest.importorskip("numba")
        ref, ref_log = self.run(w, "reference", policy, **dict(kw))
        fast, fast_log = self.run(w, mode, policy, **dict(kw))
        assert fast.start.tolist() == ref.start.tolist()
        # Every reservation a job held, in order: the same moves, not only the same end.
        assert fast_log == ref_log


@pytest.fixture(scope="session")
def conservative() -> ConservativeRuns:
    """:class:`ConservativeRuns` (the differential tests of conservative backfilling)."""
    return ConservativeRuns()


@pytest.fixture(scope="session")
def ricc_report(swf_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The interactive report page of RICC-2010 (447,794 jobs) simulated once with
    fcfs+easy (about 5 s with the write), shared by the page-size and browser tests
    of the report; the simulation result itself is not kept."""
    import schedlab
    from schedlab.report import write_report

    workload = schedlab.read(swf_dir / "RICC-2010-2.swf.gz")
    result = schedlab.simulate(workload, policy="fcfs", backfill="easy", progress=False)
    return write_report(result, tmp_path_factory.mktemp("ricc") / "ricc.html")
