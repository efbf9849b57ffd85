"""The sweep runner: workloads x policies x backfilling x seeds, in parallel, resumable.

A sweep is a list of :class:`Cell` s. Each cell reads (or generates) one workload,
simulates it with one policy and backfilling strategy, and computes metrics; its
result is a list of tidy rows (one per group, metric and statistic). Cells run

* in local worker processes (default; ``workers`` of them, one per core), or
* on a Dask cluster when a ``scheduler`` address (or a ``distributed.Client``) is
  given: the cells are submitted with ``client.map`` and collected as they finish.

Every finished cell is written at once to ``OUT/cells/<key>.json`` (written to a
temporary file and renamed, so a killed run never leaves half a file); a cell whose
file exists is not run again. An interrupted sweep therefore resumes where it
stopped by running the same command again. The tidy table of all cells is written
last (CSV, JSON or Parquet by suffix); a run starts by removing the tables an
earlier run left in the folder, so that an interrupted run leaves none that looks
current. Ctrl-C stops the local workers at once (they ignore SIGINT; the sweep
process terminates them).

Rows have the columns of :data:`ROW_FIELDS`: the cell's settings (``workload``,
``policy``, ``backfill``, ``estimator``, ``seed``, ``procs``, ``options``), the jobs
the simulator left out of the cell (``jobs_excluded``), then ``group`` (``all`` or
the group of ``by``), ``jobs`` and ``users`` in the group, ``metric``, ``stat``
(the statistics of the metrics' ``stats`` option, by default ``mean``, ``median``,
``p90``, ``p99``, ``max``, then ``count``; ``value`` for a system-wide metric),
``unit`` and ``value``, and last the cell's ``notes`` (what
``schedlab simulate`` prints as ``note:`` lines, joined by :data:`NOTE_SEPARATOR`).
"""

from __future__ import annotations

import contextlib
import csv
import glob
import hashlib
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from stat import S_ISDIR
from typing import Any

import attrs

from ..api import parse_spec
from ..errors import SimulationError, UsageError
from ..io import _check_interrupted

#: Columns of a sweep's tidy table, in order.
ROW_FIELDS: tuple[str, ...] = (
    "cell",
    "workload",
    "policy",
    "backfill",
    "estimator",
    "seed",
    "procs",
    "options",
    "jobs_excluded",
    "group",
    "jobs",
    "users",
    "metric",
    "stat",
    "unit",
    "value",
    "notes",
)

#: Between two notes of a cell in the ``notes`` column.
NOTE_SEPARATOR = " | "

#: Statistics kept per group for per-job metrics when the cell's metric options
#: name no ``stats`` (with ``stats``: those statistics, then ``count``).
KEPT_STATS: tuple[str, ...] = ("mean", "median", "p90", "p99", "max", "count")

#: Version of the cell file layout; a cell file of another version is recomputed
#: (2: the estimator, jobs_excluded and notes columns, the record's notes).
CELL_FORMAT = 2


def _freeze(options: Mapping[str, Any] | Iterable[tuple[str, Any]] | None) -> tuple:
    if options is None:
        return ()
    items = options.items() if isinstance(options, Mapping) else options
    return tuple(sorted((str(k), v) for k, v in items))


#: The priority policy of a cell (and a sweep) that names none: the default of
#: :func:`schedlab.simulate`. It is only a name, resolved through the plugin registry
#: when the cell runs, like any other (a registry without it reports the usual
#: unknown-name error): core imports no plugin for it.
DEFAULT_POLICY = "fcfs"
#: The backfilling strategy of a cell that names none, resolved the same way.
DEFAULT_BACKFILL = "easy"
#: The run-time estimator of a cell that names none (the scheduler sees the
#: requested times), resolved the same way.
DEFAULT_ESTIMATOR = "requested"


