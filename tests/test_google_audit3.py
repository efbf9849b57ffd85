"""Fixes of the third audit of the Google Borg readers (google3): machine events of
type 0 and of unknown capacity, usage-only alloc sets, the Parquet columns of
``google-dask``, equal-time resubmissions, SCHEDULE after FINISH / KILL, dedicated
machines (-1), instances without usage, alloc-set requests, alloc sets in the v3
writer, the Dask dashboard warning and clashing user names in the header."""

from __future__ import annotations

import json
import math
import socket
import warnings
from pathlib import Path
from typing import Any

import pytest
import schedlab

SUB, QUE, ENA, SCH, EVI, FAI, FIN, KIL, LOS, UPP, UPR = range(11)


def at(seconds: float) -> int:
    """Raw time of ``seconds`` after the trace start."""
    return int(600_000_000 + seconds * 1_000_000)


class Trace:
    """A small v3 trace written as JSON shards (int64 values as strings)."""

    def __init__(self) -> None:
        self.tables: dict[str, list[dict[str, Any]]] = {
            "collection_events": [],
            "instance_events": [],
            "instance_usage": [],
            "machine_events": [],
        }

    def c(self, t: int, kind: int, cid: int, ctype: int = 0, **extra: Any) -> None:
        row = {
            "time": str(t),
            "type": kind,
            "collection_id": str(cid),
            "collection_type": ctype,
            "user": "uA",
            "priority": 200,
            "scheduling_class": 1,
        }
        row.update(extra)
        self.tables["collection_events"].append(row)

    def i(
        self,
        t: int,
        kind: int,
        cid: int,
        idx: int,
        machine: int | None = None,
        cpus: float | None = None,
        memory: float | None = None,
        ctype: int = 0,
    ) -> None:
        row: dict[str, Any] = {
            "time": str(t),
            "type": kind,
            "collection_id": str(cid),
            "instance_index": idx,
            "machine_id": None if machine is None else str(machine),
            "collection_type": ctype,
            "priority": 200,
            "alloc_collection_id": "0",
            "alloc_instance_index": -1,
        }
        if cpus is not None or memory is not None:
            row["resource_request"] = {"cpus": cpus, "memory": memory}
        self.tables["instance_events"].append(row)

    def u(
        self, start: int, end: int, cid: int, idx: int, cpu: float, mem: float, **extra: Any
    ) -> None:
        row = {
            "start_time": str(start),
            "end_time": str(end),
            "collection_id": str(cid),
            "instance_index": idx,
            "average_usage": {"cpus": cpu, "memory": mem},
            "maximum_usage": {"cpus": cpu, "memory": mem},
        }
        row.update(extra)
        self.tables["instance_usage"].append(row)

    def m(self, t: int, kind: int, mid: int, cpus: float | None, mem: float | None) -> None:
        self.tables["machine_events"].append(
            {
                "time": str(t),
                "machine_id": str(mid),
                "type": kind,
                "capacity": {"cpus": cpus, "memory": mem},
            }
        )

    def job(self, cid: int, *, submit: float = 10, start: float = 20, end: float = 100) -> None:
        """A plain one-instance job that finishes."""
        self.c(at(submit), SUB, cid)
        self.c(at(start), SCH, cid)
        self.c(at(end), FIN, cid)
        self.i(at(submit), SUB, cid, 0, None, 0.01, 0.01)
        self.i(at(start), SCH, cid, 0, 5)
        self.i(at(end), FIN, cid, 0, 5)

    def write(self, out: Path) -> Path:
        out.mkdir(parents=True, exist_ok=True)
        for name, rows in self.tables.items():
            if rows:
                text = "".join(json.dumps(r) + "\n" for r in rows)
                (out / f"{name}-000000000000.json").write_text(text)
        return out


def notes(w: Any) -> list[str]:
    return [e.value for e in w.header.entries if e.label == "Note"]


ENGINES = ("auto", "python")


# ----------------------------------------------------------------- 1. machine type 0


