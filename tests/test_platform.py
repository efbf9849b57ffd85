"""Platform files: loading, validation errors naming the key path, single_pool, and
``schedlab platform infer`` on real traces (issue 14, first step)."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

import pytest
import schedlab
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.errors import FormatError, SchedlabError
from schedlab.platform import (
    MAX_MEMORY,
    SHARING_MODES,
    NodeGroup,
    Partition,
    Platform,
    dumps_platform,
    load_platform,
    parse_memory,
)
from schedlab.testing import run_cli as run

VALID = """\
[platform]
name = "example cluster"
sharing = "exclusive"

[node_groups.thin]
count = 120
cores = 32
memory = "192GiB"

[node_groups.fat]
count = 8
cores = 64
memory = "1.5T"
consumables = { scratch = 2 }

[node_groups.gpu]
count = 4
cores = 48
memory = 412316860416
gpus = 4

[partitions.batch]
nodes = ["thin", "fat"]
max_time = 172800
max_nodes = 64
priority_tier = 1
queues = ["normal", "long"]

[partitions.bigmem]
nodes = ["fat"]
max_time = 86400
queues = ["bigmem"]
sharing = "shared"

[partitions.gpu]
nodes = ["gpu"]
max_nodes = 4
priority_tier = 2
queues = ["gpu"]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "platform.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_valid_example_loads_with_the_right_values(tmp_path):
    p = load_platform(write(tmp_path, VALID))
    assert p.name == "example cluster" and p.sharing == "exclusive"
    assert [g.name for g in p.node_groups] == ["thin", "fat", "gpu"]
    thin, fat, gpu = p.node_groups
    assert (thin.count, thin.cores, thin.memory, thin.gpus) == (120, 32, 192 * 1024**3, 0)
    assert fat.memory == 3 * 1024**4 // 2 and fat.consumables == {"scratch": 2}
    assert gpu.memory == 412316860416 and gpu.gpus == 4
    batch = p.partition("batch")
    assert batch == Partition(
        "batch",
        ("thin", "fat"),
        max_time=172800,
        max_nodes=64,
        priority_tier=1,
        queues=("normal", "long"),
        sharing="exclusive",
    )
    assert p.partition("bigmem").sharing == "shared"  # overrides the platform's
    assert p.partition("gpu").max_time is None and p.partition("gpu").priority_tier == 2
    assert p.partition_of_queue("long") is batch and p.partition_of_queue("debug") is None
    assert p.total_nodes == 132 and p.total_cores == 120 * 32 + 8 * 64 + 4 * 48


def test_dumps_round_trips(tmp_path):
    p = load_platform(write(tmp_path, VALID))
    again = tmp_path / "again.toml"
    again.write_text(dumps_platform(p, ["a comment\nwith a newline"]), encoding="utf-8")
    assert load_platform(again) == p


