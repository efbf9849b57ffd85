"""Bounded fuzzing of the hand-written configuration inputs: platform files, sweep
files and ``KEY=VALUE`` / ``NAME:key=value`` option strings.

Each property mutates a valid document (a key dropped, renamed or duplicated, a
value replaced by one of another type, a huge, negative, NaN, empty or unicode
one, bytes cut or garbled) and checks the project's rule for bad input: exit
status 0 or 2, never 1 or an internal error (3); on 2, stderr is exactly one line
without a traceback; and the run ends promptly. Small budgets: a few seconds per
property.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schedlab.cli import main
from schedlab.errors import SchedlabError
from schedlab.experiment.config import KNOWN_KEYS, SweepConfig
from schedlab.platform import load_platform, platform_from_dict

SWF = """; MaxNodes: 16
; MaxProcs: 16
1 0 -1 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1
2 10 -1 50 8 -1 -1 8 100 -1 1 2 1 -1 1 -1 -1 -1
3 20 -1 70 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1
"""

FAST = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

#: Hostile scalars: wrong types, bounds, NaN/inf, empty and unicode text.
SCALARS = st.one_of(
    st.sampled_from(
        [
            0,
            -1,
            1,
            2**20 + 1,
            2**42 + 1,
            2**63,
            10**30,
            8.5,
            2.0,
            float("nan"),
            float("inf"),
            -float("inf"),
            True,
            False,
            "",
            " ",
            "8",
            "64GiB",
            "1.5T",
            "-5G",
            "nan",
            "١٢G",
            "x" * 300,
            "exclusive",
            "shared",
            "bogus",
        ]
    ),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.text(max_size=12),
    st.lists(st.sampled_from(["n", "m", "", "q", "n"]), max_size=3),
    st.dictionaries(st.sampled_from(["a", "cores", "", "x.y"]), st.integers(-2, 2**43), max_size=2),
)

BASE_PLATFORM = {
    "platform": {"name": "fuzz", "sharing": "exclusive"},
    "node_groups": {
        "n": {"count": 4, "cores": 4, "memory": "8G"},
        "m": {"count": 2, "cores": 8, "gpus": 1, "consumables": {"lic": 2}},
    },
    "partitions": {
        "batch": {"nodes": ["n", "m"], "max_time": 3600, "max_nodes": 4, "queues": ["q1"]},
        "gpu": {"nodes": ["m"], "priority_tier": 1, "queues": ["q2"], "sharing": "shared"},
    },
}

PLATFORM_PATHS = [
    ("platform", "name"),
    ("platform", "sharing"),
    ("platform", "extra"),
    ("node_groups", "n", "count"),
    ("node_groups", "n", "cores"),
    ("node_groups", "n", "memory"),
    ("node_groups", "n", "ram"),
    ("node_groups", "m", "gpus"),
    ("node_groups", "m", "consumables"),
    ("node_groups", "m", "consumables", "lic"),
    ("partitions", "batch", "nodes"),
    ("partitions", "batch", "max_time"),
    ("partitions", "batch", "max_nodes"),
    ("partitions", "batch", "queues"),
    ("partitions", "gpu", "priority_tier"),
    ("partitions", "gpu", "sharing"),
    ("partitions", "gpu", "queues"),
    ("partitions", "gpu", "nodes"),
    ("partitions", "gpu", "maxtime"),
    ("node_groups", "é"),
    ("partitions", ""),
    ("extra",),
]


def _toml_key(key: str) -> str:
    return (
        key
        if key and all(c.isalnum() or c in "_-" for c in key) and key.isascii()
        else (json.dumps(key))
    )


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value in (float("inf"), -float("inf")):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string for these texts
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }"
    raise TypeError(value)


def dumps(doc: dict) -> str:
    """A small TOML writer: top-level scalars, then one table per nested table."""
    lines: list[str] = []
    tables: list[tuple[str, dict]] = []

    def walk(prefix: str, table: dict) -> None:
        scalars = {
            k: v for k, v in table.items() if not isinstance(v, dict) or not v or k == "consumables"
        }
        nested = {k: v for k, v in table.items() if k not in scalars}
        tables.append((prefix, scalars))
        for key, value in nested.items():
            walk(f"{prefix}.{_toml_key(key)}" if prefix else _toml_key(key), value)

    walk("", doc)
    for name, scalars in tables:
        if name:
            lines.append(f"[{name}]")
        lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in scalars.items()]
    return "\n".join(lines) + "\n"


def _mutate(doc: dict, path: tuple[str, ...], action: str, value: object) -> dict:
    doc = json.loads(json.dumps(doc))
    table = doc
    for key in path[:-1]:
        if not isinstance(table.get(key), dict):
            table[key] = {}
        table = table[key]
    last = path[-1]
    if action == "drop":
        table.pop(last, None)
    elif action == "set":
        table[last] = value
    elif action == "rename" and last in table:
        table[last + "x"] = table.pop(last)
    return doc


MUTATIONS = st.lists(
    st.tuples(
        st.sampled_from(PLATFORM_PATHS), st.sampled_from(["set", "set", "drop", "rename"]), SCALARS
    ),
    min_size=1,
    max_size=3,
)


def run_cli(capsys: pytest.CaptureFixture[str], args: list[str], limit: float = 20.0) -> None:
    """``schedlab ARGS``: exit 0 or 2, one stderr line on 2, no traceback, in time."""
    began = time.monotonic()
    with pytest.raises(SystemExit) as info:
        main([str(a) for a in args])
        raise SystemExit(0)
    elapsed = time.monotonic() - began
    captured = capsys.readouterr()
    code = int(info.value.code or 0)
    assert code in (0, 2), (args, code, captured.err)
    assert "Traceback" not in captured.err
    if code == 2:
        assert len(captured.err.strip().splitlines()) == 1, captured.err
        assert captured.err.startswith("schedlab: error: ")
    assert elapsed < limit, (args, elapsed)


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fuzz") / "tiny.swf"
    path.write_text(SWF)
    return path


@FAST
@given(MUTATIONS)
def test_platform_documents_validate_or_refuse(mutations) -> None:
    """Mutated platform documents: a Platform or a one-line FormatError, nothing else."""
    doc = BASE_PLATFORM
    for path, action, value in mutations:
        doc = _mutate(doc, path, action, value)
    try:
        platform_from_dict(doc, "fuzz.toml")
    except SchedlabError as exc:
        assert "\n" not in str(exc)
        assert str(exc).startswith("fuzz.toml")


@settings(FAST, max_examples=15)
@given(MUTATIONS)
def test_platform_files_on_the_command_line(capsys, tmp_path_factory, trace, mutations) -> None:
    doc = BASE_PLATFORM
    for path, action, value in mutations:
        doc = _mutate(doc, path, action, value)
    try:
        text = dumps(doc)
    except TypeError:
        return
    path = tmp_path_factory.mktemp("p") / "platform.toml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    run_cli(capsys, ["platform", "check", path])


@settings(FAST, max_examples=25)
@given(st.binary(max_size=300), st.integers(0, 400), st.sampled_from(["cut", "insert", "raw"]))
def test_garbled_platform_bytes(tmp_path_factory, data, where, how) -> None:
    good = dumps(BASE_PLATFORM).encode()
    if how == "cut":
        raw = good[:where]
    elif how == "insert":
        raw = good[:where] + data + good[where:]
    else:
        raw = data
    path = tmp_path_factory.mktemp("g") / "p.toml"
    path.write_bytes(raw)
    try:
        load_platform(path)
    except SchedlabError as exc:
        assert "\n" not in str(exc)


SWEEP_KEYS = [*sorted(KNOWN_KEYS), "bogus"]  # every key of a sweep file, and an unknown one


@FAST
@given(
    st.dictionaries(
        st.sampled_from(SWEEP_KEYS),
        st.one_of(
            SCALARS,
            st.lists(st.sampled_from(["fcfs", "psp:window=5", "", "x.swf", "lublin:jobs=5"])),
            st.dictionaries(
                st.sampled_from(["psp", "easy", "x"]),
                st.dictionaries(st.sampled_from(["window", "order"]), SCALARS, max_size=2),
                max_size=2,
            ),
        ),
        max_size=6,
    )
)
def test_sweep_mappings_validate_or_refuse(registry, data) -> None:
    """Mutated sweep settings: a config (whose cells can be listed) or a one-line error."""
    try:
        config = SweepConfig.from_mapping(data, origin="s.toml")
        config.cells(registry)
    except SchedlabError as exc:
        assert "\n" not in str(exc)


OPTION_TEXT = st.one_of(
    st.sampled_from(
        [
            "window=5",
            "window=",
            "=5",
            "window",
            "window=nan",
            "window=inf",
            "window=-1",
            "window=1e400",
            "window=" + "9" * 5000,
            "window=５",
            "window=5,window=6",
            "new_user_class=1",
            "order=sjbf",
            "é=1",
            "",
            ",",
        ]
    ),
    st.text(alphabet="aw=,.:-15nx é", max_size=15),
)


@settings(FAST, max_examples=30)
@given(
    st.sampled_from(["psp", "fcfs", "psp:window=3", "sjf:", ":x=1", "lublin:jobs=5"]),
    st.lists(OPTION_TEXT, max_size=3),
    st.sampled_from(["-P", "-B", "-E", "--allocation-option", "-R"]),
)
def test_simulate_option_strings(capsys, trace, policy, options, flag) -> None:
    args = ["simulate", trace, "-p", policy]
    for option in options:
        args += [flag, option]
    run_cli(capsys, args)


@settings(FAST, max_examples=30)
@given(
    st.sampled_from(["lublin", "psp-fing"]),
    st.lists(
        st.tuples(
            st.sampled_from(
                [
                    "jobs",
                    "seed",
                    "procs",
                    "start",
                    "load",
                    "long_median",
                    "long_sigma",
                    "size_ratio",
                    "user_zipf",
                    "min_accuracy",
                    "queue_limit",
                    "max_run_time",
                    "start_hour",
                    "bogus",
                ]
            ),
            st.sampled_from(
                [
                    "0",
                    "-1",
                    "1",
                    "5",
                    "1e308",
                    "1e-308",
                    "inf",
                    "-inf",
                    "nan",
                    "",
                    "10**12",
                    "1000000000000",
                    "2147483648",
                    "99999999999999999999",
                    "x",
                ]
            ),
        ),
        max_size=3,
    ),
)
def test_generator_specs(capsys, name, options) -> None:
    spec = name + ":" + ",".join(["jobs=20", *(f"{k}={v}" for k, v in options if k != "jobs")])
    run_cli(capsys, ["info", spec])
