"""Benchmark: events per second reading a generated Google v3 trace.

Generates a multi-shard trace of about ``--events`` rows (all five tables, int64
values as JSON strings as in the BigQuery export) into a temporary directory, then
reads it

* in-process (``engine="auto"``: pyarrow's JSON parser when installed), and
* on local Dask clusters of 1 and 2 single-threaded worker processes,

and prints events/second for each (events = rows of all tables). Cluster start-up
is excluded from the Dask timings and printed separately.

    python benchmarks/bench_google_read.py                  # 5,000,000 events
    python benchmarks/bench_google_read.py --events 500000 --skip-dask
    python benchmarks/bench_google_read.py --dir /tmp/g5m   # reuse a generated trace
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROWS_PER_COLLECTION = 24.8  # measured on the generator's default mix


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


def _in_process(directory: Path, events: int, engine: str) -> dict:
    import schedlab

    start = time.perf_counter()
    cpu = time.process_time()
    workload = schedlab.read(directory, format="google", engine=engine)
    jobs = len(workload.jobs)
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu
    rate = events / wall
    print(
        f"in-process ({workload.meta['engine']}): {jobs:,} jobs in {wall:.2f} s wall "
        f"({cpu:.2f} s CPU): {rate:,.0f} events/s"
    )
    return {
        "engine": workload.meta["engine"],
        "seconds": wall,
        "cpu_seconds": cpu,
        "events_per_s": rate,
        "jobs": jobs,
    }


def _dask(directory: Path, events: int, workers: int, partitions: int | None) -> dict:
    import distributed
    import schedlab

    start = time.perf_counter()
    with (
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
        before = probe.run(time.process_time)
        start = time.perf_counter()
        client_cpu = time.process_time()
        workload = schedlab.read(
            directory,
            format="google",
            engine="dask",
            scheduler=cluster.scheduler_address,
            partitions=partitions,
        )
        jobs = len(workload.jobs)
        wall = time.perf_counter() - start
        client_cpu = time.process_time() - client_cpu
        after = probe.run(time.process_time)
    worker_cpu = sum(after[w] - before[w] for w in after)
    rate = events / wall
    print(
        f"dask, {workers} worker(s): {jobs:,} jobs in {wall:.2f} s "
        f"(+{startup:.1f} s cluster start; CPU: workers {worker_cpu:.1f} s, "
        f"client and scheduler {client_cpu:.1f} s): {rate:,.0f} events/s"
    )
    return {
        "workers": workers,
        "seconds": wall,
        "startup_seconds": startup,
        "worker_cpu_seconds": worker_cpu,
        "client_cpu_seconds": client_cpu,
        "events_per_s": rate,
        "jobs": jobs,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5_000_000)
    parser.add_argument("--shards", type=int, default=8, help="shards per table")
    parser.add_argument("--dir", type=Path, default=None, help="generate into / reuse DIR")
    parser.add_argument("--skip-dask", action="store_true")
    parser.add_argument("--python", action="store_true", help="also time engine=python")
    parser.add_argument("--partitions", type=int, default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-google-") as tmp:
        directory = args.dir or Path(tmp) / "trace"
        directory.mkdir(parents=True, exist_ok=True)
        events = _generate(directory, args.events, args.shards)
        results = {"events": events, "in_process": [_in_process(directory, events, "auto")]}
        if args.python:
            results["in_process"].append(_in_process(directory, events, "python"))
        if not args.skip_dask:
            results["dask"] = [_dask(directory, events, w, args.partitions) for w in (1, 2)]
            one, two = results["dask"]
            print(f"dask speed-up from 1 to 2 workers: {one['seconds'] / two['seconds']:.2f}x")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak memory of this process: {peak:,.0f} MiB")
        target = results["in_process"][0]["events_per_s"]
        print(f"target >= 300,000 events/s in-process: {'met' if target >= 3e5 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
