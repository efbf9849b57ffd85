"""README's set-up commands and CI stay in step."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _shell_blocks(text: str) -> list[str]:
    return [b.strip() for b in re.findall(r"```sh\n(.*?)```", text, flags=re.S)]


def test_ci_runs_exactly_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    blocks = _shell_blocks(readme)
    test_commands = [b for b in blocks if "pytest" in b]
    assert len(test_commands) == 1
    ci_lines = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert test_commands[0] in ci_lines


def test_readme_main_command_is_a_real_command():
    readme = (ROOT / "README.md").read_text()
    main = [b for b in _shell_blocks(readme) if "schedlab experiment" in b]
    assert len(main) == 1 and "pip install" in main[0]
