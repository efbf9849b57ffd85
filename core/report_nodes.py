"""The node-level figures of ``schedlab report`` for a schedule simulated on a
platform: a resource Gantt chart (nodes on the vertical axis, one bar per job on
each node it held, as evalys draws Batsim schedules) for a time window, and the
utilization of each resource dimension over time.

They read what a platform run leaves in the schedule: the job extras
``schedlab.nodes`` (node names) and ``schedlab.held`` (``cores=8 memory=...``: the
amounts a job held in total), and the workload meta ``platform`` (node names,
dimensions, capacities). A schedule without them (a single pool, or a format that
dropped the extras) gets neither figure.

The interactive page (:mod:`schedlab.report_charts`) draws the node Gantt chart
with Bokeh from :func:`node_page_data`: the node names and every job's node indices,
columnar (a count per job and one flat array of indices), aligned with the job
table of :func:`schedlab.report_data.page_data`. The static page (``--static``)
keeps the PNG of :func:`figure_node_gantt`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .model import HELD_EXTRA, NODES_EXTRA, PARTITION_EXTRA, JobColumns, Workload
from .plotting import PAGE_WIDTH, new_figure

#: Jobs started in the default Gantt window (the first ones by start time).
WINDOW_JOBS = 200
#: Most bars (one per job per node it held) the page draws for one window; a
#: wider window asks for a narrower one, as the job Gantt chart does.
NODE_BARS = 200_000


def node_schedule(workload: Workload) -> dict[str, Any] | None:
    """``{"nodes", "partitions", "partition_cores", "job_partition", "dims",
    "capacity", "unbounded", "held", "allocations"}`` from a platform run's schedule
    (``partitions``: each partition's node indices and ``partition_cores`` its
    cores, empty when not recorded; ``job_partition``: each
    job's partition name or ""; ``held``: ``(jobs, dims)`` amounts;
    ``allocations``: the node indices of each job), or ``None``."""
    meta = workload.meta.get("platform")
    cols = workload.to_arrays()
    extras = [j.extras for j in workload.jobs] if workload.has_job_objects() else cols.extras
    if not meta or extras is None:
        return None
    names = list(meta["nodes"])
    index = {name: i for i, name in enumerate(names)}
    dims = list(meta["dims"])
    held = np.zeros((len(cols), len(dims)))
    allocations: list[list[int]] = []
    for row, extra in enumerate(extras):
        nodes = (extra or {}).get(NODES_EXTRA)
        if nodes is None:
            return None
        allocations.append([index[n] for n in str(nodes).split()])
        for part in str(extra.get(HELD_EXTRA, "")).split():
            key, _, value = part.partition("=")
            if key in dims:
                held[row, dims.index(key)] = float(value)
    partitions = {str(k): list(v) for k, v in (meta.get("partitions") or {}).items()}
    return {
        "nodes": names,
        # each partition's node indices; each job's partition ("" when not recorded)
        "partitions": partitions,
        "partition_cores": {
            str(k): float(v) for k, v in (meta.get("partition_cores") or {}).items()
        },
        "job_partition": [str((extra or {}).get(PARTITION_EXTRA, "")) for extra in extras],
        "dims": dims,
        "capacity": np.asarray(meta["capacity"], dtype=np.float64),
        # Schedules made before it was recorded: the earlier rule (a sum this
        # large held an unbounded node).
        "unbounded": list(
            meta.get("unbounded") or [c >= 2**48 for c in np.asarray(meta["capacity"])]
        ),
        "held": held,
        "allocations": allocations,
    }


def node_page_data(nodes: dict[str, Any], rows: np.ndarray) -> dict[str, Any]:
    """The node Gantt chart's data for the page, for the jobs ``rows`` (a boolean
    mask or indices into the schedule, in the order of the page's job table):
    ``names`` (node names, row order of the chart), ``count`` (nodes held by each
    job) and ``node`` (their indices into ``names``, job after job), the integer
    arrays in the compact types of :func:`schedlab.report_data.compact_int`."""
    from .report_data import compact_int

    chosen = np.arange(len(nodes["allocations"]))[rows]
    held = [nodes["allocations"][j] for j in chosen.tolist()]
    counts = np.fromiter((len(a) for a in held), dtype=np.int64, count=len(held))
    flat = np.fromiter((n for a in held for n in a), dtype=np.int64, count=int(counts.sum()))
    placed = nodes.get("job_partition") or [""] * len(nodes["allocations"])
    used = {placed[j] for j in chosen.tolist()} - {""}
    known = list(nodes.get("partitions") or {})  # the platform's order, then any other
    parts = [p for p in known if p in used] + sorted(used - set(known))
    if len(known) < 2 and len(parts) < 2:
        parts = []  # one partition: the hover does not name it
    code = {name: i for i, name in enumerate(parts)}
    part = np.array([code.get(placed[j], -1) for j in chosen.tolist()], dtype=np.int64)
    return {
        "names": list(nodes["nodes"]),
        "count": compact_int(counts),
        "node": compact_int(flat),
        "blocks": partition_blocks(nodes),
        "part_names": parts,
        "part": compact_int(part),
    }


def partition_blocks(nodes: dict[str, Any]) -> list[tuple[int, int, str]]:
    """The node chart's rows by partition: ``(first row, last row + 1, label)`` of
    each run of consecutive nodes in the same partitions (label: their names, by
    commas; "no partition" for nodes in none). Empty for a platform of one
    partition or when the partitions' nodes were not recorded."""
    partitions = nodes.get("partitions") or {}
    if len(partitions) < 2:
        return []
    member: list[list[str]] = [[] for _ in nodes["nodes"]]
    for name, indices in partitions.items():
        for i in indices:
            member[int(i)].append(name)
    labels = [", ".join(m) or "no partition" for m in member]
    blocks: list[tuple[int, int, str]] = []
    for i, label in enumerate(labels):
        if blocks and blocks[-1][2] == label:
            blocks[-1] = (blocks[-1][0], i + 1, label)
        else:
            blocks.append((i, i + 1, label))
    return blocks


