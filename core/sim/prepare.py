"""Turn a workload into the simulator's inputs: exclusions, the kill rule, job
order, dependencies, and the :class:`~schedlab.sim.protocols.JobTable`.

Decisions (also in docs/simulation.md):

* A job's size is its requested processors when known and positive, else its
  allocated processors (rounded up to a whole processor).
* Excluded, with the first reason that applies: no submit time (unknown or
  infinite); no size (unknown or 0); larger than the machine; no run time (unknown,
  negative or infinite). A run time of 0 is legal: the job starts and ends at the
  same instant.
* Jobs are simulated in submit-time order; equal submit times keep workload order.
  This order is the "job order" that breaks every tie.
* Kill rule (``kill=True``): a job whose run time exceeds its known requested time
  runs for the requested time and is marked killed. A negative requested time
  (SWF's -1) is unknown.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ..model import SWF_FIELDS, JobColumns, Workload
from .protocols import JobTable
from .result import EXCLUSION_REASONS


@attrs.define(slots=True, eq=False)
class Prepared:
    """Everything the engine needs, computed once with numpy."""

    table: JobTable
    #: Input row of each simulated job, in simulation (job index) order.
    order: np.ndarray
    #: ``{reason: input rows}`` of excluded jobs.
    excluded: dict[str, np.ndarray]
    killed: np.ndarray
    #: Trace submit time per job index.
    original_submit: np.ndarray
    #: Per job index: index of the job it waits for (``-1``: none) and the think time
    #: (without dependencies, compact arrays of ``-1`` and ``0.0``: 5 bytes a job).
    predecessor: Sequence[int]
    think_time: Sequence[float]
    dependencies_ignored: int = 0
    #: With a platform: each job's demand and partition index, in job order
    #: (see :mod:`schedlab.sim.requests`), and the request-building counts.
    demand: list[Any] | None = None
    partition_of: list[int] | None = None
    request_notes: dict[str, int] = attrs.field(factory=dict)
    #: The table's ``size``, ``run_time``, ``user`` and ``requested_time`` as numpy
    #: arrays (int64, float64, int64, float64), for whole runs
    #: (:mod:`schedlab.sim.whole_run`); ``None``: build them from the lists.
    size_array: np.ndarray | None = None
    run_time_array: np.ndarray | None = None
    user_array: np.ndarray | None = None
    requested_array: np.ndarray | None = None
    #: With a platform: ``partition_of`` as an int64 array (whole runs).
    partition_array: np.ndarray | None = None


def _ints(values: np.ndarray) -> np.ndarray:
    """``values`` as int64 (NaN: ``-1``)."""
    return np.where(np.isnan(values), -1, values).astype(np.int64)


def _int_list(values: np.ndarray) -> list[int]:
    return _ints(values).tolist()


def _int_array(values: np.ndarray) -> array[int]:
    """``values`` (NaN: ``-1``) as a compact ``array('q')``: 8 bytes a job instead of
    a list's pointer and int object (these columns are rarely read per job)."""
    out = array("q")
    out.frombytes(np.where(np.isnan(values), -1, values).astype(np.int64).tobytes())
    return out


def _shared_floats(values: np.ndarray) -> list[float]:
    """``values.tolist()`` with one float object per distinct value (requested times
    repeat a lot, run and submit times often): the same values, less memory (a
    list of ``n`` distinct floats costs 32 bytes a job). ``-0.0`` is kept as it is:
    such columns are listed plainly."""
    if len(values) < 1024 or bool(np.any(np.signbit(values) & (values == 0))):
        return values.tolist()
    distinct, index = np.unique(values, return_inverse=True)
    if 2 * len(distinct) > len(values):
        return values.tolist()
    objects = distinct.tolist()
    return [objects[i] for i in index.tolist()]


