"""Test helpers for plugin authors (and for schedlab's own tests).

Three things a plugin's tests need, none of which should depend on what else is
installed in the environment:

* **a fresh registry with your plugin registered**: :func:`plugin_registry` (and the
  ``schedlab_registry`` pytest fixture) builds one from schedlab's own built-in
  plugins plus the modules you give, never from other third-party packages;
  :func:`using_registry` makes it the process-wide registry for a block, so
  ``schedlab.read``, ``schedlab.simulate`` and the CLI (``click.testing.CliRunner``)
  see it too;
* **golden schedules for policies**: :func:`workload_from_rows` builds a workload from
  hand-made jobs, :func:`simulated_starts` runs the simulator and returns each
  job's start time, :func:`assert_schedule` compares them with the starts you
  worked out by hand and reports every difference;
* **invariants for backfilling strategies**: :func:`check_backfill` runs a strategy
  on seeded random workloads and checks what every schedule must satisfy
  (:mod:`schedlab.invariants`); :func:`random_workload` is the workload of a seed,
  to reproduce a failure;
* **round trips for formats**: :func:`round_trip` writes a workload and reads it
  back, :func:`assert_same_jobs` compares two workloads field by field (``None``
  and ``NaN`` equal, floats with a tolerance) and :func:`assert_file_round_trip`
  checks that read-then-write reproduces a file byte for byte.

Use the fixtures by adding one line to your ``conftest.py``::

    pytest_plugins = ["schedlab.testing"]

then::

    def test_my_reader(schedlab_registry, tmp_path):
        registry = schedlab_registry(my_plugin)       # the module with the hooks
        workload = schedlab.read("x.mine", registry=registry)

Nothing here is imported by ``import schedlab``; pytest is only needed for the
fixtures.
"""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from .invariants import check_backfill, check_schedule, random_workload
from .model import SWF_FIELDS, Header, Job, Workload
from .registry import Registry, build_registry, set_registry

__all__ = [
    "assert_file_round_trip",
    "assert_same_jobs",
    "assert_schedule",
    "builtin_entry_points",
    "check_backfill",
    "check_schedule",
    "plugin_registry",
    "random_workload",
    "round_trip",
    "run_cli",
    "simulated_starts",
    "using_registry",
    "workload_from_rows",
]

# --------------------------------------------------------------------- registries


def builtin_entry_points() -> list[Any]:
    """The installed entry points of the ``schedlab`` distribution itself (the
    built-in formats, policies and metrics), without any third-party plugin."""
    from importlib import metadata

    return [
        ep
        for ep in metadata.entry_points(group="schedlab")
        if ep.dist is not None and ep.dist.metadata["Name"] == "schedlab"
    ]


def plugin_registry(*plugins: Any, builtins: bool = True, strict: bool = True) -> Registry:
    """A fresh registry with ``plugins`` registered.

    Each plugin is a module (or object) implementing hooks, or a ``(name, plugin)``
    pair; a bare module is registered under the last part of its name. With
    ``builtins=True`` schedlab's own plugins are loaded too (so your reader can be
    tested against the ``swf`` writer, your policy with the ``easy`` backfill ...),
    strictly: a built-in that fails to load is an error, not a warning. Plugins of
    other installed distributions are never loaded.

    >>> import my_plugin                                         # doctest: +SKIP
    >>> registry = plugin_registry(my_plugin)                    # doctest: +SKIP
    >>> registry.reader("mine").provider                         # doctest: +SKIP
    'my_plugin'
    """
    entry_points = builtin_entry_points() if builtins else False
    return build_registry(plugins=plugins, entry_points=entry_points, strict=strict)


def run_cli(capsys: Any, *args: str) -> tuple[int, str, str]:
    """Run ``schedlab ARGS`` in this process, as a test does: returns the exit code
    (0 when the command returns), standard output and standard error, read from
    pytest's ``capsys`` fixture.

    >>> code, out, err = run_cli(capsys, "info", "trace.swf")   # doctest: +SKIP
    """
    from .cli import main

    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


@contextlib.contextmanager
def using_registry(registry: Registry) -> Iterator[Registry]:
    """Make ``registry`` the process-wide one inside the block (for code that does not
    take a ``registry=`` argument, such as the CLI); the previous one is restored."""
    previous = set_registry(registry)
    try:
        yield registry
    finally:
        set_registry(previous)


