"""Every real trace through every built-in writer and back: what the target can hold
survives field by field, and everything else is in the writer's loss report.

Sources (all of ``../shared/data`` that a built-in reader reads): every SWF file
(the first :data:`CAP` jobs of each, to keep the matrix fast: the reader streams, so
only the head of each file is parsed), every Grid Engine accounting file (colon
and JSONL) and both Google samples (v3 and v2). There is no SSS job file in the
shared data (only its notes), so two SSS sources are made by writing KTH and a
Grid Engine file as SSS groups and reading them back; likewise a Batsim workload
and a Batsim jobs file written from KTH. Targets: ``swf``, ``sge`` (colon),
``sge-jsonl``, ``google``, ``sss`` (group layout), ``sss`` with ``layout=jobs``,
``batsim`` and ``batsim-jobs``, each read back by the matching reader.

The check, for every job and every field of the model: the value read back equals
the source's (times absolute when both sides know their origin; names compared as
groupings, since readers number users, groups, queues ... in their own order; job
numbers through what the target keeps of them), or the report names the field with
at least as many records as differ. A hypothesis property does the same for random
small workloads (unknowns, negative times, duplicate and missing job numbers,
fractional seconds, with and without an origin) through every target.
"""

from __future__ import annotations

import itertools
import json
import math
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import attrs
import pytest
import schedlab
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from schedlab.formats.google.v3_writer import _collection_ids
from schedlab.losses import Losses, collect_losses
from schedlab.model import SWF_FIELDS, Header, Job, Workload

#: Jobs taken from the head of each SWF file.
CAP = 600

#: (writer, writer options, reader, reader options) per target.
TARGETS: dict[str, tuple[str, dict[str, Any], str, dict[str, Any]]] = {
    "swf": ("swf", {}, "swf", {}),
    "sge": ("sge", {"order": "workload"}, "sge", {"job_numbers": "sge", "order": "file"}),
    "sge-jsonl": (
        "sge-jsonl",
        {"order": "workload"},
        "sge-jsonl",
        {"job_numbers": "sge", "order": "file"},
    ),
    "google": ("google", {}, "google", {}),
    "sss": ("sss", {}, "sss", {}),
    "batsim": ("batsim", {}, "batsim", {"order": "file"}),
    "batsim-jobs": ("batsim-jobs", {}, "batsim-jobs", {"order": "file"}),
}
OUT_NAMES = {
    "swf": "out.swf",
    "sge": "accounting",
    "sge-jsonl": "accounting.jsonl",
    "google": "cell",
    "sss": "out.sss.xml",
    "batsim": "out.json",
    "batsim-jobs": "out_jobs.csv",
}
#: Fields whose values are names numbered by the reader: compared as groupings.
NAMED = ("user_id", "group_id", "queue_number", "partition_number", "executable_number")
RICH = ("name", "account", "nodes", "hosts", "exit_code", "priority", "tasks", "dependencies")
TIMES = ("submit_time",)


