"""``benchmarks/conservative_counters.py`` instruments the conservative kernels by
replacing exact lines of their source: check that it still applies to them, so
that an edit of the kernels that breaks it shows here, not in the next
measurement."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from schedlab.policies.backfill import kernels

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "conservative_counters.py"


def test_the_counters_apply_to_the_kernels(monkeypatch: Any) -> None:
    # The script imports its sibling swf_logs, as it does when run from benchmarks/.
    monkeypatch.syspath_prepend(str(SCRIPT.parent))
    spec = importlib.util.spec_from_file_location("conservative_counters", SCRIPT)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    source = Path(kernels.__file__).read_text()
    counted = script.instrument(source)  # exits naming the line it could not find
    compile(counted, "kernels_counted.py", "exec")
    for slot in list(script.COUNTERS) + list(script.CYCLES):
        assert f"meta[{slot}] +=" in counted, slot