# ------------------------------------------------------------ golden schedules


def workload_from_rows(
    rows: Sequence[Sequence[float] | Mapping[str, Any]],
    procs: int | None = None,
    fields: Sequence[str] = ("submit_time", "run_time", "requested_processors", "requested_time"),
) -> Workload:
    """A workload of hand-made jobs, numbered 1, 2, 3 ... in the order given.

    Each row is a tuple of values for ``fields`` (by default submit time, run time,
    processors, requested time; a shorter tuple leaves the rest unknown) or a mapping
    of SWF field names to values. ``procs`` sets the header's ``MaxProcs`` (the
    machine size the simulator uses).

    >>> w = workload_from_rows([(0, 10, 4, 10), (1, 5, 2, 20)], procs=4)
    >>> [j.requested_processors for j in w]
    [4, 2]
    """
    jobs = []
    for number, row in enumerate(rows, 1):
        values = dict(row) if isinstance(row, Mapping) else dict(zip(fields, row, strict=False))
        unknown = set(values) - set(SWF_FIELDS)
        if unknown:
            raise ValueError(f"row {number}: not SWF fields: {', '.join(sorted(unknown))}")
        values.setdefault("job_number", number)
        jobs.append(Job(**values))
    header = Header()
    if procs is not None:
        header.set("MaxProcs", procs)
    return Workload.from_jobs(jobs, header)


def simulated_starts(workload: Workload, **simulate_options: Any) -> dict[int, float]:
    """``{job number: simulated start time}`` of every simulated job.

    ``simulate_options`` go to :func:`schedlab.simulate` (``policy=``, ``backfill=``,
    ``procs=``, ``registry=`` ...); the progress bar is off. Jobs the simulator
    excluded (no size, larger than the machine ...) are absent from the result.
    A simulated job without a job number, or a number used by two jobs, is a
    :class:`ValueError`: its start could not be told apart.
    """
    from .sim.api import simulate

    simulate_options.setdefault("progress", False)
    result = simulate(workload, **simulate_options)
    starts: dict[int, float] = {}
    for job in result.workload:
        number, start = job.job_number, job.start_time
        if number is None:
            raise ValueError(f"a job submitted at {job.submit_time} has no job number")
        if number in starts:
            raise ValueError(f"job number {number} is used by more than one job")
        if start is None:  # every simulated job has a submit time and a wait
            raise ValueError(f"job {number} was simulated without a start time")
        starts[int(number)] = start
    return starts


def assert_schedule(
    workload: Workload, expected: Mapping[int, float], **simulate_options: Any
) -> dict[int, float]:
    """Simulate and check every job's start time against ``expected`` (a golden
    schedule worked out by hand: ``{job number: start}``). Raises
    :class:`AssertionError` listing every job that started elsewhere, or that is
    missing or unexpected; returns the simulated starts.

    >>> w = workload_from_rows([(0, 10, 4, 10), (1, 10, 2, 20), (2, 5, 2, 5)], procs=4)
    >>> assert_schedule(w, {1: 0, 2: 10, 3: 10}, policy="fcfs", backfill="none")
    ... # doctest: +SKIP
    """
    got = simulated_starts(workload, **simulate_options)
    problems = []
    for number in sorted(set(expected) | set(got)):
        if number not in got:
            problems.append(
                f"job {number}: expected to start at {expected[number]}, but it was not simulated"
            )
        elif number not in expected:
            problems.append(f"job {number}: started at {got[number]}, not in the golden schedule")
        elif not math.isclose(got[number], expected[number], abs_tol=1e-9):
            problems.append(f"job {number}: started at {got[number]}, expected {expected[number]}")
    if problems:
        options = ", ".join(
            f"{k}={v!r}" for k, v in simulate_options.items() if k not in ("registry", "progress")
        )
        raise AssertionError(f"schedule differs ({options}):\n  " + "\n  ".join(problems))
    return got


# ------------------------------------------------------------------ round trips


def _same(a: Any, b: Any, rel: float) -> bool:
    if a is None or b is None:
        missing_a = a is None or (isinstance(a, float) and math.isnan(a))
        missing_b = b is None or (isinstance(b, float) and math.isnan(b))
        return missing_a and missing_b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=rel, abs_tol=rel)
    return a == b