def test_machine_event_type_0_is_ignored_and_counted(tmp_path: Path) -> None:
    t = Trace()
    t.job(1)
    t.m(0, 1, 1, 0.5, 0.5)
    t.m(0, 1, 2, 0.5, 0.5)
    t.m(at(5), 0, 1, 1.0, 1.0)  # EVENT_TYPE_UNKNOWN
    t.m(at(50), 2, 1, None, None)  # REMOVE machine 1
    t.m(at(60), 1, 3, 0.25, 0.25)  # ADD machine 3
    w = schedlab.read(t.write(tmp_path / "t"))
    c = w.meta["capacity"]
    assert c["time"] == [None, 50.0, 60.0]
    assert c["machines"] == [2, 1, 2]
    assert c["cpus"] == [1.0, 0.5, 0.75]
    assert c["unknown_type_events"] == 1
    assert any("type 0" in n for n in notes(w))
    assert w.header.max_procs == 100


# ----------------------------------------------------------------- 10. unknown capacity


def test_machine_of_unknown_capacity_is_left_out_and_noted(tmp_path: Path) -> None:
    t = Trace()
    t.job(1)
    t.m(0, 1, 1, 0.5, 0.5)
    t.m(0, 1, 2, None, None)
    t.m(0, 1, 3, 0.5, 0.5)
    w = schedlab.read(t.write(tmp_path / "t"))
    c = w.meta["capacity"]
    assert c["machines"] == [2]
    assert c["cpus"] == [1.0]
    assert c["unknown_capacity_machines"] == 1
    assert w.header.max_nodes == 2
    assert w.header.max_procs == 100
    assert any("unknown capacity" in n for n in notes(w))


def test_platform_infer_says_machines_of_unknown_capacity_are_left_out(tmp_path: Path) -> None:
    from schedlab.platform import infer_platform

    t = Trace()
    t.job(1)
    t.m(0, 1, 1, 0.5, 0.5)
    t.m(0, 1, 2, None, None)
    t.m(0, 1, 3, 0.5, 0.5)
    found = infer_platform(schedlab.read(t.write(tmp_path / "t")))
    assert any("1 machine(s) of unknown capacity" in g for g in found.guesses)


def test_machine_capacity_known_later_counts_from_then(tmp_path: Path) -> None:
    t = Trace()
    t.job(1)
    t.m(0, 1, 1, 0.5, 0.5)
    t.m(0, 1, 2, None, None)
    t.m(at(30), 3, 2, 0.25, 0.25)  # UPDATE gives machine 2 its capacity
    t.m(at(40), 2, 2, None, None)  # REMOVE machine 2
    w = schedlab.read(t.write(tmp_path / "t"))
    c = w.meta["capacity"]
    assert c["machines"] == [1, 2, 1]
    assert c["cpus"] == [0.5, 0.75, 0.5]


def test_clean_capacity_has_no_new_keys(tmp_path: Path) -> None:
    t = Trace()
    t.job(1)
    t.m(0, 1, 1, 0.5, 0.5)
    w = schedlab.read(t.write(tmp_path / "t"))
    assert "unknown_type_events" not in w.meta["capacity"]
    assert "unknown_capacity_machines" not in w.meta["capacity"]


# ----------------------------------------------------------------- 2. usage-only alloc set


@pytest.mark.parametrize("engine", ENGINES)
def test_usage_rows_of_an_alloc_set_make_no_job(tmp_path: Path, engine: str) -> None:
    t = Trace()
    t.job(1)
    t.u(at(6), at(300), 300, 0, 0.2, 0.2, collection_type=1)
    w = schedlab.read(t.write(tmp_path / "t"), engine=engine)
    s = w.meta["summary"]
    assert s["jobs"] == 1 and len(w.jobs) == 1
    assert s["alloc_sets"] == 1
    assert s["collections"] == {"ALLOC_SET": 1, "JOB": 1}
    assert [a["collection_id"] for a in w.meta["alloc_sets"]] == [300]


# ----------------------------------------------------------------- 4. equal-time resubmit


