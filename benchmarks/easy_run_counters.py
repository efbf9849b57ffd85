"""Where compiled EASY's whole run (``easy_run``) spends its time with a
predictor: an instrumented copy of :mod:`schedlab.policies.backfill.easy_kernels`
run on inputs captured by ``easy_run_alone.py`` (``--capture`` there, or here).

It counts the corrections by what they do to the pass memo (the new estimated
end still by the head's shadow time, the memo kept by the extra processors,
dropped, or already off), the full passes and those after an instant with
corrections only (no end, no arrival: how many start a job, how many have no
free processor), the running jobs a correction moves among, block splits and
merges, corrections made useless before the next full pass (the job raised
again, or ended); and it reads the CPU's time stamp counter
(``llvm.readcyclecounter``: wall-clock cycles, so load inflates them; compare
the shares) around each part of the event loop: a correction (its rule, the
move among the running jobs (find, remove, insert), the sift in the heap of next
events), an end, the arrivals and their predictions, the passes after arrivals
only (the memo's shortcut), the full passes, the pushes of started jobs. A pair
of counter reads costs about 30 cycles here: short sections are inflated.

The instrumentation replaces exact lines of the kernel's source: when the kernel
changes, the script stops with the line it could not find. Its lines are those of
the kernel before the correction queues (commit 3501440; the queues use the
``meta`` entries this script counted in, and the correction's lines moved into
``_raise``): until its swaps are written again for the current kernel, profile
that version, ``git show 3501440:policies/backfill/easy_kernels.py >
/tmp/easy_kernels_3501440.py`` then ``--kernel /tmp/easy_kernels_3501440.py``.

Run: .venv/bin/python benchmarks/easy_run_counters.py [--estimators requested,easy++,learned]
     [--dir /tmp/easy_run_capture] [--kernel policies/backfill/easy_kernels.py]
"""

from __future__ import annotations

import argparse
import importlib.util
import pickle
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from easy_run_alone import HERE, capture, capture_path

CYCLES = """
@intrinsic
def _cycles(typingctx):
    from llvmlite import ir as _ir

    def codegen(context, builder, sig, args):
        fnty = _ir.FunctionType(_ir.IntType(64), [])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.readcyclecounter")
        return builder.call(fn, [])

    return types.int64(), codegen


@intrinsic
def _memmove("""

# counts[] entries (easy_run's ``counts``, lengthened) and meta[] entries (the
# kernel's ``meta``, lengthened: move_running sees only that).
COUNTS = {
    3: "corrections: new end by the shadow time (memo kept)",
    4: "corrections: memo kept by the extra processors",
    5: "corrections: memo dropped",
    6: "corrections: memo already off",
    15: "corrections raised again before the next full pass",
    16: "corrections whose job ended before the next full pass",
    7: "full passes",
    8: "full passes after corrections only",
    9: "... that start a job",
    10: "... with no free processor",
    12: "waiting jobs at full passes (sum)",
    13: "instants with corrections",
    14: "... with corrections only",
}
META = {
    11: "corrections leaving the job in place",
    14: "running jobs at corrections (sum)",
    15: "blocks of running jobs at corrections (sum)",
    18: "block splits",
    19: "block merges",
}
SECTIONS = {
    20: "correction: rule (_corrected)",
    21: "correction: move among running jobs",
    22: "correction: heap sift",
    23: "correction: all",
    24: "ends (heap pop, predictor's history)",
    25: "arrivals and predictions",
    26: "passes after arrivals only (memo)",
    28: "full passes: before the call",
    27: "full passes: easy_pass",
    29: "full passes: pushes of started jobs",
}
MOVE = {10: "move: find", 12: "move: remove", 13: "move: insert"}

