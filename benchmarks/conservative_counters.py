"""Where compiled conservative backfilling spends its time on one log: counters and
cycle shares from an instrumented copy of ``policies/backfill/kernels.py``.

The copy (written to a temporary folder, never to the checkout) counts, inside the
kernels, the compressions, the queue positions they visit (one by one, or skipped
inside runs of identical jobs), what rejects each visited job, the reservation moves,
the fit searches and the slices they scan, the slices inserted into the profile and
the entries each insertion shifts; and it reads the CPU's time stamp counter around
the main parts of a compression (``llvm.readcyclecounter``: wall-clock cycles, so a
busy machine inflates them; compare the shares, not the totals). The run itself is
the ordinary ``schedlab.simulate`` with FCFS and ``kernel=compiled``, so its schedule
is the real one (the script prints a digest of the start times to compare runs).

The instrumentation is applied by replacing exact lines of the kernels' source: when
the kernels change, the script stops with the line it could not find.

Run: .venv/bin/python benchmarks/conservative_counters.py [--log RICC]
(numba compiles the copy on first use, about 20 s; it is cached in the temporary
folder, so run with ``--keep DIR`` to reuse it).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import re
import sys
import tempfile
import time
from pathlib import Path

from swf_logs import DATA, LOGS

# meta[8:] of the instrumented copy
COUNTERS = {
    15: "compressions",
    16: "queue positions in compressions (sum of queue lengths)",
    8: "positions visited one by one",
    9: "positions skipped inside runs of identical jobs",
    17: "rejected: larger than any free slice before the horizon",
    18: "rejected: same shape and reservation as one refused since the last move",
    19: "rejected: the instant horizon is too full",
    20: "rejected: the slice before r is too full, no gap can last",
    21: "reached the fit stage",
    10: "moves (bundles count once)",
    11: "jobs moved",
    12: "refits (pending ranges searched)",
    13: "forward fit searches",
    36: "slices scanned by refits",
    35: "slices scanned by forward fit searches (placements included)",
    24: "slices inserted into the profile",
    25: "entries shifted by the insertions",
    22: "kept first fits updated after moves (sum)",
}
CYCLES = {
    40: "compression",
    41: "  refits",
    42: "  forward fit searches",
    43: "  moves in the profile (_move_near)",
    44: "  after each move (reservations, kept fits, horizon)",
}

RDTSC = """
from llvmlite import ir as _ir


@intrinsic
def _rdtsc(typingctx):
    sig = types.int64()

    def codegen(context, builder, sig, args):
        fnty = _ir.FunctionType(_ir.IntType(64), [])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.readcyclecounter")
        return builder.call(fn, [])

    return sig, codegen


if TYPE_CHECKING:"""


def swap(text: str, old: str, new: str) -> str:
    """``text`` with the first ``old`` replaced by ``new``; stops the script if
    ``old`` is not there (the kernels changed)."""
    if old not in text:
        sys.exit(f"conservative_counters: kernels.py changed, line not found: {old!r}")
    return text.replace(old, new, 1)


class Patch:
    """Exact-text replacements on the kernels' source."""

    def __init__(self, text: str) -> None:
        self.text = text

    def sub(self, old: str, new: str) -> None:
        self.text = swap(self.text, old, new)

    def after(self, old: str, code: str) -> None:
        ind = old[: len(old) - len(old.lstrip())]
        self.sub(old, old + "\n" + "".join(f"{ind}{c}\n" for c in code.split("\n"))[:-1])

    def before(self, old: str, code: str) -> None:
        ind = old[: len(old) - len(old.lstrip())]
        self.sub(old, "".join(f"{ind}{c}\n" for c in code.split("\n")) + old)

    def timed(self, old: str, slot: int) -> None:
        ind = old[: len(old) - len(old.lstrip())]
        self.sub(old, f"{ind}_t0 = _rdtsc()\n{old}\n{ind}meta[{slot}] += _rdtsc() - _t0")