def _resubmitted(tmp_path: Path, *, evict_first: bool = True) -> Path:
    t = Trace()
    t.c(at(10), SUB, 1)
    t.c(at(20), SCH, 1)
    rows = [(EVI,), (SUB,)] if evict_first else [(SUB,), (EVI,)]
    for (kind,) in rows:
        t.c(at(30), kind, 1)
    t.i(at(10), SUB, 1, 0, None, 0.01, 0.01)
    t.i(at(20), SCH, 1, 0, 5)
    for (kind,) in rows:
        t.i(at(30), kind, 1, 0, 5 if kind == EVI else None)
    return t.write(tmp_path / "t")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("evict_first", [True, False])
def test_terminal_before_resubmission_at_equal_time(
    tmp_path: Path, engine: str, evict_first: bool
) -> None:
    w = schedlab.read(_resubmitted(tmp_path, evict_first=evict_first), engine=engine)
    job = w.jobs[0]
    assert job.run_time is None and job.status is None
    assert job.extras["end_event"] is None
    assert [e[1] for e in job.extras["events"]] == [SUB, SCH, EVI, SUB]
    task = job.tasks[0]
    assert task.end_time is None and task.status is None
    assert [e[1] for e in task.extras["events"]] == [SUB, SCH, EVI, SUB]


@pytest.mark.parametrize("engine", ENGINES)
def test_submit_and_kill_at_one_first_time_keep_lifecycle_order(
    tmp_path: Path, engine: str
) -> None:
    t = Trace()
    t.c(0, KIL, 1)
    t.c(0, SUB, 1)
    t.i(0, KIL, 1, 0)
    t.i(0, SUB, 1, 0, None, 0.01, 0.01)
    w = schedlab.read(t.write(tmp_path / "t"), engine=engine)
    job = w.jobs[0]
    assert job.extras["end_event"] == "KILL"
    assert [e[1] for e in job.extras["events"]] == [SUB, KIL]
    assert job.tasks[0].extras["end_event"] == "KILL"


# ----------------------------------------------------------------- 5. SCHEDULE after end


def _sched_after_end(tmp_path: Path) -> Path:
    t = Trace()
    t.c(at(10), SUB, 8)
    t.c(at(20), SCH, 8)
    t.c(at(40), FIN, 8)
    t.i(at(10), SUB, 8, 0, None, 0.01, 0.01)
    t.i(at(20), SCH, 8, 0, 7)
    t.i(at(30), FIN, 8, 0, 7)
    t.i(at(35), SCH, 8, 0, 9)
    t.c(at(10), SUB, 9)
    t.c(at(20), SCH, 9)
    t.c(at(30), KIL, 9)
    t.c(at(35), SCH, 9)
    t.job(10)
    return t.write(tmp_path / "t")


@pytest.mark.parametrize("engine", ENGINES)
def test_schedule_after_finish_or_kill_is_flagged(tmp_path: Path, engine: str) -> None:
    w = schedlab.read(_sched_after_end(tmp_path), engine=engine)
    by_cid = {j.extras["collection_id"]: j for j in w.jobs}
    assert by_cid[8].extras["events_out_of_order"] == "schedule_after_end"
    assert by_cid[9].extras["events_out_of_order"] == "schedule_after_end"
    assert "events_out_of_order" not in by_cid[10].extras
    assert w.meta["summary"]["times_out_of_order"] == {"schedule_after_end": 2}
    assert any("scheduled again after their FINISH or KILL" in n for n in notes(w))
    # the host is the placement the task ended on
    assert by_cid[8].tasks[0].host == "7"
    assert by_cid[8].hosts == ("7",)
    assert by_cid[8].tasks[0].end_time == 30.0


# ----------------------------------------------------------------- 6. dedicated machine