SWAPS = [
    ("\n@intrinsic\ndef _memmove(", CYCLES),
    (
        "    p, x = _rl_find(meta, rints, rend, old_end, j, True)\n    if p < 0:\n"
        "        return False\n",
        "    c0 = _cycles()\n    p, x = _rl_find(meta, rints, rend, old_end, j, True)\n"
        "    if p < 0:\n        return False\n    meta[10] += _cycles() - c0\n",
    ),
    (
        "        rend[here] = new_end\n        return True\n"
        "    s = _rl_remove(meta, rints, rend, p, x)\n",
        "        rend[here] = new_end\n        meta[11] += 1\n        return True\n"
        "    c0 = _cycles()\n    s = _rl_remove(meta, rints, rend, p, x)\n"
        "    meta[12] += _cycles() - c0\n    c0 = _cycles()\n",
    ),
    (
        "        _rl_insert(meta, rints, rend, new_end, j, s, 0, False)\n    return True\n",
        "        _rl_insert(meta, rints, rend, new_end, j, s, 0, False)\n"
        "    meta[13] += _cycles() - c0\n    meta[14] += meta[M_RUNNING]\n"
        "    meta[15] += meta[M_BLOCKS]\n    return True\n",
    ),
    (
        "        # Full: its upper half moves to a new block just after it.\n",
        "        # Full: its upper half moves to a new block just after it.\n"
        "        meta[18] += 1\n",
    ),
    (
        "    count[a] += count[b]\n    total[a] += total[b]\n",
        "    count[a] += count[b]\n    total[a] += total[b]\n    meta[19] += 1\n",
    ),
    (
        "    n = submit.shape[0]\n    job_size = ints[JOB_SIZE]\n",
        "    n = submit.shape[0]\n    cstart = _cycles()\n    job_size = ints[JOB_SIZE]\n",
    ),
    (
        "        while n_heap and heap_t[0] == now:\n            j = heap_j[0]\n",
        "        n_corr_now = 0\n        while n_heap and heap_t[0] == now:\n"
        "            j = heap_j[0]\n",
    ),
    (
        "                # Job j reached its estimated end still running: raise it.\n"
        "                old = job_end[j]\n",
        "                # Job j reached its estimated end still running: raise it.\n"
        "                c0 = _cycles()\n                old = job_end[j]\n",
    ),
    (
        "                if not move_running(meta, ints, floats, rints, rend, j, old, new):\n"
        "                    return passes, 2\n"
        "                _heap_replace_top(heap_t, heap_j, n_heap, "
        "new if new < ends else ends, j)\n",
        "                c1 = _cycles()\n"
        "                if not move_running(meta, ints, floats, rints, rend, j, old, new):\n"
        "                    return passes, 2\n"
        "                c2 = _cycles()\n"
        "                _heap_replace_top(heap_t, heap_j, n_heap, "
        "new if new < ends else ends, j)\n"
        "                c3 = _cycles()\n"
        "                counts[20] += c1 - c0\n                counts[21] += c2 - c1\n"
        "                counts[22] += c3 - c2\n",
    ),
    (
        "                counts[COUNT_CORRECTIONS] += 1\n",
        "                counts[COUNT_CORRECTIONS] += 1\n"
        "                if not memo:\n                    counts[6] += 1\n"
        "                elif new <= memo_shadow:\n                    counts[3] += 1\n"
        "                elif memo_extra >= job_size[j]:\n                    counts[4] += 1\n"
        "                else:\n                    counts[5] += 1\n"
        "                if ints[RUN_NEW, j] == counts[7] + 1:\n"
        "                    counts[15] += 1\n"
        "                ints[RUN_NEW, j] = counts[7] + 1\n"
        "                n_corr_now += 1\n                counts[23] += _cycles() - c0\n",
    ),
    (
        "            n_heap = _heap_pop(heap_t, heap_j, n_heap)\n",
        "            c0 = _cycles()\n            if ints[RUN_NEW, j] == counts[7] + 1:\n"
        "                counts[16] += 1\n            n_heap = _heap_pop(heap_t, heap_j, n_heap)\n",
    ),
    (
        "                    counts,\n                )\n        n_pending = 0\n",
        "                    counts,\n                )\n            counts[24] += _cycles() - c0\n"
        "        n_pending = 0\n        c0 = _cycles()\n",
    ),
    (
        "        if meta[M_WAITING] + n_pending == 0:\n            continue\n        passes += 1\n",
        "        counts[25] += _cycles() - c0\n        if n_corr_now:\n"
        "            counts[13] += 1\n"
        "            if n_finished == 0 and n_pending == 0:\n                counts[14] += 1\n"
        "        if meta[M_WAITING] + n_pending == 0:\n            continue\n        passes += 1\n"
        "        c0 = _cycles()\n",
    ),
    (
        "                    meta[M_WAITING] = waiting\n                continue\n",
        "                    meta[M_WAITING] = waiting\n"
        "                counts[26] += _cycles() - c0\n"
        "                continue\n",
    ),
    (
        "        started, _, head, extra, shadow = easy_pass(\n"
        "            meta, ints, floats, rints, rend, now, free, n_pending, "
        "False, False, 0, n_finished\n"
        "        )\n",
        "        counts[7] += 1\n        alone = n_finished == 0 and n_pending == 0\n"
        "        if alone:\n            counts[8] += 1\n            if free == 0:\n"
        "                counts[10] += 1\n        counts[12] += meta[M_WAITING]\n"
        "        c5 = _cycles()\n"
        "        started, _, head, extra, shadow = easy_pass(\n"
        "            meta, ints, floats, rints, rend, now, free, n_pending, "
        "False, False, 0, n_finished\n"
        "        )\n        c6 = _cycles()\n        counts[27] += c6 - c5\n"
        "        counts[28] += c5 - c0\n"
        "        if alone and started > 0:\n            counts[9] += 1\n",
    ),
    (
        "        memo = head >= 0\n        memo_head = head\n",
        "        counts[29] += _cycles() - c6\n        memo = head >= 0\n"
        "        memo_head = head\n",
    ),
    (
        "    if meta[M_WAITING]:\n        return passes, 1\n    return passes, 0\n",
        "    counts[30] = _cycles() - cstart\n    if meta[M_WAITING]:\n        return passes, 1\n"
        "    return passes, 0\n",
    ),
]