def test_single_pool_is_one_partition_of_identical_processors(tmp_path):
    p = Platform.single_pool(128)
    assert p.node_groups == (NodeGroup("processors", count=128, cores=1),)
    assert [(q.name, q.nodes) for q in p.partitions] == [("default", ("processors",))]
    assert p.total_cores == 128
    path = tmp_path / "pool.toml"
    path.write_text(dumps_platform(p), encoding="utf-8")
    assert load_platform(path) == p
    with pytest.raises(SchedlabError, match="positive processor count"):
        Platform.single_pool(0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[platform]\ncolour = 'red'\n", "platform.colour: unknown key"),
        ("extra = 1\n", "extra: unknown key"),
        ("[node_groups.a]\ncount = 2\ncores = 4\nram = 5\n", "node_groups.a.ram: unknown key"),
        ("[node_groups.a]\ncount = 0\ncores = 4\n", "node_groups.a.count: expected a positive"),
        ("[node_groups.a]\ncount = -3\ncores = 4\n", "node_groups.a.count: expected a positive"),
        ("[node_groups.a]\ncount = 2\ncores = '4'\n", "node_groups.a.cores: expected an integer"),
        ("[node_groups.a]\ncount = 2.5\ncores = 4\n", "node_groups.a.count: expected an integer"),
        ("[node_groups.a]\ncount = true\ncores = 4\n", "node_groups.a.count: expected an integer"),
        ("[node_groups.a]\ncores = 4\n", "node_groups.a.count: missing"),
        ("[node_groups.a]\ncount = 2\ncores = 4\nmemory = '12XB'\n", "node_groups.a.memory:"),
        (
            "[node_groups.a]\ncount = 2\ncores = 4\nmemory = 0\n",
            "node_groups.a.memory: expected a positive",
        ),
        (
            "[node_groups.a]\ncount = 2\ncores = 4\ngpus = -1\n",
            "node_groups.a.gpus: expected an integer >= 0, got -1",
        ),
        (
            "[node_groups.a]\ncount = 2\ncores = 4\nconsumables = { lic = 'x' }\n",
            "node_groups.a.consumables.lic: expected an integer",
        ),
        (
            "[node_groups.a]\ncount = 2\ncores = 4\nconsumables = { memory = 3 }\n",
            "node_groups.a.consumables.memory: 'memory' is a built-in resource",
        ),
        ("[partitions.p]\nnodes = ['a100']\n", "partitions.p.nodes: unknown node group 'a100'"),
        ("[partitions.p]\nnodes = ['a', 'a']\n", "partitions.p.nodes: duplicate name 'a'"),
        ("[partitions.p]\nnodes = []\n", "partitions.p.nodes: expected at least one name"),
        ("[partitions.p]\nnodes = 'a'\n", "partitions.p.nodes: expected a list of names"),
        ("[partitions.p]\nmax_time = 60\n", "partitions.p.nodes: missing"),
        (
            "[partitions.p]\nnodes = ['a']\nmax_time = 0\n",
            "partitions.p.max_time: expected a positive",
        ),
        (
            "[partitions.p]\nnodes = ['a']\nmax_nodes = 3\n",
            "partitions.p.max_nodes: 3 is more than",
        ),
        (
            "[partitions.p]\nnodes = ['a']\npriority_tier = 'high'\n",
            "partitions.p.priority_tier: expected an integer",
        ),
        (
            "[partitions.p]\nnodes = ['a']\nsharing = 'mixed'\n",
            "partitions.p.sharing: expected one of",
        ),
        (
            "[partitions.p]\nnodes = ['a']\nqueues = ['q', 'q']\n",
            "partitions.p.queues: duplicate name 'q'",
        ),
        (
            "[partitions.p]\nnodes = ['a']\nqueues = ['q']\n"
            "[partitions.r]\nnodes = ['a']\nqueues = ['q']\n",
            "partitions.r.queues: queue 'q' is already mapped to partition 'p'",
        ),
        ("[partitions.p]\nnodes = ['a']\nlimits = 1\n", "partitions.p.limits: unknown key"),
        (
            "[node_groups.a]\ncount = 1\ncores = 1\n[node_groups.b]\ncount = 1\ncores = 1\n",
            "node_groups.b: not used by any partition",
        ),
        (  # TOML itself rejects a table defined twice; the message keeps its line
            "[node_groups.a]\ncount = 1\ncores = 1\n[node_groups.a]\ncount = 2\ncores = 4\n",
            "invalid TOML",
        ),
        ("[platform]\nsharing = 'exclusive'\n[platform]\nname = 'x'\n", "invalid TOML"),
        (
            "[partitions.\"bad name\"]\nnodes = ['a']\n",
            'partitions."bad name": a name may use only',
        ),
        ("node_groups = 3\n", "node_groups: expected a table, got an integer"),
    ],
)
def test_each_mistake_is_one_line_naming_the_key_path(tmp_path, text, expected):
    base = "[node_groups.a]\ncount = 2\ncores = 4\n"
    parts = "[partitions.p]\nnodes = ['a']\n"
    # Complete the document around the mistake so that only the mistake is wrong:
    # top-level keys first, then a node group and a partition unless the case has its own.
    groups = "" if "node_groups" in text else base
    partitions = "" if "[partitions." in text else parts
    body = text + groups + partitions if not text.startswith("[") else groups + text + partitions
    with pytest.raises(FormatError) as info:
        load_platform(write(tmp_path, body))
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{tmp_path / 'platform.toml'}: {expected}")


def test_missing_sections_and_files_are_format_errors(tmp_path):
    with pytest.raises(FormatError, match=r"platform.toml: node_groups: missing"):
        load_platform(write(tmp_path, "[platform]\nname = 'x'\n"))
    with pytest.raises(FormatError, match=r"platform.toml: partitions: missing"):
        load_platform(write(tmp_path, "[node_groups.a]\ncount = 1\ncores = 1\n"))
    with pytest.raises(FormatError, match="no such file"):
        load_platform(tmp_path / "absent.toml")