class OrderedColumns(Mapping[str, np.ndarray]):
    """Every SWF column of the simulated jobs in job order, as
    :attr:`JobTable.columns <schedlab.sim.protocols.JobTable.columns>` gives them:
    each column is gathered from the workload's on first access (most runs read
    none, and the 18 of them cost 144 bytes a job)."""

    __slots__ = ("_cache", "_order", "_source")

    def __init__(self, source: JobColumns, order: np.ndarray) -> None:
        self._source = source
        self._order = order
        self._cache: dict[str, np.ndarray] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        column = self._cache.get(name)
        if column is None:
            if name not in SWF_FIELDS:
                raise KeyError(name)
            column = self._cache[name] = self._source[name][self._order]
        return column

    def __iter__(self) -> Iterator[str]:
        return iter(SWF_FIELDS)

    def __len__(self) -> int:
        return len(SWF_FIELDS)


def prepare(
    workload: Workload,
    procs: int,
    kill: bool,
    dependencies: bool,
    requests: Callable[[JobColumns, np.ndarray], Any] | None = None,
) -> tuple[Prepared, JobColumns]:
    """Compute the exclusions, job order, effective run times and job table.

    ``requests(columns, size)`` (with a platform) returns a
    :class:`~schedlab.sim.requests.Requests` whose exclusion reasons follow the
    base ones."""
    cols = workload.to_arrays()
    submit = cols["submit_time"]
    req_procs = cols["requested_processors"]
    alloc = cols["allocated_processors"]
    run = cols["run_time"]
    with np.errstate(invalid="ignore"):
        size = np.where(req_procs > 0, req_procs, alloc)
        size = np.ceil(size)
        reasons = (
            ~np.isfinite(submit),  # unknown, or infinite (a hand-made or plugin table)
            ~(size > 0),
            size > procs,
            ~((run >= 0) & (run < np.inf)),  # unknown, negative or infinite
        )
    excluded: dict[str, np.ndarray] = {}
    taken = np.zeros(len(cols), dtype=bool)
    for name, mask in zip(EXCLUSION_REASONS, reasons, strict=True):
        hit = mask & ~taken
        excluded[name] = np.flatnonzero(hit)
        taken |= hit
    built = None
    if requests is not None:
        built = requests(cols, np.where(taken, np.nan, size))
        for name, mask in built.reasons.items():
            hit = mask & ~taken
            excluded[name] = np.flatnonzero(hit)
            taken |= hit
    rows = np.flatnonzero(~taken)
    order = rows[np.argsort(submit[rows], kind="stable")]

    requested = cols["requested_time"][order]
    with np.errstate(invalid="ignore"):
        # A negative requested time is unknown (SWF's -1, as given to
        # Workload.from_arrays): it kills no job and the estimator falls back.
        requested = np.where(requested >= 0, requested, np.nan)
    run_o = run[order]
    with np.errstate(invalid="ignore"):
        killed = (run_o > requested) if kill else np.zeros(len(order), dtype=bool)
    eff_run = np.where(killed, requested, run_o)
    submit_o = submit[order]

    size_o = size[order].astype(np.int64)
    user_o = _ints(cols["user_id"][order])
    table = JobTable(
        procs=procs,
        row=order.data,  # (a memoryview of `order`: the same numbers, no copy)
        job_number=_int_array(cols["job_number"][order]),
        submit=_shared_floats(submit_o),
        size=size_o.tolist(),
        requested_time=_shared_floats(requested),
        run_time=_shared_floats(eff_run),
        estimate=[math.nan] * len(order),
        user=user_o.tolist(),
        group=_int_list(cols["group_id"][order]),
        queue=_int_list(cols["queue_number"][order]),
        partition=_int_list(cols["partition_number"][order]),
        columns=OrderedColumns(cols, order),
    )
    n = len(order)
    predecessor: Sequence[int] = array("b", [-1]) * n
    think: Sequence[float] = array("f", [0.0]) * n
    ignored = 0
    if dependencies:
        predecessor, think, ignored = _dependencies(cols, order, table)
    prepared = Prepared(
        table=table,
        order=order,
        excluded=excluded,
        killed=killed,
        original_submit=submit_o,
        predecessor=predecessor,
        think_time=think,
        dependencies_ignored=ignored,
        size_array=size_o,
        run_time_array=eff_run,
        user_array=user_o,
        requested_array=requested,
    )
    if built is not None:
        rows_o = order.tolist()
        prepared.demand = [built.demand[r] for r in rows_o]
        partition = built.partition[order].astype(np.int64, copy=False)
        prepared.partition_array = partition
        prepared.partition_of = partition.tolist()
        prepared.request_notes = {
            "default_partition": int(np.count_nonzero(built.defaulted_mask[order])),
            "memory_unknown": _memory_unknown(built, order, partition),
        }
    return prepared, cols