@pytest.mark.parametrize("engine", ENGINES)
def test_dedicated_machine_is_accepted_with_unknown_host(tmp_path: Path, engine: str) -> None:
    t = Trace()
    t.c(at(10), SUB, 1)
    t.c(at(20), SCH, 1)
    t.c(at(100), FIN, 1)
    t.i(at(10), SUB, 1, 0, None, 0.01, 0.01)
    t.i(at(20), SCH, 1, 0, -1)
    t.i(at(100), FIN, 1, 0, -1)
    w = schedlab.read(t.write(tmp_path / "t"), engine=engine)
    job = w.jobs[0]
    assert job.run_time == 80.0 and job.allocated_processors == 1
    assert job.hosts == ()
    task = job.tasks[0]
    assert task.host is None
    assert task.extras["machine_id"] == -1
    assert task.extras["events"][1][2] == -1


def test_machine_id_minus_two_is_still_refused(tmp_path: Path) -> None:
    t = Trace()
    t.job(1)
    t.tables["instance_events"][1]["machine_id"] = "-2"
    with pytest.raises(schedlab.FormatError, match="machine_id"):
        schedlab.read(t.write(tmp_path / "t"))


def test_machine_events_keep_refusing_minus_one(tmp_path: Path) -> None:
    t = Trace()
    t.job(1)
    t.m(0, 1, -1, 0.5, 0.5)
    with pytest.raises(schedlab.FormatError, match="machine_id"):
        schedlab.read(t.write(tmp_path / "t"))


# ----------------------------------------------------------------- 7. instance without usage


def _partial_usage(tmp_path: Path) -> Path:
    t = Trace()
    t.c(at(10), SUB, 1)
    t.c(at(20), SCH, 1)
    t.c(at(100), FIN, 1)
    for k, m in ((0, 5), (1, 6)):
        t.i(at(10), SUB, 1, k, None, 0.01, 0.01)
        t.i(at(20), SCH, 1, k, m)
        t.i(at(100), FIN, 1, k, m)
    t.u(at(20), at(100), 1, 0, 0.01, 0.01)
    t.job(2)
    t.u(at(20), at(100), 2, 0, 0.01, 0.01)
    return t.write(tmp_path / "t")


@pytest.mark.parametrize("engine", ENGINES)
def test_instance_without_usage_makes_job_usage_unknown(tmp_path: Path, engine: str) -> None:
    w = schedlab.read(_partial_usage(tmp_path), engine=engine)
    job, full = w.jobs
    assert job.average_cpu_time is None and job.used_memory is None
    assert job.extras["used_cpu_seconds_ncu"] is None
    assert job.extras["used_memory_normalized"] is None
    assert job.extras["usage_unknown"] == "instances_without_usage"
    assert full.average_cpu_time == pytest.approx(80.0)
    assert "usage_unknown" not in full.extras
    assert w.meta["summary"]["usage_windows"] == {"instances_without_usage": 1}
    assert any("scheduled instances without usage" in n for n in notes(w))


# ----------------------------------------------------------------- 8. alloc-set requests


def test_alloc_set_partial_request_is_unknown(tmp_path: Path) -> None:
    t = Trace()
    t.job(1)
    t.c(at(5), SUB, 200, ctype=1)
    t.c(at(6), SCH, 200, ctype=1)
    t.i(at(5), SUB, 200, 0, None, 0.5, 0.5, ctype=1)
    t.i(at(6), SCH, 200, 0, 7, ctype=1)
    t.i(at(5), SUB, 200, 1, None, ctype=1)
    t.i(at(6), SCH, 200, 1, 8, ctype=1)
    w = schedlab.read(t.write(tmp_path / "t"))
    a = w.meta["alloc_sets"][0]
    assert a["requested_cpus"] is None and a["requested_memory_normalized"] is None
    assert a["request_unknown"] == "instances_without_request"
    assert w.meta["summary"]["alloc_sets_requests_partial"] == 1
    assert w.meta["summary"]["requests_partial"] == 0
    assert any("alloc sets have instances without" in n for n in notes(w))


# ----------------------------------------------------------------- 9. alloc sets written


