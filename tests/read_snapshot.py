"""Test helper: everything a read gives (or the error it raises), in a form two
reads can be compared with (importable by name: ``tests/`` is on ``sys.path``, see
``conftest.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import schedlab
from schedlab.errors import FormatError


def read_snapshot(path: Path, **options: Any) -> tuple:
    """The columns, extras, header entries and meta of ``schedlab.read(path,
    **options)`` (``workers=1`` unless given), or ``("error", message, line,
    field)``."""
    options.setdefault("workers", 1)
    try:
        workload = schedlab.read(path, **options)
    except FormatError as exc:
        return ("error", str(exc), exc.line, exc.field)
    columns = workload.to_arrays()
    meta = dict(workload.meta)
    meta["findings"] = [repr(f) for f in meta.get("findings", [])]
    return (
        {name: values.tobytes() for name, values in columns.data.items()},
        columns.extras,
        [repr(entry) for entry in workload.header.entries],
        meta,
    )
