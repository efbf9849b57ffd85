"""The one plotting module: figure style, deterministic saving, and the figures of
``compare``, ``report`` and ``experiment``.

matplotlib is an optional extra (``pip install 'schedlab[plot]'``) imported only when
a figure is made. Figures are sized for a paper column (3.4 in wide) and saved with
fixed metadata, so the same data gives the same SVG bytes.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .errors import UsageError

#: Width of one column of a two-column paper, inches.
COLUMN_WIDTH = 3.4
#: Width of a full page of a two-column paper, inches.
PAGE_WIDTH = 7.0


def _usable_folder(base: Path) -> bool:
    """Whether matplotlib can keep its files in ``base/matplotlib`` creating at most
    that folder and ``base`` inside folders that exist and are writable:
    ``~/.config`` may be created in a HOME that exists, not in one that does not."""
    for path in (base / "matplotlib", base, base.parent):
        if path.is_dir():
            return os.access(path, os.W_OK | os.X_OK)
        if os.path.lexists(path):
            return False  # a file, or a broken symbolic link, on the way
    return False


def _matplotlib_folder() -> None:
    """Before matplotlib is first imported: when its configuration or cache folder
    (``~/.config/matplotlib``, ``~/.cache/matplotlib``, or under ``XDG_CONFIG_HOME``/
    ``XDG_CACHE_HOME``) cannot be used (a read-only or missing HOME, as on a
    compute node or in a container), point ``MPLCONFIGDIR`` at a new temporary
    folder, removed at exit. matplotlib would otherwise print two lines of its own
    on every command that draws (``mkdir -p failed ...``, ``Matplotlib created a
    temporary cache directory ...``), or create ``.config`` and ``.cache`` in a HOME
    that does not exist. A ``MPLCONFIGDIR`` the user set is kept, and so is the
    usual folder when it works (its font cache is reused)."""
    if "matplotlib" in sys.modules or os.environ.get("MPLCONFIGDIR"):
        return
    if not sys.platform.startswith(("linux", "freebsd")):
        return  # elsewhere matplotlib uses other folders; left to it
    try:
        home = Path.home()
    except RuntimeError:  # no HOME and no password entry
        home = None
    bases: list[Path | None] = []
    for variable, default in (("XDG_CONFIG_HOME", ".config"), ("XDG_CACHE_HOME", ".cache")):
        given = os.environ.get(variable)
        if given:
            bases.append(Path(os.path.abspath(given)))
        else:
            bases.append(None if home is None else home / default)
    if all(base is not None and _usable_folder(base) for base in bases):
        return
    import atexit
    import shutil
    import tempfile

    try:
        temporary = tempfile.mkdtemp(prefix="schedlab-matplotlib-")
    except OSError:  # no writable temporary folder either: matplotlib says so itself
        return
    atexit.register(shutil.rmtree, temporary, ignore_errors=True)
    os.environ["MPLCONFIGDIR"] = temporary


def pyplot() -> Any:
    """Import matplotlib (non-interactive backend) or explain how to install it.

    The Agg backend is chosen only when pyplot is not loaded yet: a program that
    embeds schedlab (a notebook) keeps the backend it chose. The style is set in
    the global ``rcParams``; public entry points that draw in someone else's
    process restore them (:func:`kept_style`)."""
    _matplotlib_folder()
    try:
        import matplotlib
    except ImportError:
        raise UsageError("plots need matplotlib: pip install 'schedlab[plot]'") from None
    if "matplotlib.pyplot" not in sys.modules:
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


@contextlib.contextmanager
def kept_style() -> Iterator[None]:
    """Restore matplotlib's ``rcParams`` on exit (what :func:`pyplot` set inside
    stays inside): the style of the caller's own figures is left as it was."""
    _matplotlib_folder()
    try:
        import matplotlib
    except ImportError:  # pyplot() inside says how to install it
        yield
        return
    with matplotlib.rc_context():
        yield


def new_figure(width: float = COLUMN_WIDTH, height: float | None = None, **kwargs: Any):
    """A figure and axes at paper-column size (``height`` defaults to 0.7 x width)."""
    plt = pyplot()
    return plt.subplots(figsize=(width, height or width * 0.7), layout="constrained", **kwargs)


def figure_formats() -> list[str]:
    """The suffixes (without the dot) a figure can be saved as: those of
    matplotlib's Agg canvas (png, svg, pdf, eps, jpg ...), sorted."""
    pyplot()
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    return sorted(FigureCanvasAgg.get_supported_filetypes())


def check_figure_path(path: str | os.PathLike[str], option: str = "figure") -> str:
    """The format of a figure file from its suffix (lower case, without the dot);
    a :class:`UsageError` naming ``option`` and the file, and listing the supported
    suffixes, when there is none or matplotlib cannot write it."""
    kind = Path(path).suffix.lstrip(".").lower()
    supported = figure_formats()
    if kind not in supported:
        what = f"suffix .{kind} is not supported" if kind else "no suffix to pick the format"
        raise UsageError(
            f"{option} {os.fspath(path)}: {what}; give one of "
            f"{', '.join('.' + f for f in supported)} (e.g. .png, .svg or .pdf)"
        )
    return kind


@contextlib.contextmanager
def _fixed_date(kind: str) -> Iterator[None]:
    """For PostScript (``eps``, ``ps``), whose writer takes its ``%%CreationDate``
    from ``SOURCE_DATE_EPOCH`` or else the clock: fix it at the epoch (unless the
    caller set that variable), so the same figure gives the same bytes."""
    if kind not in ("eps", "ps") or "SOURCE_DATE_EPOCH" in os.environ:
        yield
        return
    os.environ["SOURCE_DATE_EPOCH"] = "0"
    try:
        yield
    finally:
        os.environ.pop("SOURCE_DATE_EPOCH", None)


def save_figure(fig: Any, path: str | Path, formats: Iterable[str] | None = None) -> list[Path]:
    """Save ``fig`` to ``path`` (its suffix), or to ``path`` with each suffix in
    ``formats`` (e.g. ``("png", "svg")``); metadata (and the creation date of
    EPS and PS) is fixed for reproducible bytes.
    Returns the files written and closes the figure.

    A suffix matplotlib cannot write is a :class:`UsageError` listing those it can
    (:func:`check_figure_path`). Each file is written through
    :func:`schedlab.io.staged_output`: a failure (a full disk ...) leaves no partial
    file and its :class:`OSError` names the file."""
    from .io import staged_output

    plt = pyplot()
    try:
        path = Path(path)
        targets = [path.with_suffix(f".{f.lstrip('.')}") for f in formats] if formats else [path]
        kinds = [check_figure_path(target) for target in targets]
        written = []
        for target, kind in zip(targets, kinds, strict=True):
            metadata: dict[str, Any] = {}
            if kind == "svg":
                metadata = {"Date": None, "Creator": "schedlab"}
            elif kind == "png":
                metadata = {"Software": "schedlab"}
            elif kind == "pdf":
                metadata = {"CreationDate": None, "ModDate": None, "Creator": "schedlab"}
            with staged_output(target) as staged, _fixed_date(kind):
                fig.savefig(staged, metadata=metadata, format=kind)
            written.append(target)
    finally:
        plt.close(fig)
    return written
