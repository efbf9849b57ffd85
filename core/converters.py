"""schedlab's one cattrs converter.

Use :func:`schedlab.registry.get_registry().converter` (built after every plugin has had
the chance to register hooks through ``schedlab_converter_hooks``), or
:func:`make_converter` for a bare one. Records are unstructured to plain dicts of
JSON-compatible values; numpy scalars and arrays become Python numbers and lists.
"""

from __future__ import annotations

import math
from typing import Any

import cattrs
import numpy as np

from .model import Dependency, Header, HeaderEntry, Job, Task


def _clean_number(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _int_or_str(value: Any, _: Any) -> int | str:
    if isinstance(value, (int, str)) and not isinstance(value, bool):
        return value
    raise ValueError(f"expected an integer or a string, got {value!r}")


def make_converter() -> cattrs.Converter:
    """A converter with schedlab's hooks: numpy values, Job/Header records."""
    converter = cattrs.Converter(omit_if_default=True, forbid_extra_keys=True)
    converter.register_unstructure_hook(np.generic, lambda v: _clean_number(v.item()))
    converter.register_unstructure_hook(np.ndarray, lambda v: v.tolist())
    converter.register_unstructure_hook(float, _clean_number)
    # Extras hold arbitrary JSON-like values from the source format: keep them as is.
    converter.register_structure_hook_func(
        lambda t: t == dict[str, Any], lambda v, _: dict(v)
    )
    converter.register_structure_hook(int | str, _int_or_str)
    for cls in (Job, Task, Dependency, HeaderEntry, Header):
        # make sure hooks are generated eagerly so errors show at start-up
        converter.get_unstructure_hook(cls)
    return converter


def job_to_dict(job: Job, converter: cattrs.Converter | None = None) -> dict[str, Any]:
    """A job as a JSON-ready dict (unknown fields omitted)."""
    conv = converter or _default()
    return conv.unstructure(job)


def job_from_dict(data: dict[str, Any], converter: cattrs.Converter | None = None) -> Job:
    """A job from :func:`job_to_dict` output; bad data raises a readable error."""
    conv = converter or _default()
    try:
        return conv.structure(data, Job)
    except Exception as exc:  # cattrs ClassValidationError and friends
        from .errors import FormatError

        detail = "; ".join(cattrs.transform_error(exc)) if isinstance(
            exc, cattrs.BaseValidationError
        ) else str(exc)
        raise FormatError(f"not a valid job record: {detail}") from None


_DEFAULT: cattrs.Converter | None = None


def _default() -> cattrs.Converter:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = make_converter()
    return _DEFAULT
