"""CHANGELOG.md follows Keep a Changelog and its top entry is the version being built."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent
#: ``## [1.2.3] - 2026-11-25`` or ``## [1.2.3] - Unreleased`` (not yet released).
ENTRY_RE = re.compile(
    r"^## \[(?P<version>[^\]]+)\] - (?P<date>\d{4}-\d{2}-\d{2}|Unreleased)\s*$", re.M
)
SECTIONS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def pyproject_version() -> str:
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["project"]["version"]


def entries(text: str) -> list[tuple[str, str, str]]:
    """``(version, date, body)`` of every entry, top first."""
    found = list(ENTRY_RE.finditer(text))
    out = []
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        out.append((match["version"], match["date"], text[match.end() : end]))
    return out


def check(text: str, version: str) -> None:
    """Raise AssertionError unless ``text`` is a changelog whose top entry is ``version``."""
    assert text.startswith("# Changelog\n"), "the file starts with '# Changelog'"
    level2 = re.findall(r"^## .*$", text, re.M)
    listed = entries(text)
    assert listed, "no entry of the form '## [X.Y.Z] - YYYY-MM-DD' (or '- Unreleased')"
    assert len(level2) == len(listed), f"malformed entry headings: {level2}"
    top_version, _, _ = listed[0]
    assert top_version == version, (
        f"CHANGELOG.md's top entry is [{top_version}] but pyproject.toml says {version}: "
        "add an entry for the new version"
    )
    for entry_version, _date, body in listed:
        headings = re.findall(r"^### (.*)$", body, re.M)
        assert headings, f"[{entry_version}] has no '### Added/Changed/...' section"
        unknown = sorted(set(headings) - SECTIONS)
        assert not unknown, f"[{entry_version}]: unknown sections {unknown}"
    unreleased = [v for v, date, _ in listed[1:] if date == "Unreleased"]
    assert not unreleased, f"only the top entry may be unreleased, not {unreleased}"


def test_top_entry_names_the_pyproject_version():
    check((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), pyproject_version())


GOOD = """# Changelog

## [0.2.0] - Unreleased

### Added

- a thing

## [0.1.0] - 2026-11-25

### Fixed

- another
"""


@pytest.mark.parametrize(
    ("text", "version", "complaint"),
    [
        (GOOD, "0.3.0", "top entry is [0.2.0]"),
        (GOOD.replace("## [0.2.0] - Unreleased", "## [0.2.0] 2026"), "0.2.0", "malformed"),
        (GOOD.replace("### Fixed", "### Bugs"), "0.2.0", "unknown sections"),
        (GOOD.replace("2026-11-25", "Unreleased"), "0.2.0", "only the top entry"),
        ("# Changelog\n", "0.1.0", "no entry"),
    ],
)
def test_check_rejects_a_stale_or_malformed_changelog(text, version, complaint):
    check(GOOD, "0.2.0")
    with pytest.raises(AssertionError, match=re.escape(complaint)):
        check(text, version)


def test_version_and_license_come_from_one_place():
    """``schedlab.__version__`` and ``schedlab --version`` read the installed metadata,
    which pyproject.toml's version and license fill in."""
    import subprocess
    import sys
    from importlib import metadata

    import schedlab

    installed = metadata.version("schedlab")
    assert schedlab.__version__ == installed == pyproject_version()
    out = subprocess.run(
        [sys.executable, "-m", "schedlab", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"schedlab, version {installed}"
    with open(ROOT / "pyproject.toml", "rb") as fh:
        project = tomllib.load(fh)["project"]
    assert project["license"] == "BSD-3-Clause" and project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("BSD 3-Clause License\n")
