"""Reading real sacct dumps and hand-made records: the SWF mapping, job id forms,
steps, states, units, errors."""

from __future__ import annotations

import gzip

import pytest
import schedlab
from schedlab import FormatError

from schedlab_slurm.reader import SlurmStateWarning, read, sniff

SLURM_FILES = [
    "slurm_sim_tools_sacct_dump2101.log",
    "slurm_sim_tools_sacct_dump2110.log",
    "slurm_sim_tools_sacct_simple.log",
    "slurm_sim_tools_sacct_submitline_multiline.log",
    "xdmod_accounting-logs-with-job-arrays.log",
    "xdmod_accounting-logs.log",
    "xdmod_non-ended-job-state.log",
    "xdmod_unknown-job-state.log",
    "xdmod_utf8-multibyte-chars.log",
]

HEADER = (
    "JobID|JobIDRaw|Partition|QOS|Account|User|UID|Submit|Eligible|Start|End|Elapsed|"
    "ExitCode|State|NNodes|AllocCPUS|ReqCPUS|ReqMem|Timelimit|NodeList|JobName"
)


def rec(**values):
    """One record in HEADER's column order; columns not given are empty."""
    columns = HEADER.split("|")
    unknown = set(values) - set(columns)
    assert not unknown, unknown
    return "|".join(str(values.get(c, "")) for c in columns)


def step_of(job, step, **values):
    """A step record of ``job``: ids, times, sizes and node list copied."""
    keep = ("Start", "End", "Elapsed", "ExitCode", "State", "NNodes", "AllocCPUS",
            "NodeList")
    return rec(**{k: job[k] for k in keep}, JobID=f"{job['JobID']}.{step}",
               JobIDRaw=f"{job['JobIDRaw']}.{step}", JobName=step, **values)


def write_dump(tmp_path, *records, header=HEADER, name="dump.log"):
    path = tmp_path / name
    path.write_text("\n".join([header, *records]) + "\n", encoding="utf-8")
    return path


def test_every_real_dump_is_sniffed(slurm_dir):
    names = sorted(p.name for p in slurm_dir.iterdir())
    assert names == SLURM_FILES
    for name in names:
        head = (slurm_dir / name).read_bytes()[:65536]
        assert sniff(head, name), name


def test_other_formats_are_not_sniffed(slurm_dir):
    shared = slurm_dir.parent
    others = [
        shared / "swf" / "HPC2N-2002_excerpt-3170jobs_alea.swf",
        shared / "sge" / "gbsc_utils_ogetools_test_data.accounting",
        shared / "sge" / "go-clusterscheduler_ocs900_accounting.jsonl",
        shared / "google" / "clusterdata2011_v2_sample" / "job_events-sample.csv",
    ]
    for path in others:
        assert not sniff(path.read_bytes()[:65536], path.name), path.name


def test_xdmod_headerless_golden(slurm_dir):
    w = read(slurm_dir / "xdmod_accounting-logs.log")
    assert w.meta["slurm_has_header"] is False
    assert len(w) == 4
    j1, j2, j3, j4 = w.jobs
    origin = 1435327020  # 2015-06-26T13:57:00 UTC
    assert w.header.unix_start_time == origin
    assert w.header.time_zone_string == "UTC"
    # 1: TIMEOUT after 3 days on 32 nodes.
    assert (j1.job_number, j1.submit_time, j1.wait_time, j1.run_time) == (1, 0, 133130, 259200)
    assert (j1.allocated_processors, j1.requested_processors, j1.status) == (256, 256, 0)
    assert j1.requested_time == 3 * 86400
    assert j1.requested_memory == 3000 * 1024  # 3000Mc: per CPU already
    assert j1.exit_code == 1 and j1.nodes == 32 and len(j1.hosts) == 32
    assert j1.hosts[-5:] == ("d13n03", "d13n05", "d13n07", "d13n08", "d13n16")
    assert j1.name == "1AbC-2-3" and j1.account == "anon"
    # 2: CANCELLED by a uid; 48000Mn on 3 nodes of 12 CPUs = 4000 MB per CPU.
    assert j2.status == 5 and j2.requested_memory == 48000 * 1024 / 12
    assert j2.submit_time == 21265 and j2.run_time == 2 * 86400 + 22 * 3600 + 3 * 60 + 4
    # 3: 14:20:00 limit; user numbering by first appearance.
    assert j3.requested_time == 14 * 3600 + 20 * 60 and j3.status == 1
    assert [j.user_id for j in w.jobs] == [1, 2, 3, 4]
    assert w.header.names("User") == {1: "unknown", 2: "hanx", 3: "anonuser", 4: "xms"}
    # 4: no partition, 0 CPUs, ReqMem 0n (all of a node's memory: unknown per CPU).
    assert j4.partition_number is None and j4.allocated_processors is None
    assert j4.requested_memory is None and j4.run_time == 0
    assert [q.name for q in w.header.queues] == ["qos"]
    assert [p.name for p in w.header.partitions] == ["general-compute"]


