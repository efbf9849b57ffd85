"""Findings of the docs-truth audit: ``google-dask`` reports its losses like
``convert``; every data name of a plugin-toolkit module has a doc comment autodoc
finds; CONTRIBUTING names files that exist; the hand-written API entries carry
their "Added in version"; ``JobColumns`` answers the mapping protocol."""

from __future__ import annotations

import importlib
import inspect
import json
import re
from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab import compat

ROOT = Path(__file__).resolve().parent.parent


# --------------------------------------------------------------- google-dask losses


@pytest.fixture(scope="module")
def google_trace(tmp_path_factory):
    from schedlab.formats.google.fixtures import generate_trace

    return generate_trace(tmp_path_factory.mktemp("gdask") / "trace", collections=120, seed=3)


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed", reason="needs the dask extra")
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        dashboard_address=None,
        silence_logs=40,
    ) as local:
        yield local


def _run(args, capsys):
    from schedlab.cli import main

    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def _loss_block(err: str) -> list[str]:
    """The loss report of stderr: the heading line and the indented lines under it."""
    lines = err.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("schedlab: what "))
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        block.append(line)
    return block


@pytest.mark.parametrize("extra", [[], ["--all-losses"]], ids=["summary", "all"])
def test_google_dask_reports_the_losses_convert_reports(
    google_trace, cluster, tmp_path, capsys, extra
):
    source = str(google_trace.directory)
    code, _, convert_err = _run(
        ["convert", source, str(tmp_path / "c.swf"), "--from", "google", *extra], capsys
    )
    assert code == 0
    code, _, err = _run(
        [
            "google-dask",
            source,
            str(tmp_path / "d.swf"),
            "--scheduler",
            cluster.scheduler_address,
            *extra,
        ],
        capsys,
    )
    assert code == 0, err
    assert "jobs to" in err  # a status line: stderr
    expected = [line.replace("c.swf", "d.swf") for line in _loss_block(convert_err)]
    assert len(expected) > 1  # the generated trace loses tasks, nodes, extras
    assert _loss_block(err) == expected
    assert (tmp_path / "d.swf").read_bytes() == (tmp_path / "c.swf").read_bytes()


def test_google_dask_strict_lossless_writes_nothing(google_trace, cluster, tmp_path, capsys):
    source = str(google_trace.directory)
    _, _, convert_err = _run(
        ["convert", source, str(tmp_path / "c.swf"), "--from", "google", "--strict-lossless"],
        capsys,
    )
    target = tmp_path / "d.swf"
    code, out, err = _run(
        [
            "google-dask",
            source,
            str(target),
            "--scheduler",
            cluster.scheduler_address,
            "--strict-lossless",
        ],
        capsys,
    )
    assert code == 2
    assert not target.exists()
    assert "Traceback" not in err
    assert err.strip().splitlines() == convert_err.strip().splitlines()
    assert "--strict-lossless" in err and "--all-losses lists all" in err
    assert out == ""


@pytest.mark.parametrize("flag", ["--strict-lossless", "--all-losses"])
def test_google_dask_parquet_refuses_the_loss_flags(google_trace, tmp_path, capsys, flag):
    pytest.importorskip("distributed", reason="needs the dask extra")
    target = tmp_path / "pq"
    code, _, err = _run(
        ["google-dask", str(google_trace.directory), str(target), "--parquet", flag], capsys
    )
    assert code == 2
    assert err.strip() == f"schedlab: error: {flag} applies to a trace file, not to --parquet"
    assert not target.exists()


# --------------------------------------------------------------- toolkit constants


def _toolkit_data() -> list[tuple[str, str]]:
    """(module, name) of every name of a toolkit module's ``__all__`` that is
    neither a class nor a routine (what autodoc documents only with a doc comment)."""
    names = []
    for module_name in compat.PLUGIN_TOOLKIT:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isroutine(obj)):
                names.append((module_name, name))
    return names


def test_the_toolkit_has_data_names():
    names = {f"{m}.{n}" for m, n in _toolkit_data()}
    assert {"schedlab.validation.ERROR", "schedlab.experiment.ROW_FIELDS"} <= names


