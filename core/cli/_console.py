"""Printing rich tables without shortening a number.

rich fits a table to the console by shrinking its columns, and a cell too wide
for its column is cut to ``…``: ``10,242`` would read ``10,2…``. :func:`print_table`
prints a table that fits as rich does; otherwise it lets the headers wrap (at
words, folded only when a word is wider than the column's values), keeps every
column as wide as its widest value, and when even that is too wide splits the
table into parts, each repeating the leading text columns (policy, metric,
group ...) that tell the rows apart.
"""

from __future__ import annotations

import copy
from typing import Any

#: A width no table reaches: natural widths are measured within it.
_UNBOUNDED = 1_000_000


def _width(console: Any, renderable: Any) -> int:
    """The width ``renderable`` takes when nothing squeezes it."""
    from rich.measure import Measurement

    return int(
        Measurement.get(console, console.options.update_width(_UNBOUNDED), renderable).maximum
    )


def _header_words(header: Any) -> int:
    """The widest word of a header (what it needs when wrapped)."""
    from rich.text import Text

    text = header if isinstance(header, Text) else Text.from_markup(str(header))
    return max((len(word) for word in text.plain.split()), default=0)


def column_widths(console: Any, table: Any) -> list[int]:
    """Each column's width without padding when headers wrap: its widest value,
    or its header's widest word when wider (a ``no_wrap`` column keeps its whole
    header)."""
    widths = []
    for column in table.columns:
        cells = [_width(console, cell) for cell in column.cells]
        header = _width(console, column.header) if column.no_wrap else _header_words(column.header)
        widths.append(max([header, *cells, 1]))
    return widths


def _key_count(table: Any) -> int:
    """The leading columns that are not right-justified (the row labels)."""
    count = 0
    for column in table.columns:
        if column.justify == "right":
            break
        count += 1
    return count if count < len(table.columns) else 0


def _part(table: Any, indices: list[int], widths: list[int], title: Any) -> Any:
    """A copy of ``table`` with the columns ``indices`` at ``widths`` (headers
    wrapping, values never cut)."""
    part = copy.copy(table)
    part.columns = []
    part.title = title
    for index in indices:
        column = copy.copy(table.columns[index])
        column._cells = list(table.columns[index]._cells)
        column.width = widths[index]
        column.overflow = "fold"  # only a header word wider than the values
        column.no_wrap = False  # as wide as its values: squeezed, it folds, never crops
        column._index = len(part.columns)
        part.columns.append(column)
    return part


def fit_table(console: Any, table: Any) -> list[Any]:
    """``table`` as tables that fit ``console`` with every value whole: the table
    itself when it fits, else with wrapped headers, else split into parts that
    repeat its leading text columns (the first part keeps the title, the others
    say "(continued)"; the last keeps the caption). A part that cannot fit even
    with one value column (a console narrower than the row labels and one value)
    is kept: rich then folds its values onto more lines, never cuts them to
    ``…``."""
    from rich.table import Table

    available = console.width
    if not isinstance(table, Table) or _width(console, table) <= available:
        return [table]
    widths = column_widths(console, table)

    def fits(indices: list[int]) -> bool:
        return _width(console, _part(table, indices, widths, None)) <= available

    everything = list(range(len(table.columns)))
    if fits(everything):
        return [_part(table, everything, widths, table.title)]
    keys = list(range(_key_count(table)))
    groups: list[list[int]] = []
    current: list[int] = []
    for index in everything[len(keys) :]:
        if current and not fits([*keys, *current, index]):
            groups.append(current)
            current = []
        current.append(index)
    if current:
        groups.append(current)
    out = []
    for n, chosen in enumerate(groups):
        title = table.title
        if n and title:
            plain = title.plain if hasattr(title, "plain") else str(title)
            title = f"{plain} (continued)"
        part = _part(table, [*keys, *chosen], widths, title)
        if n < len(groups) - 1:
            part.caption = None
        out.append(part)
    return out


def print_table(console: Any, table: Any) -> None:
    """Print ``table`` on ``console`` without cutting a value (:func:`fit_table`);
    a table that fits is printed as rich prints it."""
    for part in fit_table(console, table):
        console.print(part)