def test_job_arrays(slurm_dir):
    w = read(slurm_dir / "xdmod_accounting-logs-with-job-arrays.log")
    ids = [j.extras["slurm.JobID"] for j in w]
    assert ids == ["4103947_100", "4103947_[1-3]", "4103947_[1,5]", "4103947_[9-11,20]",
                   "4103947_[91,100-102]", "4103947_[9-11,13,16-20]"]
    assert [j.job_number for j in w] == [1, 2, 3, 4, 5, 6]
    raw = read(slurm_dir / "xdmod_accounting-logs-with-job-arrays.log", job_numbers="raw")
    assert {j.job_number for j in raw} == {4103947}


def test_pending_and_running(slurm_dir):
    running, pending = read(slurm_dir / "xdmod_non-ended-job-state.log").jobs
    assert running.status is None and running.run_time is None
    assert running.wait_time == 6 * 86400 + 4 * 3600 + 17 * 60 + 34
    assert pending.status is None and pending.wait_time is None and pending.run_time is None
    assert pending.requested_memory == 120000 * 1024 / 40


def test_unknown_state_is_a_warning_and_status_unknown(slurm_dir):
    path = slurm_dir / "xdmod_unknown-job-state.log"
    with pytest.warns(SlurmStateWarning) as caught:
        w = read(path)
    (warning,) = caught
    message = str(warning.message)
    assert message.startswith(f"{path}: 2 record(s) with an unknown job state")
    assert "'FOO' (line 1), 'BAR' (line 2)" in message
    assert len(w) == 2 and w.meta["skipped"] == 0
    assert w.meta["unknown_states"] == [(1, "FOO"), (2, "BAR")]
    foo, bar = w.jobs
    assert foo.status is None and bar.status is None
    # FOO has an End time: it ended, its run time is Elapsed (22:32:22)
    assert foo.run_time == 22 * 3600 + 32 * 60 + 22
    assert foo.wait_time == 6 * 86400 + 4 * 3600 + 17 * 60 + 34
    assert foo.allocated_processors == 12
    # BAR never started (Start 'Unknown') but has an End: it ended without running
    assert (bar.wait_time, bar.run_time, bar.allocated_processors) == (None, 0, None)
    # lenient reading changes nothing: there is nothing to skip
    with pytest.warns(SlurmStateWarning):
        assert read(path, lenient=True).meta["skipped"] == 0


def test_unknown_state_is_written_back(slurm_dir, tmp_path):
    path = slurm_dir / "xdmod_unknown-job-state.log"
    with pytest.warns(SlurmStateWarning):
        w = read(path)
    schedlab.write(w, tmp_path / "back.log", format="slurm")
    assert (tmp_path / "back.log").read_text().splitlines()[-2:] == (
        path.read_text().splitlines()
    )


