"""Node-level EASY's whole-run kernel alone (``easy_nodes_kernels.node_easy_run``),
on inputs captured from a real run: the kernel's CPU time free of the rest of
``simulate``, for comparing kernel variants in one process.

``--capture`` runs ``simulate`` (FCFS + EASY) on the log with ``bench_platform.py``'s
platform (the log's machine cut into nodes of ``--cores`` cores with ``--memory``,
shared, ``first-fit``) and saves the arguments ``node_easy_run`` receives (copied
before the call) to ``--dir``. Then every kernel given with ``--kernel`` (a path to
an ``easy_nodes_kernels.py``, the checkout's when none is given; another file,
such as a copy of main's, is loaded as a module of its own) runs on fresh copies
of the captured inputs in ``--repeat`` interleaved turns (each turn runs every
kernel once, after one untimed warm-up run each, so a recompiling cache is never
counted), keeping each one's best CPU time (process clock). Each run's outcome is
hashed (SHA-256 of the start, offset, node and amount columns, first 16 hex
digits; the digest ``perf_kernels.py`` prints, ``ab6306a7ed49ac8b`` on RICC-2010)
and must be the same for every kernel.

Run: .venv/bin/python benchmarks/easy_nodes_run_alone.py [--capture] [--log RICC]
     [--kernel /tmp/base/easy_nodes_kernels.py --kernel policies/backfill/easy_nodes_kernels.py]
     [--repeat 5]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import inspect
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from swf_logs import DATA, LOGS, ROOT

HERE = ROOT / "policies" / "backfill" / "easy_nodes_kernels.py"


def capture(log: str, path: Path, cores: int, memory: str) -> None:
    """Run ``simulate`` once and save the whole run's ``node_easy_run`` arguments."""
    import schedlab
    from schedlab.policies.backfill import easy_nodes_compiled

    kn = easy_nodes_compiled.kn
    real = kn.node_easy_run
    saved: list = []

    def spy(*args):  # type: ignore[no-untyped-def]
        saved.append([a.copy() if isinstance(a, np.ndarray) else a for a in args])
        return real(*args)

    w = schedlab.read(DATA / LOGS[log])
    procs = w.header.machine_size() or 0
    nodes = -(-procs // cores)
    with tempfile.TemporaryDirectory() as tmp:
        platform = Path(tmp) / "platform.toml"
        platform.write_text(
            f'[platform]\nsharing = "shared"\n[node_groups.node]\ncount = {nodes}\n'
            f'cores = {cores}\nmemory = "{memory}"\n[partitions.all]\nnodes = ["node"]\n'
        )
        kn.node_easy_run = spy
        try:
            r = schedlab.simulate(w, backfill="easy", platform=str(platform), progress=False)
        finally:
            kn.node_easy_run = real
    if not saved:
        sys.exit("the run was not a whole run: nothing captured")
    path.write_bytes(pickle.dumps(saved[-1], protocol=5))
    print(f"captured {log}: {saved[-1][14].shape[0]:,} jobs, passes {r.stats['passes']:,}")


def load_kernel(path: Path, index: int):  # type: ignore[no-untyped-def]
    """The kernel module at ``path`` (the checkout's imported as a package module;
    another file loaded under a name of its own)."""
    if path.resolve() == HERE:
        from schedlab.policies.backfill import easy_nodes_kernels

        return easy_nodes_kernels
    # In the package (the kernels import their neighbours relatively), under a name
    # fixed by the path (numba's cache of a file records the module name).
    tag = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
    name = f"schedlab.policies.backfill._node_easy_variant_{tag}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_once(module, args: list) -> tuple[float, str, int]:  # type: ignore[no-untyped-def]
    """CPU time, digest and pass count of one call on fresh copies of ``args``."""
    fresh = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    if len(fresh) == 19:  # captured before whole runs took predictions: none
        from schedlab.policies.backfill import easy_kernels

        none = easy_kernels.RunArrays(len(fresh[14]), 1, 1).arguments(1e-3)[3:]
        fresh = [*fresh, *none, np.empty(1), np.empty(1, dtype=np.int64)]
    if fresh[0].shape[0] < module.N_META:  # captured with fewer entries of meta
        meta = np.zeros(module.N_META, dtype=fresh[0].dtype)
        meta[: fresh[0].shape[0]] = fresh[0]
        fresh[0] = meta
    want = len(inspect.signature(module.node_easy_run.py_func).parameters)
    if len(fresh) == want + 1:  # a kernel before lin_target (index 39): it has none
        del fresh[39]
    elif len(fresh) == want - 1:  # captured before lin_target: unused without a model
        fresh.insert(39, np.zeros(1))
    c = time.process_time()
    passes, status, offset, *rows = module.node_easy_run(*fresh)
    if len(rows) == 2:  # a kernel before allocation_rows: the rows by job already
        nodes, amounts = rows
    else:
        nodes, amounts = module.allocation_rows(fresh[2], offset, *rows)
    cpu = time.process_time() - c
    assert status == 0, status
    h = hashlib.sha256()
    for a in (fresh[16], offset, nodes, amounts):
        h.update(np.ascontiguousarray(a).tobytes())
    return cpu, h.hexdigest()[:16], passes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--capture", action="store_true")
    parser.add_argument("--log", default="RICC", choices=sorted(LOGS))
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "node_easy_run"))
    parser.add_argument("--cores", type=int, default=8)
    parser.add_argument("--memory", default="12GiB")
    parser.add_argument("--kernel", action="append", default=[])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"node_easy_run_{args.log}.pkl"
    if args.capture or not path.exists():
        capture(args.log, path, args.cores, args.memory)
    saved = pickle.loads(path.read_bytes())
    kernels = [Path(k) for k in args.kernel] or [HERE]
    modules = [load_kernel(k, i) for i, k in enumerate(kernels)]
    best = [np.inf] * len(modules)
    digests: list[set[str]] = [set() for _ in modules]
    for i, module in enumerate(modules):  # warm-up: compile or load, not counted
        _cpu, digest, _passes = run_once(module, saved)
        digests[i].add(digest)
    for _ in range(args.repeat):
        for i, module in enumerate(modules):
            cpu, digest, _passes = run_once(module, saved)
            digests[i].add(digest)
            best[i] = min(best[i], cpu)
            print(f"  {kernels[i]}: {cpu:.3f} s", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")
    for i, k in enumerate(kernels):
        print(f"{k!s:<60} best {best[i]:.3f} s  digest {','.join(sorted(digests[i]))}")
    if len({d for s in digests for d in s}) != 1:
        sys.exit("the kernels' outcomes differ")


if __name__ == "__main__":
    main()
