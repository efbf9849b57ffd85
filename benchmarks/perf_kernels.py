"""Where a compiled (numba) kernel spends its time: ``perf`` samples mapped onto
the compiled functions.

``perf record -e cpu-clock`` works on this VM (no hardware counters), but numba's
code lives in memory the JIT allocated, so ``perf`` names none of it. This script
runs one simulation in a child process and, before the kernel runs, writes
``/tmp/perf-<pid>.map`` (``START SIZE name`` per line, in hex: the format ``perf``
reads for JIT code) from every loaded numba function: each compiled library's
object code (an ELF relocatable file) gives its functions' offsets and sizes in
its symbol table, and the execution engine the address its text was loaded at.
Sampling is switched on only around the whole-run kernel call
(``easy_nodes_kernels.node_easy_run`` by default: ``perf record --control``), so
the table is the kernel's time alone. ``--backfill easy-pool`` and
``conservative-pool`` sample the single pool's whole runs (``easy_kernels.
easy_run``, ``kernels.conservative_run``), ``conservative`` the node-level
conservative pass (``conservative_nodes_kernels.node_conservative_pass``, around
each of its calls: use ``--jobs``).

numba lets LLVM inline the helpers into their callers, so the kernel is mostly one
or two functions. ``--noinline`` compiles the kernel module's own functions with
LLVM's ``noinline`` attribute (into a scratch numba cache, never the real one), so
each helper gets its own samples. That changes the code a little (a call per
helper, numba's reference counts of array arguments around each call, which
show up as ``NRT_*``): read its shares as where the time goes, and compare the
kernel's CPU time with the ordinary build's to see how much the calls cost.

The run is the ordinary ``schedlab.simulate`` of ``bench_platform.py`` (the log's
machine cut into nodes, FCFS, ``first-fit``), so the schedule is the real one: the
script prints a digest of the start times and allocation columns (RICC-2010 with
EASY on the default platform: ``ab6306a7ed49ac8b``).

``--lines`` compiles with numba's line tables (``NUMBA_DEBUGINFO=1``, bounds checks
kept off, a scratch cache) and adds a table of samples per source line
(``addr2line`` on each library's object); helpers inline differently in that
build, so compare its shares, not its times. ``--keep DIR`` keeps ``perf.data``,
the map and the objects (``libN.o``, with ``libN.json``: each section's load
address) for ``objdump``/``perf script`` by hand.

Run: .venv/bin/python benchmarks/perf_kernels.py [--log RICC] [--jobs N]
     [--backfill easy|easy-pool|conservative|conservative-pool] [--noinline] [--lines] [--freq 2000]
     [--top 40] [--keep DIR]
     [--perf-args "..."]
(needs ``perf`` on the PATH and ``perf_event_paranoid`` allowing a user to record
its own processes.)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from swf_logs import DATA, LOGS

KERNELS = {
    "easy": ("schedlab.policies.backfill.easy_nodes_kernels", "node_easy_run"),
    # the single pool's whole run (no platform; ``--estimator`` picks the predictor)
    "easy-pool": ("schedlab.policies.backfill.easy_kernels", "easy_run"),
    # the node-level conservative pass (one call per scheduling pass: sampled in
    # each call; use ``--jobs``, the whole log takes hours)
    "conservative": (
        "schedlab.policies.backfill.conservative_nodes_kernels",
        "node_conservative_pass",
    ),
    # the single pool's conservative whole run (no platform)
    "conservative-pool": ("schedlab.policies.backfill.kernels", "conservative_run"),
}


# --------------------------------------------------------------- ELF symbols
def elf_functions(obj: bytes) -> list[tuple[str, int, int, int, bool]]:
    """The functions an ELF64 little-endian relocatable object defines: ``(name,
    section index, offset in the section, size, global)``."""
    if obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        return []
    shoff = struct.unpack_from("<Q", obj, 0x28)[0]
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * shentsize) for i in range(shnum)]
    out = []
    for sh in sections:
        if sh[1] != 2:  # SHT_SYMTAB
            continue
        strtab = sections[sh[6]]
        str_off = strtab[4]
        for k in range(sh[5] // 24):
            name_off, info, _other, shndx, value, size = struct.unpack_from(
                "<IBBHQQ", obj, sh[4] + k * 24
            )
            if info & 0xF != 2 or shndx == 0 or shndx >= 0xFF00:  # STT_FUNC, defined
                continue
            end = obj.index(b"\0", str_off + name_off)
            name = obj[str_off + name_off : end].decode("utf-8", "replace")
            out.append((name, shndx, value, size, info >> 4 == 1))
    return out


def short_name(mangled: str) -> str:
    """``module.function`` from numba's Itanium-style names (``_ZN8schedlab...``);
    other names as they are."""
    prefix = ""
    if mangled.startswith("cpython."):
        prefix, mangled = "cpython:", mangled[len("cpython.") :]
    elif mangled.startswith("cfunc."):
        prefix, mangled = "cfunc:", mangled[len("cfunc.") :]
    if not mangled.startswith("_ZN"):
        return prefix + mangled
    parts, i = [], 3
    while i < len(mangled) and mangled[i].isdigit():
        j = i
        while mangled[j].isdigit():
            j += 1
        n = int(mangled[i:j])
        parts.append(mangled[j : j + n])
        i = j + n
    if not parts:
        return prefix + mangled
    name = parts[-1]
    module = parts[-2] if len(parts) > 1 else ""
    return prefix + (f"{module}.{name}" if module else name)


def write_perf_map(path: Path, objects: Path | None = None) -> int:
    """Write the perf map of every numba function loaded in this process; the
    number of functions written."""
    import gc

    from numba.core.codegen import CodeLibrary

    # every library, not only the dispatchers': numba's runtime (the atomic
    # reference counts) is a library of its own
    libraries = [obj for obj in gc.get_objects() if isinstance(obj, CodeLibrary)]
    entries = []
    for lib in libraries:
        obj = getattr(lib, "_perf_object", None)
        if obj is None:
            continue
        engine = lib._codegen._engine
        funcs = elf_functions(obj)
        # The section's load address: from the global functions the engine resolves
        # (a weak copy linked into several libraries resolves to one of them, so take
        # the base most of them agree on).
        bases: dict[int, Counter[int]] = {}
        for name, shndx, value, _size, is_global in funcs:
            if is_global and engine.is_symbol_defined(name):
                addr = engine.get_function_address(name)
                if addr:
                    bases.setdefault(shndx, Counter())[addr - value] += 1
        for name, shndx, value, size, _g in funcs:
            if shndx in bases and size:
                base = bases[shndx].most_common(1)[0][0]
                entries.append((base + value, size, short_name(name)))
    entries = sorted(set(entries))
    if objects is not None:  # each library's object, and where its sections were loaded
        for k, lib in enumerate(libraries):
            obj = getattr(lib, "_perf_object", None)
            if obj is not None:
                (objects / f"lib{k}.o").write_bytes(obj)
                loads = {}
                for name, shndx, value, _size, is_global in elf_functions(obj):
                    engine = lib._codegen._engine
                    if is_global and engine.is_symbol_defined(name):
                        addr = engine.get_function_address(name)
                        if addr:
                            loads.setdefault(shndx, Counter())[addr - value] += 1
                base = {s: c.most_common(1)[0][0] for s, c in loads.items()}
                (objects / f"lib{k}.json").write_text(json.dumps(base))
    with open(path, "w") as f:
        for start, size, name in entries:
            f.write(f"{start:x} {size:x} {name}\n")
    return len(entries)


def patch_numba(noinline: str | None) -> None:
    """Keep each library's object code (numba drops it once loaded) and, with
    ``noinline``, mark the functions whose names contain it ``noinline``."""
    from numba.core import codegen

    lib_cls = codegen.CPUCodeLibrary
    set_obj = codegen.CodeLibrary._set_compiled_object
    compiled_hook = lib_cls._object_compiled_hook.__func__

    def _set_compiled_object(self, value):  # type: ignore[no-untyped-def]
        self._perf_object = value
        set_obj(self, value)

    def _object_compiled_hook(cls, ll_module, buf):  # type: ignore[no-untyped-def]
        lib = getattr(ll_module, "_CPUCodeLibrary__library", None)
        if lib is None:
            lib = getattr(ll_module, "__library", None)
        if lib is not None:
            lib._perf_object = buf
        compiled_hook(cls, ll_module, buf)

    codegen.CodeLibrary._set_compiled_object = _set_compiled_object
    lib_cls._object_compiled_hook = classmethod(_object_compiled_hook)
    if noinline:
        add_ir = lib_cls.add_ir_module

        def add_ir_module(self, ir_module):  # type: ignore[no-untyped-def]
            for fn in ir_module.functions:
                if (
                    not fn.is_declaration
                    and noinline in fn.name
                    and not fn.name.startswith(("cpython.", "cfunc."))
                    and "alwaysinline" not in fn.attributes
                ):
                    fn.attributes.add("noinline")
            return add_ir(self, ir_module)

        lib_cls.add_ir_module = add_ir_module


# --------------------------------------------------------------- the child
def child(args: argparse.Namespace) -> None:
    module_name, func = KERNELS[args.backfill]
    patch_numba(module_name.rsplit(".", 1)[1] if args.noinline else None)
    import hashlib
    import importlib

    import numpy as np
    import schedlab

    kn = importlib.import_module(module_name)
    w = schedlab.read(DATA / LOGS[args.log])
    if args.jobs:
        cols = w.to_arrays()
        w = schedlab.Workload(w.header, columns=cols.take(np.arange(min(args.jobs, len(cols)))))
    w.to_arrays()
    small = schedlab.Workload(
        w.header, columns=w.to_arrays().take(np.arange(min(3000, len(w.to_arrays()))))
    )
    pool = args.backfill in ("easy-pool", "conservative-pool")
    options = (
        {
            "backfill": args.backfill.split("-")[0],
            "platform": None,
            "estimator": args.estimator,
        }
        if pool
        else {"backfill": args.backfill, "platform": args.platform}
    )
    # (the single pool runs small workloads in Python: it warms up on the whole log)
    schedlab.simulate(w if pool else small, progress=False, **options)
    # the engine loads the whole-run kernel through the strategy module's ``kn``
    original = getattr(kn, func)
    cpu: list[float] = []
    fifos: list = []

    def command(what: str) -> None:
        if not fifos:  # opened once perf has them open (an open blocks until then)
            fifos.append(open(args.ctl, "w"))
            fifos.append(open(args.ack))
        fifos[0].write(what + "\n")
        fifos[0].flush()
        fifos[1].readline()

    def timed(*a):  # type: ignore[no-untyped-def]
        command("enable")
        c = time.process_time()
        try:
            return original(*a)
        finally:
            cpu.append(time.process_time() - c)
            command("disable")

    n_map = write_perf_map(
        Path(f"/tmp/perf-{os.getpid()}.map"), Path(args.objects) if args.objects else None
    )
    print(json.dumps({"ready": os.getpid(), "functions": n_map}), flush=True)
    sys.stdin.readline()
    setattr(kn, func, timed)
    outcomes = []
    from schedlab.policies.backfill import easy_nodes_compiled as enc

    run_whole = enc.CompiledNodeEasy.run_whole

    def keep(self, plan):  # type: ignore[no-untyped-def]
        out = run_whole(self, plan)
        outcomes.append(out)
        return out

    enc.CompiledNodeEasy.run_whole = keep
    r = schedlab.simulate(w, progress=False, **options)
    setattr(kn, func, original)
    digest = None
    if outcomes and outcomes[0] is not None:
        o = outcomes[0]
        h = hashlib.sha256()
        for a in (o.start, o.node_offset, o.nodes, o.amounts):
            h.update(np.ascontiguousarray(a).tobytes())
        digest = h.hexdigest()[:16]
    print(
        json.dumps(
            {
                "kernel_cpu": cpu,
                "sim_cpu": r.stats.get("cpu_time_s"),
                "whole": r.stats.get("whole_run", False),
                "digest": digest,
            }
        ),
        flush=True,
    )


# --------------------------------------------------------------- the parent
def platform_file(tmp: Path, log: str, cores: int, memory: str) -> Path:
    import schedlab

    procs = schedlab.read(DATA / LOGS[log]).header.machine_size() or 0
    nodes = -(-procs // cores)
    path = tmp / "platform.toml"
    path.write_text(
        f'[platform]\nsharing = "shared"\n[node_groups.node]\ncount = {nodes}\n'
        f'cores = {cores}\nmemory = "{memory}"\n[partitions.all]\nnodes = ["node"]\n'
    )
    return path


def profile(samples: Path, pid: int, top: int) -> tuple[Counter[str], int]:
    """Samples by function (perf script's symbol, else its DSO)."""
    out = subprocess.run(
        ["perf", "script", "-i", str(samples), "-F", "ip,sym,dso", "--no-demangle"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    counts: Counter[str] = Counter()
    for line in out.splitlines():
        line = line.strip()
        if not line:
            continue
        m = re.match(r"([0-9a-f]+)\s+(.*?)\s*\((.*)\)$", line)
        if not m:
            continue
        sym, dso = m.group(2), m.group(3)
        if not sym or sym == "[unknown]":
            sym = f"[{Path(dso).name}]"
        counts[sym] += 1
    return counts, sum(counts.values())


def source_lines(samples: Path, folder: Path) -> Counter[str]:
    """Samples in compiled code by source line (``file:line``), from the line
    tables of the libraries' objects (``--lines`` builds them with debug info)."""
    import bisect

    ips = Counter(
        int(x, 16)
        for x in subprocess.run(
            ["perf", "script", "-i", str(samples), "-F", "ip"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    )
    spans = []  # (start, end, object, offset of start in its section)
    for obj in sorted(folder.glob("lib*.o")):
        base = {int(k): v for k, v in json.loads(obj.with_suffix(".json").read_text()).items()}
        for _name, shndx, value, size, _g in elf_functions(obj.read_bytes()):
            if shndx in base and size:
                spans.append((base[shndx] + value, base[shndx] + value + size, obj, value))
    spans.sort()
    starts = [sp[0] for sp in spans]
    wanted: dict[Path, Counter[int]] = {}
    for ip, c in ips.items():
        k = bisect.bisect_right(starts, ip) - 1
        if k >= 0 and ip < spans[k][1]:
            start, _end, obj, value = spans[k]
            wanted.setdefault(obj, Counter())[value + ip - start] += c
    out: Counter[str] = Counter()
    for obj, offsets in wanted.items():
        keys = list(offsets)
        res = subprocess.run(
            ["addr2line", "-e", str(obj), *[hex(o) for o in keys]],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.splitlines()
        for off, where in zip(keys, res, strict=False):
            where = where.split(" (")[0]
            out[f"{Path(where.split(':')[0]).name}:{where.rsplit(':', 1)[-1]}"] += offsets[off]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", default="RICC", choices=sorted(LOGS))
    parser.add_argument("--jobs", type=int, default=0, help="first N jobs only (0: all)")
    parser.add_argument("--backfill", default="easy", choices=sorted(KERNELS))
    parser.add_argument("--cores", type=int, default=8)
    parser.add_argument("--memory", default="12GiB")
    parser.add_argument("--noinline", action="store_true", help="helpers not inlined")
    parser.add_argument("--freq", type=int, default=2000, help="samples per second")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--perf-args", default="", help="more arguments to perf record")
    parser.add_argument("--lines", action="store_true", help="also samples by source line")
    parser.add_argument("--keep", help="keep perf.data and the map in this folder")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--estimator", default="requested", help="easy-pool: the estimator")
    parser.add_argument("--platform", help=argparse.SUPPRESS)
    parser.add_argument("--ctl", help=argparse.SUPPRESS)
    parser.add_argument("--ack", help=argparse.SUPPRESS)
    parser.add_argument("--objects", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        keep = Path(args.keep) if args.keep else tmp
        keep.mkdir(parents=True, exist_ok=True)
        ctl, ack = tmp / "ctl", tmp / "ack"
        os.mkfifo(ctl)
        os.mkfifo(ack)
        env = dict(os.environ)
        if args.noinline:  # never into the real cache
            env["NUMBA_CACHE_DIR"] = str(keep / "numba-noinline")
        if args.lines:  # line tables, no bounds checks (debug info would add them)
            env.update(NUMBA_DEBUGINFO="1", NUMBA_BOUNDSCHECK="0")
            env["NUMBA_CACHE_DIR"] = str(
                keep / ("numba-lines" + ("-noinline" if args.noinline else ""))
            )
        cmd = [sys.executable, __file__, "--child", "--log", args.log, "--jobs", str(args.jobs)]
        cmd += ["--estimator", args.estimator]
        cmd += ["--backfill", args.backfill, "--ctl", str(ctl), "--ack", str(ack)]
        cmd += ["--platform", str(platform_file(tmp, args.log, args.cores, args.memory))]
        if args.noinline:
            cmd.append("--noinline")
        cmd += ["--objects", str(keep)]
        proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        assert proc.stdin is not None and proc.stdout is not None
        ready = json.loads(proc.stdout.readline())
        pid = ready["ready"]
        samples = keep / "perf.data"
        perf = subprocess.Popen(
            ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(args.freq), "-D", "-1",
             "--control", f"fifo:{ctl},{ack}", "-p", str(pid), "-o", str(samples),
             *args.perf_args.split()],
        )  # fmt: skip
        time.sleep(1.0)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        result = json.loads(proc.stdout.readline())
        proc.wait()
        perf.wait(timeout=60)
        counts, total = profile(samples, pid, args.top)
        lines = source_lines(samples, keep) if args.lines else None
        if args.keep:
            Path(f"/tmp/perf-{pid}.map").replace(keep / f"perf-{pid}.map")
        else:
            Path(f"/tmp/perf-{pid}.map").unlink(missing_ok=True)
    what = f"first {args.jobs:,} jobs of " if args.jobs else ""
    kcpu = sum(result["kernel_cpu"])
    note = " (helpers not inlined)" if args.noinline else ""
    print(
        f"{what}{args.log}, {args.backfill} on nodes{note}: "
        f"kernel CPU {kcpu:.2f} s, simulation CPU {result['sim_cpu']:.2f} s, "
        f"{ready['functions']} compiled functions mapped, {total:,} samples, "
        f"digest {result['digest']}"
    )
    print(f"{'share':>7} {'samples':>8}  function")
    for sym, c in counts.most_common(args.top):
        print(f"{100 * c / max(total, 1):6.1f}% {c:>8}  {short_name(sym)}")
    if lines is not None:
        print(
            f"\nby source line (compiled code with line tables):\n{'share':>7} {'samples':>8}  line"
        )
        for where, c in lines.most_common(args.top):
            print(f"{100 * c / max(total, 1):6.1f}% {c:>8}  {where}")


if __name__ == "__main__":
    main()