def test_unknown_step_state_is_unknown_too():
    text = "\n".join([
        HEADER,
        "7|7|p|normal|a|ann|1|2024-03-01T10:00:00|2024-03-01T10:00:00|2024-03-01T10:01:00|"
        "2024-03-01T10:11:00|00:10:00|0:0|COMPLETED|1|4|4|1Gc|01:00:00|n1|job",
        "7.batch|7.batch||||||2024-03-01T10:01:00|2024-03-01T10:01:00|2024-03-01T10:01:00|"
        "2024-03-01T10:11:00|00:10:00|0:0|WEIRD|1|4||||n1|batch",
    ]) + "\n"
    import io

    with pytest.warns(SlurmStateWarning, match=r"'WEIRD' \(line 3\)"):
        (job,) = read(io.BytesIO(text.encode())).jobs
    assert job.status == 1 and [t.status for t in job.tasks] == [None]


def test_utf8_multibyte(slurm_dir):
    (job,) = read(slurm_dir / "xdmod_utf8-multibyte-chars.log").jobs
    assert job.name == "aàb"
    assert job.requested_memory == 3000 * 1024 and job.allocated_processors == 8


def test_steps_are_folded_and_pipes_resolved(slurm_dir):
    path = slurm_dir / "slurm_sim_tools_sacct_dump2101.log"
    with pytest.raises(FormatError) as info:
        read(path)
    assert info.value.line == 16 and "expected 107 fields, found 74" in str(info.value)
    w = read(path, lenient=True)
    assert w.meta["skipped"] == 1 and w.meta["rejects"][0][0] == 16
    assert len(w) == 12 and w.meta["steps"] == 2
    jobs = {j.extras["slurm.JobID"]: j for j in w}
    held = jobs["4744528_255"]  # held, then cancelled: never started
    assert (held.status, held.wait_time, held.run_time, held.allocated_processors) == (
        5, None, 0, None)
    assert held.requested_memory == 2800 * 1024 and held.requested_processors == 12
    done = jobs["4822203"]
    assert [t.task_id for t in done.tasks] == ["batch", "extern"]
    assert [t.status for t in done.tasks] == [1, 0]  # COMPLETED, OUT_OF_MEMORY
    assert done.status == 1 and done.run_time == 128930 and done.wait_time == 179034
    assert done.requested_memory == 550000 * 1024 / 25  # 550000Mn, 25 CPUs on 1 node
    assert done.requested_time == 2400 * 60  # TimelimitRaw, minutes
    assert done.used_memory == 141309400 / 25  # batch step MaxRSS, 1 task on 25 CPUs
    total_cpu = 7 * 86400 + 17 * 3600 + 56 * 60 + 25
    assert done.average_cpu_time == pytest.approx(total_cpu / 25)
    assert jobs["4830973"].status == 0  # TIMEOUT
    assert jobs["4830974"].extras["slurm.Constraints"] == "cpu-a|cpu-b"
    assert jobs["4830975"].name == "Job| Name003"
    assert jobs["4830976"].name == "Job| Name |003"
    assert jobs["4830976"].extras["slurm.Constraints"] == "cpu-a|cpu-b|gpu"
    assert jobs["4830977"].name == "Jo| bNa| me003"
    assert jobs["4830977"].extras["slurm.WorkDir"] == "/projects/academic/account005/user005"


def test_multi_line_submit_line(slurm_dir):
    w = read(slurm_dir / "slurm_sim_tools_sacct_submitline_multiline.log")
    assert len(w) == 6 and w.meta["steps"] == 7
    # Sorted by submit time: the four later copies of 7957382 come before 9067954.
    assert [j.extras["slurm.JobID"] for j in w] == ["7957382"] * 5 + ["9067954"]
    assert [j.job_number for j in w] == [1, 2, 3, 4, 5, 6]
    big = w.jobs[5]
    assert [t.task_id for t in big.tasks] == ["batch", "extern", "0", "1", "2"]
    step1 = big.tasks[3]
    assert step1.extras["slurm.SubmitLine"].startswith('srun --nodes=16')
    assert "\n   then\n" in step1.extras["slurm.SubmitLine"]
    assert step1.extras["slurm.SubmitLine"].endswith("   fi")
    assert step1.extras["slurm.SystemCPU"] == "00:00.128"
    assert big.nodes == 16 and len(big.hosts) == 16
    assert big.extras["slurm.Constraints"] == "[q06*2&q07*2&q08*2&q09*2&u22*2&u23*2&u24*2&u25*2]"
    first = w.jobs[0]
    assert first.extras["slurm.SubmitLine"].endswith("sed 's/^/export /g'; sleep 24h")
    # The "7957382.extern" record printed after job 9067954's steps joins 7957382.
    assert [t.task_id for t in first.tasks] == ["batch", "extern"]
    assert first.tasks[1].extras["slurm.record"] > big.tasks[-1].extras["slurm.record"]
    assert [j.name for j in w.jobs[1:5]] == ["qlogin", "qlo|gin", "qlogin|", "qlo|gin|"]
    in_file = read(slurm_dir / "slurm_sim_tools_sacct_submitline_multiline.log", order="file")
    assert [j.extras["slurm.JobID"] for j in in_file][:2] == ["7957382", "9067954"]