def _shares_nodes(columns: JobColumns, nodes: dict[str, Any]) -> bool:
    """Whether some node held two jobs at the same time (a shared node: their bars
    overlap on its row of the node Gantt chart). Jobs of zero length or unknown
    times hold nothing."""
    start = columns["submit_time"] + columns["wait_time"]
    end = start + columns["run_time"]
    held = nodes["allocations"]
    counts = np.fromiter((len(a) for a in held), dtype=np.int64, count=len(held))
    node = np.fromiter((n for a in held for n in a), dtype=np.int64, count=int(counts.sum()))
    job = np.repeat(np.arange(len(held)), counts)
    first, last = start[job], end[job]
    keep = last > first  # False for NaN too
    node, first, last = node[keep], first[keep], last[keep]
    order = np.lexsort((last, first, node))
    node, first, last = node[order], first[order], last[order]
    # by node, then start: a node holds two jobs at once iff some job starts on it
    # before the one just before it on that node ends
    return bool(np.any((node[1:] == node[:-1]) & (first[1:] < last[:-1])))


def default_window(columns: JobColumns) -> tuple[float, float]:
    """From the first start to the end of the :data:`WINDOW_JOBS`-th started job."""
    start = columns["submit_time"] + columns["wait_time"]
    end = start + columns["run_time"]
    ok = ~np.isnan(start)
    order = np.sort(start[ok])
    if not len(order):
        return 0.0, 0.0
    last = order[min(WINDOW_JOBS, len(order)) - 1]
    ends = end[ok & (start <= last)]
    return float(order[0]), float(ends.max())