def _memory_unknown(built: Any, order: np.ndarray, partition: np.ndarray) -> int:
    """The jobs that asked no memory and were simulated holding none of it: those
    placed in a shared partition with a node that declares memory. On exclusive
    nodes such a job holds its nodes' whole memory, and memory no node declares is
    not simulated: neither is counted (docs/platform.md, Output)."""
    machine = built.machine
    declared = np.array([g.memory is not None for g in machine.platform.node_groups], dtype=bool)
    counts = [int(g.count) for g in machine.platform.node_groups]
    node_declares = np.repeat(declared, counts)
    counted = np.array(
        [not p.exclusive and bool(node_declares[p.nodes].any()) for p in machine.partitions],
        dtype=bool,
    )
    asked_none = built.memory_unknown_mask[order]
    return int(np.count_nonzero(asked_none & counted[partition]))


#: Status codes of checkpoint/swap records (SWF field 11).
_PARTIAL_STATUS = (2.0, 3.0, 4.0)


def _dependencies(
    cols: JobColumns, order: np.ndarray, table: JobTable
) -> tuple[list[int], list[float], int]:
    """Resolve SWF preceding-job numbers to job indices.

    A dependency is honoured when the preceding job is simulated and comes earlier
    in job order; otherwise (unknown or excluded job, or one submitted later, which
    would allow cycles) it is ignored and counted. The think time is field 18 when
    known, else the gap between the predecessor's recorded end and the job's
    recorded submission (0 if that is unknown or negative). A preceding job whose
    records are a run of checkpoint/swap records (status 2, 3, 4 on consecutive
    rows of one job number: a ``Preemption: Yes`` log) terminates with its last
    simulated record, so the dependency is on that one.
    """
    n = len(order)
    index_of: dict[int, int] = {}
    for i, number in enumerate(table.job_number):
        if number >= 0:
            index_of.setdefault(number, i)
    status_all = cols["status"]
    partial_all = np.isin(status_all, _PARTIAL_STATUS)
    if partial_all.any():
        numbers_all = cols["job_number"]
        index_at = np.full(len(status_all), -1, dtype=np.int64)
        index_at[order] = np.arange(n, dtype=np.int64)
        order_list = order.tolist()
        for number, i in list(index_of.items()):
            r = int(order_list[i])
            if not partial_all[r]:
                continue
            r += 1
            while r < len(status_all) and partial_all[r] and numbers_all[r] == number:
                if index_at[r] >= 0:
                    index_of[number] = int(index_at[r])
                r += 1
    pred_numbers = _int_list(cols["preceding_job_number"][order])
    think_col = cols["think_time"][order].tolist()
    wait = cols["wait_time"][order]
    rec_end = (table.columns["submit_time"] + wait + cols["run_time"][order]).tolist()
    submit = table.submit
    predecessor = [-1] * n
    think = [0.0] * n
    ignored = 0
    for i, number in enumerate(pred_numbers):
        if number < 0:
            continue
        p = index_of.get(number, -1)
        if p < 0 or p >= i:
            ignored += 1
            continue
        predecessor[i] = p
        t = think_col[i]
        if t != t or t < 0:  # unknown: the recorded gap
            gap = submit[i] - rec_end[p]
            t = gap if gap == gap and gap > 0 else 0.0
        think[i] = float(t)
    return predecessor, think, ignored
