"""Benchmark: reading RICC-2010-2 (447,794 jobs) into columns, against pandas.

Run ``python benchmarks/bench_swf_read.py [--repeat N] [--file PATH]``.

* schedlab: ``schedlab.read(path)`` on the .gz file with validation on, then
  ``to_arrays()``: decompression, header, parsing, -1 -> NaN, every check.
* baseline: ``pandas.read_csv(io.BytesIO(decompressed), sep=r"\\s+", comment=";",
  header=None)`` on the already decompressed bytes (so the baseline does less).
* The two are run alternately ``--repeat`` times; the best and the median of each
  are printed, and the ratio of the bests (target <= 1.0). The automatic read
  uses one process when the machine is busy (load average), so the one-process
  (``workers=1``: decompression in a thread while the first part is parsed) and
  two-process (``workers=2``: a forked child parses the first part while the
  parent decompresses and parses the rest) reads are timed too.
* Peak memory of a full schedlab read is measured in a fresh subprocess: the
  tracemalloc peak (Python and numpy allocations) and the process's peak resident
  set size (VmHWM; target < 400 MB).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = Path(os.environ.get("SCHEDLAB_SHARED_DATA", ROOT.parent / "shared" / "data"))
DEFAULT_FILE = DEFAULT / "swf" / "RICC-2010-2.swf.gz"

# VmHWM (peak resident set) of /proc/self/status is per address space, so unlike
# ru_maxrss it does not inherit the benchmark process's peak through fork + exec.
_MEMORY_PROBE = """
import json, sys, tracemalloc
def hwm():
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM:'):
            return int(line.split()[1]) / 1024
    return float('nan')
import numpy, schedlab
from schedlab.formats.swf.reader import read_swf
before = hwm()
tracemalloc.start()
w = read_swf(sys.argv[1], validate=True)
cols = w.to_arrays()
current, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
print(json.dumps({
    "jobs": len(cols),
    "tracemalloc_peak_mb": peak / 2**20,
    "result_mb": sum(a.nbytes for a in cols.data.values()) / 2**20,
    "rss_before_mb": before,
    "rss_peak_mb": hwm(),
}))
"""


def time_schedlab(path: Path, workers: int = 0) -> tuple[float, int, int]:
    """Seconds for a full read into columns, the job count and the findings
    (``workers=0``: automatic, two processes for this size; 1: one process)."""
    import schedlab

    start = time.perf_counter()
    workload = schedlab.read(path, validate=True, workers=workers)
    columns = workload.to_arrays()
    elapsed = time.perf_counter() - start
    return elapsed, len(columns), len(workload.meta["findings"])


def time_schedlab_bytes(data: bytes) -> float:
    """Seconds for a full read from the same decompressed bytes pandas gets."""
    import schedlab

    start = time.perf_counter()
    schedlab.read(io.BytesIO(data), format="swf", validate=True).to_arrays()
    return time.perf_counter() - start


def time_pandas(data: bytes) -> tuple[float, int]:
    """Seconds for the pandas baseline on decompressed bytes, and its row count."""
    import pandas as pd

    start = time.perf_counter()
    frame = pd.read_csv(io.BytesIO(data), sep=r"\s+", comment=";", header=None)
    elapsed = time.perf_counter() - start
    return elapsed, len(frame)


def memory(path: Path) -> dict:
    """Peak memory of one full read, in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", _MEMORY_PROBE, str(path)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    if not args.file.exists():
        print(f"bench_swf_read: {args.file} not found", file=sys.stderr)
        return 2
    import schedlab

    schedlab.read(args.file)  # warm up: registry, imports, page cache
    data = gzip.decompress(args.file.read_bytes())
    ours: list[float] = []
    single: list[float] = []
    double: list[float] = []
    from_bytes: list[float] = []
    theirs: list[float] = []
    for _ in range(args.repeat):
        seconds, jobs, findings = time_schedlab(args.file)
        ours.append(seconds)
        seconds, rows = time_pandas(data)
        theirs.append(seconds)
        single.append(time_schedlab(args.file, workers=1)[0])
        double.append(time_schedlab(args.file, workers=2)[0])
        from_bytes.append(time_schedlab_bytes(data))
    assert jobs == rows, (jobs, rows)
    mem = memory(args.file)
    best_ours, best_theirs = min(ours), min(theirs)
    print(f"file: {args.file.name} ({len(data) / 2**20:.1f} MB decompressed, {jobs} jobs)")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(
        f"schedlab.read + to_arrays (from .gz, validation on, {findings} findings): "
        f"best {best_ours:.3f} s, median {statistics.median(ours):.3f} s"
    )
    print(
        "pandas.read_csv (decompressed bytes): "
        f"best {best_theirs:.3f} s, median {statistics.median(theirs):.3f} s"
    )
    print(
        "schedlab.read, one process (workers=1): "
        f"best {min(single):.3f} s, median {statistics.median(single):.3f} s"
    )
    print(
        "schedlab.read, two processes (workers=2): "
        f"best {min(double):.3f} s, median {statistics.median(double):.3f} s"
    )
    print(
        "schedlab.read from the same decompressed bytes: "
        f"best {min(from_bytes):.3f} s, median {statistics.median(from_bytes):.3f} s"
    )
    ratio = best_ours / best_theirs
    print(f"ratio schedlab (from .gz) / pandas (best): {ratio:.2f} (target <= 1.0)")
    print(f"ratio with one process (best): {min(single) / best_theirs:.2f}")
    print(f"ratio with two processes (best): {min(double) / best_theirs:.2f}")
    print(f"ratio from the same bytes (best): {min(from_bytes) / best_theirs:.2f}")
    print(
        f"memory: tracemalloc peak {mem['tracemalloc_peak_mb']:.0f} MB, "
        f"process peak RSS {mem['rss_peak_mb']:.0f} MB "
        f"(of which {mem['rss_before_mb']:.0f} MB interpreter and imports), "
        f"result {mem['result_mb']:.0f} MB (target < 400 MB; the forked parsing child "
        "shares the parent's pages copy-on-write and adds about half the result)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
