"""Benchmark: read a generated 1,000,000-record Grid Engine accounting file in both
layouts (colon and OCS JSONL) and report records per second.

    /work/venv/bin/python benchmarks/bench_sge_read.py [--records N] [--repeat R]
        [--dir DIR] [--workers W]

The files are generated into a temporary directory (removed afterwards; ``--dir``
keeps them there and reuses them), with the mix of a real cluster: a few hundred
users, some queues and categories (5% with colons inside, ``h_rt=48:00:00``), array
tasks, parallel jobs, failed and killed jobs. The target is >= 200,000 records/s.

Each layout is read as ``schedlab.read`` reads it by default (``workers=0``: a
second process for a large file when a core is idle) and in one process
(``workers=1``). Wall time and CPU time (this process and its children) are both
printed: the machine is shared, so wall time also counts waiting for a core; the
load average and a yardstick (a plain Python loop) say how busy it is. The exit
status is 1 if a layout misses the target by CPU time in one process.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time

TARGET = 200_000

_QUEUES = ["all.q", "short.q", "long.q", "gpu.q", "bigmem.q", "interactive.q"]
_PES = ["NONE", "smp", "mpi"]


def _categories(rng: random.Random) -> list[str]:
    out = [""]
    for _ in range(60):
        parts = [f"-u user{rng.randrange(300)}"]
        # A few categories give h_rt as HH:MM:SS: colons inside the category field.
        h_rt = rng.choice(["3600", "7200", "86400", "14400", "600", "172800"])
        if rng.random() < 0.05:
            h_rt = "48:00:00"
        parts.append(f"-l h_rt={h_rt},h_vmem={rng.choice([1, 2, 4, 8])}G")
        if rng.random() < 0.3:
            parts.append(f"-pe smp {rng.choice([2, 4, 8, 16])}")
        parts.append(f"-q {rng.choice(_QUEUES)}")
        out.append(" ".join(parts))
    return out


def generate(path_colon: str, path_json: str, records: int, seed: int = 1) -> None:
    """Write ``records`` accounting records in each layout."""
    rng = random.Random(seed)
    categories = _categories(rng)
    t0 = 1_700_000_000
    with open(path_colon, "w") as colon, open(path_json, "w") as jsonl:
        colon_lines: list[str] = []
        json_lines: list[str] = []
        job = 1000
        task = 0
        for i in range(records):
            if task == 0 or rng.random() < 0.8:
                job += 1
                task = 0 if rng.random() < 0.9 else 1
            else:
                task += 1
            sub = t0 + i * 3 + rng.randrange(3)
            start = sub + rng.randrange(0, 4000)
            run = rng.randrange(0, 90000)
            end = start + run
            user = rng.randrange(300)
            queue = rng.choice(_QUEUES)
            slots = rng.choice((1, 1, 1, 2, 4, 8, 16))
            pe = "NONE" if slots == 1 else rng.choice(_PES[1:])
            failed = 0 if rng.random() < 0.95 else rng.choice((1, 26, 100))
            exit_status = 0 if rng.random() < 0.9 else rng.choice((1, 2, 137, 143))
            cpu = run * slots * rng.random()
            maxvmem = rng.randrange(1, 1 << 34)
            category = rng.choice(categories)
            colon_lines.append(
                f"{queue}:node{rng.randrange(500):03d}.cluster:grp{user % 40}:user{user}:"
                f"job_{i % 977}:{job}:sge:0:{sub}:{start}:{end}:{failed}:{exit_status}:"
                f"{run}:{cpu * 0.9:.6f}:{cpu * 0.1:.6f}:{rng.randrange(1 << 20)}.000000:"
                f"0:0:0:0:{rng.randrange(99999)}:0:0:0.000000:{rng.randrange(9999)}:0:0:0:"
                f"{rng.randrange(999)}:{rng.randrange(99)}:NONE:defaultdepartment:{pe}:"
                f"{slots}:{task}:{cpu:.6f}:{cpu * 0.01:.6f}:0.000123:{category}:0.000000:"
                f"NONE:{maxvmem}.000000:0:0\n"
            )
            json_lines.append(
                f'{{"job_number":{job},"task_number":{task},"start_time":{start}123456,'
                f'"end_time":{end}654321,"owner":"user{user}","group":"grp{user % 40}",'
                f'"account":"sge","qname":"{queue}","hostname":"node{rng.randrange(500):03d}",'
                f'"department":"defaultdepartment",'
                + (f'"granted_pe":"{pe}",' if pe != "NONE" else "")
                + f'"slots":{slots},"job_name":"job_{i % 977}","priority":0,'
                f'"submission_time":{sub}000001,"submit_cmd_line":"qsub -b y job_{i % 977}.sh",'
                f'"category":"{category}","failed":{failed},"exit_status":{exit_status},'
                f'"usage":{{"rusage":{{"ru_wallclock":{run},"ru_utime":{cpu * 0.9:.6f},'
                f'"ru_stime":{cpu * 0.1:.6f},"ru_maxrss":{rng.randrange(1 << 20)},'
                f'"ru_ixrss":0,"ru_ismrss":0,"ru_idrss":0,"ru_isrss":0,'
                f'"ru_minflt":{rng.randrange(99999)},"ru_majflt":0,"ru_nswap":0,'
                f'"ru_inblock":0,"ru_oublock":{rng.randrange(9999)},"ru_msgsnd":0,'
                f'"ru_msgrcv":0,"ru_nsignals":0,"ru_nvcsw":{rng.randrange(999)},'
                f'"ru_nivcsw":{rng.randrange(99)}}},"eusage":{{"wallclock":{run}.5,'
                f'"cpu":{cpu:.6f},"mem":{cpu * 0.01:.6f},"io":0.000123,"iow":0.0,'
                f'"maxvmem":{maxvmem}.0,"maxrss":{maxvmem // 2}.0}}}}}}\n'
            )
            if len(colon_lines) >= 50_000:
                colon.writelines(colon_lines)
                jsonl.writelines(json_lines)
                colon_lines, json_lines = [], []
        colon.writelines(colon_lines)
        jsonl.writelines(json_lines)


def measure(path: str, fmt: str, repeat: int, workers: int = 0) -> tuple[float, float, int, int]:
    """Best wall and CPU time over ``repeat`` reads: (wall s, cpu s, records, jobs).

    CPU time (this process and the helper process the reader forks for a large
    file) is reported too because the machine may be shared: wall time then
    includes waiting for a core.
    """
    import resource

    def cpu_now() -> float:
        own = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    import schedlab

    schedlab.get_registry()  # plugin loading is not part of reading
    best_wall = best_cpu = float("inf")
    records = jobs = 0
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), cpu_now()
        workload = schedlab.read(path, format=fmt, workers=workers)
        columns = workload.to_arrays()
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, cpu_now() - cpu)
        records, jobs = workload.meta["records"], len(columns)
        del workload, columns
    return best_wall, best_cpu, records, jobs


def reference(path: str, limit: int = 200_000) -> float:
    """CPU seconds per line of a plain Python loop over the file's first lines
    (``str.split(":")`` of each line): a yardstick for how fast this machine is
    right now, since the machine may be shared."""
    with open(path) as fh:
        lines = [line for _, line in zip(range(limit), fh, strict=False)]
    start = time.process_time()
    for line in lines:
        line.split(":")
    return (time.process_time() - start) / max(len(lines), 1)


def _measure_fresh(path: str, fmt: str, repeat: int, workers: int) -> tuple:
    """:func:`measure` in a new Python process (a read should not pay for the
    memory left fragmented by the previous one)."""
    import json
    import subprocess

    command = [sys.executable, __file__, "--measure", path, fmt, str(repeat), str(workers)]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return tuple(json.loads(result.stdout.strip().splitlines()[-1]))


def _parsers() -> str:
    found = []
    for module in ("msgspec", "orjson"):
        try:
            __import__(module)
            found.append(module)
        except ImportError:
            pass
    return ", ".join(found) or "none (standard json only)"


def main(argv: list[str] | None = None) -> int:
    """Generate, read, report; exit status 1 if a layout misses the target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--dir", help="generate into (and reuse) this directory")
    parser.add_argument(
        "--workers", type=int, choices=(0, 1, 2), default=None, help="only this setting"
    )
    parser.add_argument("--measure", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:  # (in the fresh process of _measure_fresh)
        import json

        path, fmt, repeat, workers = args.measure
        print(json.dumps(measure(path, fmt, int(repeat), int(workers))))
        return 0
    ok = True
    with tempfile.TemporaryDirectory(prefix="bench_sge_") as tmp:
        folder = args.dir or tmp
        os.makedirs(folder, exist_ok=True)
        colon_path = os.path.join(folder, f"{args.records}.accounting")
        json_path = os.path.join(folder, f"{args.records}.accounting.jsonl")
        if not (os.path.exists(colon_path) and os.path.exists(json_path)):
            t = time.perf_counter()
            generate(colon_path, json_path, args.records)
            took = time.perf_counter() - t
            print(f"generated {args.records:,} records per layout in {took:.1f} s")
        yardstick = reference(colon_path)
        print(
            f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; "
            f"yardstick: str.split(':') of one colon line takes {yardstick * 1e9:.0f} ns of "
            "CPU now (the slower this is, the busier the machine)"
        )
        print(f"optional JSON parsers found: {_parsers()} (msgspec: bulk JSONL path)")
        settings = (0, 1) if args.workers is None else (args.workers,)
        for label, path, fmt in (("colon", colon_path, "sge"), ("jsonl", json_path, "sge-jsonl")):
            size = os.path.getsize(path) / 1e6
            for workers in settings:
                wall, cpu, records, jobs = _measure_fresh(path, fmt, args.repeat, workers)
                by_wall, by_cpu = records / wall, records / cpu
                if workers == 1:
                    ok &= by_cpu >= TARGET
                print(
                    f"{label:5s} workers={workers}: {records:,} records ({size:.0f} MB) -> "
                    f"{jobs:,} jobs; wall {wall:.2f} s = {by_wall:,.0f} records/s "
                    f"({'meets' if by_wall >= TARGET else 'MISSES'}); CPU {cpu:.2f} s = "
                    f"{by_cpu:,.0f} records/s ({'meets' if by_cpu >= TARGET else 'MISSES'} "
                    f"the {TARGET:,}/s target)"
                )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