def figure_node_gantt(
    columns: JobColumns,
    nodes: dict[str, Any],
    window: tuple[float, float],
    origin: float | None = None,
) -> Any:
    """Nodes on the vertical axis, time on the horizontal; a bar per job per node
    it held, coloured by job, for the jobs running in ``window`` (on the trace's
    clock). The time axis reads seconds (or hours) since ``origin``: by default
    the first submission, the clock of the page's other charts and of
    ``--window``."""
    from .report_data import clock_of

    start = columns["submit_time"] + columns["wait_time"]
    end = start + columns["run_time"]
    t0, t1 = window
    if origin is None:
        origin = clock_of(columns)[0]
    shown = np.flatnonzero((start < t1) & (end > t0))
    fig, ax = new_figure(PAGE_WIDTH * 0.75, min(8.0, 1.5 + 0.05 * len(nodes["nodes"])))
    colours = [f"C{i % 10}" for i in range(10)]
    span = max(t1 - t0, 1e-9)
    unit, scale = ("h", 3600.0) if span > 7200 else ("s", 1.0)
    for k, j in enumerate(shown.tolist()):
        for node in nodes["allocations"][j]:
            ax.barh(
                node,
                (min(end[j], t1) - max(start[j], t0)) / scale,
                left=(max(start[j], t0) - origin) / scale,
                height=0.9,
                color=colours[k % 10],
                edgecolor="white",
                linewidth=0.3,
            )
    count = len(nodes["nodes"])
    ax.set_ylim(count - 0.5, -0.5)
    step = max(1, count // 20)
    ticks = list(range(0, count, step))
    ax.set_yticks(ticks, [nodes["nodes"][i] for i in ticks])
    ax.set_ylabel("Node")
    ax.set_xlabel(f"Time since first submission ({unit})")
    if t1 > t0:
        ax.set_xlim((t0 - origin) / scale, (t1 - origin) / scale)
    else:  # a window of no length (a run of zero length): one second around it
        ax.set_xlim((t0 - origin) / scale - 0.5 / scale, (t0 - origin) / scale + 0.5 / scale)
    blocks = partition_blocks(nodes)
    if blocks:
        # each partition's rows: a line between blocks, its name on the right
        right = ax.secondary_yaxis("right")
        right.set_yticks(
            [(first + last - 1) / 2 for first, last, _ in blocks],
            [label for *_, label in blocks],
        )
        right.tick_params(length=0)
        for first, _, _ in blocks[1:]:
            ax.axhline(first - 0.5, color="#333333", lw=0.8, ls="--")
    ax.grid(axis="y", visible=False)
    return fig


def dimension_steps(
    columns: JobColumns, nodes: dict[str, Any], origin: float | None = None
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Utilization (%) of each bounded dimension (cores, memory, GPUs ...) over
    time as a step function ``(seconds since origin, level)`` (``origin``: the
    first start by default); unbounded dimensions and empty ones are left out. On a
    platform of several partitions, also ``"cores of NAME"``: the cores held by
    each partition's jobs over the partition's cores.
    One level per distinct time, after every start and end at that time (a job
    starting as another ends is never counted with it: the level stays within
    what the simulator allowed)."""
    start = columns["submit_time"] + columns["wait_time"]
    end = start + columns["run_time"]
    ok = ~np.isnan(start)
    if origin is None:
        origin = float(start[ok].min())
    out = {}

    def steps(rows: np.ndarray, d: int, cap: float) -> tuple[np.ndarray, np.ndarray]:
        amount = nodes["held"][rows, d]
        times = np.concatenate((start[rows], end[rows]))
        deltas = np.concatenate((amount, -amount))
        order = np.argsort(times, kind="stable")
        t, level = times[order], np.cumsum(deltas[order])
        last = np.ones(len(t), dtype=bool)  # the level after the last event of a time
        last[:-1] = t[1:] != t[:-1]
        return t[last] - origin, level[last] / cap * 100

    for d, name in enumerate(nodes["dims"]):
        cap = nodes["capacity"][d]
        if not cap > 0 or nodes["unbounded"][d]:
            continue  # none of it, or some node unbounded (schedlab.sim.resources.UNBOUNDED)
        out[name] = steps(ok, d, cap)
    cores = nodes.get("partition_cores") or {}
    placed = np.asarray(nodes.get("job_partition") or [], dtype=object)
    if len(cores) > 1 and "cores" in nodes["dims"] and len(placed) == len(ok):
        # the cores held by each partition's jobs over its own cores (schedlab
        # simulate's per-partition "cores held", over time)
        for part, cap in cores.items():
            if cap > 0:
                out[f"cores of {part}"] = steps(
                    ok & (placed == part), nodes["dims"].index("cores"), cap
                )
    return out


def figure_dimension_usage(columns: JobColumns, nodes: dict[str, Any]) -> Any:
    """Utilization of each bounded dimension (cores, memory, GPUs ...) over time."""
    start = columns["submit_time"] + columns["wait_time"]
    end = start + columns["run_time"]
    ok = ~np.isnan(start)
    fig, ax = new_figure(PAGE_WIDTH * 0.75, 2.6)
    span = float(end[ok].max()) - float(start[ok].min())
    unit, scale = ("days", 86400.0) if span > 3 * 86400 else ("h", 3600.0)
    for name, (times, level) in dimension_steps(columns, nodes).items():
        ax.step(times / scale, level, where="post", lw=0.8, label=name)
    ax.set_ylabel("Utilization (%)")
    ax.set_ylim(0, 105)
    ax.set_xlabel(f"Time since first start ({unit})")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=4, frameon=False)
    return fig


__all__ = [
    "NODE_BARS",
    "default_window",
    "dimension_steps",
    "figure_dimension_usage",
    "figure_node_gantt",
    "node_page_data",
    "node_schedule",
    "partition_blocks",
]
