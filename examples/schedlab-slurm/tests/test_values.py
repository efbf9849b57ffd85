"""Single sacct values: times, durations, memory, job ids, states, node lists."""

from __future__ import annotations

import datetime
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
    parse_int,
    parse_jobid,
    parse_memory,
    parse_minutes,
    parse_state,
    parse_time,
    tres_gpus,
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
        ("REQUEUED", 0),  # a closed run (sacct --duplicates), ended before completing
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
    assert hosts == ("d09n04s01", "d09n04s02", "d13n03", "d13n05", "d13n07", "d13n08", "d13n16")
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


# ------------------------------------------------- exact values only (audit fixes)


@pytest.mark.parametrize(
    ("text", "zone"),
    [
        ("2021-03-28T02:30:00", "Europe/Berlin"),  # clocks went from 02:00 to 03:00
        ("2021-03-28T02:00:00", "Europe/Berlin"),
        ("2021-03-28T02:59:59", "Europe/Berlin"),
        ("2024-03-31T02:10:00", "Europe/Paris"),
        ("2021-03-14T02:30:00", "America/New_York"),
    ],
)
def test_local_times_skipped_by_daylight_saving_are_errors(text, zone):
    """sacct prints real instants in local time: a wall-clock time the zone skipped
    cannot be one (it was read as an instant an hour away, without a word)."""
    for fold in (0, 1):
        with pytest.raises(
            ValueError,
            match=f"'{text}' does not exist in {zone} "
            r"\(daylight saving time gap\)",
        ):
            parse_time(text, ZoneInfo(zone), fold=fold)
    assert parse_time(text) is not None  # the same clock time exists in UTC


def test_times_around_a_daylight_saving_gap_are_read():
    berlin = ZoneInfo("Europe/Berlin")
    assert parse_time("2021-03-28T01:59:59", berlin) == 1616893199  # CET = UTC+1
    assert parse_time("2021-03-28T03:00:00", berlin) == 1616893200  # CEST = UTC+2
    # a fixed offset has no gap; nor have the first and last days the form can hold
    plus_one = datetime.timezone(datetime.timedelta(hours=1))
    assert parse_time("2021-03-28T02:30:00", plus_one) == 1616895000
    assert parse_time("0001-01-01T00:00:00", ZoneInfo("Asia/Tokyo")) == -62135630339
    assert parse_time("9999-12-31T23:59:59", ZoneInfo("America/Los_Angeles")) == 253402329599


@pytest.mark.parametrize(
    "text",
    [
        "2021-02-31T14:00:00",  # 31 February: was read as 3 March
        "2021-12-10T14:10:99",  # second 99
        "2021-12-10T24:00:00",
        "2021-13-01T00:00:00",
        "0000-01-01T00:00:00",
        "２０２１-01-06T14:09:15",  # full-width digits
        "2021-01-06T14:09:15\n",
    ],
)
def test_impossible_times_are_errors(text):
    with pytest.raises(ValueError, match="time"):
        parse_time(text)
    with pytest.raises(ValueError, match="time"):
        parse_time(text, ZoneInfo("Europe/Paris"))


@pytest.mark.parametrize(
    "text", ["00:99:99", "00:00:60", "01:60:00", "1-24:00:00", "99:00", "٠١:٠٠:٠٠"]
)
def test_impossible_durations_are_errors(text):
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


def test_duration_beyond_the_time_limit_is_an_error():
    assert parse_duration("11574074-00:00:00") == 11574074 * 86400  # < 1e12 s
    with pytest.raises(ValueError, match="out of range"):
        parse_duration("11574075-00:00:00")
    with pytest.raises(ValueError, match="out of range"):
        parse_duration("9" * 5000 + "-00:00:00")  # not int()'s digit limit


@pytest.mark.parametrize(
    "text", ["1_000", "-4", "+4", " 4", "4 ", "²", "١٢٣", "4.0", "0x10", "9007199254740992"]
)
def test_integers_are_ascii_digits_within_2_53(text):
    with pytest.raises(ValueError):
        parse_int(text)


def test_integers_read():
    assert parse_int("9007199254740991") == 2**53 - 1
    assert parse_int("0") == 0 and parse_int("") is None
    assert parse_int("0" * 30 + "7") == 7


def test_huge_memory_is_an_error_not_infinity():
    with pytest.raises(ValueError, match="out of range"):
        parse_memory("9" * 400 + "Mc")
    with pytest.raises(ValueError, match="out of range"):
        parse_memory("9100000000000000K")
    with pytest.raises(ValueError, match="out of range"):
        parse_memory("8193Pc")  # 2**53 KB is 8192 PiB
    assert parse_memory("8191Pc") == (8191 * 1024**4, "c")
    with pytest.raises(ValueError, match="memory"):
        parse_memory("²Mc")


def test_gpu_counts_are_ascii_digits():
    with pytest.raises(ValueError, match="GPU count"):
        tres_gpus("cpu=4,gres/gpu=²")
    with pytest.raises(ValueError, match="GPU count"):
        tres_gpus("gres/gpu:a100=1_0")
    with pytest.raises(ValueError, match="TRES items like"):  # no count at all
        tres_gpus("gres/gpu=")
    # other entries' values are not read (their form is: tests/test_tres_and_repeats.py)
    assert tres_gpus("mem=²,gres/gpumem=x,cpu=4") is None


@pytest.mark.parametrize("text", ["١٢٣", "1²", "123_٤", "１２３"])
def test_job_ids_are_ascii_digits(text):
    with pytest.raises(ValueError, match="job id"):
        parse_jobid(text)


def test_exit_codes_are_ascii_digits():
    with pytest.raises(ValueError, match="exit code"):
        parse_exit_code("²:0")


def test_node_list_ranges_are_checked():
    with pytest.raises(ValueError, match="reversed"):
        expand_nodelist("n[5-2]")
    with pytest.raises(ValueError, match="more than"):
        expand_nodelist("n[1-99999999999]")
    with pytest.raises(ValueError, match="bad range"):
        expand_nodelist("n[١-٢]")
    assert compress_nodelist(["n١", "n٢"]) == "n١,n٢"  # not n[1-2]


def test_time_limits_in_minutes():
    assert parse_minutes("1440") == 86400
    with pytest.raises(ValueError):
        parse_minutes("²")
    with pytest.raises(ValueError, match="out of range"):
        parse_minutes("16666666667")  # beyond 1e12 s


def test_times_outside_the_printable_years_are_unknown():
    assert format_time(-62135596800) == "0001-01-01T00:00:00"
    assert format_time(-50000000000) == "0385-07-25T07:06:40"  # four digits, zero-padded
    assert parse_time(format_time(-50000000000)) == -50000000000
    assert format_time(3 * 10**11) == "Unknown"  # beyond 9999-12-31