def _sources(shared: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for path in sorted((shared / "swf").glob("*.swf*")):
        out[f"swf/{path.name}"] = (str(path), {"format": "swf", "lenient": True})
    for path in sorted((shared / "sge").iterdir()):
        if path.is_file():
            reader = "sge-jsonl" if path.suffix == ".jsonl" else "sge"
            out[f"sge/{path.name}"] = (str(path), {"format": reader, "job_numbers": "sge"})
    out["google/v3"] = (
        str(shared / "google" / "clusterdata2019_v3_sample"),
        {"format": "google"},
    )
    out["google/v2"] = (
        str(shared / "google" / "clusterdata2011_v2_sample"),
        {"format": "google-v2"},
    )
    return out


SOURCE_IDS = [
    *(
        f"swf/{n}"
        for n in (
            "HPC2N-2002_excerpt-3170jobs_alea.swf",
            "KTH-SP2-1996-2.1-cln.swf.gz",
            "LANL-CM5-1994-4.1-cln.swf.gz",
            "LCG-2005-1.swf.gz",
            "NASA-iPSC-1993-3.1-cln.swf.gz",
            "RICC-2010-2.swf.gz",
            "lublin_256.swf",
            "wagap-2013_alea-extended.swf",
        )
    ),
    *(
        f"sge/{n}"
        for n in (
            "apel_test_sge_accounting.txt",
            "apel_test_uge82_ms_accounting.txt",
            "gbsc_utils_ogetools_test_data.accounting",
            "go-clusterscheduler_ocs900_accounting.jsonl",
            "ocs-9.0.0_release-notes_accounting.jsonl",
            "pretty-accounting_sge6x_accounting.txt",
            "pretty-accounting_uge8x_ms_accounting.txt",
            "xdmod_sge_accounting-logs.log",
            "xdmod_uge_accounting-logs.log",
        )
    ),
    "google/v3",
    "google/v2",
]


def test_the_matrix_covers_every_shared_file(shared_data: Path) -> None:
    assert sorted(_sources(shared_data)) == sorted(SOURCE_IDS)


_CACHE: dict[str, Workload] = {}

#: SSS sources: no SSS trace is shared, so SSS documents written (group layout)
#: from two real traces are read by the SSS reader and converted on from there.
SSS_SOURCES = {
    "sss/from-KTH": "swf/KTH-SP2-1996-2.1-cln.swf.gz",
    "sss/from-gbsc": "sge/gbsc_utils_ogetools_test_data.accounting",
}


#: Batsim sources, made the same way (no Batsim file is shared either): a workload
#: and a jobs file written from KTH.
BATSIM_SOURCES = {
    "batsim/from-KTH": ("swf/KTH-SP2-1996-2.1-cln.swf.gz", "batsim", "src.json"),
    "batsim-jobs/from-KTH": ("swf/KTH-SP2-1996-2.1-cln.swf.gz", "batsim-jobs", "src_jobs.csv"),
}


def _source(shared: Path, key: str) -> Workload:
    if (key in SSS_SOURCES or key in BATSIM_SOURCES) and key not in _CACHE:
        import tempfile

        origin, fmt, name = BATSIM_SOURCES.get(key) or (SSS_SOURCES[key], "sss", "src.sss.xml")
        folder = Path(tempfile.mkdtemp(prefix="schedlab-matrix-"))
        schedlab.write(_source(shared, origin), folder / name, format=fmt)
        workload = schedlab.read(folder / name, format=fmt)
        workload.jobs  # noqa: B018 - materialised, so the file can go
        shutil.rmtree(folder)
        _CACHE[key] = workload
    if key not in _CACHE:
        path, options = _sources(shared)[key]
        workload = schedlab.read(path, **options)
        if key.startswith("swf/"):
            jobs = list(itertools.islice(workload, CAP))
            head = Workload.from_jobs(jobs, workload.header.copy())
            head.meta.update(workload.meta)
            workload = head
        else:
            workload.jobs  # noqa: B018 - materialise once
        _CACHE[key] = workload
    return _CACHE[key]


def _convert(
    workload: Workload, target: str, tmp: Path, layout_jobs: bool = False
) -> tuple[Workload, Losses]:
    writer, write_opts, reader, read_opts = TARGETS[target]
    out = tmp / ("jobs" if layout_jobs else OUT_NAMES[target])
    options = {**write_opts, **({"layout": "jobs"} if layout_jobs else {})}
    with collect_losses() as losses:
        schedlab.write(workload, out, format=writer, **options)
    back = schedlab.read(out, format=reader, **read_opts)
    back.jobs  # noqa: B018
    return back, losses


# ---------------------------------------------------------------- comparison


def _plain(value: Any) -> Any:
    """Tasks and dependencies as plain data (a tuple read back as a JSON list is
    the same value)."""
    if isinstance(value, tuple) and value and attrs.has(type(value[0])):
        return json.loads(json.dumps([attrs.asdict(v) for v in value], default=str))
    return value


def _same(a: Any, b: Any) -> bool:
    a, b = _plain(a), _plain(b)
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return False
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-6)
    return a == b


def _origin(w: Workload) -> int | None:
    return w.header.unix_start_time


def _grouping_differences(src: list[Any], back: list[Any]) -> int:
    """Jobs whose value does not map one-to-one onto the value read back."""
    forward: dict[Any, Any] = {}
    backward: dict[Any, Any] = {}
    bad = 0
    for a, b in zip(src, back, strict=True):
        if a is None and b is None:
            continue
        if a is None or b is None:
            bad += 1
            continue
        if forward.setdefault(a, b) != b or backward.setdefault(b, a) != a:
            bad += 1
    return bad


def _cids(src: Workload) -> list[int]:
    """The collection id the Google writer gives each job."""
    return _collection_ids(src.jobs, Losses())


def _pairs(src: Workload, back: Workload, target: str) -> list[tuple[Job, Job]]:
    """Source and read-back jobs matched up."""
    if target == "google":
        by_cid = {j.extras["collection_id"]: j for j in back.jobs}
        assert len(by_cid) == len(back.jobs)
        return [(s, by_cid[c]) for s, c in zip(src.jobs, _cids(src), strict=True)]
    if target.startswith("sge") and src.meta.get("reader") in ("sge", "sge-jsonl"):
        # records go back in source-file order, the source was sorted by submit
        # time: match by job number, then by order
        keyed: dict[Any, list[Job]] = {}
        for j in back.jobs:
            keyed.setdefault(j.job_number, []).append(j)
        out = []
        for s in src.jobs:
            candidates = keyed[s.job_number]
            best = min(
                range(len(candidates)),
                key=lambda i: abs((candidates[i].submit_time or 0) - (s.submit_time or 0)),
            )
            out.append((s, candidates.pop(best)))
        return out
    return list(zip(src.jobs, back.jobs, strict=True))