def test_google_writer_writes_alloc_instances(tmp_path: Path) -> None:
    t = Trace()
    t.c(at(5), SUB, 200, ctype=1)
    t.c(at(6), SCH, 200, ctype=1)
    t.c(at(900), FIN, 200, ctype=1)
    t.i(at(5), SUB, 200, 0, None, 0.5, 0.25, ctype=1)
    t.i(at(6), SCH, 200, 0, 7, ctype=1)
    t.i(at(5), SUB, 200, 1, None, 0.125, 0.5, ctype=1)
    t.i(at(5), SUB, 400, 0, None, 0.5, 0.5, ctype=1)
    t.i(at(6), SCH, 400, 0, 8, ctype=1)
    t.job(1)
    w = schedlab.read(t.write(tmp_path / "t"))
    with schedlab.collect_losses() as losses:
        schedlab.write(w, tmp_path / "out", format="google")
    text = [str(loss) for loss in losses if loss.field.startswith("alloc_sets")]
    # the set known only from its instances keeps their events (see 9b)
    assert text == []
    back = schedlab.read(tmp_path / "out")
    keys = ("collection_id", "instances", "requested_cpus", "requested_memory_normalized")

    def sets(workload: Any) -> list[dict[str, Any]]:
        return sorted(({k: a[k] for k in keys} for a in workload.meta["alloc_sets"]), key=str)

    assert sets(back) == sets(w)
    assert {a["collection_id"] for a in back.meta["alloc_sets"]} == {200, 400}
    assert back.meta["summary"]["jobs"] == 1


def test_google_writer_alloc_set_without_instances_loses_nothing(tmp_path: Path) -> None:
    t = Trace()
    t.c(at(5), SUB, 200, ctype=1)
    t.c(at(900), FIN, 200, ctype=1)
    t.job(1)
    w = schedlab.read(t.write(tmp_path / "t"))
    with schedlab.collect_losses() as losses:
        schedlab.write(w, tmp_path / "out", format="google")
    assert not [str(loss) for loss in losses if loss.field.startswith("alloc_sets")]
    back = schedlab.read(tmp_path / "out")
    assert back.meta["alloc_sets"][0]["instances"] == 0


# ------------------------------------------- 9b. alloc set known only from its instances


def _instance_only_alloc(tmp_path: Path) -> Path:
    """A job and alloc set 400 known only from its instances (no collection events):
    instance 1 is SUBMITted before the trace and killed, instance 0 runs on 8."""
    t = Trace()
    t.job(1)
    t.i(at(7), SUB, 400, 0, None, 0.5, 0.25, ctype=1)
    t.i(at(9), SCH, 400, 0, 8, ctype=1)
    t.i(0, SUB, 400, 1, None, 0.125, 0.5, ctype=1)
    t.i(at(50), KIL, 400, 1, ctype=1)
    return t.write(tmp_path / "t")


#: The instance events the reader keeps for alloc set 400 of :func:`_instance_only_alloc`:
#: (instance index, raw time, type, machine, missing type), per instance in order.
INSTANCE_ONLY_EVENTS = [
    (0, at(7), SUB, None, None),
    (0, at(9), SCH, 8, None),
    (1, 0, SUB, None, None),
    (1, at(50), KIL, None, None),
]


@pytest.mark.parametrize("tasks", [True, False])
def test_alloc_set_known_only_from_instances_keeps_their_events(
    tmp_path: Path, tasks: bool
) -> None:
    w = schedlab.read(_instance_only_alloc(tmp_path), tasks=tasks)
    (a,) = w.meta["alloc_sets"]
    assert a["instance_events"] == INSTANCE_ONLY_EVENTS
    assert a["events"] == []
    assert a["instances"] == 2 and a["requested_cpus"] == 0.625


@pytest.mark.parametrize("tasks", [True, False])
def test_google_round_trip_of_an_alloc_set_known_only_from_instances(
    tmp_path: Path, tasks: bool
) -> None:
    """Its instance events are written back as read: nothing is reported and the
    alloc set (events, count, requests) reads back the same."""
    source = schedlab.read(_instance_only_alloc(tmp_path), tasks=tasks)
    with schedlab.collect_losses() as losses:
        schedlab.write(source, tmp_path / "out", format="google")
    assert [str(x) for x in losses if x.field.startswith("alloc_sets")] == []
    back = schedlab.read(tmp_path / "out", tasks=tasks)
    assert back.meta["alloc_sets"] == source.meta["alloc_sets"]
    assert back.jobs == source.jobs