def instrumented(source: Path, folder: Path):
    """The kernel at ``source`` with the counters, as a module."""
    text = source.read_text()
    for old, new in SWAPS:
        if text.count(old) != 1:
            sys.exit(f"easy_run_counters: the kernel changed, not found once: {old!r}")
        text = text.replace(old, new)
    path = folder / "easy_kernels_counted.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("_easy_kernels_counted", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", default="RICC")
    parser.add_argument("--estimators", default="requested,easy++,learned")
    parser.add_argument("--dir", default=str(Path(tempfile.gettempdir()) / "easy_run_capture"))
    parser.add_argument("--kernel", default=str(HERE))
    args = parser.parse_args()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    kn = instrumented(Path(args.kernel), folder)
    for estimator in args.estimators.split(","):
        path = capture_path(folder, args.log, estimator)
        if not path.exists():
            capture(args.log, estimator, folder)
        inputs = pickle.loads(path.read_bytes())
        inputs[0] = np.concatenate([inputs[0], np.zeros(20, dtype=np.int64)])  # meta
        inputs[21] = np.zeros(32, dtype=np.int64)  # counts
        passes, status = kn.easy_run(*inputs)
        counts, meta = inputs[21], inputs[0]
        corrections = int(counts[1])
        total = int(counts[30])
        print(f"\n{estimator}: {passes:,} passes, {corrections:,} corrections, status {status}")
        for k, what in COUNTS.items():
            print(f"  {what}: {int(counts[k]):,}")
        for k, what in META.items():
            print(f"  {what}: {int(meta[k]):,}")
        print(f"  {'part':44s} {'Mcycles':>9s} {'share':>6s} {'per event':>10s}")
        events = {20: corrections, 21: corrections, 22: corrections, 23: corrections}
        for k, what in SECTIONS.items():
            per = f"{counts[k] / events[k]:.0f}" if events.get(k) else ""
            print(f"  {what:44s} {counts[k] / 1e6:9.1f} {counts[k] / total:6.1%} {per:>10s}")
        moved = corrections - int(meta[11])
        for k, what in MOVE.items():
            per = meta[k] / max(moved if k != 10 else corrections, 1)
            print(f"  {what:44s} {meta[k] / 1e6:9.1f} {meta[k] / total:6.1%} {per:10.0f}")
        print(f"  {'whole run':44s} {total / 1e6:9.1f}")


if __name__ == "__main__":
    main()
