"""Typed JSON: JSON that keeps tuples and dictionary keys other than text.

Plain JSON turns a tuple into a list and a key ``1`` into ``"1"``, so an extra
such as ``extras["events"]`` (a tuple of tuples) or ``meta["names"]`` (keyed by
numbers) would come back changed. Typed JSON wraps every container that is not a
list: a tuple is ``{"t": [items]}`` and a dictionary ``{"d": [[key, value], ...]}``
(keys in their order); lists, text, numbers, booleans and null are themselves.
Every JSON object is such a wrapper, so a document says what it holds without
ambiguity. The writer uses it only where plain JSON would not give the value back
(:func:`is_plain`), so documents keep plain JSON wherever they can.
"""

from __future__ import annotations

import json
from typing import Any

_SCALARS = (str, int, float, bool, type(None))


def is_plain(value: Any) -> bool:
    """True when plain JSON gives ``value`` back equal and of the same types: it is
    made of text, numbers, booleans, null, lists and dictionaries keyed by text."""
    if isinstance(value, _SCALARS):
        return type(value) in _SCALARS
    if type(value) is list:
        return all(is_plain(item) for item in value)
    if type(value) is dict:
        return all(type(k) is str and is_plain(v) for k, v in value.items())
    return False


def encode(value: Any) -> Any:
    """``value`` as typed JSON data (see the module); raises :class:`TypeError` for a
    value it cannot represent (a set, an object). Numpy scalars become numbers."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, tuple):
        return {"t": [encode(item) for item in value]}
    if isinstance(value, dict):
        return {"d": [[encode(k), encode(v)] for k, v in value.items()]}
    if hasattr(value, "item") and not hasattr(value, "__len__"):  # numpy scalar
        item = value.item()
        if isinstance(item, _SCALARS):
            return item
    raise TypeError(f"a value of type {type(value).__name__} has no JSON form")


def dumps(value: Any) -> str:
    """``value`` as typed JSON text (:func:`encode`)."""
    return json.dumps(encode(value), ensure_ascii=False)


def decode(data: Any, field: str) -> Any:
    """The value of typed JSON ``data`` (parsed JSON); raises :class:`ValueError`
    naming ``field`` when ``data`` is not typed JSON."""
    if isinstance(data, list):
        return [decode(item, field) for item in data]
    if not isinstance(data, dict):
        return data
    if len(data) != 1 or not isinstance(next(iter(data.values())), list):
        raise ValueError(f"{field}: expected {{'t': [...]}} or {{'d': [...]}}, got {_keys(data)}")
    if "t" in data:
        return tuple(decode(item, field) for item in data["t"])
    if "d" not in data:
        raise ValueError(f"{field}: expected {{'t': [...]}} or {{'d': [...]}}, got {_keys(data)}")
    out: dict[Any, Any] = {}
    for pair in data["d"]:
        if not isinstance(pair, list) or len(pair) != 2:
            raise ValueError(f"{field}: a dictionary item is not a [key, value] pair")
        key = decode(pair[0], field)
        try:
            out[key] = decode(pair[1], field)
        except TypeError:
            raise ValueError(f"{field}: a dictionary key is a {type(key).__name__}") from None
    return out


def loads(text: str, field: str) -> Any:
    """The value of typed JSON ``text``; :class:`ValueError` naming ``field`` when it is
    not valid JSON or not typed JSON."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise ValueError(f"{field}: not valid JSON ({error})") from None
    try:
        return decode(data, field)
    except RecursionError:
        raise ValueError(f"{field}: nested too deeply") from None


def _keys(data: dict[str, Any]) -> str:
    keys = ", ".join(repr(k) for k in list(data)[:3])
    return f"an object with key(s) {keys}" if keys else "an empty object"