def test_simple_dump_memory_without_suffix(slurm_dir):
    w = read(slurm_dir / "slurm_sim_tools_sacct_simple.log")
    assert [j.name for j in w] == ["job_00001", "job_0||0002", "job_0|0003", "job_|00004"]
    first = w.jobs[0]
    assert first.requested_memory == 500 * 1024**2 / 32  # job total / requested CPUs
    assert w.jobs[2].hosts == ("b002", "b003")


def test_through_schedlab_read_by_content(slurm_dir, registry):
    w = schedlab.read(slurm_dir / "xdmod_accounting-logs.log", registry=registry)
    assert w.meta["reader"] == "slurm" and len(w) == 4
    with pytest.warns(SlurmStateWarning):
        w = schedlab.read(
            slurm_dir / "xdmod_unknown-job-state.log", registry=registry, lenient="true"
        )
    assert w.meta["skipped"] == 0 and len(w) == 2


def test_job_id_forms_and_limits(tmp_path):
    het0 = dict(JobID="100+0", JobIDRaw=100, Partition="p", QOS="normal", Account="acct",
                User="ann", UID=1001, Submit="2024-03-01T10:00:00",
                Eligible="2024-03-01T10:00:00", Start="2024-03-01T10:01:00",
                End="2024-03-01T10:11:00", Elapsed="00:10:00", ExitCode="0:0",
                State="COMPLETED", NNodes=1, AllocCPUS=4, ReqCPUS=4, ReqMem="1Gc",
                Timelimit="UNLIMITED", NodeList="n[1-2]", JobName="het")
    het1 = dict(het0, JobID="100+1", JobIDRaw=101, Partition="q", End="2024-03-01T10:02:00",
                Elapsed="00:01:00", ExitCode="2:0", State="FAILED", AllocCPUS=2, ReqCPUS=2,
                ReqMem="4000Mn", Timelimit="Partition_Limit", NodeList="m7")
    array = dict(het0, JobID="102_7", JobIDRaw=105, User="bob", UID=1002,
                 Submit="2024-03-01T09:00:00", Eligible="Unknown", Start="None",
                 End="Unknown", Elapsed="00:00:00", State="PENDING", AllocCPUS=0,
                 ReqCPUS=8, ReqMem="1000M", Timelimit="1-00:00:00",
                 NodeList="None assigned", JobName="arr")
    path = write_dump(tmp_path, rec(**het0), step_of(het0, "0"), rec(**het1), rec(**array))
    w = read(path)
    task, j0, j1 = w.jobs  # sorted by submit time: the array task was submitted first
    assert [t.task_id for t in j0.tasks] == ["0"] and j1.tasks == ()
    assert j0.tasks[0].start_time == 3660 and j0.tasks[0].processors == 4
    assert j0.requested_time is None and j1.requested_time is None  # no numeric limit
    assert j0.requested_memory == 1024**2 and j1.requested_memory == 4000 * 1024 / 2
    assert j1.status == 0 and j1.exit_code == 2
    assert task.submit_time == 0 and j0.submit_time == 3600  # origin: earliest submit
    assert task.wait_time is None and task.status is None and task.hosts == ()
    assert task.requested_memory == 1000 * 1024 / 8
    assert [j.user_id for j in w] == [1, 2, 2]
    assert [j.partition_number for j in w] == [1, 1, 2]
    assert [j.job_number for j in read(path, job_numbers="raw")] == [105, 100, 101]


