"""Fixed-width columns between Arrow and numpy through their buffers.

pyarrow's own conversions (``Array.to_numpy``, ``pyarrow.array`` of a numpy array,
Python scalars such as ``fill_null(0)``) import pandas on first use, which costs
about 0.3 s of CPU once per process (measured with pyarrow 26 on the development
machine: a tenth of the reader's own work on a 1-million-event trace). The fast
reader only needs numbers out of (and sort keys into) Arrow, and for the types it
uses the buffers give exactly the same values: the data buffer holds the values
(``offset`` of them skipped), the validity bitmap (least significant bit first)
marks the nulls.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Read through the buffers (``False``: pyarrow's own conversions, which import
#: pandas; the differential tests compare the two).
USE_BUFFERS = True

#: numpy dtype of each Arrow type converted here (by the type's string).
_DTYPES = {
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "double": np.float64,
}


def numpy_dtype(arrow_type: Any) -> Any:
    """The numpy dtype :func:`to_numpy` gives for ``arrow_type``, or ``None``."""
    return _DTYPES.get(str(arrow_type))


def to_numpy(column: Any, fill: Any) -> np.ndarray:
    """A fixed-width Arrow column (an ``Array`` or a ``ChunkedArray`` of a type of
    :data:`_DTYPES`) as a new numpy array, ``fill`` where it is null: the result of
    ``column.fill_null(fill).to_numpy()`` without importing pandas."""
    dtype = numpy_dtype(column.type)
    if dtype is None:
        raise TypeError(f"not a fixed-width number column: {column.type}")
    if not USE_BUFFERS:
        filled = column.fill_null(fill)
        if hasattr(filled, "chunks"):
            return filled.to_numpy()
        return filled.to_numpy(zero_copy_only=False)
    chunks = column.chunks if hasattr(column, "chunks") else [column]
    out = np.empty(len(column), dtype=dtype)
    pos = 0
    for chunk in chunks:
        n = len(chunk)
        if not n:
            continue
        validity, data = chunk.buffers()[:2]
        start = chunk.offset
        out[pos : pos + n] = np.frombuffer(data, dtype=dtype, count=start + n)[start:]
        if chunk.null_count:
            out[pos : pos + n][_bits(validity, start, n) == 0] = fill
        pos += n
    return out


def _bits(buffer: Any, start: int, n: int) -> np.ndarray:
    """Bits ``start`` to ``start + n`` of an Arrow bitmap, as 0/1 bytes."""
    raw = np.frombuffer(buffer, dtype=np.uint8)
    return np.unpackbits(raw, count=start + n, bitorder="little")[start:]


def booleans(column: Any, null: int) -> np.ndarray:
    """A boolean Arrow column as int64 ``1``/``0``, ``null`` where it is null (as
    ``is_valid()`` and ``fill_null(False)`` through ``to_numpy`` give, without pandas)."""
    if str(column.type) != "bool":
        raise TypeError(f"not a boolean column: {column.type}")
    if not USE_BUFFERS:
        out = np.full(len(column), null, dtype=np.int64)
        valid = column.is_valid().to_numpy(zero_copy_only=False)
        filled = column.fill_null(False).to_numpy(zero_copy_only=False)
        out[valid] = filled[valid].astype(np.int64)
        return out
    chunks = column.chunks if hasattr(column, "chunks") else [column]
    out = np.empty(len(column), dtype=np.int64)
    pos = 0
    for chunk in chunks:
        n = len(chunk)
        if not n:
            continue
        validity, data = chunk.buffers()[:2]
        start = chunk.offset
        out[pos : pos + n] = _bits(data, start, n)
        if chunk.null_count:
            out[pos : pos + n][_bits(validity, start, n) == 0] = null
        pos += n
    return out


def has_number_dtype(values: np.ndarray) -> bool:
    """True when :func:`from_numpy` takes ``values`` (a dtype of :data:`_DTYPES`)."""
    return any(values.dtype == dtype for dtype in _DTYPES.values())


def from_numpy(values: np.ndarray, pa: Any) -> Any:
    """A numpy array of a fixed-width number dtype as an Arrow array without nulls
    (the values are shared, not copied): ``pa.array(values)`` without pandas."""
    if not USE_BUFFERS:
        return pa.array(values)
    values = np.ascontiguousarray(values)
    arrow_type = pa.from_numpy_dtype(values.dtype)
    if numpy_dtype(arrow_type) is None:
        raise TypeError(f"not a fixed-width number array: {values.dtype}")
    return pa.Array.from_buffers(arrow_type, len(values), [None, pa.py_buffer(values)])