def assert_same_jobs(
    first: Workload | Iterable[Job],
    second: Workload | Iterable[Job],
    fields: Sequence[str] = SWF_FIELDS,
    rel: float = 1e-9,
) -> None:
    """Check that two workloads hold the same jobs, in order, on ``fields`` (default
    the 18 SWF fields; add ``"name"``, ``"hosts"`` ... for rich fields). ``None`` and
    ``NaN`` count as equal; numbers are compared with relative tolerance ``rel``.
    Raises :class:`AssertionError` naming the first differences."""
    a, b = list(first), list(second)
    problems = []
    if len(a) != len(b):
        problems.append(f"{len(a)} jobs != {len(b)} jobs")
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        for field in fields:
            vx, vy = getattr(x, field), getattr(y, field)
            if not _same(vx, vy, rel):
                problems.append(
                    f"job #{index + 1} (number {x.job_number}): {field}: {vx!r} != {vy!r}"
                )
        if len(problems) >= 20:
            problems.append("...")
            break
    if problems:
        raise AssertionError("workloads differ:\n  " + "\n  ".join(problems))


def round_trip(
    workload: Workload,
    format: str,
    directory: str | os.PathLike[str] | None = None,
    suffix: str = "",
    registry: Registry | None = None,
    write_options: Mapping[str, Any] | None = None,
    read_options: Mapping[str, Any] | None = None,
) -> Workload:
    """Write ``workload`` with writer ``format`` and read it back with the reader of
    the same name (in ``directory``, default a temporary one that is removed)."""
    from .api import read, write

    with contextlib.ExitStack() as stack:
        if directory is None:
            directory = stack.enter_context(tempfile.TemporaryDirectory())
        path = Path(directory) / f"round-trip{suffix}"
        write(workload, path, format, registry=registry, **dict(write_options or {}))
        back = read(path, format, registry=registry, **dict(read_options or {}))
        if back.is_streaming:  # materialise before the file goes away
            back.jobs  # noqa: B018
        return back


def assert_file_round_trip(
    path: str | os.PathLike[str],
    format: str | None = None,
    directory: str | os.PathLike[str] | None = None,
    registry: Registry | None = None,
    read_options: Mapping[str, Any] | None = None,
) -> Workload:
    """Check that reading ``path`` and writing it back in the same format gives the
    same bytes (compression aside: the texts are compared). ``format`` defaults to
    the reader detected for the file, whose writer must have the same name. Returns
    the workload read."""
    from ._io import open_binary
    from .api import read, write

    workload = read(path, format, registry=registry, **dict(read_options or {}))
    name = format or workload.meta["reader"]
    with contextlib.ExitStack() as stack:
        if directory is None:
            directory = stack.enter_context(tempfile.TemporaryDirectory())
        out = Path(directory) / Path(path).name
        write(workload, out, name, registry=registry)
        with open_binary(path) as fh:
            original = fh.read()
        with open_binary(out) as fh:
            copy = fh.read()
    if original != copy:
        old, new = original.splitlines(), copy.splitlines()
        for number, (x, y) in enumerate(zip(old, new, strict=False), 1):
            if x != y:
                raise AssertionError(
                    f"{path}: line {number} differs after a {name} round trip:\n"
                    f"  read:    {x[:200]!r}\n  written: {y[:200]!r}"
                )
        raise AssertionError(
            f"{path}: {len(old)} lines read, {len(new)} written after a {name} round trip"
        )
    return workload


# ------------------------------------------------------------ pytest fixtures

try:  # the fixtures need pytest; the helpers above do not
    import pytest
except ImportError:  # pragma: no cover - pytest is absent outside test runs
    pytest = None  # type: ignore[assignment]

if pytest is not None:

    @pytest.fixture()
    def schedlab_registry() -> Iterator[Any]:
        """Factory fixture: ``schedlab_registry(*plugins, builtins=True)`` returns a
        fresh :func:`plugin_registry` and makes it the process-wide registry until the
        test ends (so the CLI and ``schedlab.read`` without ``registry=`` use it)."""
        previous = set_registry(None)

        def make(*plugins: Any, builtins: bool = True, strict: bool = True) -> Registry:
            registry = plugin_registry(*plugins, builtins=builtins, strict=strict)
            set_registry(registry)
            return registry

        try:
            yield make
        finally:
            set_registry(previous)
