"""A requested time of 0 caps a correction like any other request (semantics audit
round 2): the job is at its requested time at once and treated as ending now, on
the Python and the compiled paths alike."""

from __future__ import annotations

import pytest
import schedlab

SWF = (
    "; MaxProcs: 6\n"
    "1 0 -1 50 2 -1 -1 2 {request} -1 1 1 -1 -1 1 -1 -1 -1\n"
    "3 1 -1 10 6 -1 -1 6 10 -1 1 3 -1 -1 1 -1 -1 -1\n"
    "4 20 -1 1 2 -1 -1 2 1 -1 1 4 -1 -1 1 -1 -1 -1\n"
)


@pytest.mark.parametrize("kernel", ["python", "compiled"])
@pytest.mark.parametrize("correction", ["tsafrir", "requested"])
@pytest.mark.parametrize("request_", [0, 5])
def test_a_request_of_zero_caps_the_correction(tmp_path, kernel, correction, request_):
    path = tmp_path / "w.swf"
    path.write_text(SWF.format(request=request_))
    result = schedlab.simulate(
        schedlab.read(path),
        policy="fcfs",
        backfill=f"easy:kernel={kernel}",
        estimator=f"easy++:correction={correction}",
        kill=False,
    )
    # Job 1 (2 processors) outlives its prediction; capped at its request it is
    # treated as ending now, so job 3 (all 6) is the head with its shadow at once,
    # and job 4 cannot backfill: it waits for job 3 (starts at 50, ends at 60).
    assert result.stats["jobs_corrected"] == 0
    waits = result.workload.to_arrays()["wait_time"]
    assert waits[2] == 40
