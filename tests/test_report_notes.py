"""The metrics' notes on the report pages (audit F2, F3).

F3: the note counting the jobs excluded by the simulation that wrote a schedule
(from its header's ``Note``) comes from :func:`schedlab.compute_metrics` itself, so
Python, ``schedlab metrics`` (once) and ``schedlab report`` all give it.

F2: a comparison page (``report --simulate a,b``, ``report A B``, ``compare
--report``) shows every distinct note of the schedules' metrics once, naming the
schedules it concerns, and an ``excluded`` row in its side-by-side table.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
import schedlab
from schedlab.model import Header, Workload
from schedlab.report import build_comparison, build_report
from schedlab.testing import run_cli

# Six jobs on 10 processors; job 6 has no size, so a simulation excludes it.
SWF = """\
; Version: 2.2
; MaxJobs: 6
; MaxRecords: 6
; MaxProcs: 10
1 0 -1 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1
2 0 -1 5 2 -1 -1 2 10 -1 1 1 1 -1 1 -1 -1 -1
3 10 -1 50 8 -1 -1 8 50 -1 1 2 1 -1 2 -1 -1 -1
4 20 -1 30 1 -1 -1 1 300 -1 1 3 1 -1 2 -1 -1 -1
5 30 -1 0 1 -1 -1 1 60 -1 1 2 1 -1 -1 -1 -1 -1
6 40 -1 10 -1 -1 -1 -1 60 -1 1 2 1 -1 -1 -1 -1 -1
"""

FROM_HEADER = (
    "1 job was excluded by the simulation that wrote this schedule (no_size=1; the "
    "header's Note) and is not in these metrics"
)
FROM_RESULT = "1 job was excluded by the simulator and is not in these metrics"
#: On a page, with the simulation's reasons (report audit 6).
ON_PAGE = "1 job was excluded by the simulator (no_size=1) and is not in these metrics"


@pytest.fixture()
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "six.swf"
    path.write_text(SWF)
    return path


@pytest.fixture()
def schedule(trace: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The trace simulated by ``schedlab simulate -o``: five jobs, and a header Note
    counting the excluded one."""
    out = trace.with_name("schedule.swf")
    code, _, err = run_cli(capsys, "simulate", str(trace), "-o", str(out), "--no-timings")
    assert code == 0, err
    assert "schedlab excluded 1 of 6 jobs" in out.read_text()
    return out


def recorded() -> Workload:
    """A recorded trace (real waits, no simulation): job 3 ran for 0 s, so its
    slowdown is unknown (a note of this trace only)."""
    header = Header()
    header.set("MaxProcs", 4)
    return Workload.from_arrays(
        {
            "job_number": [1, 2, 3],
            "submit_time": [0, 0, 10],
            "wait_time": [0, 0, 90],
            "run_time": [100, 50, 0],
            "allocated_processors": [3, 1, 2],
            "requested_time": [100, 500, 40],
            "user_id": [1, 2, 1],
        },
        header,
    )


def page_notes(page: str) -> list[str]:
    return [html.unescape(n) for n in re.findall(r"<p class='note'>(note[^<]*)</p>", page)]


# -- F3: the note of a schedule written by `schedlab simulate -o` ---------------------


def test_compute_metrics_of_a_written_schedule_counts_the_excluded_jobs(schedule: Path):
    workload = schedlab.read(str(schedule))
    report = schedlab.compute_metrics(workload)
    assert report.notes[0] == FROM_HEADER
    assert report.notes.count(FROM_HEADER) == 1
    from schedlab.measure import excluded_jobs

    assert excluded_jobs(workload) == 1
    # the same jobs as a Result: the simulator's note, and not the header's as well
    result = schedlab.simulate(schedlab.read(str(schedule.with_name("six.swf"))), progress=False)
    notes = schedlab.compute_metrics(result).notes
    assert notes[0] == FROM_RESULT
    assert not any("simulation that wrote" in n for n in notes)
    assert excluded_jobs(result) == 1
    # a recorded trace was not simulated: nothing to count, and no note
    assert excluded_jobs(recorded()) is None
    assert not any("excluded" in n for n in schedlab.compute_metrics(recorded()).notes)


def test_metrics_command_gives_the_note_once(schedule: Path, capsys: pytest.CaptureFixture):
    code, out, err = run_cli(capsys, "metrics", str(schedule), "-m", "wait")
    assert code == 0, err
    assert out.count("excluded by the simulation") == 1
    assert f"note: {FROM_HEADER}" in out
    code, out, err = run_cli(capsys, "metrics", str(schedule), "-m", "wait", "--json")
    assert code == 0, err
    notes = json.loads(out)["notes"]
    assert notes[0] == FROM_HEADER and notes.count(FROM_HEADER) == 1


