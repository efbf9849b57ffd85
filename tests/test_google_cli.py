"""The Google plugin through the command line: convert to valid SWF, info, plugins."""

from __future__ import annotations

import json

import pytest
import schedlab
from schedlab.cli import main
from schedlab.formats.google.fixtures import generate_trace


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    return generate_trace(tmp_path_factory.mktemp("cli") / "trace", collections=400, seed=2)


def _run(args, capsys):
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_convert_to_valid_swf(trace, tmp_path, capsys):
    out = tmp_path / "google.swf"
    code, _, err = _run(["convert", str(trace.directory), str(out), "--from", "google"], capsys)
    assert code == 0, err
    code, report, err = _run(["validate", str(out)], capsys)
    assert code == 0, report + err
    assert "0 error(s)" in report
    swf = schedlab.read(out)
    direct = schedlab.read(trace.directory)
    assert len(swf) == len(direct)
    assert swf.header.max_procs == direct.header.max_procs
    assert swf.header.names("User") == direct.header.names("User")
    assert [j.requested_processors for j in swf.jobs] == [
        j.requested_processors for j in direct.jobs
    ]
    assert max(j.requested_processors or 0 for j in swf.jobs) <= swf.header.max_procs


def test_convert_detects_the_directory(trace, tmp_path, capsys):
    out = tmp_path / "auto.swf"
    code, _, err = _run(["convert", str(trace.directory), str(out)], capsys)
    assert code == 0, err
    assert out.exists()


def test_info_summarises_every_table(trace, capsys):
    code, out, err = _run(["info", str(trace.directory), "--json"], capsys)
    assert code == 0, err
    summary = json.loads(out)["summary"]
    assert set(summary["tables"]) == {
        "collection_events",
        "instance_events",
        "instance_usage",
        "machine_events",
        "machine_attributes",
    }
    assert summary["tables"]["instance_events"]["rows"] == trace.rows["instance_events"]
    assert summary["jobs"] + summary["alloc_sets"] == 400
    assert summary["max_procs"] > 0


def test_convert_to_google_directory_and_back(trace, tmp_path, capsys):
    out = tmp_path / "copy"
    code, _, err = _run(["convert", str(trace.directory), str(out), "--to", "google"], capsys)
    assert code == 0, err
    assert schedlab.read(out).jobs == schedlab.read(trace.directory).jobs


def test_plugin_lists_its_components(capsys):
    code, out, _ = _run(["plugins", "--json"], capsys)
    assert code == 0
    plugins = {p["name"]: p for p in json.loads(out)}
    kinds = {(c["kind"], c["name"]) for c in plugins["google"]["components"]}
    assert {
        ("reader", "google"),
        ("reader", "google-v2"),
        ("writer", "google"),
        ("command", "google-dask"),
    } <= kinds