def _shift(pairs: list[tuple[Job, Job]], so: int | None, bo: int | None) -> float:
    """What to add to a source submit time to compare it with the one read back:
    the change of origin when both sides know theirs; else the offset most jobs
    share (a target that counts from its first submission)."""
    if so is not None and bo is not None:
        return so - bo
    offsets = Counter(
        b.submit_time - s.submit_time
        for s, b in pairs
        if s.submit_time is not None and b.submit_time is not None
    )
    return offsets.most_common(1)[0][0] if offsets else 0.0


def _differences(
    src: Workload, back: Workload, target: str, shifted: bool = False
) -> Counter[str]:
    """Records per field whose value did not survive. ``shifted``: the writer
    reported that relative times shift with the origin (compared up to it)."""
    pairs = _pairs(src, back, target)
    diff: Counter[str] = Counter()
    so, bo = _origin(src), _origin(back)
    shift = _shift(pairs, so, bo) if (shifted or (so is not None and bo is not None)) else 0.0
    back_number_to_cid = {j.job_number: j.extras.get("collection_id") for j in back.jobs}
    src_cids = dict(zip((id(j) for j in src.jobs), _cids(src), strict=True))
    for s, b in pairs:
        for field in SWF_FIELDS:
            if field in NAMED:
                continue
            a, c = getattr(s, field), getattr(b, field)
            if field == "job_number" and target == "google":
                a, c = src_cids[id(s)], b.extras.get("collection_id")
                if s.extras.get("collection_id", s.job_number) != a:
                    diff[field] += 1  # a fresh id replaced a duplicate or missing one
                    continue
            if field == "preceding_job_number" and target == "google" and c is not None:
                c = back_number_to_cid.get(c)
                if "collection_id" in s.extras and a is not None:
                    a = next((x.extras["collection_id"] for x in src.jobs
                              if x.job_number == a), a)
            if field in TIMES and a is not None and c is not None:
                a = a + shift
            if not (a is None and c is None) and not _same(a, c):
                diff[field] += 1
        for field in RICH:
            a, c = getattr(s, field), getattr(b, field)
            if field == "dependencies" and target == "google":
                continue  # renumbered references: checked through preceding_job_number
            if a in (None, ()) and field in ("dependencies", "nodes", "hosts", "tasks"):
                # values the target derives (from preceding job, instances,
                # placements) where the source had none are not losses
                continue
            if not (a in (None, ()) and c in (None, ())) and not _same(a, c):
                diff[field] += 1
    for field in NAMED:
        bad = _grouping_differences(
            [getattr(s, field) for s, _ in pairs], [getattr(b, field) for _, b in pairs]
        )
        if bad:
            diff[field] += bad
    return diff


def _header_differences(src: Workload, back: Workload) -> list[str]:
    """Header labels a simulation or a time conversion needs that did not survive
    (a new origin is no loss when absolute times survive: they are compared)."""
    out = []
    for label in ("MaxProcs", "MaxNodes", "UnixStartTime", "TimeZoneString"):
        a = src.header.get(label)
        b = back.header.get(label)
        if a is None or b == a or (label == "UnixStartTime" and b is not None):
            continue
        out.append(label)
    return out


def _check(src: Workload, back: Workload, losses: Losses, target: str) -> None:
    if len(back.jobs) != len(src.jobs):
        # only a reported merge (SWF: a partial-status job after a job of the same
        # number is a part of it) may make jobs fewer
        missing = len(src.jobs) - len(back.jobs)
        assert 0 < missing <= losses.count("job_number"), "every job must come back"
        return
    diff = _differences(src, back, target, shifted=bool(losses.count("header.UnixStartTime")))
    unreported = {
        field: (n, losses.count(field)) for field, n in diff.items() if losses.count(field) < n
    }
    assert not unreported, f"lost without a report (field: (differ, reported)): {unreported}"
    for label in _header_differences(src, back):
        assert losses.count(f"header.{label}"), f"header {label} lost without a report"


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("source", [*SOURCE_IDS, *SSS_SOURCES, *BATSIM_SOURCES])
def test_conversion_is_exact_or_reported(
    shared_data: Path, tmp_path: Path, source: str, target: str
) -> None:
    src = _source(shared_data, source)
    back, losses = _convert(src, target, tmp_path)
    _check(src, back, losses, target)