def instrument(text: str) -> str:
    """The kernels' source with the counters of ``COUNTERS`` and ``CYCLES``."""
    p = Patch(text)
    p.sub(
        "self.meta = np.array([1, 0, 0, 0, 1, 0, 0, -1], dtype=np.int64)",
        "self.meta = np.array([1, 0, 0, 0, 1, 0, 0, -1] + [0] * 40, dtype=np.int64)",
    )
    p.sub("\nif TYPE_CHECKING:", RDTSC)
    # slices inserted into the profile
    p.after("    if i == n or times[i] != t:", "    meta[24] += 1\n    meta[25] += n - i")
    # the fit searches: slices scanned (from where they start to where they stop)
    a = p.text.index("def _refit(")
    b = p.text.index("# The per-job arrays of a run")
    seg = p.text[a:b]
    seg = swap(seg, "hi: float,\n) -> float:", "hi: float,\n    meta: np.ndarray,\n) -> float:")
    seg = swap(
        seg,
        "bound: float, last: int\n) -> float:",
        "bound: float, last: int, meta: np.ndarray\n) -> float:",
    )
    seg = swap(seg, "    if k < 0:\n        k = 0\n", "    if k < 0:\n        k = 0\n    k0 = k\n")
    seg = swap(seg, "    k = last  # the first", "    k0 = last\n    k = last  # the first")
    split = seg.index("def _fit_until(")

    def count(slot: int):
        return lambda m: (
            f"\n{m.group(1)}meta[{slot}] += (k if k < n else n) - k0\n"
            f"{m.group(1)}return {m.group(2)}\n"
        )

    pattern = r"\n(\s+)return (start|fit|NAN)\n"
    refit, n_refit = re.subn(pattern, count(36), seg[:split])
    forward, n_forward = re.subn(pattern, count(35), seg[split:])
    if n_refit < 3 or n_forward < 2:
        sys.exit("conservative_counters: kernels.py changed: the fit searches' returns")
    seg = refit + forward
    p.text = p.text[:a] + seg + p.text[b:]
    p.sub(
        "return _fit_until(times, free, n, size, d, times[0], n - 1)",
        "return _fit_until(times, free, n, size, d, times[0], n - 1, meta)",
    )
    # compress: visits, rejections, searches, moves, cycles
    p.after("    moved = ints[MOVED]\n    n = meta[0]", "_tc = _rdtsc()")
    p.before("    while qi + 1 < n_queue:\n        qi += 1", "meta[15] += 1\nmeta[16] += n_queue")
    p.after("    while qi + 1 < n_queue:\n        qi += 1", "    meta[8] += 1")
    p.before("            qi = k - 1\n            continue", "meta[9] += k - qi - 1")
    p.after("        if s > most:", "    meta[17] += 1")
    p.after("        if seen_epoch[sh] == epoch and seen_at[sh] == r:", "    meta[18] += 1")
    p.after("            if reach > horizon and at_horizon < s:", "    meta[19] += 1")
    p.after("        if not open_before and reach > before:", "    meta[20] += 1")
    p.sub(
        "            found = _refit(times, free, n, s, d, fits[fc], fit_lo[fc], fit_hi[fc])",
        "            meta[12] += 1\n            _t0 = _rdtsc()\n"
        "            found = _refit(times, free, n, s, d, fits[fc], fit_lo[fc], fit_hi[fc], meta)\n"
        "            meta[41] += _rdtsc() - _t0",
    )
    p.sub(
        "            found = _fit_until(times, free, n, s, d, fit, i)",
        "            meta[13] += 1\n            _t0 = _rdtsc()\n"
        "            found = _fit_until(times, free, n, s, d, fit, i, meta)\n"
        "            meta[42] += _rdtsc() - _t0",
    )
    p.before("        if not at < limit:\n            continue", "meta[21] += 1")
    p.timed(
        "        gained, vacated, taken, had = _move_near(times, free, meta, r, at, d, s * bundle, "
        "at_slice)",
        43,
    )
    p.after(
        "        epoch += 1  # the profile changed: earlier rejections no longer hold",
        "meta[10] += 1\nmeta[11] += bundle\nmeta[22] += n_cached\n_t1 = _rdtsc()",
    )
    p.after(
        "        # (else the instant horizon is after both ranges the move changed)",
        "meta[44] += _rdtsc() - _t1",
    )
    p.before("    return count\n\n\n@_jit\ndef step(", "meta[40] += _rdtsc() - _tc")
    return p.text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", default="RICC", choices=sorted(LOGS))
    parser.add_argument("--keep", help="folder for the instrumented copy (and numba's cache)")
    args = parser.parse_args()

    import numpy as np
    import schedlab
    from schedlab.policies.backfill import compiled, kernels

    folder = Path(args.keep or tempfile.mkdtemp(prefix="schedlab-counters-"))
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "kernels_counted.py"
    text = instrument(Path(kernels.__file__).read_text())
    if not source.exists() or source.read_text() != text:
        source.write_text(text)
    sys.path.insert(0, str(folder))  # importable by name: numba's cache needs it
    counted = importlib.import_module("kernels_counted")

    made: list = []
    original = counted.CompiledConservative.__init__

    def keep(self, *a, **k) -> None:  # type: ignore[no-untyped-def]
        original(self, *a, **k)
        made.append(self)

    counted.CompiledConservative.__init__ = keep
    compiled.CompiledConservative = counted.CompiledConservative
    compiled.warm_up = counted.warm_up
    counted.warm_up(True)
    made.clear()

    workload = schedlab.read(DATA / LOGS[args.log])
    cpu = time.process_time()
    result = schedlab.simulate(
        workload,
        policy="fcfs",
        backfill="conservative",
        progress=False,
        backfill_options={"kernel": "compiled"},
    )
    cpu = time.process_time() - cpu
    arrays = result.workload.to_arrays()
    starts = np.asarray(arrays["submit_time"], float) + np.asarray(arrays["wait_time"], float)
    meta = made[-1].meta
    print(
        f"{args.log}: sim cpu {result.stats['cpu_time_s']:.2f} s (instrumented), "
        f"simulate cpu {cpu:.2f} s, starts sha1 {hashlib.sha1(starts.tobytes()).hexdigest()[:12]}"
    )
    for slot, name in COUNTERS.items():
        print(f"  {int(meta[slot]):>16,}  {name}")
    total = int(meta[40]) or 1
    print("  cycles (time stamp counter), share of the compressions':")
    for slot, name in CYCLES.items():
        print(f"  {int(meta[slot]):>16,}  {100 * int(meta[slot]) / total:5.1f} %  {name}")


if __name__ == "__main__":
    main()