JOB = dict(JobID=7, JobIDRaw=7, Partition="p", QOS="n", Account="a", User="u", UID=1,
           Submit="2024-01-01T00:00:00", Eligible="2024-01-01T00:00:00",
           Start="2024-01-01T00:00:05", End="2024-01-01T00:00:15", Elapsed="00:00:10",
           ExitCode="0:0", State="COMPLETED", NNodes=1, AllocCPUS=1, ReqCPUS=1,
           ReqMem="1Gc", Timelimit="00:05:00", NodeList="n1", JobName="x")


def test_timezone_option(tmp_path):
    record = rec(**dict(JOB, Submit="2024-07-01T12:00:00", Eligible="2024-07-01T12:00:00",
                        Start="2024-07-01T12:00:05", End="2024-07-01T12:00:15"))
    path = write_dump(tmp_path, record)
    assert read(path).header.unix_start_time == 1719835200
    paris = read(path, timezone="Europe/Paris")
    assert paris.header.unix_start_time == 1719835200 - 2 * 3600  # CEST = UTC+2
    assert paris.header.time_zone_string == "Europe/Paris"
    with pytest.raises(FormatError, match="unknown time zone"):
        read(path, timezone="Mars/Olympus")


def test_steps_before_their_job_and_orphans(tmp_path):
    job, step = rec(**JOB), step_of(JOB, "batch")
    (only,) = read(write_dump(tmp_path, step, job)).jobs
    assert [t.task_id for t in only.tasks] == ["batch"]
    orphan = step_of(dict(JOB, JobID=8, JobIDRaw=8), "batch")
    path = write_dump(tmp_path, job, orphan, name="orphan.log")
    with pytest.raises(FormatError, match=r"step 8\.batch has no job record 8") as info:
        read(path)
    assert info.value.line == 3
    lenient = read(path, lenient=True)
    assert len(lenient) == 1 and lenient.meta["skipped"] == 1


def test_bad_step_is_rejected_alone(tmp_path):
    bad = step_of(dict(JOB, End="soon"), "batch")
    path = write_dump(tmp_path, rec(**JOB), bad)
    with pytest.raises(FormatError) as info:
        read(path)
    assert (info.value.line, info.value.field) == (3, "End")
    (job,) = read(path, lenient=True).jobs
    assert job.tasks == () and job.status == 1


def test_bad_values_name_line_and_column(tmp_path):
    cases = {
        "Submit": dict(JOB, Submit="yesterday"),
        "ReqMem": dict(JOB, ReqMem="lots"),
        "Elapsed": dict(JOB, Elapsed="ten"),
        "ExitCode": dict(JOB, ExitCode="zero"),
        "JobID": dict(JOB, JobID="x7"),
        "AllocCPUS": dict(JOB, AllocCPUS="four"),
    }
    for column, values in cases.items():
        path = write_dump(tmp_path, rec(**JOB), rec(**values), name=f"{column}.log")
        with pytest.raises(FormatError) as info:
            read(path)
        assert (info.value.line, info.value.field) == (3, column), column
        assert str(info.value).startswith(f"{path}:3: field {column}: ")
        assert read(path, lenient=True).meta["skipped"] == 1


def test_compressed_input_and_open_file(slurm_dir, tmp_path):
    raw = (slurm_dir / "xdmod_accounting-logs.log").read_bytes()
    packed = tmp_path / "dump.log.gz"
    packed.write_bytes(gzip.compress(raw))
    assert [j.name for j in read(packed)] == [j.name for j in read(
        slurm_dir / "xdmod_accounting-logs.log")]
    with open(slurm_dir / "xdmod_accounting-logs.log", "rb") as fh:
        assert len(read(fh)) == 4


