"""The one plotting module: figure style, deterministic saving, and the figures of
``compare``, ``report`` and ``experiment``.

matplotlib is an optional extra (``pip install 'schedlab[plot]'``) imported only when
a figure is made. Figures are sized for a paper column (3.4 in wide) and saved with
fixed metadata, so the same data gives the same SVG bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .errors import UsageError

#: Width of one column of a two-column paper, inches.
COLUMN_WIDTH = 3.4
#: Width of a full page of a two-column paper, inches.
PAGE_WIDTH = 7.0


def pyplot() -> Any:
    """Import matplotlib (non-interactive backend) or explain how to install it."""
    try:
        import matplotlib
    except ImportError:
        raise UsageError(
            "plots need matplotlib: pip install 'schedlab[plot]'"
        ) from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "font.size": 8,
            "axes.titlesize": 8,
            "axes.labelsize": 8,
            "legend.fontsize": 7,
            "xtick.labelsize": 7,
            "ytick.labelsize": 7,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "savefig.dpi": 200,
            "figure.dpi": 100,
            "svg.hashsalt": "schedlab",
            "svg.fonttype": "path",
            "path.simplify": True,
        }
    )
    return plt


def new_figure(width: float = COLUMN_WIDTH, height: float | None = None, **kwargs: Any):
    """A figure and axes at paper-column size (``height`` defaults to 0.7 x width)."""
    plt = pyplot()
    return plt.subplots(figsize=(width, height or width * 0.7), layout="constrained", **kwargs)


def save_figure(fig: Any, path: str | Path, formats: Iterable[str] | None = None) -> list[Path]:
    """Save ``fig`` to ``path`` (its suffix), or to ``path`` with each suffix in
    ``formats`` (e.g. ``("png", "svg")``); metadata is fixed for reproducible bytes.
    Returns the files written and closes the figure."""
    plt = pyplot()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    targets = [path.with_suffix(f".{f.lstrip('.')}") for f in formats] if formats else [path]
    written = []
    for target in targets:
        kind = target.suffix.lstrip(".").lower()
        metadata: dict[str, Any] = {}
        if kind == "svg":
            metadata = {"Date": None, "Creator": "schedlab"}
        elif kind == "png":
            metadata = {"Software": "schedlab"}
        elif kind == "pdf":
            metadata = {"CreationDate": None, "ModDate": None, "Creator": "schedlab"}
        fig.savefig(target, metadata=metadata)
        written.append(target)
    plt.close(fig)
    return written
