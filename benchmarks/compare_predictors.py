"""EASY on user estimates against EASY++ (Tsafrir, Etsion and Feitelson 2007) and the
``learned`` predictor, on the real logs of ../shared/data/swf (FCFS, jobs killed at
their requested time): mean wait, mean bounded slowdown (10 s threshold) and the
prediction quality (mean absolute error, share of under-predictions), plus the
number of corrections. The table is docs/experiments.md's section 6.

Run: .venv/bin/python benchmarks/compare_predictors.py [--logs KTH,LANL,...]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import schedlab

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "swf"
LOGS = {
    "KTH": "KTH-SP2-1996-2.1-cln.swf.gz",
    "LANL": "LANL-CM5-1994-4.1-cln.swf.gz",
    "NASA": "NASA-iPSC-1993-3.1-cln.swf.gz",
    "HPC2N": "HPC2N-2002_excerpt-3170jobs_alea.swf",
    "RICC": "RICC-2010-2.swf.gz",
}
#: (label, estimator, backfill)
CONFIGS = (
    ("EASY (user estimates)", "requested", "easy"),
    ("EASY + SJBF (user estimates)", "requested", "easy:order=sjbf"),
    ("EASY + easy++ predictions", "easy++", "easy"),
    ("EASY++ (easy++, tsafrir correction, SJBF)", "easy++", "easy:order=sjbf"),
    ("EASY++ with correction=requested", "easy++:correction=requested", "easy:order=sjbf"),
    ("EASY + easy++ predictions, no correction", "easy++:correction=none", "easy"),
    ("EASY + learned", "learned", "easy"),
    ("EASY + learned + SJBF", "learned", "easy:order=sjbf"),
    ("EASY, perfect estimates", "actual", "easy"),
)
METRICS = ["wait", "bounded-slowdown", "prediction-error", "under-prediction"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", default="KTH,LANL,NASA,HPC2N,RICC")
    args = parser.parse_args()
    print(
        "| log | configuration | mean wait (s) | mean bsld | bsld vs EASY | MAE (s) | "
        "under-predicted | corrections |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for log in args.logs.split(","):
        w = schedlab.read(DATA / LOGS[log])
        base = None
        for label, estimator, backfill in CONFIGS:
            r = schedlab.simulate(
                w, policy="fcfs", backfill=backfill, estimator=estimator, progress=False
            )
            rep = schedlab.compute_metrics(r, names=METRICS)
            bsld = rep.value("bounded-slowdown")
            if base is None:
                base = bsld
            print(
                f"| {log} ({len(r):,} jobs) | {label} | {rep.value('wait'):,.0f} | "
                f"{bsld:,.1f} | {100 * (bsld / base - 1):+.0f} % | "
                f"{rep.value('prediction-error'):,.0f} | "
                f"{100 * rep.value('under-prediction'):.0f} % | "
                f"{r.stats.get('corrections', 0):,} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
