"""Findings 2-4 of the newcomer audit (a plugin author building on schedlab).

2. The API version is the release part of the installed version, so the API-range
   check still applies to distro builds (``0.1.0+deb1``) and development builds
   (``0.2.0.dev3+g1a2b3c``).
3. What docs/compatibility.md tells plugin authors to use
   (``IncompatiblePluginError``, ``PluginCompatibilityWarning``,
   ``schedlab.compat.api_version``) is public API.
4. The "Measured" table of examples/schedlab-selective/README.md agrees with the
   measurements of docs/simulation.md.
"""

from __future__ import annotations

import re
import types
from pathlib import Path

import pytest
import schedlab
from packaging.version import Version
from schedlab import compat, errors

ROOT = Path(__file__).resolve().parent.parent


# -- 2. the API version of a build with a local label ----------------------------------


@pytest.mark.parametrize(
    ("installed", "api"),
    [
        ("0.1.0", "0.1.0"),
        ("0.1.0+deb1", "0.1.0"),
        ("0.2.0.dev3+g1a2b3c", "0.2.0"),
        ("0.2.0rc1", "0.2.0"),
        ("0.2.0rc1.dev2", "0.2.0"),
        ("0.1.3.post1", "0.1.3"),
        ("1!0.3.1", "0.3.1"),
    ],
)
def test_the_api_version_is_the_release_part(monkeypatch, installed, api):
    monkeypatch.setattr(schedlab, "__version__", installed)
    assert compat.api_version() == Version(api)


def test_an_uninstalled_source_tree_has_no_api_version(monkeypatch):
    monkeypatch.setattr(schedlab, "__version__", "0+unknown")
    assert compat.api_version() is None
    compat.check_api_range(types.SimpleNamespace(SCHEDLAB_API=">=2,<3"), "any")  # no check


@pytest.mark.parametrize("installed", ["0.1.0+deb1", "0.2.0.dev3+g1a2b3c", "0.2.0rc1"])
def test_a_local_or_dev_build_still_checks_the_range(monkeypatch, installed):
    monkeypatch.setattr(schedlab, "__version__", installed)
    future = types.ModuleType("future_plugin")
    future.SCHEDLAB_API = ">=2,<3"  # type: ignore[attr-defined]
    with pytest.raises(errors.IncompatiblePluginError, match=r"provides API 0\.[12]\.0 "):
        schedlab.build_registry(plugins=[("future", future)], entry_points=False)
    release = str(compat.api_version())
    minor = ".".join(release.split(".")[:2])
    compat.check_api_range(types.SimpleNamespace(SCHEDLAB_API=f"=={minor}.*"), "current")


# -- 3. the contract's own names are public ----------------------------------------------


def test_the_compatibility_errors_are_public_in_schedlab_errors():
    assert "IncompatiblePluginError" in errors.__all__
    assert "PluginCompatibilityWarning" in errors.__all__
    assert issubclass(errors.IncompatiblePluginError, errors.PluginError)
    assert issubclass(errors.PluginCompatibilityWarning, errors.SchedlabWarning)
    # the old spelling keeps working: one class, two import paths
    assert compat.IncompatiblePluginError is errors.IncompatiblePluginError
    assert compat.PluginCompatibilityWarning is errors.PluginCompatibilityWarning


def test_schedlab_compat_is_a_toolkit_module():
    assert "schedlab.compat" in compat.PLUGIN_TOOLKIT
    assert "api_version" in compat.__all__
    assert all(hasattr(compat, name) for name in compat.__all__)


def test_every_name_the_compatibility_page_offers_plugin_authors_is_public():
    surface = compat.public_surface()
    for key in (
        "schedlab.errors.IncompatiblePluginError",
        "schedlab.errors.PluginCompatibilityWarning",
        "schedlab.compat.api_version",
        "schedlab.compat.PLUGIN_TOOLKIT",
    ):
        assert key in surface, key
    page = (ROOT / "docs" / "compatibility.md").read_text(encoding="utf-8")
    for name in ("IncompatiblePluginError", "PluginCompatibilityWarning"):
        assert f"`schedlab.errors.{name}`" in page, name  # says where to import it from
    # every `schedlab.compat.NAME` the page names is public, or marked as schedlab's own
    for name in re.findall(r"`schedlab\.compat\.(\w+)", page):
        assert name in compat.__all__ or name in {"deprecated_hook", "warn_deprecated"}, name


# -- 4. the selective example's measurements -------------------------------------------


def _row(table: str, *labels: str) -> list[str]:
    """The cells after ``labels`` of the Markdown table row that starts with them."""
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if tuple(cells[: len(labels)]) == labels:
            return cells[len(labels) :]
    raise AssertionError(f"no row {labels!r}")


def test_the_selective_readme_matches_the_simulation_page():
    """The README's EASY and conservative rows are those docs/simulation.md measured
    on the same log (mean wait, and mean bounded slowdown to its one decimal)."""
    readme = (ROOT / "examples" / "schedlab-selective" / "README.md").read_text("utf-8")
    measured = readme[readme.index("### Measured") :]
    guide = (ROOT / "docs" / "simulation.md").read_text(encoding="utf-8")
    for backfill in ("easy", "conservative"):
        bsld, wait, _ = _row(measured, backfill)
        page = _row(guide, "KTH-SP2-1996-2.1 (28,476 jobs)", backfill)
        assert (wait, f"{float(bsld):.1f}") == (page[0], page[1]), backfill
    # threshold=1 protects every job at once: exactly conservative backfilling
    assert _row(measured, "selective, threshold=1") == _row(measured, "conservative")