def test_alloc_set_with_collection_events_keeps_no_instance_events(tmp_path: Path) -> None:
    t = Trace()
    t.c(at(5), SUB, 200, ctype=1)
    t.i(at(5), SUB, 200, 0, None, 0.5, 0.5, ctype=1)
    w = schedlab.read(t.write(tmp_path / "t"))
    assert "instance_events" not in w.meta["alloc_sets"][0]


def test_google_writer_reports_alloc_instances_without_times(tmp_path: Path) -> None:
    """A hand-built alloc set without collection or instance events still gets its
    instances before the trace, reported."""
    w = schedlab.read(_instance_only_alloc(tmp_path))
    del w.meta["alloc_sets"][0]["instance_events"]
    with schedlab.collect_losses() as losses:
        schedlab.write(w, tmp_path / "out", format="google")
    assert [str(x) for x in losses if x.field.startswith("alloc_sets")] == [
        "alloc_sets: 1 record, an alloc set known only from its instances: their event "
        "times are not kept (written as a SUBMIT before the trace)"
    ]
    back = schedlab.read(tmp_path / "out")
    assert back.meta["alloc_sets"][0]["instances"] == 2
    assert back.meta["alloc_sets"][0]["requested_cpus"] == 0.625


# ----------------------------------------------------------------- 12. user names


def test_user_names_that_clash_when_written_get_a_suffix(tmp_path: Path) -> None:
    t = Trace()
    for cid, user in ((1, "a b"), (2, "a_b"), (3, "a\tb")):
        for time, kind in ((at(10 + cid), SUB), (at(20), SCH), (at(30), FIN)):
            t.c(time, kind, cid, user=user)
    w = schedlab.read(t.write(tmp_path / "t"))
    assert w.meta["names"]["user"] == {1: "a b", 2: "a_b", 3: "a\tb"}
    table = [e.value for e in w.header.entries if e.label == "User"]
    assert table == ["1 a_b-2", "2 a_b", "3 a_b-3"]


def test_user_names_without_clash_are_unchanged(tmp_path: Path) -> None:
    t = Trace()
    for cid, user in ((1, "a b"), (2, "c")):
        for time, kind in ((at(10 + cid), SUB), (at(20), SCH), (at(30), FIN)):
            t.c(time, kind, cid, user=user)
    w = schedlab.read(t.write(tmp_path / "t"))
    assert [e.value for e in w.header.entries if e.label == "User"] == ["1 a_b", "2 c"]


# ----------------------------------------------------------------- 3. Parquet columns


@pytest.fixture(scope="module")
def cluster() -> Any:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0", silence_logs=40
    ) as local:
        yield local


def _parquet_trace(tmp_path: Path) -> Path:
    t = Trace()
    t.job(1)  # ran, no usage window
    # collection 2: two instances, only one with a CPU request
    t.c(at(10), SUB, 2)
    t.c(at(20), SCH, 2)
    t.c(at(100), FIN, 2)
    t.i(at(10), SUB, 2, 0, None, 0.01, 0.01)
    t.i(at(10), SUB, 2, 1)
    for k in (0, 1):
        t.i(at(20), SCH, 2, k, 5)
        t.i(at(100), FIN, 2, k, 5)
        t.u(at(20), at(100), 2, k, 0.01, 0.01)
    t.job(3)  # two instances, one without usage
    t.i(at(10), SUB, 3, 1, None, 0.01, 0.01)
    t.i(at(20), SCH, 3, 1, 6)
    t.i(at(100), FIN, 3, 1, 6)
    t.u(at(20), at(100), 3, 0, 0.01, 0.01)
    t.job(4)  # fully known
    t.u(at(20), at(100), 4, 0, 0.02, 0.03)
    # an alloc set with a partial request
    t.c(at(5), SUB, 200, ctype=1)
    t.i(at(5), SUB, 200, 0, None, 0.5, 0.5, ctype=1)
    t.i(at(5), SUB, 200, 1, None, ctype=1)
    # usage rows of an alloc set whose events are outside the sample
    t.u(at(6), at(300), 300, 0, 0.2, 0.2, collection_type=1)
    return t.write(tmp_path / "t")