@pytest.mark.parametrize(
    ("text", "size"),
    [
        (1024, 1024),
        ("512M", 512 * 1024**2),
        ("64GiB", 64 * 1024**3),
        ("4096KB", 4096 * 1024),
        ("1.5T", 3 * 1024**4 // 2),
        ("100", 100),
    ],
)
def test_memory_units(text, size):
    assert parse_memory(text) == size


@pytest.mark.parametrize("text", ["12XB", "1.3", "-4G", "", True, 1.5])
def test_bad_memory_is_rejected(text):
    with pytest.raises(ValueError):
        parse_memory(text)


@pytest.mark.realdata
def test_infer_kth_matches_the_header(tmp_path, capsys, swf_dir):
    trace = swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz"
    header = schedlab.read(trace).header
    out_file = tmp_path / "kth.toml"
    code, out, err = run(capsys, "platform", "infer", str(trace), "--output", str(out_file))
    assert code == 0, err
    p = load_platform(out_file)
    assert p.total_nodes == header.max_nodes == 100
    assert p.total_cores == header.max_procs == 100
    assert p.name == "IBM SP2"
    guesses = [line for line in out.splitlines() if line.startswith("guess: ")]
    assert "guess: memory per node unknown: left out (unbounded)" in guesses
    assert any("no partitions in the trace" in g for g in guesses)


@pytest.mark.realdata
def test_infer_wagap_without_header_says_it_guessed_the_size(tmp_path, capsys, swf_dir):
    trace = swf_dir / "wagap-2013_alea-extended.swf"
    workload = schedlab.read(trace, lenient=True)
    largest = max(j.allocated_processors or 0 for j in workload.jobs)
    out_file = tmp_path / "wagap.toml"
    code, out, err = run(
        capsys, "platform", "infer", "--lenient", str(trace), "--output", str(out_file)
    )
    assert code == 0, err
    p = load_platform(out_file)
    assert workload.header.max_procs is None and p.total_cores == largest
    assert f"guess: no MaxNodes/MaxProcs: {largest} one-core nodes from the largest job" in out
    used = {j.partition_number for j in workload.jobs}
    assert [q.name for q in p.partitions] == [f"partition{n}" for n in sorted(used)]


@pytest.mark.realdata
def test_infer_grid_engine_hosts_and_queues(tmp_path, capsys, shared_data):
    trace = shared_data / "sge" / "gbsc_utils_ogetools_test_data.accounting"
    workload = schedlab.read(trace)
    hosts = {j.extras["sge_record"].split(":")[1] for j in workload.jobs}
    queues = {j.extras["sge_record"].split(":")[0] for j in workload.jobs}
    out_file = tmp_path / "sge.toml"
    code, out, err = run(capsys, "platform", "infer", str(trace), "-o", str(out_file))
    assert code == 0, err
    p = load_platform(out_file)
    assert p.total_nodes == len(hosts)
    assert {q for part in p.partitions for q in part.queues} == queues
    assert [g.name for g in workload.header.queues] and queues <= {
        e.name for e in workload.header.queues
    }
    assert f"guess: node count {len(hosts)}: the distinct hosts jobs ran on" in out
    assert p.sharing == "shared"


def test_infer_cli_error_is_one_line_exit_2(tmp_path, capsys):
    code, out, err = run(
        capsys, "platform", "infer", str(tmp_path / "absent.swf"), "-o", str(tmp_path / "p.toml")
    )
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("schedlab: error: ")
    assert "absent.swf" in err and not (tmp_path / "p.toml").exists()


def test_infer_without_any_size_is_an_error(tmp_path, capsys):
    trace = tmp_path / "empty.swf"
    trace.write_text("; Version: 2.2\n", encoding="utf-8")
    code, _, err = run(capsys, "platform", "infer", str(trace), "-o", str(tmp_path / "p.toml"))
    assert code == 2 and err.count("\n") == 1
    assert "tells no machine size" in err and not (tmp_path / "p.toml").exists()


HEADED = """\
; Version: 2.2
; Computer: Test machine
; MaxNodes: 4
; MaxProcs: 10
; MaxRuntime: 7200
; MaxQueues: 2
; Queue: 1 batch
; Queue: 2 interactive
; MaxPartitions: 2
; Partition: 1 batch
; Partition: 2 big
1 0 0 10 2 -1 -1 2 60 -1 1 1 1 -1 1 1 -1 -1
2 5 0 10 8 -1 -1 8 60 -1 1 1 1 -1 2 2 -1 -1
"""


def test_infer_maps_header_tables_and_names_each_guess(tmp_path, capsys):
    trace = tmp_path / "headed.swf"
    trace.write_text(HEADED, encoding="utf-8")
    out_file = tmp_path / "p.toml"
    code, out, err = run(capsys, "platform", "infer", str(trace), "-o", str(out_file))
    assert code == 0, err
    p = load_platform(out_file)
    assert p.name == "Test machine" and p.total_nodes == 4
    assert p.node_groups[0].cores == 3  # 10 / 4 rounded up, and said so
    assert "guess: cores per node 3: MaxProcs 10 is not a multiple of MaxNodes 4" in out
    batch, big = p.partitions
    assert (batch.name, batch.queues, batch.max_time) == ("batch", ("batch", "interactive"), 7200)
    assert (big.name, big.queues, big.max_time) == ("big", (), 7200)
    assert "guess: queue 'interactive' mapped to partition 'batch' (no link in the trace)" in out
    assert "no MaxRuntime" not in out
    written = out_file.read_text(encoding="utf-8")
    assert written.startswith("# Inferred by `schedlab platform infer`")
    assert "# - cores per node 3" in written


@pytest.mark.realdata
def test_infer_google_machine_capacities(tmp_path, capsys, shared_data):
    trace = shared_data / "google" / "clusterdata2011_v2_sample"
    workload = schedlab.read(trace)
    peak = workload.meta["capacity"]["peak_machines"]
    out_file = tmp_path / "google.toml"
    code, out, err = run(capsys, "platform", "infer", str(trace), "-o", str(out_file))
    assert code == 0, err
    p = load_platform(out_file)
    assert p.total_nodes == peak == workload.header.max_nodes
    assert p.total_cores == workload.header.max_procs
    assert "guess: machine capacities are normalized" in out


names = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)


