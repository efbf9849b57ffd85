"""Benchmark: events per second reading a generated Google v3 trace.

Generates a multi-shard trace of about ``--events`` rows (all five tables, int64
values as JSON strings as in the BigQuery export) into a temporary directory, then
reads it

* in-process (``engine="auto"``: pyarrow's JSON parser when installed), with
  tasks (the default, lossless) and with ``tasks=False`` (job totals only), and
* on local Dask clusters of 1 and 2 single-threaded worker processes, with and
  without tasks (without, the client only joins job totals: the scaling of the
  workers shows),

and prints events/second for each (events = rows of all tables). Every run is a
fresh child process, so its peak memory (max RSS) is its own; CPU time is
reported beside wall time, because the development machine is shared (the load
average before each run is printed too). Cluster start-up is excluded from the
Dask timings and printed separately.

    python benchmarks/bench_google_read.py                  # 5,000,000 events
    python benchmarks/bench_google_read.py --events 500000 --skip-dask
    python benchmarks/bench_google_read.py --dir /tmp/g5m   # reuse a generated trace
    python benchmarks/bench_google_read.py --wait-idle 300  # on a shared machine
    python benchmarks/bench_google_read.py --dir /tmp/g1m --events 1000000 --skip-dask \
        --baseline /work/main/.venv/bin/python --phases     # before/after, and where

``--baseline PYTHON`` also times the in-process reads with another interpreter (for
example the virtual environment of an older checkout: its own ``schedlab``), each
baseline run right after the same run of this checkout, so both see the same load.
``--phases`` prints the CPU seconds of each phase of one in-process read with
tasks, the shards parsed one after the other on the calling thread (so each phase
is timed alone; pyarrow may use its own threads, counted in the process CPU time),
and pyarrow's JSON parser alone on the same decompressed blocks on one thread: the
rate no reader built on it can pass per core.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROWS_PER_COLLECTION = 24.8  # measured on the generator's default mix
TARGET = 300_000


def _generate(directory: Path, events: int, shards: int) -> int:
    from schedlab.formats.google.fixtures import generate_trace

    marker = directory / "bench.json"
    if marker.exists():
        return json.loads(marker.read_text())["events"]
    collections = max(1, int(events / ROWS_PER_COLLECTION))
    start = time.perf_counter()
    trace = generate_trace(
        directory, collections=collections, shards=shards, seed=1, styles=("bigquery",)
    )
    seconds = time.perf_counter() - start
    print(
        f"generated {trace.events:,} events ({collections:,} collections, {shards} shards "
        f"per table) in {seconds:.1f} s: {trace.rows}"
    )
    marker.write_text(json.dumps({"events": trace.events, "rows": trace.rows}))
    return trace.events


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _run_in_process(directory: Path, events: int, engine: str, tasks: bool) -> dict:
    import schedlab
    import schedlab.formats.google.v3_reader

    start = time.perf_counter()
    cpu = time.process_time()
    workload = schedlab.read(directory, format="google", engine=engine, tasks=tasks)
    jobs = len(workload.jobs)
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu
    return {
        "run": f"in-process ({workload.meta['engine']}, tasks={tasks})",
        "seconds": wall,
        "cpu_seconds": cpu,
        "events_per_s": events / wall,
        "events_per_cpu_s": events / cpu,
        "jobs": jobs,
        "peak_mib": _peak_mib(),
    }


def _run_phases(directory: Path, events: int) -> dict:
    """CPU seconds per phase of one in-process read with tasks, shards parsed one
    after the other on this thread; then pyarrow's parser alone."""
    import collections
    from collections.abc import Iterator

    cpu = time.process_time
    phases: collections.Counter[str] = collections.Counter()
    start = cpu()
    import schedlab
    import schedlab.formats.google.v3_reader as v3
    from schedlab.formats.google import arrow_parse, assemble

    phases["import schedlab and the reader"] = cpu() - start
    import pyarrow as pa
    import pyarrow.json as pj

    start = cpu()
    from schedlab import registry

    registry.get_registry()
    phases["plugin registry (first read of a process)"] = cpu() - start

    def timed(module: object, name: str, label: str) -> None:
        inner = getattr(module, name)

        def wrapper(*args: object, **kwargs: object) -> object:
            begin = cpu()
            try:
                return inner(*args, **kwargs)
            finally:
                phases[label] += cpu() - begin

        setattr(module, name, wrapper)

    read_json = pj.read_json

    def parse_json(*args: object, **kwargs: object) -> object:
        begin = cpu()
        try:
            return read_json(*args, **kwargs)
        finally:
            phases["pyarrow.json.read_json"] += cpu() - begin

    pj.read_json = parse_json
    inflate = arrow_parse._inflate

    def inflated(path: str) -> Iterator[bytes]:
        pieces = inflate(path)
        while True:
            begin = cpu()
            piece = next(pieces, None)
            phases["inflate (gzip)"] += cpu() - begin
            if piece is None:
                return
            yield piece

    arrow_parse._inflate = inflated
    timed(arrow_parse, "_Schema", "types from each shard's head (json)")
    timed(arrow_parse, "_sample", "types from each shard's head (json)")
    timed(arrow_parse, "_newlines", "rest of the block parse (line ends, checks)")
    timed(arrow_parse, "_convert_arrow", "Arrow columns -> numpy")
    timed(arrow_parse, "_sparse_values", "repeated fields (regex + json)")
    timed(arrow_parse, "_parse_block", "(block parse)")
    timed(v3, "concat_frames", "reduce, merge and combine (numpy)")
    for name in (
        "reduce_collection_events",
        "reduce_instance_events",
        "reduce_usage",
        "merge_instances",
        "combine",
    ):
        timed(v3, name, "reduce, merge and combine (numpy)")
    timed(assemble, "event_lists", "tasks: event lists, records, Task objects")
    timed(assemble, "build_tasks", "tasks: event lists, records, Task objects")
    timed(v3, "build_workload", "jobs: records, Job objects, workload")
    serial = v3.reduce_in_process

    def one_thread(*args: object, **kwargs: object) -> object:
        kwargs["threads"] = 1
        return serial(*args, **kwargs)

    v3.reduce_in_process = one_thread
    begin, wall = cpu(), time.perf_counter()
    workload = schedlab.read(directory, format="google", tasks=True)
    total, wall = cpu() - begin, time.perf_counter() - wall
    block = phases.pop("(block parse)")
    inside = ("pyarrow.json.read_json", "Arrow columns -> numpy", "repeated fields (regex + json)")
    phases["rest of the block parse (line ends, checks)"] += block - sum(
        phases[k] for k in (*inside, "rest of the block parse (line ends, checks)")
    )
    read_phases = {k: v for k, v in phases.items() if not k.startswith(("import", "plugin"))}
    phases["other (discovery, threads, meta)"] = total - sum(read_phases.values())
    # pyarrow's parser alone, one thread, on the same blocks and schemas
    alone = 0.0
    for shard in v3.discover(directory):
        schema = None
        for buf, end in arrow_parse._blocks(shard.path):
            if schema is None:
                schema = arrow_parse._Schema(
                    shard.table, arrow_parse._sample(buf, end, shard.table)
                )
            data = bytes(memoryview(buf)[:end])
            begin = cpu()
            read_json(
                pa.BufferReader(data),
                read_options=pj.ReadOptions(use_threads=False, block_size=8 << 20),
                parse_options=pj.ParseOptions(
                    explicit_schema=schema.arrow(), unexpected_field_behavior="ignore"
                ),
            )
            alone += cpu() - begin
    return {
        "run": "phases (one thread)",
        "jobs": len(workload.jobs),
        "seconds": wall,
        "cpu_seconds": total,
        "events_per_s": events / wall,
        "events_per_cpu_s": events / total,
        "peak_mib": _peak_mib(),
        "phases": dict(phases),
        "parser_alone_cpu_seconds": alone,
    }


