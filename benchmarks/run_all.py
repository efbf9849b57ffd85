"""Run every benchmark script of this folder, one after the other, each in its own process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    """Run ``bench_*.py`` in name order; return the number of scripts that failed."""
    failed = 0
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"\n=== {script.name}", flush=True)
        failed += subprocess.run([sys.executable, str(script), *sys.argv[1:]]).returncode != 0
    return failed


if __name__ == "__main__":
    sys.exit(main())