@st.composite
def platforms(draw: st.DrawFn) -> Platform:
    group_names = draw(st.lists(names, min_size=1, max_size=4, unique=True))
    groups = tuple(
        NodeGroup(
            g,
            count=draw(st.integers(1, 10_000)),
            cores=draw(st.integers(1, 256)),
            memory=draw(st.none() | st.integers(1, MAX_MEMORY)),  # 4 TiB: the limit
            gpus=draw(st.integers(0, 8)),
            consumables=draw(
                st.dictionaries(
                    names.filter(lambda n: n not in ("cores", "nodes", "gpus")),
                    st.integers(0, 100),
                    max_size=2,
                )
            ),
        )
        for g in group_names
    )
    sharing = draw(st.sampled_from(SHARING_MODES))
    queues = iter(draw(st.lists(st.text(min_size=1, max_size=8), unique=True, max_size=6)))
    parts = []
    part_names = draw(st.lists(names, min_size=1, max_size=3, unique=True))
    for i, name in enumerate(part_names):
        members = (
            group_names
            if i == 0
            else draw(st.lists(st.sampled_from(group_names), min_size=1, unique=True))
        )
        total = sum(g.count for g in groups if g.name in members)
        parts.append(
            Partition(
                name,
                tuple(members),
                max_time=draw(st.none() | st.integers(1, 10**7)),
                max_nodes=draw(st.none() | st.integers(1, total)),
                priority_tier=draw(st.integers(-5, 5)),
                queues=tuple(islice(queues, draw(st.integers(0, 2)))),
                sharing=draw(st.sampled_from(SHARING_MODES)),
            )
        )
    name = draw(st.none() | st.text(max_size=20) | st.just('a "quoted"\\ \x7f\x00\n name'))
    return Platform(groups, tuple(parts), name=name, sharing=sharing)


@settings(max_examples=100, deadline=None)
@given(platforms())
def test_any_valid_platform_round_trips_through_toml(tmp_path_factory, platform):
    path = tmp_path_factory.mktemp("rt") / "p.toml"
    path.write_text(dumps_platform(platform), encoding="utf-8")
    assert load_platform(path) == platform


def test_check_command_summarises_a_valid_file(tmp_path, capsys):
    path = write(tmp_path, VALID)
    code, out, err = run(capsys, "platform", "check", str(path))
    assert code == 0 and err == ""
    assert out.splitlines()[0] == f"{path}: 3 node group(s), 132 nodes, 4544 cores, 3 partition(s)"
    assert "  bigmem: nodes fat; tier 0; shared; queues bigmem; max_time=86400" in out


def test_check_command_quotes_an_empty_queue_name(tmp_path, capsys):
    # RICC-2010's header names queue 1 with nothing: `platform infer` lists it as ""
    path = write(
        tmp_path,
        '[node_groups.a]\ncount = 2\ncores = 4\n[partitions.p]\nnodes = ["a"]\n'
        'queues = ["", "0", "long queue"]\n',
    )
    code, out, err = run(capsys, "platform", "check", str(path))
    assert code == 0 and err == ""
    assert "queues '', 0, 'long queue'" in out


def test_check_command_error_is_one_line_naming_the_key_exit_2(tmp_path, capsys):
    path = write(
        tmp_path, "[node_groups.a]\ncount = 2\ncores = 4\n[partitions.gpu]\nnodes = ['a100']\n"
    )
    code, out, err = run(capsys, "platform", "check", str(path))
    assert (code, out) == (2, "")
    assert err == f"schedlab: error: {path}: partitions.gpu.nodes: unknown node group 'a100'\n"