def _known(value: Any) -> Any:
    """``None`` for a null or NaN Parquet value."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


def test_parquet_rows_equal_the_in_process_reader(tmp_path: Path, cluster: Any) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    from schedlab.formats.google.dask_reader import write_parquet_dask
    from schedlab.formats.google.v3_reader import discover

    source = _parquet_trace(tmp_path)
    with distributed_client(cluster) as client:
        write_parquet_dask(discover(source), tmp_path / "pq", partitions=2, client=client)
    rows = {row["collection_id"]: row for row in pq.read_table(tmp_path / "pq").to_pylist()}
    w = schedlab.read(source)
    for job in w.jobs:
        row, ex = rows[job.extras["collection_id"]], job.extras
        assert _known(row["requested_cpus"]) == ex["requested_cpus"]
        assert _known(row["requested_memory"]) == ex["requested_memory_normalized"]
        assert _known(row["cpu_seconds"]) == ex["used_cpu_seconds_ncu"]
        assert _known(row["memory_mean"]) == ex["used_memory_normalized"]
        assert (_known(row["scheduled_cpus"]) is None) == (job.allocated_processors is None)
    assert _known(rows[1]["cpu_seconds"]) is None and _known(rows[1]["memory_mean"]) is None
    assert _known(rows[2]["requested_cpus"]) is None
    assert _known(rows[2]["scheduled_cpus"]) is None
    assert _known(rows[3]["cpu_seconds"]) is None
    assert rows[4]["cpu_seconds"] == pytest.approx(0.02 * 80)
    assert w.meta["alloc_sets"][0]["requested_cpus"] is None
    assert _known(rows[200]["requested_cpus"]) is None
    assert rows[300]["collection_type"] == 1


def distributed_client(cluster: Any) -> Any:
    import distributed

    return distributed.Client(cluster)


BUILDERS = (_parquet_trace, _sched_after_end, _partial_usage, _resubmitted, _instance_only_alloc)


@pytest.mark.parametrize("build", BUILDERS, ids=lambda b: b.__name__)
def test_dask_engine_equals_in_process(tmp_path: Path, cluster: Any, build: Any) -> None:
    source = build(tmp_path)
    a = schedlab.read(source)
    b = schedlab.read(source, engine="dask", scheduler=cluster.scheduler_address)
    assert a.jobs == b.jobs
    assert a.meta["summary"] == b.meta["summary"]
    assert a.meta["alloc_sets"] == b.meta["alloc_sets"]
    assert [(e.label, e.value) for e in a.header.entries] == [
        (e.label, e.value) for e in b.header.entries
    ]


# ----------------------------------------------------------------- 11. Dask dashboard


def test_dask_client_warns_nothing_when_port_8787_is_taken() -> None:
    pytest.importorskip("distributed")
    from schedlab.formats.google.dask_reader import dask_client

    holder = socket.socket()
    try:
        try:
            holder.bind(("", 8787))
            holder.listen()
        except OSError:
            pass  # taken already: the case itself
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with dask_client(workers=1, processes=False):
                pass
        assert not [w for w in caught if "8787" in str(w.message)]
    finally:
        holder.close()


# ----------------------------------------------------------------- Google -> Google


def _dedicated(tmp_path: Path) -> Path:
    t = Trace()
    t.c(at(10), SUB, 1)
    t.c(at(20), SCH, 1)
    t.c(at(100), FIN, 1)
    t.i(at(10), SUB, 1, 0, None, 0.01, 0.01)
    t.i(at(20), SCH, 1, 0, -1)
    t.i(at(100), FIN, 1, 0, -1)
    return t.write(tmp_path / "t")


@pytest.mark.parametrize(
    "build", (_sched_after_end, _resubmitted, _dedicated, _partial_usage), ids=lambda b: b.__name__
)
@pytest.mark.parametrize("tasks", [True, False])
def test_google_round_trip_of_the_new_cases(tmp_path: Path, build: Any, tasks: bool) -> None:
    """The writer's prediction of what the reader gives back follows the new rules
    (event order at equal times, the placement up to the end, -1, usage of
    unmeasured instances): the jobs come back equal and no job field is reported."""
    source = schedlab.read(build(tmp_path), tasks=tasks)
    with schedlab.collect_losses() as losses:
        schedlab.write(source, tmp_path / "out", format="google")
    job_losses = [str(x) for x in losses if not x.field.startswith("header.")]
    back = schedlab.read(tmp_path / "out", tasks=tasks)
    if tasks or build is _resubmitted or build is _dedicated:
        assert job_losses == []
        assert back.jobs == source.jobs
        return
    # without tasks the instances are rebuilt from the job's events and totals:
    # what they cannot give back is reported, never lost silently
    fields = {x.split(":")[0] for x in job_losses}
    differing = {
        f"extras.{k}"
        for a, b in zip(source.jobs, back.jobs, strict=True)
        for k in set(a.extras) | set(b.extras)
        if k != "events" and a.extras.get(k) != b.extras.get(k)
    }
    assert differing and differing <= fields, (differing, job_losses)


def test_rebuilt_instances_all_carry_usage(tmp_path: Path) -> None:
    """A job read without its tasks whose instances were all measured keeps its
    usage through Google -> Google: the rebuilt instances after the first get an
    empty window each (from the kept count), or its usage would read as unknown."""
    t = Trace()
    t.c(at(10), SUB, 1)
    t.c(at(20), SCH, 1)
    t.c(at(100), FIN, 1)
    for k, m in ((0, 5), (1, 6), (2, 7)):
        t.i(at(10), SUB, 1, k, None, 0.01, 0.01)
        t.i(at(20), SCH, 1, k, m)
        t.i(at(100), FIN, 1, k, m)
        t.u(at(20), at(100), 1, k, 0.01 * (k + 1), 0.01)
    source = schedlab.read(t.write(tmp_path / "t"), tasks=False)
    assert source.jobs[0].average_cpu_time is not None
    with schedlab.collect_losses() as losses:
        schedlab.write(source, tmp_path / "out", format="google")
    assert [str(x) for x in losses if not x.field.startswith("header.")] == []
    back = schedlab.read(tmp_path / "out", tasks=False)
    assert back.jobs[0].average_cpu_time == source.jobs[0].average_cpu_time
    assert back.jobs[0].extras["usage_windows"] == 3
    assert "usage_unknown" not in back.jobs[0].extras


@pytest.mark.parametrize(("wait", "run", "kept"), [(-3, 3, False), (-3, 4, True), (0, 0, True)])
def test_a_negative_wait_ending_at_the_submit_reports_the_run_time(
    tmp_path: Path, wait: float, run: float, kept: bool
) -> None:
    """A job scheduled 3 s before its submission and ending at the submission's
    instant: the reader takes the end (an instant's terminal events come before
    its SUBMIT) as ending a job the SUBMIT then revives, so its run time and status
    read back unknown, and the writer says so (found by the conversion matrix's
    hypothesis test)."""
    job = schedlab.Job(job_number=1, submit_time=0, wait_time=wait, run_time=run, status=1)
    out = tmp_path / "g"
    with schedlab.collect_losses() as losses:
        schedlab.write(schedlab.Workload.from_jobs([job]), out, format="google")
    back = schedlab.read(out, format="google").jobs[0]
    assert (back.run_time == run) is kept
    assert (losses.count("run_time") > 0) is not kept
    assert (losses.count("status") > 0) is not kept
