"""Benchmark: reading a generated 100,000-job SSS JobGroup document.

    /work/venv/bin/python benchmarks/bench_sss_read.py [--jobs 100000] [--repeat 1]

Generates a workload (SWF-like fields, users/groups/queues with names, requested and
delivered amounts), writes it with the ``sss`` writer into a temporary folder, and
reads it back in fresh child processes, iterating every job chunk by chunk:

* ``schedlab``: the document as schedlab writes it (one pass);
* ``foreign``: the same document without schedlab's bookkeeping extensions, as a
  document from another SSS implementation (two passes: names, origin and the
  dependency DAG first, then the jobs);
* the same two at a tenth of the size, to show that memory does not grow with the
  document (iterative parsing; one chunk of jobs alive at a time).

Reports jobs per second (wall clock and CPU time) and peak memory: the peak resident
set of the child process, and its increase over the baseline after imports and
schema compilation. Target: >= 20,000 jobs/s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 20_000


def generate(path: Path, n: int, seed: int = 7) -> None:
    """Write an ``n``-job JobGroup document with the sss writer."""
    from schedlab.formats.sss.writer import write
    from schedlab.model import Header, Job, Workload

    rng = random.Random(seed)
    header = Header()
    header.set("UnixStartTime", 1_100_000_000)
    header.set_names("User", {u: f"user{u:03d}" for u in range(1, 301)})
    header.set_names("Group", {g: f"group{g:02d}" for g in range(1, 31)})
    header.set_names("Queue", {1: "short", 2: "batch", 3: "long", 4: "debug"})
    jobs = []
    submit = 0
    for number in range(1, n + 1):
        submit += rng.randint(0, 60)
        procs = rng.choice([1, 2, 4, 8, 16, 32, 64, 128])
        run = rng.randint(1, 30_000)
        jobs.append(
            Job(
                job_number=number,
                submit_time=submit,
                wait_time=rng.randint(0, 7200),
                run_time=run,
                allocated_processors=procs,
                used_memory=rng.randint(1_000, 2_000_000) if number % 2 else None,
                requested_processors=procs,
                requested_time=max(run, rng.choice([600, 3600, 14_400, 86_400])),
                requested_memory=rng.choice([None, 1_048_576, 2_097_152]),
                status=rng.choice([0, 1, 1, 1, 1, 5]),
                user_id=rng.randint(1, 300),
                group_id=rng.randint(1, 30),
                queue_number=rng.randint(1, 4),
                name=f"job-{number}",
            )
        )
    write(Workload.from_jobs(jobs, header), path)


def strip_bookkeeping(source: Path, target: Path) -> None:
    """The same document without schedlab's group extensions."""
    with open(source, encoding="utf-8") as fin, open(target, "w", encoding="utf-8") as fout:
        for line in fin:
            if 'type="schedlab"' in line and "<Extension" in line and "<Job" not in line:
                if line.startswith("  <Extension"):
                    continue
            fout.write(line)


def child(path: str, trace: bool) -> None:
    """Read ``path`` and print timings and memory as JSON (runs in a fresh process).

    With ``trace``, only the peak of memory allocated while reading is measured
    (tracemalloc slows reading down, so it is a separate run).
    """
    import tracemalloc

    from schedlab.formats.sss.reader import read
    from schedlab.formats.sss.schema import rules

    rules()  # compile the schema rules before measuring
    if trace:
        tracemalloc.start()
    wall, cpu = time.perf_counter(), time.process_time()
    workload = read(path)
    jobs = 0
    for chunk in workload.iter_chunks():
        jobs += len(chunk)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    result = {
        "jobs": jobs,
        "seconds": wall,
        "cpu_seconds": cpu,
        "single_pass": workload.meta["sss"]["single_pass"],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    if trace:
        result["traced_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
    print(json.dumps(result))


def measure(path: Path, trace: bool = False) -> dict:
    command = [sys.executable, __file__, "--child", str(path)]
    if trace:
        command.append("--trace")
    out = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=1, help="reads per document (best kept)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.trace)
        return
    with tempfile.TemporaryDirectory(prefix="bench-sss-") as tmp:
        folder = Path(tmp)
        cases = []
        for n in (args.jobs // 10, args.jobs):
            ours = folder / f"group-{n}.sss.xml"
            start = time.perf_counter()
            generate(ours, n)
            made = time.perf_counter() - start
            foreign = folder / f"foreign-{n}.xml"
            strip_bookkeeping(ours, foreign)
            size = os.path.getsize(ours) / 2**20
            print(f"generated {n:,} jobs: {size:.1f} MB written in {made:.1f} s", flush=True)
            cases += [(f"schedlab {n:>7,}", ours), (f"foreign  {n:>7,}", foreign)]
        print(
            f"\n{'document':18} {'passes':>6} {'jobs/s':>9} {'jobs/s cpu':>11} "
            f"{'peak RSS':>9} {'allocated':>10}"
        )
        for label, path in cases:
            results = [measure(path) for _ in range(args.repeat)]
            best = min(results, key=lambda r: r["seconds"])
            traced = measure(path, trace=True)["traced_peak_mb"]
            rate = best["jobs"] / best["seconds"]
            cpu_rate = best["jobs"] / best["cpu_seconds"]
            passes = 1 if best["single_pass"] else 2
            mark = "ok" if rate >= TARGET else "below target"
            print(
                f"{label:18} {passes:>6} {rate:>9,.0f} {cpu_rate:>11,.0f} "
                f"{best['peak_rss_mb']:>7.0f}MB {traced:>8.1f}MB  {mark}"
            )
        print(
            f"\ntarget: {TARGET:,} jobs/s. 'peak RSS': whole process (interpreter, xmlschema "
            "and the compiled schema included); 'allocated': peak of the memory allocated "
            "while reading (tracemalloc, separate run)."
        )


if __name__ == "__main__":
    main()
