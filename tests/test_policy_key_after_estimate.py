"""A policy's ``key`` runs at submission, after the job's estimate is known
(docs/plugins.md): with a predicting estimator (``user-average``, ``easy++``,
``learned``) the engine's whole-run offer must not call ``key`` beforehand with
the estimates still unknown (newcomer audit: a policy written to the docs failed
with ``int(nan)``)."""

from __future__ import annotations

import math
from typing import Any

import pytest
import schedlab


class StrictArea:
    """Area first, trusting the documented guarantee (the estimate is never NaN)."""

    name = "strict-area"

    def bind(self, table: Any) -> None:
        self.size = table.size
        self.estimate = table.estimate
        self.calls = 0

    def key(self, job: int, now: float) -> float:
        self.calls += 1
        assert not math.isnan(self.estimate[job]), f"key({job}) before its estimate"
        return float(self.size[job] * int(self.estimate[job]))


def _workload() -> schedlab.Workload:
    jobs = [
        schedlab.Job(
            job_number=i + 1, submit_time=float(i * 7), run_time=float(5 + (i * 13) % 40),
            requested_time=60.0, requested_processors=1 + i % 3, user_id=1 + i % 4, status=1,
        )
        for i in range(60)
    ]  # fmt: skip
    return schedlab.Workload.from_jobs(jobs)


@pytest.mark.parametrize("estimator", ["requested", "user-average", "easy++", "learned"])
@pytest.mark.parametrize("backfill", ["none", "easy"])
def test_key_is_called_once_per_job_after_its_estimate(estimator: str, backfill: str) -> None:
    policy = StrictArea()
    w = _workload()
    got = schedlab.simulate(w, policy=policy, backfill=backfill, procs=4, estimator=estimator)
    assert policy.calls <= 2 * len(w.jobs)  # a static-estimate whole run may probe once
    if estimator != "requested":
        assert policy.calls == len(w.jobs)  # no probe before the estimates are known
    # the same schedule as the same policy marked dynamic (re-keyed, no whole run)
    dynamic = StrictArea()
    dynamic.dynamic = True  # type: ignore[attr-defined]
    again = schedlab.simulate(w, policy=dynamic, backfill=backfill, procs=4, estimator=estimator)
    assert list(got.start) == list(again.start)