@pytest.mark.parametrize(
    "source", ["swf/KTH-SP2-1996-2.1-cln.swf.gz", "sge/gbsc_utils_ogetools_test_data.accounting"]
)
def test_sss_jobs_layout_is_exact_or_reported(
    shared_data: Path, tmp_path: Path, source: str
) -> None:
    src = _source(shared_data, source)
    with collect_losses() as losses:
        schedlab.write(src, tmp_path / "jobs", format="sss", layout="jobs")
    documents = sorted((tmp_path / "jobs").glob("job-*.xml"))
    assert len(documents) == len(src.jobs)
    # a folder of standalone documents has no header: every label is reported
    for label in src.header.labels():
        assert losses.count(f"header.{label}") == 1
    by_id = {j.job_number: j for j in src.jobs}
    diff: Counter[str] = Counter()
    for path in documents[:200]:
        (back,) = schedlab.read(path, format="sss").jobs
        job = by_id[back.job_number]
        for field in (*SWF_FIELDS, *RICH):
            if field in TIMES or field in NAMED:
                continue  # absolute times and names: each document has its own tables
            if not _same(getattr(job, field), getattr(back, field)):
                diff[field] += 1
    unreported = {f: n for f, n in diff.items() if losses.count(f) < n}
    assert not unreported, unreported


SAME_FORMAT: list[tuple[str, str]] = [
    ("swf/lublin_256.swf", "swf"),
    ("swf/KTH-SP2-1996-2.1-cln.swf.gz", "swf"),
    ("sge/gbsc_utils_ogetools_test_data.accounting", "sge"),
    ("sge/go-clusterscheduler_ocs900_accounting.jsonl", "sge-jsonl"),
    ("google/v3", "google"),
    ("batsim/from-KTH", "batsim"),
    ("batsim-jobs/from-KTH", "batsim-jobs"),
]


@pytest.mark.parametrize(("source", "target"), SAME_FORMAT)
def test_same_format_round_trips_lose_nothing(
    shared_data: Path, tmp_path: Path, source: str, target: str
) -> None:
    src = _source(shared_data, source)
    back, losses = _convert(src, target, tmp_path)
    assert not losses, losses.summary()
    assert not _differences(src, back, target)




# ---------------------------------------------------------------- random workloads

def _opt(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


_seconds = st.integers(0, 10**6) | st.floats(0, 10**6, allow_nan=False).map(
    lambda x: round(x, 3)
)


@st.composite
def _workloads(draw: st.DrawFn) -> Workload:
    n = draw(st.integers(1, 5))
    numbers = draw(st.lists(_opt(st.integers(0, 10**6)), min_size=n, max_size=n))
    jobs = []
    for i in range(n):
        status = draw(_opt(st.sampled_from([0, 1, 2, 3, 4, 5])))
        if status in (2, 3, 4) and numbers[i] is None:
            # a partial-execution record names its job (the SWF reader's partial
            # record check cannot take one without a number)
            numbers[i] = 10**6 + i
        jobs.append(
            Job(
                job_number=numbers[i],
                submit_time=draw(_opt(_seconds)),
                wait_time=draw(_opt(_seconds | st.just(-3))),
                run_time=draw(_opt(_seconds | st.just(-7))),
                allocated_processors=draw(_opt(st.integers(0, 512))),
                average_cpu_time=draw(_opt(_seconds)),
                used_memory=draw(_opt(st.integers(0, 10**7))),
                requested_processors=draw(_opt(st.integers(1, 512))),
                requested_time=draw(_opt(st.integers(1, 10**6))),
                requested_memory=draw(_opt(st.integers(1, 10**7))),
                status=status,
                user_id=draw(_opt(st.integers(1, 20))),
                group_id=draw(_opt(st.integers(1, 20))),
                executable_number=draw(_opt(st.integers(1, 20))),
                queue_number=draw(_opt(st.integers(1, 5))),
                partition_number=draw(_opt(st.integers(1, 5))),
                think_time=draw(_opt(st.integers(0, 100))),
                name=draw(_opt(st.sampled_from(["a", "b c", "x-1"]))),
                hosts=draw(st.sampled_from([(), ("n1",), ("n1", "n2")])),
                exit_code=draw(_opt(st.integers(0, 255))),
            )
        )
    header = Header()
    if draw(st.booleans()):
        header.set("UnixStartTime", draw(st.integers(10**8, 2 * 10**9)))
    if draw(st.booleans()):
        header.set("MaxProcs", draw(st.integers(1, 4096)))
    return Workload.from_jobs(jobs, header)


@pytest.mark.parametrize("target", sorted(TARGETS))
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(workload=_workloads())
def test_random_workloads_convert_exactly_or_report(
    tmp_path_factory: pytest.TempPathFactory, target: str, workload: Workload
) -> None:
    note(f"{workload.header.entries!r} {workload.jobs!r}")
    back, losses = _convert(workload, target, tmp_path_factory.mktemp("p"))
    note(f"back: {back.jobs!r}\nlosses: {losses!r}")
    _check(workload, back, losses, target)