def _print_phases(result: dict, events: int) -> None:
    total = result["cpu_seconds"]
    print(
        f"\nphases of one in-process read with tasks, shards one after the other "
        f"({events:,} events):"
    )
    print(f"  {'phase':52s} {'CPU s':>7s} {'share':>6s}")
    for name, seconds in result["phases"].items():
        outside = name.startswith(("import", "plugin"))
        share = "" if outside else f"{seconds / total:6.0%}"
        print(
            f"  {name:52s} {seconds:7.2f} {share:>6s}" + ("  (before the read)" if outside else "")
        )
    print(f"  {'read, total':52s} {total:7.2f} {1:6.0%}")
    alone = result["parser_alone_cpu_seconds"]
    print(
        f"pyarrow's JSON parser alone, one thread: {alone:.2f} s CPU = "
        f"{events / alone:,.0f} events per CPU-second; the whole read {total:.2f} s CPU = "
        f"{events / total:,.0f} events per CPU-second"
    )


def _run_dask(directory: Path, events: int, workers: int, tasks: bool) -> dict:
    import dask
    import distributed
    import schedlab
    import schedlab.formats.google.v3_reader
    from schedlab.formats.google.dask_reader import WORKER_MALLOC_CONFIG

    start = time.perf_counter()
    with (
        dask.config.set(WORKER_MALLOC_CONFIG),  # as the reader's own local cluster
        distributed.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=40,
        ) as cluster,
        distributed.Client(cluster) as probe,
    ):
        startup = time.perf_counter() - start
        probe.run(_warm_imports)
        before = probe.run(time.process_time)
        start = time.perf_counter()
        client_cpu = time.process_time()
        workload = schedlab.read(
            directory,
            format="google",
            engine="dask",
            scheduler=cluster.scheduler_address,
            tasks=tasks,
        )
        jobs = len(workload.jobs)
        wall = time.perf_counter() - start
        client_cpu = time.process_time() - client_cpu
        after = probe.run(time.process_time)
        worker_peak = probe.run(_peak_mib)
    worker_cpu = sum(after[w] - before[w] for w in after)
    return {
        "run": f"dask, {workers} worker(s), tasks={tasks}",
        "workers": workers,
        "seconds": wall,
        "startup_seconds": startup,
        "worker_cpu_seconds": worker_cpu,
        "client_cpu_seconds": client_cpu,
        "cpu_seconds": worker_cpu + client_cpu,
        "events_per_s": events / wall,
        "jobs": jobs,
        "peak_mib": _peak_mib(),
        "worker_peak_mib": max(worker_peak.values()),
    }