@attrs.define(frozen=True, slots=True)
class Cell:
    """One simulation of a sweep.

    ``workload`` is a trace path or a generator spec (``NAME:key=value,...``);
    ``seed``, when not ``None``, is added to a generator spec as ``seed=`` (it must
    not name one already). ``policy``, ``backfill`` and ``estimator`` are registered
    names (default :data:`DEFAULT_POLICY`, :data:`DEFAULT_BACKFILL` and
    :data:`DEFAULT_ESTIMATOR`); ``policy_options``, ``backfill_options``,
    ``estimator_options`` and ``allocation_options`` are passed to those
    components, ``kill`` and ``dependencies`` to :func:`schedlab.simulate`;
    ``reader`` names the reader of a trace file (``--from``; default: detected);
    ``metrics`` (names, ``None`` = all) are computed ``by`` a grouping with
    ``metric_options``.
    """

    workload: str
    policy: str = DEFAULT_POLICY
    backfill: str = DEFAULT_BACKFILL
    seed: int | None = None
    procs: int | None = None
    policy_options: tuple = attrs.field(default=(), converter=_freeze)
    metrics: tuple[str, ...] | None = attrs.field(
        default=None, converter=lambda v: None if v is None else tuple(v)
    )
    by: str | None = None
    metric_options: tuple = attrs.field(default=(), converter=_freeze)
    #: A platform file and an allocation policy (multi-resource machine), or None.
    platform: str | None = None
    allocation: str | None = None
    #: Options of the workload's reader (``-R``); ignored for generator specs.
    read_options: tuple = attrs.field(default=(), converter=_freeze)
    estimator: str = DEFAULT_ESTIMATOR
    backfill_options: tuple = attrs.field(default=(), converter=_freeze)
    estimator_options: tuple = attrs.field(default=(), converter=_freeze)
    allocation_options: tuple = attrs.field(default=(), converter=_freeze)
    kill: bool = True
    dependencies: bool = False
    #: The reader of a trace file (``--from``); ``None``: detected. Ignored for
    #: generator specs.
    reader: str | None = None

    def source(self) -> str:
        """The workload source with the seed filled in."""
        if self.seed is None:
            return self.workload
        _, options = parse_spec(self.workload)
        if "seed" in options:
            raise UsageError(f"{self.workload!r}: give the seed in the sweep's seeds, not here")
        # NAME -> NAME:seed=S; NAME: and NAME:a=1, already end where an option goes
        spec = self.workload.rstrip()
        separator = "" if spec.endswith((":", ",")) else "," if options else ":"
        return f"{spec}{separator}seed={self.seed}"

    def to_dict(self) -> dict[str, Any]:
        """Plain data describing the cell (JSON-ready, stable key order)."""
        return {
            "workload": self.workload,
            "policy": self.policy,
            "backfill": self.backfill,
            "seed": self.seed,
            "procs": self.procs,
            "policy_options": dict(self.policy_options),
            "metrics": None if self.metrics is None else list(self.metrics),
            "by": self.by,
            "metric_options": dict(self.metric_options),
            # Only when set, so the keys of single-pool cells stay as they were.
            **({"platform": self.platform} if self.platform is not None else {}),
            **({"allocation": self.allocation} if self.allocation is not None else {}),
            **({"read_options": dict(self.read_options)} if self.read_options else {}),
            **({"estimator": self.estimator} if self.estimator != DEFAULT_ESTIMATOR else {}),
            **({"backfill_options": dict(self.backfill_options)} if self.backfill_options else {}),
            **(
                {"estimator_options": dict(self.estimator_options)}
                if self.estimator_options
                else {}
            ),
            **(
                {"allocation_options": dict(self.allocation_options)}
                if self.allocation_options
                else {}
            ),
            **({"kill": False} if not self.kill else {}),
            **({"dependencies": True} if self.dependencies else {}),
            **({"reader": self.reader} if self.reader is not None else {}),
        }

    def inputs(self) -> dict[str, str]:
        """The identity of the cell's input files, as found here: ``{"workload": ...,
        "platform": ...}`` for a trace file and a platform file that exist (a
        SHA-256 of a file's bytes; of a directory trace, of its files' names, sizes
        and modification times: :func:`_input_digest`), and ``"workload.KEY"`` for
        each option of a generator spec that names a file here
        (``tsafrir-estimates:base=PATH``: :func:`_spec_files`). A generator spec
        naming no file, and a path that does not exist here, have none."""
        out: dict[str, str] = {}
        if self.seed is None:
            digest = _input_digest(self.workload)
            if digest is not None:
                out["workload"] = digest
        for option, path in _spec_files(self.workload):
            digest = _input_digest(path)
            if digest is not None:
                out[f"workload.{option}"] = digest
        if self.platform is not None:
            digest = _input_digest(self.platform)
            if digest is not None:
                out["platform"] = digest
        return out

    @property
    def key(self) -> str:
        """A stable identifier: a hash of :meth:`to_dict` and of the content of the
        cell's input files (:meth:`inputs`), so that a changed trace or platform
        file gives another key (names the cell's file)."""
        data = self.to_dict()
        inputs = self.inputs()
        if inputs:
            data["inputs"] = inputs
        text = json.dumps(data, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def label(self) -> str:
        """A short human-readable description."""
        seed = "" if self.seed is None else f" seed {self.seed}"
        estimator = "" if self.estimator == DEFAULT_ESTIMATOR else f" -e {self.estimator}"
        return f"{self.workload}{seed} {self.policy}+{self.backfill}{estimator}"

    def options_text(self) -> str:
        """The ``options`` column: the policy's options as ``key=value``, then those
        of the backfilling, the estimator and the allocation prefixed with
        ``backfill.``, ``estimator.`` and ``allocation.``, comma-separated. The
        options given in a component's spelling (``NAME:key=value``) are there too,
        merged with those of its option table, each component's sorted by name."""
        parts = [_options_text(_merged(self.policy, self.policy_options))]
        for prefix, spec, options in (
            ("backfill.", self.backfill, self.backfill_options),
            ("estimator.", self.estimator, self.estimator_options),
            ("allocation.", self.allocation, self.allocation_options),
        ):
            merged = _merged(spec, options)
            if merged:
                parts.append(_options_text(merged, prefix))
        return ",".join(p for p in parts if p)


def _merged(spec: str | None, options: tuple) -> tuple:
    """The options of a component spelled ``spec`` (``NAME`` or ``NAME:key=value,...``)
    with those of its option table (frozen, as :func:`_freeze`): the table's as they
    are when the spelling carries none, else both, sorted by name (the simulation
    refuses a key given both ways with two values)."""
    if not spec or ":" not in spec:
        return options
    try:
        _, inline = parse_spec(spec)
    except UsageError:
        return options
    if not inline:
        return options
    return _freeze({**inline, **dict(options)})


def _spec_files(workload: str) -> list[tuple[str, str]]:
    """The options of a generator spec (``NAME:key=value,...``) whose value names a
    file or folder that exists here, as ``(key, path)``: the inputs a generator reads
    besides its options (``tsafrir-estimates:base=trace.swf``). A generator's file
    options are not declared as such, so any value that looks like a path
    (:func:`_looks_like_path`) and names an existing file or folder counts; a
    workload that is itself an existing file, or no spec, has none."""
    if ":" not in workload or os.path.exists(workload):
        return []
    try:
        _, options = parse_spec(workload)
    except UsageError:
        return []
    return [
        (key, value)
        for key, value in options.items()
        if _looks_like_path(value) and os.path.exists(value)
    ]


def _looks_like_path(value: str) -> bool:
    """Whether an option value of a generator spec is written as a path: with a
    folder separator, a leading ``~`` or ``.``, or a suffix (``trace.swf``); a
    plain word (``CF``) is an option value even when a file of that name exists."""
    return bool(value) and (
        "/" in value
        or os.sep in value
        or value.startswith(("~", "."))
        or bool(os.path.splitext(value)[1])
    )


#: Digests of the input files read so far in this process, by the file's identity
#: (path, device, inode, size, modification and change times): a file is hashed
#: once however many cells use it, and again after any change.
_DIGESTS: dict[tuple[Any, ...], str] = {}


def _input_digest(path: str) -> str | None:
    """The SHA-256 (hex) of a file's bytes; for a directory (a trace some readers
    take as a folder of tables), of the relative names, sizes and modification
    times of the files under it. ``None`` when ``path`` does not exist here."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    if S_ISDIR(info.st_mode):
        listing = hashlib.sha256()
        for folder, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files):
                full = os.path.join(folder, name)
                try:
                    one = os.stat(full)
                except OSError:
                    continue
                rel = os.path.relpath(full, path)
                listing.update(f"{rel}\0{one.st_size}\0{one.st_mtime_ns}\n".encode())
        return "dir:" + listing.hexdigest()
    identity = (
        os.path.abspath(path), info.st_dev, info.st_ino, info.st_size,
        info.st_mtime_ns, info.st_ctime_ns,
    )  # fmt: skip
    digest = _DIGESTS.get(identity)
    if digest is None:
        content = hashlib.sha256()
        try:
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    content.update(block)
        except OSError:
            return None  # unreadable here: the cell reports it when it reads the file
        digest = _DIGESTS[identity] = content.hexdigest()
    return digest


def _options_text(options: tuple, prefix: str = "") -> str:
    return ",".join(f"{prefix}{k}={v}" for k, v in options)


def _in_cell(error: SimulationError, cell: Cell) -> SimulationError:
    """``error`` (a :class:`SimulationError` raised while simulating a cell: the
    workload cannot run as asked) naming the cell's workload and components when its
    message does not name the workload, with the machine-size hint in the spelling
    of a sweep (``--procs N``, ``procs = N`` in a sweep file). Other errors are not
    changed: a :class:`~schedlab.errors.FormatError` names its file, a component's
    bad option (:class:`UsageError`) or a plugin's error names the component. A
    subclass (a strategy's :class:`~schedlab.sim.StrategyError`) keeps its class."""
    if not isinstance(error, SimulationError):
        return error
    message = str(error).replace("give it with procs= (--procs N)", f"give it with {_PROCS_HINT}")
    if cell.workload not in message:
        message = f"cell {cell.label()}: {message}"
    try:
        renamed = type(error)(message)
    except Exception:  # a subclass whose constructor takes more than the message
        renamed = SimulationError(message)
    renamed.exit_code = error.exit_code
    return renamed


#: How a sweep is given a machine size, in its errors.
_PROCS_HINT = "--procs N or --platform FILE (procs = N or platform = FILE in a sweep file)"


def run_cell(cell: Cell) -> dict[str, Any]:
    """Run one cell in this process: read, simulate, measure. Returns the cell's
    record ``{"format", "cell", "key", "rows", "stats", "notes"}`` (JSON-ready),
    with ``inputs`` (:meth:`Cell.inputs`) when the cell reads files.

    ``notes`` are what ``schedlab simulate`` prints as ``note:`` lines for the same
    run (estimates that fell back, jobs excluded, jobs left out of a metric);
    ``stats`` counts the jobs simulated and excluded (``excluded``: by reason).
    ``warnings``, only when there are some, lists the metrics of the default set left
    out because their plugin failed (``plugin``, ``component``, ``message``):
    :func:`run_sweep` warns about each once."""
    return _run_cell(cell, None)


def _run_cell(cell: Cell, key: str | None) -> dict[str, Any]:
    """:func:`run_cell` with the cell's ``key`` as the caller computed it (``None``:
    computed here), so that a worker that sees the input files differently files
    the record under the caller's key."""
    import schedlab
    from schedlab.measure import compute_metrics, metrics_left_out
    from schedlab.registry import get_registry

    from ..comparison import simulation_notes

    began = time.perf_counter()
    if key is None:
        key = cell.key  # a hash of the cell's settings and inputs: computed once
    workload = _read_cell(cell)
    used = (
        ("policy", cell.policy),
        ("backfill", cell.backfill),
        ("estimator", cell.estimator),
        ("allocation", cell.allocation),
    )
    try:
        with get_registry().blame_names(*used):  # a third-party component's bug names it
            result = schedlab.simulate(
                workload,
                policy=cell.policy,
                backfill=cell.backfill,
                procs=cell.procs,
                estimator=cell.estimator,
                kill=cell.kill,
                dependencies=cell.dependencies,
                policy_options=dict(cell.policy_options) or None,
                backfill_options=dict(cell.backfill_options) or None,
                estimator_options=dict(cell.estimator_options) or None,
                progress=False,
                platform=cell.platform,
                allocation=cell.allocation,
                allocation_options=dict(cell.allocation_options) or None,
            )
        # a failing default metric is left out: its warning goes in the record, and
        # run_sweep gives it once for the whole sweep (not once per cell and worker)
        with metrics_left_out(warn=False) as left_out:
            report = compute_metrics(
                result, names=cell.metrics, by=cell.by, **dict(cell.metric_options)
            )
    except SimulationError as exc:
        raise _in_cell(exc, cell) from None
    # as schedlab simulate prints them: the simulation's, then the metrics'
    # (each once: a simulation's skipped-records note is the metrics' too)
    notes = list(dict.fromkeys(str(n) for n in (*simulation_notes(result), *report.notes)))
    excluded = int(result.stats.get("jobs_excluded", 0))
    base = {
        "cell": key,
        "workload": cell.workload,
        "policy": cell.policy,
        "backfill": cell.backfill,
        "estimator": cell.estimator,
        "seed": cell.seed,
        "procs": int(result.procs),
        "options": cell.options_text(),
        "jobs_excluded": excluded,
    }
    noted = NOTE_SEPARATOR.join(notes)
    units = {m.name: m.unit for m in report.metrics}
    # The statistics the report computed (the `stats` metric option, default those
    # of KEPT_STATS), each with a value: a statistic not computed gets no row.
    kept = (*report.stats, "count")
    unitless = {"count", *report.unitless}
    rows: list[dict[str, Any]] = []
    for row in report.rows:
        head = {**base, "group": str(row["group"]), "jobs": row["jobs"], "users": row["users"]}
        for info in report.metrics:
            entry = row.get(info.name)
            if info.per_job:
                if not isinstance(entry, Mapping):
                    continue
                for stat in kept:
                    rows.append(
                        {
                            **head,
                            "metric": info.name,
                            "stat": stat,
                            "unit": "" if stat in unitless else units[info.name],
                            "value": entry.get(stat),
                            "notes": noted,
                        }
                    )
            elif info.name in row:
                rows.append(
                    {
                        **head,
                        "metric": info.name,
                        "stat": "value",
                        "unit": units[info.name],
                        "value": entry,
                        "notes": noted,
                    }
                )
    reasons = result.stats.get("excluded") or {}
    stats = {
        "jobs_simulated": int(result.stats.get("jobs_simulated", len(result))),
        "jobs_excluded": excluded,
        "excluded": {str(k): int(v) for k, v in reasons.items() if v},
        "seconds": round(time.perf_counter() - began, 4),
    }
    record = {
        "format": CELL_FORMAT,
        "cell": cell.to_dict(),
        "key": key,
        "rows": rows,
        "stats": stats,
        "notes": notes,
    }
    inputs = cell.inputs()
    if inputs:
        record["inputs"] = inputs
    if left_out:
        record["warnings"] = [
            {"plugin": w.plugin, "component": w.component, "message": str(w)} for w in left_out
        ]
    return record


def _read_cell(cell: Cell) -> Any:
    """The cell's workload: its trace file (with ``reader`` and ``read_options``) or
    its generator spec with the seed."""
    import schedlab

    source = cell.source()
    if os.path.exists(source):
        return schedlab.read(source, format=cell.reader, **dict(cell.read_options))
    # Reader options are for trace files; a generator spec carries its own options.
    return schedlab.read(source)


def check_cells(cells: Sequence[Cell]) -> None:
    """Check, before running ``cells``, what would make a cell fail late: every
    workload of a cell without ``procs`` or ``platform`` must know its machine size
    (a header's ``MaxProcs`` or ``MaxNodes``), else a :class:`SimulationError`
    naming the workload and how to give one.

    Each workload is read (a generator spec generated, with its first seed) once,
    here; the workload of the first cell is not, since that cell runs first and
    fails as early. A trace path that does not exist here is left to the cell (the
    workers of a Dask cluster may see other files)."""
    from ..api import generator_source
    from ..registry import get_registry

    registry = get_registry()
    seen = {(cells[0].workload, cells[0].reader, cells[0].read_options)} if cells else set()
    for cell in cells:
        if cell.procs is not None or cell.platform is not None:
            continue
        what = (cell.workload, cell.reader, cell.read_options)
        if what in seen:
            continue
        seen.add(what)
        source = cell.source()
        if not os.path.exists(source) and generator_source(source, registry) is None:
            continue  # a path missing here: the cell says so (or a worker has the file)
        size = _read_cell(cell).header.machine_size()
        if not size or size <= 0:
            raise SimulationError(
                f"{cell.workload}: the machine size is unknown: the workload has no "
                f"MaxProcs or MaxNodes header; give it with {_PROCS_HINT}"
            )


# --------------------------------------------------------------------------- storage


def cell_path(out_dir: str | os.PathLike[str], cell: Cell) -> Path:
    """Where a cell's record lives: ``OUT/cells/<key>.json``."""
    return _key_path(out_dir, cell.key)


def _key_path(out_dir: str | os.PathLike[str], key: str) -> Path:
    return Path(out_dir) / "cells" / f"{key}.json"


def _stored_keys(out_dir: str | os.PathLike[str]) -> set[str]:
    """The keys of the cell files under ``OUT/cells`` (one directory listing)."""
    try:
        names = os.listdir(Path(out_dir) / "cells")
    except (FileNotFoundError, NotADirectoryError):
        return set()
    return {name[:-5] for name in names if name.endswith(".json")}


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file renamed into place.

    An :class:`OSError` while writing (``ENOSPC`` of a full disk ...) names ``path``,
    not the temporary file (which is removed)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    except OSError as exc:  # no room for another file, a folder that is not writable
        raise _named(exc, path, exc.filename) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise _named(exc, path, tmp) from None
        raise


def _named(exc: OSError, path: Path, tmp: str) -> OSError:
    """``exc`` naming ``path`` when it names no file or the temporary ``tmp``."""
    if exc.filename is None or os.fspath(exc.filename) == tmp:
        return OSError(exc.errno, exc.strerror or str(exc), os.fspath(path))
    return exc


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def load_cell(path: Path) -> dict[str, Any] | None:
    """A finished cell's record, or ``None`` if absent, from another layout or
    damaged (not JSON, not UTF-8, not a record of :data:`CELL_FORMAT` with a
    ``rows`` list whose rows have every column of :data:`ROW_FIELDS`, or a record
    whose ``key``, or a row's ``cell``, is not the file's name: another cell's
    file): :func:`run_sweep` then runs the cell again and replaces the file."""
    return _load_cell(Path(path))[0]


def _load_cell(path: Path) -> tuple[dict[str, Any] | None, bool]:
    """:func:`load_cell`, and whether a file that exists is damaged (``False`` for a
    missing file and for a record of another :data:`CELL_FORMAT`, an older layout)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, False
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None, True
    if not isinstance(record, dict) or not isinstance(record.get("format"), int):
        return None, True
    if record["format"] != CELL_FORMAT:
        return None, False
    key = path.name.removesuffix(".json")
    rows = record.get("rows")
    if (
        record.get("key") != key
        or not isinstance(rows, list)
        or not all(_is_row(row) and row["cell"] == key for row in rows)
    ):
        return None, True
    record["rows"] = [_ordered(row) for row in rows]
    return record, False


#: Columns of a stored row that must hold text.
_TEXT_FIELDS = (
    "cell", "workload", "policy", "backfill", "estimator", "group", "metric", "stat", "notes",
)  # fmt: skip


def _is_row(row: Any) -> bool:
    """Whether ``row`` is a row as :func:`run_cell` makes them (every column of
    :data:`ROW_FIELDS`, text where text is expected, a number or null value)."""
    if not isinstance(row, dict) or not all(k in row for k in ROW_FIELDS):
        return False
    if not all(isinstance(row[k], str) for k in _TEXT_FIELDS):
        return False
    value = row["value"]
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _ordered(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row with the columns of :data:`ROW_FIELDS` first, in that order."""
    out = {k: row[k] for k in ROW_FIELDS if k in row}
    out.update((k, v) for k, v in row.items() if k not in out)
    return out


def save_cell(out_dir: str | os.PathLike[str], cell: Cell, record: Mapping[str, Any]) -> Path:
    """Store a cell's record atomically; returns its path."""
    return _save_record(out_dir, cell.key, record)


def _save_record(out_dir: str | os.PathLike[str], key: str, record: Mapping[str, Any]) -> Path:
    path = _key_path(out_dir, key)
    write_atomic(path, json.dumps(record, allow_nan=False, default=_json_default))
    return path


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


# --------------------------------------------------------------------------- running


@attrs.define(slots=True)
class SweepOutcome:
    """What :func:`run_sweep` did: the records of every cell (in cell order), how many
    were computed now and how many were found finished, and the tidy rows."""

    records: list[dict[str, Any]]
    computed: list[str]
    reused: list[str]
    seconds: float
    engine: str
    #: The keys of the cells whose file was damaged (:func:`load_cell`): run again.
    damaged: list[str] = attrs.field(factory=list)

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every cell's rows, in cell order."""
        return [row for record in self.records for row in record["rows"]]

    def __repr__(self) -> str:
        # Short and the same on every run (a notebook stores it): the records are in
        # ``records`` and ``rows``, the timing in ``seconds``.
        return (
            f"<SweepOutcome: {len(self.records):,} cells ({len(self.computed):,} computed, "
            f"{len(self.reused):,} reused) on {self.engine}>"
        )


ProgressCallback = Callable[[int, int, str], None]


def default_workers() -> int:
    """Worker processes for a local sweep: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def run_sweep(
    cells: Sequence[Cell],
    out_dir: str | os.PathLike[str],
    *,
    scheduler: Any = None,
    workers: int | None = None,
    progress: bool | ProgressCallback | None = None,
    on_computed: Callable[[Cell], None] | None = None,
) -> SweepOutcome:
    """Run every cell not finished yet under ``out_dir`` and return all records.

    ``scheduler``: ``None`` for local processes (``workers`` of them, default one per
    core; 1 runs in this process), a Dask scheduler address (``tcp://host:8786``), or
    a ``distributed.Client``. ``progress``: ``None`` shows a bar on a terminal,
    ``True``/``False`` force it, or a callback ``progress(done, total, label)``.
    ``on_computed`` is called in this process after each newly computed cell is saved.
    First the tables an earlier run left in ``out_dir`` (``results.csv``,
    ``.json``, ``.parquet`` and ``significance.json``) are removed, before any slow
    step: the caller writes them again from this run's rows, and a run interrupted
    (or failing) at any point leaves only cells. Then the cells to run are checked
    (:func:`check_cells`): a workload without a machine size fails the sweep before
    any cell runs. An interruption (Ctrl-C, SIGTERM) terminates the local workers
    at once.

    Workers take the cells in chunks (a few at first, then as many as take about
    :data:`CHUNK_SECONDS` at the pace measured so far), so that short cells do not
    pay a round trip each; local workers store each cell's file themselves as soon as
    it is finished, Dask workers hand their records back to be stored here. The
    records, rows and tables do not depend on the number of workers or the chunks.
    Dask workers get the absolute paths of the input files that exist here
    (:func:`_shipped`), and a worker's file whose content differs from the one
    keyed here is a :class:`UsageError` naming it. ``workers`` is for local
    processes only. A cell file that is damaged (:func:`load_cell`) is run again;
    its key is in the outcome's ``damaged``.
    """
    began = time.perf_counter()
    cells = list(cells)
    # The tables of an earlier run in this folder go first, before any slow step
    # (hashing the traces for the keys, loading the stored cells, reading every
    # workload): were this run interrupted, they would not match its cells (they
    # are written again when it completes).
    _remove_tables(out_dir)
    keys = [c.key for c in cells]
    if len(set(keys)) != len(keys):
        seen: set[str] = set()
        for cell, key in zip(cells, keys, strict=True):
            if key in seen:
                raise UsageError(f"the sweep lists the same cell twice: {cell.label()}")
            seen.add(key)
    records: dict[str, dict[str, Any]] = {}
    pending: list[tuple[Cell, str]] = []
    damaged: list[str] = []
    stored = _stored_keys(out_dir)
    for cell, key in zip(cells, keys, strict=True):
        record, spoilt = _load_cell(_key_path(out_dir, key)) if key in stored else (None, False)
        if record is not None:
            records[key] = record
        else:
            pending.append((cell, key))
            if spoilt:
                damaged.append(key)
    reused = list(records)
    computed: list[str] = []
    check_cells([cell for cell, _ in pending])  # e.g. a machine size: before any cell runs
    total = len(cells)
    report, close = _progress(progress, total)
    report(len(records), "resumed" if records else "")

    def finished(cell: Cell, key: str, record: dict[str, Any], saved: bool) -> None:
        if not saved:
            _save_record(out_dir, key, record)
        records[key] = record
        computed.append(key)
        if on_computed is not None:
            on_computed(cell)
        report(len(records), cell.label())

    engine = "none"
    try:
        if pending and scheduler is not None:
            engine = "dask"
            _run_dask(pending, scheduler, finished)
        elif pending:
            count = min(workers or default_workers(), len(pending))
            engine = "process" if count > 1 else "inline"
            _run_local(pending, count, out_dir, finished)
    finally:
        close()
    ordered = [records[k] for k in keys]
    _warn_left_out(ordered)
    return SweepOutcome(
        ordered, computed, reused, time.perf_counter() - began, engine, damaged=damaged
    )


#: The tables a sweep writes in its folder from the cells (``schedlab sweep``'s
#: ``results.*`` and ``--ci``'s ``significance.json``): :func:`run_sweep` removes
#: those of an earlier run when it starts.
_TABLES: tuple[str, ...] = (
    "results.csv",
    "results.json",
    "results.parquet",
    "significance.json",
)


def _remove_tables(out_dir: str | os.PathLike[str]) -> None:
    """Remove the tables (:data:`_TABLES`) an earlier run left in ``out_dir``, so
    that a table there is always that of the last run that completed."""
    remove_outputs(out_dir, _TABLES)


def remove_outputs(out_dir: str | os.PathLike[str], names: Iterable[str]) -> list[Path]:
    """Remove the files ``names`` (file names or glob patterns, such as
    ``"figure1-*.png"``) that an earlier run left in ``out_dir``; returns those
    removed.

    An experiment calls it when it starts, for every file it writes at its end, so
    that an interrupted run, or a run that writes fewer files (no figure), leaves
    no table or figure of an earlier run beside its own: a file there is always
    that of the last run that completed. A missing folder or file is no error; a
    directory of that name is not a table the runner wrote and is left as it is;
    another failure is an ``OSError`` naming the file."""
    folder = Path(out_dir)
    if not folder.is_dir():
        return []
    removed: list[Path] = []
    for name in names:
        paths = sorted(folder.glob(name)) if glob.has_magic(name) else [folder / name]
        for path in paths:
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            except IsADirectoryError:
                continue  # not a table this runner wrote: left as it is
            except OSError as exc:
                if path.is_dir():
                    continue
                raise _named(exc, path, str(path)) from None
            removed.append(path)
    return removed


def _warn_left_out(records: Sequence[Mapping[str, Any]]) -> None:
    """Warn once per plugin and metric about the metrics the cells left out (their
    plugin failed: :func:`schedlab.measure.metrics_left_out`)."""
    import warnings

    from ..errors import PluginRuntimeWarning

    seen: set[tuple[str, str]] = set()
    for record in records:
        for item in record.get("warnings") or ():
            if not isinstance(item, Mapping) or not isinstance(item.get("message"), str):
                continue
            plugin, component = str(item.get("plugin", "")), str(item.get("component", ""))
            if (plugin, component) not in seen:
                seen.add((plugin, component))
                warnings.warn(
                    PluginRuntimeWarning(item["message"], plugin=plugin, component=component),
                    stacklevel=3,
                )


#: A worker's chunk of cells aims at about this many seconds of work ...
CHUNK_SECONDS = 0.25
#: ... and holds at most this many cells.
MAX_CHUNK = 64

Finished = Callable[[Cell, str, dict[str, Any], bool], None]


class _Chunker:
    """Cuts the pending cells into chunks sized from the pace measured so far: one
    cell each until a cell has finished, then about :data:`CHUNK_SECONDS` of work."""

    def __init__(self, pending: Sequence[tuple[Cell, str]]) -> None:
        self._pending = list(pending)
        self._next = 0
        self._seconds = 0.0
        self._cells = 0

    def __bool__(self) -> bool:
        return self._next < len(self._pending)

    def take(self) -> list[tuple[Cell, str]]:
        """The next chunk (contiguous cells, in sweep order)."""
        size = 1
        if self._cells:
            pace = max(self._seconds / self._cells, 1e-6)
            size = max(1, min(MAX_CHUNK, int(CHUNK_SECONDS / pace)))
        chunk = self._pending[self._next : self._next + size]
        self._next += len(chunk)
        return chunk

    def measured(self, record: Mapping[str, Any]) -> None:
        """Count a finished cell's own time (``stats["seconds"]``) in the pace."""
        seconds = record.get("stats", {}).get("seconds")
        if isinstance(seconds, (int, float)):
            self._seconds += float(seconds)
            self._cells += 1


class _Carried(Exception):
    """A :class:`~schedlab.errors.SchedlabError` raised in a worker process, on its
    way back: it is pickled as the error itself, rebuilt without
    calling its ``__init__`` (those of ``FormatError`` and ``PluginRuntimeError``
    take keyword arguments that plain pickling would lose), so that the sweep
    reports it as the inline run does."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error

    def __reduce__(self) -> tuple[Any, ...]:
        error = self.error
        return (_rebuild_error, (type(error), error.args, dict(vars(error))))


def _rebuild_error(kind: type[BaseException], args: tuple, state: dict[str, Any]) -> BaseException:
    """The error :class:`_Carried` took apart, put together again."""
    error = kind.__new__(kind)
    error.args = args
    vars(error).update(state)
    return error


def _run_chunk(cells: Sequence[tuple[Cell, str]], out_dir: str | None) -> list[dict[str, Any]]:
    """Run cells (with their keys) one after the other in this (worker) process;
    with ``out_dir``, store each one's file as soon as it is finished."""
    from ..errors import SchedlabError

    records = []
    for cell, key in cells:
        try:
            record = _run_cell(cell, key)
            if out_dir is not None:
                _save_record(out_dir, record["key"], record)
        except SchedlabError as exc:
            raise _Carried(exc) from None
        records.append(record)
    return records


def _run_local(
    pending: list[tuple[Cell, str]],
    workers: int,
    out_dir: str | os.PathLike[str],
    finished: Finished,
) -> None:
    if workers <= 1:
        for cell, key in pending:
            finished(cell, key, _run_cell(cell, key), False)
        return
    import concurrent.futures as cf
    import multiprocessing
    import threading

    method = "fork" if sys.platform.startswith("linux") and threading.active_count() == 1 else None
    context = multiprocessing.get_context(method)
    chunker = _Chunker(pending)
    target = os.fspath(out_dir)
    running: dict[cf.Future[list[dict[str, Any]]], list[tuple[Cell, str]]] = {}
    pool: cf.ProcessPoolExecutor | None = None

    def submit() -> None:
        assert pool is not None
        # Two chunks per worker in flight: a worker never waits for its next one.
        while chunker and len(running) < 2 * workers:
            chunk = chunker.take()
            running[pool.submit(_run_chunk, chunk, target)] = chunk

    try:
        # The workers ignore Ctrl-C (SIGINT goes to the whole process group): only
        # this process handles it, and stops them (_stop_workers).
        pool = cf.ProcessPoolExecutor(
            max_workers=workers,
            mp_context=context,
            initializer=_ignore_interrupts,
            initargs=(os.getpid(),),
        )
        submit()
        while running:
            done, _ = cf.wait(running, return_when=cf.FIRST_COMPLETED)
            for future in done:
                chunk = running.pop(future)
                for (cell, key), record in zip(chunk, future.result(), strict=True):
                    chunker.measured(record)
                    finished(cell, key, record, True)
            submit()
    except BaseException as exc:
        if pool is None:
            raise
        keys = [key for chunk in running.values() for _, key in chunk]
        if not isinstance(exc, Exception):
            # Ctrl-C, SIGTERM ...: stop the workers now, whatever they are doing.
            _stop_workers(pool, keys, target)
            raise
        try:
            # A cell failed: the cells running finish (and are saved), no new one starts.
            pool.shutdown(wait=True, cancel_futures=True)
        except BaseException:
            _stop_workers(pool, keys, target)  # interrupted while waiting for them
            raise
        raise
    assert pool is not None
    try:
        pool.shutdown(wait=True)
    except BaseException:
        _stop_workers(pool, [], target)
        raise


#: Seconds the workers of an interrupted sweep get to exit after SIGTERM, before
#: SIGKILL.
_STOP_SECONDS = 5.0


def _ignore_interrupts(parent: int | None = None) -> None:
    """Initializer of a local worker: Ctrl-C is for the parent process, which stops
    the workers itself (a worker interrupted inside the pool's queues could leave the
    pool unable to shut down)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _end_with_parent(parent)


def _end_with_parent(parent: int | None) -> None:
    """On Linux, have the kernel send this worker SIGTERM when its parent (the
    sweep) dies, even by SIGKILL: no worker outlives the command that started it
    and writes into its folder afterwards. Elsewhere nothing (the pool's own
    shutdown ends the workers of a sweep that exits normally)."""
    import os
    import signal
    import sys

    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if parent is not None and os.getppid() != parent:  # it died before the call
        os._exit(1)


def _stop_workers(pool: Any, keys: Sequence[str], out_dir: str) -> None:
    """Stop an interrupted sweep's worker processes now: cancel what has not
    started, terminate the workers (SIGKILL after ``_STOP_SECONDS``), then remove
    the temporary files of the cells they were writing (``keys``; finished cell files
    are renamed into place whole, so none is half written). Another Ctrl-C does not
    interrupt this (it is held until the end)."""
    import signal

    blocked = False
    if hasattr(signal, "pthread_sigmask"):
        import threading

        if threading.current_thread() is threading.main_thread():
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            blocked = True
    try:
        processes = list((getattr(pool, "_processes", None) or {}).values())
        for process in processes:
            if process.is_alive():
                process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + _STOP_SECONDS
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
        for process in processes:
            if process.is_alive():
                process.kill()
                process.join(1.0)
        cells = Path(out_dir) / "cells"
        for key in keys:
            for leftover in cells.glob(f".{key}.json.*.part"):
                with contextlib.suppress(OSError):
                    leftover.unlink()
    finally:
        if blocked:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _run_dask(pending: list[tuple[Cell, str]], scheduler: Any, finished: Finished) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise UsageError("--scheduler needs Dask: pip install 'schedlab[dask]'") from None
    own = not isinstance(scheduler, Client)
    if own:
        _check_address(scheduler)
    try:
        client = Client(scheduler, set_as_default=False) if own else scheduler
    except (ValueError, TypeError) as exc:  # an address Dask refuses in another way
        raise UsageError(f"--scheduler {scheduler!r}: not a scheduler address: {exc}") from None
    try:
        chunker = _Chunker(pending)
        chunks: dict[str, list[tuple[Cell, str]]] = {}
        # Two chunks per worker thread in flight; the threads are counted again at
        # most once a second, so that workers joining the cluster get work too.
        counted = [0.0, 1]

        def wanted() -> int:
            now = time.monotonic()
            if now - counted[0] >= 1.0:
                counted[:] = [now, max(1, sum(client.nthreads().values()))]
            return 2 * int(counted[1])

        def submit() -> Any:
            chunk = chunker.take()
            # Named after the chunk's first cell and length: unique within the sweep.
            name = f"schedlab-cells-{chunk[0][1]}-{len(chunk)}"
            chunks[name] = chunk
            # The workers get the files' absolute paths (their folder is not this one).
            shipped = [(_shipped(cell), key) for cell, key in chunk]
            return client.submit(_run_chunk, shipped, None, key=name, pure=False)

        first = [submit() for _ in range(wanted()) if chunker]
        queue = as_completed(first, loop=client.loop)
        for future in queue:
            chunk = chunks.pop(future.key)
            for (cell, key), record in zip(chunk, future.result(), strict=True):
                _check_worker_inputs(cell, record)
                _relabel(record, cell)
                chunker.measured(record)
                finished(cell, key, record, False)
            while chunker and len(chunks) < wanted():
                queue.add(submit())
    finally:
        if own:
            client.close()


def _absolute(path: str) -> str:
    """``path`` made absolute from this process's folder when it exists here, else
    as it is (a file only the workers have, read from their folder)."""
    return os.path.abspath(path) if os.path.exists(path) else path


def _shipped(cell: Cell) -> Cell:
    """The cell as a Dask worker gets it: its trace, platform and generator-spec
    files (:func:`_spec_files`) that exist here by their absolute paths, so that a
    worker started in another folder reads the files this process keyed, or fails
    naming them (its record is put back under the cell's own spelling:
    :func:`_relabel`)."""
    changes: dict[str, Any] = {}
    files = _spec_files(cell.workload)
    if files:
        name, options = parse_spec(cell.workload)
        options.update((key, os.path.abspath(path)) for key, path in files)
        changes["workload"] = f"{name}:" + ",".join(f"{k}={v}" for k, v in options.items())
    elif os.path.exists(cell.workload):
        changes["workload"] = os.path.abspath(cell.workload)
    if cell.platform is not None:
        changes["platform"] = _absolute(cell.platform)
    return attrs.evolve(cell, **changes)


def _relabel(record: dict[str, Any], cell: Cell) -> None:
    """Put the record a worker made for :func:`_shipped` ``cell`` back under the
    cell's own spelling (its ``cell`` and the rows' ``workload``), as a local run
    writes it."""
    record["cell"] = cell.to_dict()
    for row in record.get("rows") or ():
        row["workload"] = cell.workload


def _check_worker_inputs(cell: Cell, record: Mapping[str, Any]) -> None:
    """A :class:`UsageError` when a Dask worker read an input file whose content
    differs from the file the cell's key was computed from here (another file at the
    same absolute path on the worker's machine): the record would be filed under a
    key that does not describe it. A file missing here is not checked (it is keyed
    by its path only)."""
    here = cell.inputs()
    there = record.get("inputs") or {}
    for name, digest in here.items():
        if there.get(name, digest) != digest:
            if name == "platform":
                path = cell.platform
            elif name == "workload":
                path = cell.workload
            else:
                path = dict(_spec_files(cell.workload)).get(name.removeprefix("workload."))
            raise UsageError(
                f"{path}: the Dask worker's file differs from this machine's "
                f"{os.path.abspath(str(path))} (SHA-256 {digest[:12]}... here, "
                f"{str(there[name])[:12]}... on the worker): give the workers the same "
                "file at the same absolute path"
            )


def _check_address(scheduler: Any) -> None:
    """A one-line :class:`UsageError` naming ``--scheduler`` for an address text Dask
    cannot parse (``nonsense``, ``tcp://``, ``tcp://host:port`` with a port that is
    not a number), before a client is made: Dask would raise a bare ``ValueError``
    from inside its client."""
    from distributed.comm import parse_address
    from distributed.comm.addressing import parse_host_port

    if not isinstance(scheduler, str):
        return  # a cluster object (LocalCluster ...): the client takes it as it is
    try:
        scheme, location = parse_address(scheduler)
        if scheme in ("tcp", "tls", "ws", "wss"):
            parse_host_port(location)
    except ValueError as exc:
        raise UsageError(
            f"--scheduler {scheduler!r}: not a scheduler address such as tcp://host:8786 ({exc})"
        ) from None


def _progress(
    progress: bool | ProgressCallback | None, total: int
) -> tuple[Callable[[int, str], None], Callable[[], None]]:
    if callable(progress):
        callback = progress
        return (lambda done, label: callback(done, total, label)), (lambda: None)
    show = sys.stderr.isatty() if progress is None else bool(progress)
    if not show:
        return (lambda done, label: None), (lambda: None)
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    bar = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=False,
    )
    task = bar.add_task("sweep", total=total)
    bar.start()

    def report(done: int, label: str) -> None:
        bar.update(task, completed=done, description=f"sweep {label}"[:60])

    return report, bar.stop


# --------------------------------------------------------------------------- tables


def write_table(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write tidy rows as CSV, JSON (a list of records) or Parquet, by suffix.

    Columns are those of the first row in order (then any others, sorted); the file
    is written atomically and its bytes depend only on the rows.
    """
    path = Path(path)
    fields = _fields(rows)
    suffix = path.suffix.lower()
    _check_interrupted()  # no table after a SIGINT/SIGTERM whose exception was lost
    if suffix == ".csv":
        write_atomic(path, _csv_text(rows, fields))
    elif suffix == ".json":
        write_atomic(path, _json_text(rows, fields))
    elif suffix == ".parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise UsageError(
                "Parquet output needs pyarrow: pip install 'schedlab[parquet]'"
            ) from None
        table = pa.table({k: [_json_value(r.get(k)) for r in rows] for k in fields})
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
        except OSError as exc:
            raise _named(exc, path, exc.filename) from None
        os.close(fd)
        try:
            pq.write_table(table, tmp)
            os.chmod(tmp, 0o666 & ~_umask())
            os.replace(tmp, path)
        except OSError as exc:  # pyarrow's errors of a full disk ... are OSErrors
            raise _named(exc, path, tmp) from None
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
    else:
        raise UsageError(f"{path}: table format from the suffix: .csv, .json or .parquet")
    return path


#: Value types written as they are (the fast paths of the tables); any other
#: type sends a table down the plain path, value by value.
_PLAIN_TYPES = frozenset({str, int, float, bool, type(None)})


def _csv_text(rows: Sequence[Mapping[str, Any]], fields: list[str]) -> str:
    """The CSV table: values as :func:`_csv_value` makes them, quoted by :mod:`csv`.

    Rows of plain values (:data:`_PLAIN_TYPES`) go to the writer as they are: it
    writes ``None`` as an empty field and a float by its ``repr``, as
    :func:`_csv_value` does; only non-finite floats (empty) and other types are
    converted. The bytes equal :func:`_csv_text_plain`'s (a test compares them).
    """
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(fields)
    plain = _PLAIN_TYPES.issuperset
    for row in rows:
        values = list(row.values()) if list(row) == fields else [row.get(k) for k in fields]
        if plain(map(type, values)):
            if float in map(type, values):
                values = [_csv_value(v) if type(v) is float else v for v in values]
        else:
            values = [_csv_value(v) for v in values]
        writer.writerow(values)
    return buffer.getvalue()


def _csv_text_plain(rows: Sequence[Mapping[str, Any]], fields: list[str]) -> str:
    """The CSV table, value by value (the reference of :func:`_csv_text`)."""
    import io

    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _csv_value(row.get(k)) for k in fields})
    return buffer.getvalue()


