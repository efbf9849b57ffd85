"""``schedlab validate``: every finding of a trace, with line numbers.

The trace is read leniently when its reader has a ``lenient`` option, so every bad
line is reported (and none is dropped without a finding) instead of stopping at
the first. The reader's own findings (``workload.meta["findings"]``) are joined by
the generic consistency checks of :mod:`schedlab.validation` when the reader did
not run them itself, and by one ``skipped-record`` error for every record the
lenient read skipped without reporting it (whatever the format, see
:func:`schedlab.validation.skipped_findings`): validate never says ok about a trace
that the strict reader (``convert`` without ``--lenient``) rejects. A warning the
reader gives about the trace itself (a :class:`~schedlab.errors.SchedlabWarning`
other than the plugin-loading ones, e.g. the Slurm plugin's requeued-job repeats)
becomes a ``reader-warning`` finding: counted with the warnings, printed as a
finding line instead of a ``schedlab: warning:`` line, and failing ``--strict``.

Exit codes: 0 clean, 1 findings (errors; with ``--strict`` warnings too), 2 the
input cannot be read at all (no such file, unknown format, not decompressible).
"""

from __future__ import annotations

import sys
import warnings
from collections import Counter
from typing import Any

import click

from .flags import FlagCommand, check_reader_flags, parse_read_options, read_option
from .json_output import json_text


def _read(source: str, from_: str | None, options: dict[str, Any]) -> Any:
    from ..api import detect_reader, read
    from ..registry import get_registry

    registry = get_registry()
    reader = None
    if from_:
        reader = registry.reader(from_)
    else:
        from ..api import generator_source

        if generator_source(source, registry) is None:
            import os

            if os.path.exists(source):
                reader = detect_reader(source, registry)
    if reader is not None and "lenient" in {o.name for o in reader.options}:
        options = {"lenient": "true", **options}
    return read(source, format=from_ or (reader.name if reader else None), **options)


#: Check name of the findings made from the reader's warnings.
READER_WARNING = "reader-warning"


def _read_with_findings(
    source: str, from_: str | None, options: dict[str, Any]
) -> tuple[Any, list[Any]]:
    """The workload, and a ``reader-warning`` finding for each warning the reader
    gave about the trace (other warnings are shown as they would have been)."""
    from ..errors import (
        PluginCompatibilityWarning,
        PluginLoadWarning,
        PluginRuntimeWarning,
        SchedlabWarning,
    )
    from ..validation import WARNING, Finding

    about_plugins = (PluginLoadWarning, PluginCompatibilityWarning, PluginRuntimeWarning)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        workload = _read(source, from_, options)
    findings: list[Any] = []
    seen: set[str] = set()
    # The finding line names the file already: not again at the message's start.
    names = {source, str(workload.meta.get("source", source))}
    prefixes = tuple(f"{name}: " for name in sorted(names, key=len, reverse=True))
    for w in caught:
        category = w.category
        if issubclass(category, SchedlabWarning) and not issubclass(category, about_plugins):
            text = str(w.message)
            for prefix in prefixes:
                if text.startswith(prefix):
                    text = text[len(prefix) :]
                    break
            if text not in seen:  # "always" shows a repeated warning again: once here
                seen.add(text)
                findings.append(Finding(None, None, text, WARNING, READER_WARNING))
        else:
            warnings.showwarning(w.message, category, w.filename, w.lineno, w.file, w.line)
    return workload, findings


@click.command("validate", cls=FlagCommand)
@click.argument("source", metavar="FILE")
@click.option("--strict", is_flag=True, help="Fail on warnings too, not only on errors.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.option("--from", "from_", metavar="NAME", help="Reader to use (default: detected).")
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="Findings printed per check (0 = all); counts always cover every finding.",
)
@read_option("--option")
def command(
    source: str,
    strict: bool,
    as_json: bool,
    from_: str | None,
    limit: int,
    read_options: tuple[str, ...],
) -> None:
    """Check FILE against its format's rules and the common consistency rules.

    Prints one line per finding (file:line: severity: field: message [check]).
    Exit 0 when clean, 1 on errors (and, with --strict, warnings), 2 when FILE
    cannot be read.
    """
    from ..validation import (
        check_workload,
        count_by_severity,
        failing,
        skipped_count,
        sort_findings,
    )

    check_reader_flags([source], from_, read_options)
    workload, read_findings = _read_with_findings(source, from_, parse_read_options(read_options))
    findings = sort_findings(read_findings + check_workload(workload))
    jobs = len(workload)
    bad = failing(findings, strict)
    counts = count_by_severity(findings)
    name = workload.meta.get("source", source)
    if as_json:
        report = {
            "source": name,
            "format": workload.meta.get("reader"),
            "strict": strict,
            "ok": not bad,
            "jobs": jobs,
            "records": workload.meta.get("records", jobs),
            "skipped": skipped_count(workload.meta),
            "counts": counts,
            "checks": dict(sorted(Counter(f.check for f in findings).items())),
            "findings": [f.to_dict() for f in findings],
        }
        click.echo(json_text(report))
    else:
        shown: Counter[str] = Counter()
        hidden: Counter[str] = Counter()
        for finding in findings:
            if limit and shown[finding.check] >= limit:
                hidden[finding.check] += 1
                continue
            shown[finding.check] += 1
            click.echo(finding.render(name))
        for check, count in sorted(hidden.items()):
            click.echo(f"{name}: ... {count} more [{check}] finding(s) (--limit 0 shows all)")
        verdict = "FAILED" if bad else "ok"
        click.echo(
            f"{name}: {verdict}: {jobs} jobs; {counts['error']} error(s), "
            f"{counts['warning']} warning(s), {counts['info']} info"
            + (" (strict)" if strict else "")
        )
    if bad:
        # SystemExit rather than ctx.exit: click's non-standalone mode would turn the
        # latter into a return value that `python -m schedlab` drops.
        sys.exit(1)