def test_not_utf8(tmp_path):
    """A byte that is not UTF-8 is an error naming line and column; lenient reading
    skips and counts the record, it never replaces the byte."""
    path = tmp_path / "latin1.log"
    record = rec(**dict(JOB, JobName="caf\xe9"))
    path.write_bytes((HEADER + "\n" + record + "\n").encode("latin-1"))
    with pytest.raises(FormatError, match=r"not UTF-8 text \(invalid byte 0xe9\)") as info:
        read(path)
    assert (info.value.line, info.value.field) == (2, "JobName")
    w = read(path, lenient=True)
    assert len(w) == 0 and w.meta["skipped"] == 1 and w.meta["decode_errors"] == 1
    assert w.meta["reject_reasons"][0][:2] == (2, "JobName")


def test_headerless_with_columns_option(tmp_path):
    path = tmp_path / "custom.log"
    path.write_text("5|2024-01-01T00:00:00|2024-01-01T00:01:00|2024-01-01T00:02:00|"
                    "COMPLETED|3\n", encoding="utf-8")
    (job,) = read(path, columns="JobID|Submit|Start|End|State|AllocCPUS").jobs
    assert (job.wait_time, job.allocated_processors, job.status) == (60, 3, 1)
    assert job.run_time is None  # no Elapsed column


# ------------------------------------------------------ audit fixes: exact records


def _one_bad(tmp_path, column, name, **values):
    """A file of a good record then a bad one; the bad one is an error naming line 3
    and ``column``, and lenient reading skips and counts it (the good one is read)."""
    bad = dict(JOB, **{"JobID": 8, "JobIDRaw": 8, **values})
    path = write_dump(tmp_path, rec(**JOB), rec(**bad), name=name)
    with pytest.raises(FormatError) as info:
        read(path)
    assert (info.value.line, info.value.field) == (3, column), str(info.value)
    assert str(info.value).startswith(f"{path}:3: field {column}: ")
    w = read(path, lenient=True)
    assert len(w) == 1 and w.meta["skipped"] == 1 and w.meta["rejects"][0][0] == 3
    return info.value


@pytest.mark.parametrize(
    ("column", "values"),
    [
        ("Submit", dict(Submit="2024-02-31T00:00:00")),  # was 2 March
        ("Start", dict(Start="2024-01-01T00:00:99")),
        ("Elapsed", dict(Elapsed="00:99:99")),
        ("ReqMem", dict(ReqMem="9" * 400 + "Mc")),  # was inf
        ("AllocCPUS", dict(AllocCPUS="1_000")),  # was 1000
        ("ReqCPUS", dict(ReqCPUS="-4")),  # was kept
        ("AllocCPUS", dict(AllocCPUS="²")),
        ("JobID", dict(JobID="١٢٣")),  # Arabic-Indic digits were read as 123
        ("NNodes", dict(NNodes="9007199254740992")),
    ],
)
def test_values_sacct_cannot_print_are_errors(tmp_path, column, values):
    _one_bad(tmp_path, column, f"{column}.log", **values)


EXTRA_HEADER = HEADER + "|TimelimitRaw|ReqTRES|ElapsedRaw"


def _extra(**values):
    base = {"TimelimitRaw": "5", "ReqTRES": "cpu=1", "ElapsedRaw": "10", **values}
    return rec(**JOB) + f"|{base['TimelimitRaw']}|{base['ReqTRES']}|{base['ElapsedRaw']}"


@pytest.mark.parametrize(
    ("column", "values"),
    [
        ("TimelimitRaw", dict(TimelimitRaw="²")),  # crashed: int('²') after isdigit()
        ("TimelimitRaw", dict(TimelimitRaw="soon")),  # was ignored silently
        ("ReqTRES", dict(ReqTRES="cpu=4,gres/gpu=²")),  # crashed
        ("ElapsedRaw", dict(ElapsedRaw="-3600")),  # was a negative run time
    ],
)
def test_raw_columns_are_ascii_digits(tmp_path, column, values):
    path = write_dump(tmp_path, _extra(**values), header=EXTRA_HEADER)
    for options in ({}, {"job_numbers": "raw"}):
        with pytest.raises(FormatError) as info:
            read(path, **options)
        assert (info.value.line, info.value.field) == (2, column)
    assert read(path, lenient=True).meta["skipped"] == 1
    good = read(write_dump(tmp_path, _extra(), header=EXTRA_HEADER, name="good.log"))
    assert good.jobs[0].requested_time == 300 and good.jobs[0].run_time == 10


