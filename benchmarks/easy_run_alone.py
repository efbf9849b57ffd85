"""Compiled EASY's whole-run kernel alone (``easy_run``), on inputs captured from a
real run: the measure behind issue 18's predictor overhead, free of the rest of
``simulate`` (reading, preparing, building the result).

``--capture`` runs ``simulate`` (FCFS + EASY) on the log with each estimator and
saves the arguments ``easy_run`` receives (copied before the call) to
``--dir`` (a pickle per estimator). Then, for each estimator, every kernel
given with ``--kernel`` (a path to an ``easy_kernels.py``, the checkout's when
none is given; another file, such as a copy of main's, is loaded as a module of
its own) runs on fresh copies of the captured inputs, in ``--repeat``
interleaved turns (each turn runs every kernel once, every other turn in the
reverse order; a kernel taking one argument fewer, from before ``lin_target``,
runs without it, and a capture from before it gets the targets a run would
give), keeping each one's best CPU time; the schedules are compared
(``start``, estimated ends and estimates: ``sha1`` digests, which must be equal
for every kernel) and the passes and corrections printed.

Run: .venv/bin/python benchmarks/easy_run_alone.py --capture [--log RICC]
     [--estimators requested,easy++,learned] [--kernel /tmp/base/easy_kernels.py
     --kernel policies/backfill/easy_kernels.py] [--repeat 5]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import inspect
import pickle
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from schedlab.sim.online_linear import log_targets
from swf_logs import DATA, LOGS

HERE = Path(__file__).resolve().parent.parent / "policies" / "backfill" / "easy_kernels.py"


def capture_path(folder: Path, log: str, estimator: str) -> Path:
    """Where the inputs captured for ``estimator`` on ``log`` are kept."""
    return folder / f"easy_run_{log}_{estimator.replace(':', '_').replace('=', '-')}.pkl"


def capture(log: str, estimator: str, folder: Path) -> Path:
    """Run ``simulate`` once and save ``easy_run``'s arguments."""
    import schedlab
    from schedlab.policies.backfill import easy_compiled

    kn = easy_compiled.kn
    real = kn.easy_run
    saved: list = []

    def spy(*args):
        saved.append([a.copy() if isinstance(a, np.ndarray) else a for a in args])
        return real(*args)

    kn.easy_run = spy
    try:
        w = schedlab.read(DATA / LOGS[log])
        r = schedlab.simulate(
            w, policy="fcfs", backfill="easy", estimator=estimator, progress=False
        )
    finally:
        kn.easy_run = real
    big = max(saved, key=lambda a: a[5].shape[0])  # the run's call (not the warm-up)
    path = capture_path(folder, log, estimator)
    path.write_bytes(pickle.dumps(big, protocol=5))
    print(f"captured {estimator}: {big[5].shape[0]:,} jobs, passes {r.stats['passes']:,}")
    return path


def load_kernel(path: Path):
    """The kernel module at ``path`` (the checkout's is imported as a package
    module; another file is loaded under a name of its own, the same for the same
    path: numba's cache of a file records the module name it was first loaded
    under, and loading it under another fails, ``No module named ...``)."""
    if path.resolve() == HERE:
        from schedlab.policies.backfill import easy_kernels

        return easy_kernels
    name = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
    spec = importlib.util.spec_from_file_location(f"_easy_kernels_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def digest(*arrays: np.ndarray) -> str:
    h = hashlib.sha1()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:12]


def run_once(kn, args: list) -> tuple[float, tuple]:
    fresh = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    meta = fresh[0]
    if meta.shape[0] < kn.N_META:  # captured with fewer entries of meta
        fresh[0] = np.zeros(kn.N_META, dtype=meta.dtype)
        fresh[0][: meta.shape[0]] = meta
    rints = fresh[3]
    if rints.shape[0] < kn.N_RUN_ROWS:  # captured with fewer rows of running jobs
        more = np.empty((kn.N_RUN_ROWS, rints.shape[1]), dtype=rints.dtype)
        more[: rints.shape[0]] = rints
        fresh[3] = more
    want = len(inspect.signature(kn.easy_run.py_func).parameters)
    if len(fresh) > want:  # a kernel before lin_target (it computes the targets itself)
        del fresh[want:]
    elif len(fresh) == want - 1:  # captured before lin_target: the same numbers
        linear = fresh[11][kn.MODEL_PREDICT] == kn.PREDICT_LINEAR
        scale = fresh[30][kn.LIN_SCALE]
        fresh.append(log_targets(fresh[6], scale) if linear else np.zeros(1))
    cpu = time.process_time()
    passes, status = kn.easy_run(*fresh)
    cpu = time.process_time() - cpu
    n = fresh[5].shape[0]
    floats = fresh[2]
    start = fresh[8]
    counts = fresh[21]
    # floats rows: 0 JOB_ESTIMATE, 4 JOB_END (see easy_kernels).
    schedule = digest(start, floats[4, :n], floats[0, :n])
    return cpu, (passes, status, int(counts[1]), schedule)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", default="RICC")
    parser.add_argument("--estimators", default="requested,easy++,learned")
    parser.add_argument("--dir", default=str(Path(tempfile.gettempdir()) / "easy_run_capture"))
    parser.add_argument("--capture", action="store_true", help="capture the inputs first")
    parser.add_argument("--kernel", action="append", help="an easy_kernels.py (repeatable)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    estimators = args.estimators.split(",")
    paths = {}
    for estimator in estimators:
        paths[estimator] = capture_path(folder, args.log, estimator)
        if args.capture or not paths[estimator].exists():
            capture(args.log, estimator, folder)
    kernels = [Path(k) for k in (args.kernel or [str(HERE)])]
    modules = [load_kernel(k) for k in kernels]
    for m in modules:
        m.warm_up()
    print("| estimator | kernel | best cpu s | runs | passes | corrections | schedule |")
    print("| --- | --- | ---: | --- | ---: | ---: | --- |")
    for estimator in estimators:
        inputs = pickle.loads(paths[estimator].read_bytes())
        for m in modules:  # compiled and warm (the first call with these types)
            run_once(m, inputs)
        times: list[list[float]] = [[] for _ in modules]
        results: list = [None] * len(modules)
        for turn in range(args.repeat):
            # Every other turn in the reverse order: run second in a turn, the same
            # kernel under two names measured 5-8 % slower (load about 2).
            order = range(len(modules)) if turn % 2 == 0 else range(len(modules) - 1, -1, -1)
            for i in order:
                m = modules[i]
                cpu, got = run_once(m, inputs)
                times[i].append(cpu)
                results[i] = got
        for i, k in enumerate(kernels):
            passes, status, corrections, schedule = results[i]
            runs = " ".join(f"{t:.3f}" for t in times[i])
            print(
                f"| `{estimator}` | {k} | {min(times[i]):.3f} | {runs} | {passes:,} | "
                f"{corrections:,} | {schedule}{'' if status == 0 else f' status {status}'} |",
                flush=True,
            )
        if len({r[3] for r in results}) > 1 or len({r[0] for r in results}) > 1:
            print(f"SCHEDULES DIFFER for {estimator}", flush=True)


if __name__ == "__main__":
    main()
