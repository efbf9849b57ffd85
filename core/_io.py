"""Deprecated alias of :mod:`schedlab.io` (its former, private name).

Import from ``schedlab.io`` instead; this module re-exports the same objects and
will be removed in a later version.
"""

from __future__ import annotations

from .io import (  # noqa: F401 - re-exported
    BOM,
    Source,
    _peek,
    atomic_output,
    compression_of,
    decompression_error,
    interrupted_outputs,
    normalize_text,
    normalized,
    open_binary,
    open_output,
    open_text,
    read_head,
    remove_stale_parts,
    source_name,
    staged_output,
    strip_compression_suffix,
)