def test_raw_job_numbers_need_an_ascii_job_id_raw(tmp_path):
    path = write_dump(tmp_path, rec(**dict(JOB, JobIDRaw="²")))
    with pytest.raises(FormatError) as info:  # was a crash (exit 3) with job_numbers=raw
        read(path, job_numbers="raw")
    assert (info.value.line, info.value.field) == (2, "JobIDRaw")
    path = write_dump(tmp_path, rec(**dict(JOB, JobIDRaw="0042")), name="zeros.log")
    assert read(path, job_numbers="raw").jobs[0].job_number == 42


def test_start_before_submit_is_an_error(tmp_path):
    """Decision: a job cannot start before it was submitted (nor end before it
    started); such a record is an error, skipped when lenient, never a negative
    wait or run time."""
    error = _one_bad(tmp_path, "Start", "early.log", Start="2023-12-31T23:00:00",
                     End="2023-12-31T23:00:10")
    assert "Start 2023-12-31T23:00:00 is before Submit 2024-01-01T00:00:00" in str(error)
    _one_bad(tmp_path, "End", "end.log", End="2024-01-01T00:00:01")


def test_repeated_local_hour_is_read_after_the_submit_time(tmp_path):
    """Paris, 27 October 2024: 02:00-03:00 happens twice. Submitted at 02:50 (first
    pass), started at 02:10 (second pass): read as the second 02:10, 20 minutes
    later, not as an error."""
    job = dict(JOB, Submit="2024-10-27T02:50:00", Eligible="2024-10-27T02:50:00",
               Start="2024-10-27T02:10:00", End="2024-10-27T02:20:00", Elapsed="00:10:00")
    (one,) = read(write_dump(tmp_path, rec(**job)), timezone="Europe/Paris").jobs
    assert (one.wait_time, one.run_time) == (20 * 60, 600)


def test_local_time_skipped_by_daylight_saving_is_an_error(tmp_path):
    """Berlin, 28 March 2021: clocks went from 02:00 to 03:00, so sacct cannot print
    02:30 as a Start read in that zone (it was read as 01:30 UTC, without a word).
    An error naming file, line and column; lenient reading skips and counts it; in
    UTC the same text is a real time."""
    bad = dict(JOB, JobID=8, JobIDRaw=8, Submit="2021-03-28T01:50:00",
               Eligible="2021-03-28T01:50:00", Start="2021-03-28T02:30:00",
               End="2021-03-28T03:40:00", Elapsed="00:10:00")
    path = write_dump(tmp_path, rec(**JOB), rec(**bad), name="gap.log")
    with pytest.raises(FormatError) as info:
        read(path, timezone="Europe/Berlin")
    assert (info.value.line, info.value.field) == (3, "Start"), str(info.value)
    assert str(info.value) == (
        f"{path}:3: field Start: '2021-03-28T02:30:00' does not exist in Europe/Berlin "
        "(daylight saving time gap)"
    )
    w = read(path, timezone="Europe/Berlin", lenient=True)
    assert len(w) == 1 and w.meta["skipped"] == 1 and w.meta["rejects"][0][0] == 3
    assert len(read(path)) == 2


def test_local_time_skipped_by_daylight_saving_fails_the_cli(tmp_path, registry, capsys):
    """``schedlab convert -R timezone=Europe/Berlin``: one line, exit 2, no file
    (it was converted with exit 0, the start an hour early)."""
    from schedlab.testing import run_cli, using_registry

    bad = dict(JOB, Submit="2021-03-28T01:50:00", Eligible="2021-03-28T01:50:00",
               Start="2021-03-28T02:30:00", End="2021-03-28T03:40:00", Elapsed="00:10:00")
    path = write_dump(tmp_path, rec(**bad), name="gap.log")
    out = tmp_path / "gap.swf"
    with using_registry(registry):
        code, _, err = run_cli(capsys, "convert", str(path), str(out),
                               "-R", "timezone=Europe/Berlin")
    assert code == 2, err
    assert err.strip().splitlines() == [
        f"schedlab: error: {path}:2: field Start: '2021-03-28T02:30:00' does not exist "
        "in Europe/Berlin (daylight saving time gap)"
    ]
    assert not out.exists()