def _warm_imports() -> None:
    """Worker set-up outside the timing: the modules a long-lived worker has loaded."""
    import pyarrow.compute
    import pyarrow.json  # noqa: F401
    import schedlab.formats.google.arrow_parse
    import schedlab.formats.google.v3_reader  # noqa: F401


def _child(args: argparse.Namespace) -> int:
    """One measurement in this (fresh) process; prints its JSON result."""
    events = json.loads((args.dir / "bench.json").read_text())["events"]
    tasks = args.tasks == "yes"
    if args.child == "in-process":
        result = _run_in_process(args.dir, events, args.engine, tasks)
    elif args.child == "phases":
        result = _run_phases(args.dir, events)
    else:
        result = _run_dask(args.dir, events, args.workers, tasks)
    print("RESULT " + json.dumps(result))
    return 0


def _idle_fraction(seconds: float = 2.0) -> float:
    """Share of all CPUs idle over ``seconds`` (from /proc/stat; 1.0 elsewhere)."""
    try:

        def sample() -> tuple[int, int]:
            with open("/proc/stat") as fh:
                fields = [int(x) for x in fh.readline().split()[1:]]
            return fields[3] + fields[4], sum(fields)

        idle0, total0 = sample()
        time.sleep(seconds)
        idle1, total1 = sample()
    except OSError:
        return 1.0
    return (idle1 - idle0) / max(total1 - total0, 1)


def _wait_until_idle(limit: float) -> float:
    """Wait (up to ``limit`` seconds) until 90 % of the CPUs are idle; the idle share."""
    deadline = time.monotonic() + limit
    idle = _idle_fraction()
    while idle < 0.9 and time.monotonic() < deadline:
        idle = _idle_fraction()
    return idle


WAIT_IDLE = 0.0


