"""When a strategy runs its compiled (numba) kernels: shared by ``easy`` and
``conservative`` (option ``kernel=auto|python|compiled``)."""

from __future__ import annotations

import os
import sys

from schedlab.errors import SimulationError


def use_compiled(
    kernel: str, n: int, warm_min_jobs: int, cold_min_jobs: int, module: str, what: str
) -> bool:
    """Whether a run of ``n`` jobs uses the compiled kernels of ``module`` (a module
    of this package). ``auto``: when ``SCHEDLAB_JIT`` is not ``0`` and the run has at
    least ``warm_min_jobs`` jobs once numba is loaded in the process, or
    ``cold_min_jobs`` before (loading numba costs about half a second), and the
    kernels import. ``compiled``: always, an error naming ``what`` if they cannot."""
    if kernel == "python":
        return False
    if kernel == "auto":
        if os.environ.get("SCHEDLAB_JIT", "1") == "0":
            return False
        threshold = warm_min_jobs if "numba" in sys.modules else cold_min_jobs
        if n < threshold:
            return False
    try:
        __import__(f"{__package__}.{module}")
    except Exception:
        # ImportError without numba; numba raises RuntimeError when it finds no
        # writable cache folder for the kernels.
        if kernel == "compiled":
            raise SimulationError(
                f"compiled {what} needs numba: pip install 'schedlab[fast]'"
            ) from None
        return False
    return True


def kernel_label(compiled: object) -> str:
    """What a node-level strategy's ``kernel_name`` says, from its compiled pass
    (``None``: none chose it): ``"python"``, ``"compiled"``, or ``"compiled, then
    python from t=T"`` when the compiled pass handed the rest of the run to the
    Python pass at time ``T`` (its ``left`` and ``left_at``)."""
    if compiled is None:
        return "python"
    if getattr(compiled, "left", False):
        return f"compiled, then python from t={compiled.left_at:g}"  # type: ignore[attr-defined]
    return "compiled"