def test_duplicate_columns_are_an_error(tmp_path):
    header = HEADER.replace("|End|", "|Start|")
    path = write_dump(tmp_path, rec(**JOB), header=header)
    for lenient in (False, True):
        with pytest.raises(FormatError, match="column 'Start' appears twice") as info:
            read(path, lenient=lenient)
        assert (info.value.line, info.value.field) == (1, "Start")
    headerless = tmp_path / "headerless.log"
    headerless.write_text("5|COMPLETED|5\n", encoding="utf-8")
    with pytest.raises(FormatError, match="appears twice in the columns option"):
        read(headerless, columns="JobID|State|JobID")


def test_bad_bytes_name_the_column_and_lenient_skips_the_record(tmp_path):
    path = tmp_path / "bytes.log"
    good = rec(**JOB).encode()
    bad = rec(**dict(JOB, JobID=8, JobIDRaw=8, JobName="j@b")).encode().replace(b"@", b"\xe9")
    path.write_bytes(HEADER.encode() + b"\n" + good + b"\n" + bad + b"\n")
    with pytest.raises(FormatError) as info:
        read(path)
    assert (info.value.line, info.value.field) == (3, "JobName")
    w = read(path, lenient=True)  # was read as "j\ufffdb", neither skipped nor counted
    assert [j.name for j in w] == ["x"]
    assert w.meta["skipped"] == 1 and w.meta["decode_errors"] == 1
    assert w.meta["rejects"][0][0] == 3
    # on the second line of a multi-line submit line: that line is named
    columns = "JobID|Submit|State|SubmitLine|NCPUS"
    path.write_bytes(b"5|2024-01-01T00:00:00|COMPLETED|sbatch \\\n  x\xff|4\n")
    with pytest.raises(FormatError) as info:
        read(path, columns=columns)
    assert (info.value.line, info.value.field) == (2, "SubmitLine")


def test_unknown_start_keeps_the_known_values(tmp_path):
    """Start and Submit 'Unknown' but Elapsed 01:00:00 and COMPLETED: the job ran
    for an hour at a time sacct does not know. Run time and CPUs are kept (they
    were 0 and unknown), the wait is unknown."""
    job = dict(JOB, Submit="Unknown", Eligible="Unknown", Start="Unknown", End="Unknown",
               Elapsed="01:00:00", AllocCPUS=4)
    (one,) = read(write_dump(tmp_path, rec(**job))).jobs
    assert (one.run_time, one.allocated_processors, one.status) == (3600, 4, 1)
    assert one.submit_time is None and one.wait_time is None
    # Start unknown and Elapsed 0: never started, as before (BAR of the xdmod dump)
    never = dict(job, Elapsed="00:00:00", State="CANCELLED")
    (one,) = read(write_dump(tmp_path, rec(**never), name="never.log")).jobs
    assert (one.run_time, one.allocated_processors, one.wait_time) == (0, None, None)


def test_empty_state_and_elapsed_are_unknown(tmp_path):
    """What the writer prints for unknown values (sacct never prints these)."""
    no_state = dict(JOB, State="", Elapsed="00:00:00", End="2024-01-01T00:00:05")
    (one,) = read(write_dump(tmp_path, rec(**no_state))).jobs
    assert (one.status, one.run_time, one.wait_time) == (None, 0, 5)
    no_run = dict(JOB, Start="Unknown", End="Unknown", Elapsed="", State="CANCELLED",
                  AllocCPUS="", NodeList="None assigned")
    (one,) = read(write_dump(tmp_path, rec(**no_run), name="norun.log")).jobs
    assert (one.status, one.run_time, one.wait_time) == (5, None, None)


def test_blank_lines_before_the_header_keep_line_numbers(tmp_path):
    path = tmp_path / "blank.log"
    path.write_text("\n\n" + HEADER + "\n" + rec(**dict(JOB, NNodes="x")) + "\n")
    with pytest.raises(FormatError) as info:
        read(path)
    assert info.value.line == 4