def _own_toolkit_data() -> list[tuple[str, str]]:
    """The toolkit data names not exported by ``schedlab`` too (those are documented
    with the package, as ``schedlab.NAME``)."""
    return [
        (module_name, name)
        for module_name, name in _toolkit_data()
        if not any(
            getattr(importlib.import_module(module_name), name) is getattr(schedlab, n)
            for n in schedlab.__all__
        )
    ]


@pytest.mark.parametrize(("module_name", "name"), _own_toolkit_data())
def test_toolkit_data_has_a_doc_comment_autodoc_finds(module_name, name):
    from sphinx.pycode import ModuleAnalyzer

    analyzer = ModuleAnalyzer.for_module(module_name)
    analyzer.analyze()
    docs = analyzer.find_attr_docs()
    assert ("", name) in docs, f"{module_name}.{name}: no '#:' comment in {module_name}"
    assert "".join(docs["", name]).strip()


# --------------------------------------------------------------- CONTRIBUTING paths


def test_contributing_names_files_that_exist():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    missing = []
    # named as files that do not exist on purpose: "there is no tests/__init__.py",
    # and the example of a new plugin module to write
    absent = {"tests/__init__.py", "policies/fairshare.py"}
    for path in re.findall(r"`([\w./-]+\.py)`", text):
        if path in absent:
            continue
        if "/" in path:
            if not (ROOT / path).exists():
                missing.append(path)
        elif not [p for p in ROOT.rglob(path) if ".venv" not in p.parts]:
            missing.append(path)
    assert not missing, f"CONTRIBUTING.md names files that do not exist: {missing}"


# --------------------------------------------------------------- versionadded


def test_hand_written_entries_say_when_they_were_added():
    surface = json.loads((ROOT / "tests" / "public_surface.json").read_text(encoding="utf-8"))
    since = {name: item["since"] for name, item in surface["surface"].items()}
    text = (ROOT / "docs" / "api" / "schedlab.md").read_text(encoding="utf-8")
    entries = re.split(r"(?m)^(?=\.\. )", text)
    checked = 0
    for entry in entries:
        match = re.match(r"\.\. py:(?!module|currentmodule)\w+:: (\w+)", entry)
        if not match:
            continue
        name = f"schedlab.{match[1]}"
        assert name in since, name
        assert f".. versionadded:: {since[name]}" in entry, f"{name}: no versionadded"
        checked += 1
    assert checked >= 3  # __version__, hookimpl, SWF_FIELDS


# --------------------------------------------------------------- JobColumns mapping


def _columns():
    workload = schedlab.Workload.from_jobs(
        [
            schedlab.Job(job_number=1, submit_time=0, run_time=10),
            schedlab.Job(job_number=2, submit_time=5, wait_time=3),
        ]
    )
    return workload.to_arrays()


def test_job_columns_is_a_mapping_of_fields():
    cols = _columns()
    assert list(cols) == list(schedlab.SWF_FIELDS)
    assert "wait_time" in cols
    assert "nope" not in cols
    assert 0 not in cols
    assert list(cols.keys()) == list(schedlab.SWF_FIELDS)
    assert [name for name, _ in cols.items()] == list(schedlab.SWF_FIELDS)
    assert all(a is cols[n] for n, a in cols.items())
    assert all(a is b for a, (_, b) in zip(cols.values(), cols.items(), strict=True))
    assert cols.get("run_time") is cols["run_time"]
    assert cols.get("nope") is None
    as_dict = dict(cols)
    assert list(as_dict) == list(schedlab.SWF_FIELDS)
    assert as_dict["run_time"][0] == 10.0
    assert len(cols) == 2  # still the number of jobs


def test_job_columns_to_dataframe():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(dict(_columns()))
    assert list(frame.columns) == list(schedlab.SWF_FIELDS)
    assert frame["wait_time"].isna().tolist() == [True, False]


def test_job_columns_handed_to_plugins_stay_read_only():
    from schedlab.model import _read_only

    cols = _read_only(_columns())
    for array in cols.values():
        assert not array.flags.writeable
    with pytest.raises(ValueError):
        dict(cols)["run_time"][0] = 1.0
    assert isinstance(next(iter(cols.values())), np.ndarray)