def test_report_of_a_written_schedule_carries_the_note(
    schedule: Path, capsys: pytest.CaptureFixture
):
    page = build_report(schedlab.read(str(schedule)), static=True)
    assert page_notes(page)[0] == f"note: {FROM_HEADER}"
    out = schedule.with_name("report.html")
    code, _, err = run_cli(capsys, "report", str(schedule), "-o", str(out))
    assert code == 0, err
    assert page_notes(out.read_text(encoding="utf-8")).count(f"note: {FROM_HEADER}") == 1


# -- F2: the comparison pages ---------------------------------------------------------


def excluded_row(page: str) -> list[str]:
    (row,) = re.findall(r"<tr><td[^>]*>excluded</td><td></td>(.*?)</tr>", page)
    return re.findall(r"<td>([^<]*)</td>", row)


def test_comparison_page_shows_each_note_once_naming_its_schedules(trace: Path):
    workload = schedlab.read(str(trace))
    runs = [
        (f"{p} + easy", schedlab.simulate(workload, policy=p, backfill="easy", progress=False))
        for p in ("fcfs", "sjf")
    ]
    page = build_comparison(runs)
    shown = page_notes(page)
    assert shown.count(f"note (fcfs + easy, sjf + easy): {ON_PAGE}") == 1
    # every note of either schedule's metrics, once, with the schedules it concerns
    concerns: dict[str, list[str]] = {}
    from schedlab.report import page_notes as notes_of  # the metrics' and the run's

    for label, result in runs:
        for note in notes_of(result, schedlab.compute_metrics(result)):
            concerns.setdefault(note, []).append(label)
    assert sorted(shown) == sorted(f"note ({', '.join(v)}): {k}" for k, v in concerns.items())
    assert excluded_row(page) == ["1", "1"]


def test_comparison_of_a_schedule_file_and_a_recorded_trace(schedule: Path):
    page = build_comparison([("sim", schedlab.read(str(schedule))), ("log", recorded())])
    shown = page_notes(page)
    assert f"note (sim): {FROM_HEADER}" in shown
    slowdown = [n for n in shown if n.startswith("note (log): slowdown: 1 of 3 jobs")]
    assert len(slowdown) == 1
    assert not any(n.startswith("note (sim, log)") and "excluded" in n for n in shown)
    # the simulation excluded 1 job; the recorded trace had no simulation to exclude any
    assert excluded_row(page) == ["1", "-"]


def test_cli_comparison_pages_carry_the_notes(trace: Path, capsys: pytest.CaptureFixture):
    expected = f"note (fcfs + easy, sjf + easy): {ON_PAGE}"
    out = trace.with_name("simulated.html")
    code, _, err = run_cli(
        capsys, "report", str(trace), "--simulate", "fcfs+easy,sjf+easy", "-o", str(out)
    )
    assert code == 0, err
    page = out.read_text(encoding="utf-8")
    assert page_notes(page).count(expected) == 1 and excluded_row(page) == ["1", "1"]
    out = trace.with_name("compared.html")
    code, _, err = run_cli(
        capsys, "compare", str(trace), "-p", "fcfs+easy,sjf+easy", "--no-timings",
        "--report", str(out),
    )  # fmt: skip
    assert code == 0, err
    page = out.read_text(encoding="utf-8")
    assert page_notes(page).count(expected) == 1 and excluded_row(page) == ["1", "1"]


def test_a_schedule_simulated_again_does_not_claim_its_inputs_exclusions(
    schedule: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The first run excluded job 6; simulating its schedule again excludes nothing,
    # so the new schedule's metrics must not say its simulation excluded a job.
    again = schedule.with_name("again.swf")
    code, _, err = run_cli(capsys, "simulate", str(schedule), "-o", str(again), "--no-timings")
    assert code == 0, err
    workload = schedlab.read(again)
    notes = workload.header.get_all("Note")
    assert any(n.startswith("Input schedule: schedlab excluded 1 of 6 jobs") for n in notes)
    assert any(n.startswith("Input schedule: Simulated by schedlab") for n in notes)
    assert FROM_HEADER not in schedlab.compute_metrics(workload).notes
    from schedlab.measure import excluded_jobs

    assert excluded_jobs(workload) == 0
