"""Single sacct values: times, durations, memory, job ids, states, node lists."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedlab_slurm.values import (
    compress_nodelist,
    expand_nodelist,
    format_duration,
    format_memory,
    format_state,
    format_time,
    parse_duration,
    parse_exit_code,
    parse_jobid,
    parse_memory,
    parse_state,
    parse_time,
)


def test_times_utc_and_zone():
    assert parse_time("2021-01-06T14:09:15") == 1609942155
    assert parse_time("Unknown") is None and parse_time("None") is None
    assert parse_time("") is None
    paris = ZoneInfo("Europe/Paris")
    assert parse_time("2021-01-06T15:09:15", paris) == 1609942155  # CET = UTC+1
    assert format_time(1609942155) == "2021-01-06T14:09:15"
    assert format_time(1609942155, paris) == "2021-01-06T15:09:15"
    assert format_time(None) == "Unknown"
    with pytest.raises(ValueError, match="expected a time"):
        parse_time("06/01/2021")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("00:00:00", 0),
        ("23:33:25", 84805),
        ("3-00:00:00", 259200),
        ("1-22:20:56", 166856),
        ("37-07:20:50", 3223250),
        ("00:00.010", 0.01),  # MM:SS.mmm, as TotalCPU prints short times
        ("12:30", 750),
        ("UNLIMITED", None),
        ("Partition_Limit", None),
        ("", None),
    ],
)
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


def test_duration_errors():
    with pytest.raises(ValueError, match="duration"):
        parse_duration("3 days")


@given(st.integers(min_value=0, max_value=10**8))
def test_duration_format_parse_round_trip(seconds):
    assert parse_duration(format_duration(seconds)) == seconds


@pytest.mark.parametrize(
    ("text", "kilobytes", "per"),
    [
        ("2800Mc", 2800 * 1024, "c"),
        ("550000Mn", 550000 * 1024, "n"),
        ("500G", 500 * 1024**2, ""),
        ("4000M", 4000 * 1024, ""),
        ("141309400K", 141309400, ""),
        ("0n", 0, "n"),
        ("2.5Gc", 2.5 * 1024**2, "c"),
        ("1024", 1024 * 1024, ""),  # a bare number is MB, as --mem counts it
    ],
)
def test_memory(text, kilobytes, per):
    assert parse_memory(text) == (kilobytes, per)


def test_memory_format():
    assert format_memory(2800 * 1024, "c") == "2800Mc"
    assert format_memory(1000, "c") == "1000Kc"
    assert format_memory(None) == ""
    with pytest.raises(ValueError, match="memory"):
        parse_memory("lots")


@pytest.mark.parametrize(
    ("text", "job", "step", "kind"),
    [
        ("123", "123", None, ""),
        ("4744528_255", "4744528_255", None, "_"),
        ("4103947_[1-3]", "4103947_[1-3]", None, "_"),
        ("4103947_[9-11,13,16-20]", "4103947_[9-11,13,16-20]", None, "_"),
        ("123+0", "123+0", None, "+"),
        ("4822203.batch", "4822203", "batch", ""),
        ("9067954.extern", "9067954", "extern", ""),
        ("9067954.2", "9067954", "2", ""),
        ("123_4.batch", "123_4", "batch", "_"),
        ("123+1.0", "123+1", "0", "+"),
    ],
)
def test_job_ids(text, job, step, kind):
    parsed = parse_jobid(text)
    assert (parsed.job, parsed.step, parsed.kind) == (job, step, kind)


def test_bad_job_id():
    with pytest.raises(ValueError, match="job id"):
        parse_jobid("abc")


@pytest.mark.parametrize(
    ("state", "status"),
    [
        ("COMPLETED", 1),
        ("FAILED", 0),
        ("TIMEOUT", 0),
        ("NODE_FAIL", 0),
        ("OUT_OF_MEMORY", 0),
        ("CANCELLED", 5),
        ("CANCELLED by 89200431", 5),
        ("CANCELLED+", 5),
        ("PENDING", None),
        ("RUNNING", None),
        ("REQUEUED", None),
        ("", None),
    ],
)
def test_states(state, status):
    assert parse_state(state) == status


def test_unknown_state_and_format():
    with pytest.raises(ValueError, match="unknown job state 'FOO'"):
        parse_state("FOO")
    assert [format_state(s) for s in (0, 1, 5, None)] == ["FAILED", "COMPLETED", "CANCELLED", ""]


def test_exit_codes():
    assert parse_exit_code("1:0") == (1, 0)
    assert parse_exit_code("0:125") == (0, 125)
    assert parse_exit_code("") is None
    with pytest.raises(ValueError):
        parse_exit_code("1")


def test_node_lists():
    assert expand_nodelist("b[002-003]") == ("b002", "b003")
    assert expand_nodelist("None assigned") == ()
    assert expand_nodelist("cpn-u23-[17,25],k10n26s01") == ("cpn-u23-17", "cpn-u23-25", "k10n26s01")
    hosts = expand_nodelist("d09n04s[01-02],d13n[03,05,07-08,16]")
    assert hosts == (
        "d09n04s01", "d09n04s02", "d13n03", "d13n05", "d13n07", "d13n08", "d13n16"
    )
    assert compress_nodelist(["b002", "b003", "b005"]) == "b[002-003,005]"
    assert compress_nodelist(["login"]) == "login"
    with pytest.raises(ValueError):
        expand_nodelist("b[1-2")


@given(
    st.lists(
        st.tuples(st.sampled_from(["cn", "gpu-a", "d09n04s"]), st.integers(0, 300)),
        min_size=1,
        max_size=40,
        unique=True,
    )
)
def test_node_list_round_trip(pairs):
    hosts = [f"{prefix}{number:03d}" for prefix, number in pairs]
    assert sorted(expand_nodelist(compress_nodelist(hosts))) == sorted(hosts)
