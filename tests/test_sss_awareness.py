"""The awarenessPolicy attribute (section 9): Reject, Warn and Ignore, inherited
downward and overridden per element."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from schedlab.formats.sss.reader import SSSAwarenessWarning, SSSValidationError, read


def doc(tmp_path: Path, root_policy: str | None, body: str) -> Path:
    attribute = f' awarenessPolicy="{root_policy}"' if root_policy else ""
    path = tmp_path / "aware.xml"
    path.write_text(
        f"<JobGroup{attribute}>\n  <JobGroupId>a</JobGroupId>\n{body}\n</JobGroup>\n",
        encoding="utf-8",
    )
    return path


UNKNOWN = """  <Job>
    <JobId>1</JobId>
    <Colour>blue</Colour>
    <Requested><Processors op="GE" fuzz="3">4</Processors></Requested>
    <Delivered><Processors>4</Processors><Memory metric="Max" units="QB">2</Memory></Delivered>
  </Job>"""


def read_all(path: Path, **options) -> list:
    return [job for job in read(path, **options)]


def test_reject_is_the_default_and_names_everything(tmp_path: Path) -> None:
    for policy in (None, "Reject"):
        with pytest.raises(SSSValidationError) as caught:
            read(doc(tmp_path, policy, UNKNOWN))
        problems = {(p.line, p.message) for p in caught.value.problems}
        assert problems == {
            (5, "element <Colour> is not understood (awarenessPolicy Reject)"),
            (6, "attribute 'fuzz' is not understood (awarenessPolicy Reject)"),
            (
                7,
                "value units='QB' (expected one of B, DB, EB, GB, KB, MB, NB, PB, TB, YB, ZB) "
                "is not understood (awarenessPolicy Reject)",
            ),
        }


def test_warn_accepts_and_lists_what_was_not_understood(tmp_path: Path) -> None:
    with pytest.warns(SSSAwarenessWarning) as caught:
        workload = read(doc(tmp_path, "Warn", UNKNOWN))
    (warning,) = caught
    text = str(warning.message)
    assert "3 element(s)/attribute(s) not understood" in text
    assert "<Colour>" in text and "'fuzz'" in text and "units='QB'" in text
    assert len(workload.meta["warnings"]) == 3
    (job,) = read_all_quiet(workload)
    assert job.requested_processors == 4
    assert job.extras["sss:attrs"]["requested_processors"] == {"op": "GE"}  # fuzz dropped
    # units dropped: the default unit (MB) applies.
    assert job.used_memory == 2 * 1024 / 4
    assert "sss:elements" not in job.extras  # Colour dropped


def read_all_quiet(workload) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return [job for job in workload]


def test_ignore_accepts_silently(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        workload = read(doc(tmp_path, "Ignore", UNKNOWN))
        (job,) = [job for job in workload]
    assert workload.meta["warnings"] == []
    assert workload.meta["ignored"] == 3
    assert job.requested_processors == 4


def test_policy_is_inherited_and_overridden_per_element(tmp_path: Path) -> None:
    # The group ignores; one job rejects again; inside it, one element ignores.
    body = """  <Job><JobId>1</JobId><Colour>blue</Colour></Job>
  <Job awarenessPolicy="Reject">
    <JobId>2</JobId>
    <Requested awarenessPolicy="Ignore"><Processors fuzz="1">2</Processors></Requested>
    <Shape>square</Shape>
  </Job>"""
    with pytest.raises(SSSValidationError) as caught:
        read(doc(tmp_path, "Ignore", body))
    ((line, path, message),) = [(p.line, p.path, p.message) for p in caught.value.problems]
    assert (line, path) == (7, "/JobGroup/Job[2]/Shape")
    assert "awarenessPolicy Reject" in message


def test_an_unknown_elements_own_policy_applies_to_itself(tmp_path: Path) -> None:
    body = """  <Job><JobId>1</JobId><Colour awarenessPolicy="Ignore">blue</Colour></Job>"""
    (job,) = read_all(doc(tmp_path, None, body))
    assert job.job_number == 1


def test_reader_option_sets_the_default_policy(tmp_path: Path) -> None:
    path = doc(tmp_path, None, UNKNOWN)
    with pytest.warns(SSSAwarenessWarning):
        workload = read(path, awareness="warn")
    assert len(read_all_quiet(workload)) == 1
    # A policy written in the document still wins over the option.
    strict = doc(tmp_path, "Reject", UNKNOWN)
    with pytest.raises(SSSValidationError):
        read(strict, awareness="Ignore")


def test_invalid_values_are_errors_whatever_the_policy(tmp_path: Path) -> None:
    body = """  <Job><JobId>1</JobId><Processors>many</Processors></Job>"""
    with pytest.raises(SSSValidationError, match="'many' is not an integer"):
        read(doc(tmp_path, "Ignore", body))
    body = """  <Job awarenessPolicy="Sometimes"><JobId>1</JobId></Job>"""
    with pytest.raises(SSSValidationError, match="expected Reject, Warn or Ignore"):
        read(doc(tmp_path, None, body))


def test_the_warning_is_schedlabs_one_line_and_a_validate_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from schedlab.cli import main
    from schedlab.errors import SchedlabWarning

    assert issubclass(SSSAwarenessWarning, SchedlabWarning)
    path = doc(tmp_path, "Warn", UNKNOWN)
    assert main(["info", str(path)]) == 0
    err = capsys.readouterr().err
    assert err.startswith("schedlab: warning: ") and "not understood" in err
    assert main(["validate", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "schedlab: warning:" not in err
    finding = [line for line in out.splitlines() if line.endswith("[reader-warning]")]
    assert len(finding) == 1 and "3 element(s)/attribute(s) not understood" in finding[0]
    assert out.splitlines()[-1].endswith("1 warning(s), 0 info")
