"""Units of measure of SSS consumable resources (Appendix A of the specification).

Memory, Disk and Swap carry an optional ``units`` attribute with a binary byte
abbreviation, ``B`` to ``YB`` (and the two joke units of the appendix, ``NB`` and
``DB``, which are accepted for completeness). The specification says that "a default
unit is implied" without naming it; schedlab assumes **MB** (the unit the
specification's own examples read naturally in, e.g. ``<Memory>1024</Memory>``), and a
reader option changes it. schedlab's common model holds memory in kilobytes, so
values are converted to KB on reading; the writer always writes ``units="KB"``.
"""

from __future__ import annotations

#: Appendix A: abbreviation -> number of bytes.
BYTE_UNITS: dict[str, int] = {
    "B": 1,
    "KB": 1 << 10,
    "MB": 1 << 20,
    "GB": 1 << 30,
    "TB": 1 << 40,
    "PB": 1 << 50,
    "EB": 1 << 60,
    "ZB": 1 << 70,
    "YB": 1 << 80,
    "NB": 1 << 90,
    "DB": 1 << 100,
}

#: The unit assumed when a Memory, Disk or Swap element has no ``units`` attribute.
DEFAULT_UNIT = "MB"


def to_kilobytes(amount: float, unit: str | None, default_unit: str = DEFAULT_UNIT) -> float:
    """``amount`` of ``unit`` (``None``: ``default_unit``) in kilobytes (2**10 bytes).

    Whole numbers of kilobytes are returned as ``int``.

    >>> to_kilobytes(2, "GB"), to_kilobytes(512, "B"), to_kilobytes(3, None)
    (2097152, 0.5, 3072)
    """
    factor = BYTE_UNITS[(unit or default_unit).strip()]
    if factor >= 1024 and float(amount).is_integer():
        return int(amount) * (factor // 1024)
    value = amount * factor / 1024
    return int(value) if float(value).is_integer() and abs(value) < 2**53 else value


def from_kilobytes(kilobytes: float, unit: str = "KB") -> float:
    """Kilobytes expressed in ``unit``."""
    return kilobytes * 1024 / BYTE_UNITS[unit]