def _measure(directory: Path, kind: str, python: str | None = None, **options: object) -> dict:
    command = [python or sys.executable, __file__, "--dir", str(directory), "--child", kind]
    for key, value in options.items():
        command += [f"--{key}", str(value)]
    if WAIT_IDLE:
        idle = _wait_until_idle(WAIT_IDLE)
        print(f"[{idle:.0%} of the CPUs idle before the next run]", flush=True)
    load = os.getloadavg()[0]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    if done.returncode or not lines:
        raise SystemExit(f"benchmark run failed:\n{done.stdout}\n{done.stderr}")
    result = json.loads(lines[-1][len("RESULT ") :])
    result["load_before"] = load
    if python:
        result["run"] = f"BASELINE {result['run']}"
    if kind == "phases":
        return result
    line = (
        f"{result['run']}: {result['jobs']:,} jobs in {result['seconds']:.2f} s wall, "
        f"{result['cpu_seconds']:.2f} s CPU"
    )
    if "worker_cpu_seconds" in result:
        line += (
            f" (workers {result['worker_cpu_seconds']:.1f} s, client and scheduler "
            f"{result['client_cpu_seconds']:.1f} s; +{result['startup_seconds']:.1f} s "
            f"cluster start)"
        )
    line += f": {result['events_per_s']:,.0f} events/s"
    if "events_per_cpu_s" in result:
        line += f" ({result['events_per_cpu_s']:,.0f} per CPU-second)"
    line += f"; peak memory {result['peak_mib']:,.0f} MiB"
    if "worker_peak_mib" in result:
        line += f" (largest worker {result['worker_peak_mib']:,.0f} MiB)"
    print(line + f" [load average before: {load:.2f}]", flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, default=5_000_000)
    parser.add_argument("--shards", type=int, default=8, help="shards per table")
    parser.add_argument("--dir", type=Path, default=None, help="generate into / reuse DIR")
    parser.add_argument("--skip-dask", action="store_true")
    parser.add_argument("--python", action="store_true", help="also time engine=python")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each measurement")
    parser.add_argument(
        "--wait-idle",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="before each run, wait up to SECONDS for 90%% of the CPUs to be idle "
        "(the machine is shared)",
    )
    parser.add_argument(
        "--baseline",
        default=None,
        metavar="PYTHON",
        help="also time the in-process reads with this interpreter (its own schedlab)",
    )
    parser.add_argument(
        "--phases", action="store_true", help="print the CPU time of each phase of one read"
    )
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--engine", default="auto", help=argparse.SUPPRESS)
    parser.add_argument("--tasks", default="yes", help=argparse.SUPPRESS)
    parser.add_argument("--workers", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child(args)
    global WAIT_IDLE
    WAIT_IDLE = args.wait_idle
    with tempfile.TemporaryDirectory(prefix="bench-google-") as tmp:
        directory = args.dir or Path(tmp) / "trace"
        directory.mkdir(parents=True, exist_ok=True)
        events = _generate(directory, args.events, args.shards)
        print(f"{events:,} events; {os.cpu_count()} CPUs")
        results: dict[str, list[dict]] = {"in_process": [], "baseline": [], "dask": []}
        for _ in range(args.repeat):
            for tasks in ("yes", "no"):
                results["in_process"].append(
                    _measure(directory, "in-process", engine="auto", tasks=tasks)
                )
                if args.baseline:
                    results["baseline"].append(
                        _measure(directory, "in-process", args.baseline, engine="auto", tasks=tasks)
                    )
            if args.python:
                results["in_process"].append(
                    _measure(directory, "in-process", engine="python", tasks="yes")
                )
            if not args.skip_dask:
                for tasks in ("yes", "no"):
                    for workers in (1, 2):
                        results["dask"].append(
                            _measure(directory, "dask", workers=workers, tasks=tasks)
                        )
        best = max(r["events_per_s"] for r in results["in_process"] if "tasks=True" in r["run"])
        verdict = "met" if best >= TARGET else "NOT met"
        print(f"target >= {TARGET:,} events/s in-process (tasks, best run): {verdict}")
        for tasks in ("True", "False"):
            mine = [r for r in results["in_process"] if r["run"].endswith(f"tasks={tasks})")]
            base = [r for r in results["baseline"] if r["run"].endswith(f"tasks={tasks})")]
            if mine and base:
                cpu_mine = min(r["cpu_seconds"] for r in mine)
                cpu_base = min(r["cpu_seconds"] for r in base)
                wall_mine = min(r["seconds"] for r in mine)
                wall_base = min(r["seconds"] for r in base)
                print(
                    f"tasks={tasks}: baseline {wall_base:.2f} s wall, {cpu_base:.2f} s CPU -> "
                    f"this checkout {wall_mine:.2f} s wall, {cpu_mine:.2f} s CPU "
                    f"(CPU {cpu_base / cpu_mine:.2f}x, wall {wall_base / wall_mine:.2f}x; "
                    "best runs)"
                )
        if args.phases:
            _print_phases(_measure(directory, "phases"), events)
        for tasks in ("True", "False"):
            runs = [r for r in results["dask"] if r["run"].endswith(f"tasks={tasks}")]
            if runs:
                one = min(r["seconds"] for r in runs if r["workers"] == 1)
                two = min(r["seconds"] for r in runs if r["workers"] == 2)
                print(
                    f"dask speed-up from 1 to 2 workers (tasks={tasks}, best runs): "
                    f"{one / two:.2f}x"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