def _json_text(rows: Sequence[Mapping[str, Any]], fields: list[str]) -> str:
    """The JSON table: a list of records, indented by one space per level.

    When every row is a non-empty record of plain values with finite floats (the
    rows of :func:`run_cell`), the whole list is encoded in one call of the C
    encoder, with ``",\\n  "`` between items, and the newlines and indentation that
    ``indent=1`` adds around each record are put in afterwards: a newline inside a
    string is escaped, so ``"},\\n  {"`` occurs only between two records. Other
    tables take :func:`_json_text_plain`. The bytes are the same (a test compares).
    """
    plain = _PLAIN_TYPES.issuperset
    data: list[Mapping[str, Any]] = []
    for row in rows:
        record = row if list(row) == fields else {k: row.get(k) for k in fields}
        if not record or not plain(map(type, record.values())):
            return _json_text_plain(rows, fields)
        data.append(record)
    if not data:
        return _json_text_plain(rows, fields)
    try:
        text = json.dumps(data, allow_nan=False, separators=(",\n  ", ": "))
    except ValueError:  # a NaN or an infinity: written as null, value by value
        return _json_text_plain(rows, fields)
    body = text[2:-2].replace("},\n  {", "\n },\n {\n  ")
    return "[\n {\n  " + body + "\n }\n]\n"


def _json_text_plain(rows: Sequence[Mapping[str, Any]], fields: list[str]) -> str:
    """The JSON table, value by value (the reference of :func:`_json_text`)."""
    data = [{k: _json_value(row.get(k)) for k in fields} for row in rows]
    return json.dumps(data, indent=1, allow_nan=False) + "\n"


def read_table(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read back a table written by :func:`write_table` (CSV values come back as text)."""
    path = Path(path)
    if path.suffix.lower() == ".json":
        return json.loads(path.read_text(encoding="utf-8"))
    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _fields(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    if not rows:
        return list(ROW_FIELDS)
    fields = list(rows[0])
    extra = sorted({k for r in rows for k in r} - set(fields))
    return fields + extra


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if hasattr(value, "item"):
        return value.item()
    return value


def _csv_value(value: Any) -> Any:
    value = _json_value(value)
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return value
