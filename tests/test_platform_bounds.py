"""The limits of a platform (docs/platform.md, "Limits"): every count and amount is
bounded so that the simulator's int64 sums cannot overflow and its per-node arrays
fit in memory; a value beyond a limit is one line naming the file and the key, in a
file, on the command line and for a ``Platform`` built in Python; and
``infer_platform`` never writes a file that does not load, whatever the header says
(-1 or 0 for unknown, huge values, a name under two numbers)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import schedlab
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.errors import FormatError, SchedlabError
from schedlab.model import Header
from schedlab.platform import (
    MAX_CONSUMABLE,
    MAX_CORES,
    MAX_GPUS,
    MAX_MEMORY,
    MAX_NODES,
    MAX_TIER,
    MAX_TIME,
    MIN_TIER,
    NodeGroup,
    Partition,
    Platform,
    check_limits,
    dumps_platform,
    infer_platform,
    load_platform,
    parse_memory,
    platform_from_dict,
)
from schedlab.sim.machine import NodeMachine
from schedlab.sim.resources import UNBOUNDED
from schedlab.testing import run_cli as run

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PART = "[partitions.p]\nnodes = ['a']\n"
TRACE = "; MaxProcs: 8\n1 0 0 10 2 -1 -1 2 60 -1 1 1 1 -1 1 1 -1 -1\n"


def group(body: str) -> str:
    return f"[node_groups.a]\n{body}\n{PART}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            group("count = 9223372036854775807\ncores = 8"),
            "node_groups.a.count: expected at most 1048576 (2**20), got 9223372036854775807",
        ),
        (
            group("count = 1048577\ncores = 8"),
            "node_groups.a.count: expected at most 1048576 (2**20), got 1048577",
        ),
        (  # each group within the limit, not their total
            "[node_groups.a]\ncount = 1000000\ncores = 1\n"
            "[node_groups.b]\ncount = 48577\ncores = 1\n"
            "[partitions.p]\nnodes = ['a', 'b']\n",
            "node_groups.b.count: the node groups total 1048577 nodes, more than the "
            "1048576 (2**20) a platform may have",
        ),
        (
            group("count = 4\ncores = 9223372036854775807"),
            "node_groups.a.cores: expected at most 1048576 (2**20), got 9223372036854775807",
        ),
        (
            group("count = 4\ncores = 1\ngpus = 1048577"),
            "node_groups.a.gpus: expected at most 1048576 (2**20), got 1048577",
        ),
        (
            group('count = 4\ncores = 8\nmemory = "99999999999999999999P"'),
            "node_groups.a.memory: expected at most 4 TiB (4398046511104 bytes), "
            "got '99999999999999999999P'",
        ),
        (
            group('count = 4\ncores = 8\nmemory = "4097G"'),
            "node_groups.a.memory: expected at most 4 TiB",
        ),
        (
            group("count = 4\ncores = 8\nmemory = 4398046511105"),
            "node_groups.a.memory: expected at most 4 TiB (4398046511104 bytes), got 4398046511105",
        ),
        (  # float('9' * 400) is infinite: once an OverflowError, an internal error
            group(f'count = 4\ncores = 8\nmemory = "{"9" * 400}K"'),
            "node_groups.a.memory: expected at most 4 TiB",
        ),
        (
            group("count = 4\ncores = 8\nconsumables = { lic = 4398046511105 }"),
            "node_groups.a.consumables.lic: expected at most 4398046511104 (2**42), got",
        ),
        (
            group("count = 4\ncores = 8").replace(PART, PART + "max_time = 9007199254740992\n"),
            "partitions.p.max_time: expected at most 9007199254740991 (2**53 - 1), got",
        ),
        (
            group("count = 4\ncores = 8").replace(
                PART, PART + "priority_tier = 9223372036854775807\n"
            ),
            "partitions.p.priority_tier: expected at most 2147483647 (2**31 - 1), got",
        ),
        (
            group("count = 4\ncores = 8").replace(PART, PART + "priority_tier = -2147483649\n"),
            "partitions.p.priority_tier: expected an integer from -2147483648 to 2147483647, "
            "got -2147483649",
        ),
    ],
)
def test_a_value_beyond_a_limit_is_one_line_naming_the_key(tmp_path, text, expected):
    path = tmp_path / "platform.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FormatError) as info:
        load_platform(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: {expected}"), message


def test_the_limits_themselves_load(tmp_path):
    path = tmp_path / "platform.toml"
    path.write_text(
        "[node_groups.a]\ncount = 1048575\ncores = 1048576\nmemory = '4T'\ngpus = 1048576\n"
        "consumables = { lic = 4398046511104 }\n"
        "[node_groups.b]\ncount = 1\ncores = 1\nmemory = 4398046511104\n"
        "[partitions.p]\nnodes = ['a', 'b']\nmax_time = 9007199254740991\n"
        "priority_tier = 2147483647\nmax_nodes = 1048576\n"
        "[partitions.q]\nnodes = ['b']\npriority_tier = -2147483648\n",
        encoding="utf-8",
    )
    p = load_platform(path)
    assert p.total_nodes == MAX_NODES
    a, b = p.node_groups
    assert (a.cores, a.memory, a.gpus, a.consumables) == (
        MAX_CORES,
        MAX_MEMORY,
        MAX_GPUS,
        {"lic": MAX_CONSUMABLE},
    )
    assert b.memory == MAX_MEMORY
    assert p.partitions[0].max_time == MAX_TIME
    assert [q.priority_tier for q in p.partitions] == [MAX_TIER, MIN_TIER]
    check_limits(p)  # the same limits for a Platform built in Python


def test_memory_sizes_are_exact_whatever_their_size():
    # A float product once read this as 1024 bytes, and huge sizes as infinity.
    with pytest.raises(ValueError, match="whole number of bytes"):
        parse_memory("1.0000000000000001K")
    assert parse_memory("9" * 40 + "P") == int("9" * 40) * 1024**5
    assert parse_memory("4T") == MAX_MEMORY


def test_the_memory_limit_is_what_the_simulator_gives_unknown_memory():
    # Sums over 2**20 nodes of either stay within int64 (docs/platform.md).
    assert MAX_MEMORY == UNBOUNDED
    assert MAX_NODES * max(MAX_MEMORY, MAX_CONSUMABLE, MAX_CORES, MAX_GPUS) <= 2**62
    assert MAX_CORES * MAX_MEMORY <= 2**62  # a node's cores x a job's memory per core


def test_a_machine_at_the_limits_sums_without_overflow():
    p = Platform(
        (
            NodeGroup("a", count=MAX_NODES - 1, cores=MAX_CORES, memory=MAX_MEMORY),
            NodeGroup("b", count=1, cores=MAX_CORES, consumables={"lic": MAX_CONSUMABLE}),
        ),
        (Partition("p", ("a", "b")),),
    )
    machine = NodeMachine(p, object())
    assert machine.capacity.shape == (MAX_NODES, 4)
    assert machine.free_total[0].tolist() == [
        MAX_NODES * MAX_CORES,
        MAX_NODES * MAX_MEMORY,
        0,
        MAX_CONSUMABLE,
    ]
    assert machine.node_names[-2:] == [f"a[{MAX_NODES - 2}]", "b[0]"]
    assert machine.partitions[0].nodes.tolist() == list(range(MAX_NODES))
    assert machine.inside[0].all()


@pytest.mark.parametrize(
    ("group", "expected"),
    [
        (
            NodeGroup("a", count=2**63, cores=1),
            "<platform>: node_groups.a.count: expected at most 1048576 (2**20)",
        ),
        (
            NodeGroup("a", count=4, cores=2**64),
            "<platform>: node_groups.a.cores: expected at most 1048576 (2**20)",
        ),
        (  # once an OverflowError building the machine: an internal error
            NodeGroup("a", count=4, cores=8, memory=10**30),
            "<platform>: node_groups.a.memory: expected at most 4 TiB",
        ),
        (
            NodeGroup("a", count=4, cores=8, consumables={"lic": 2**64}),
            "<platform>: node_groups.a.consumables.lic: expected at most",
        ),
        (
            NodeGroup("a", count=4, cores=8, gpus=-1),
            "<platform>: node_groups.a.gpus: expected an integer >= 0, got -1",
        ),
        (
            NodeGroup("a", count=4.0, cores=8),  # type: ignore[arg-type]
            "<platform>: node_groups.a.count: expected an integer, got a float",
        ),
    ],
)
def test_a_platform_built_in_python_is_checked_before_the_simulation(group, expected):
    w = schedlab.Workload.from_jobs(
        [schedlab.Job(job_number=1, submit_time=0, run_time=10, allocated_processors=2)]
    )
    platform = Platform((group,), (Partition("p", ("a",)),))
    with pytest.raises(FormatError) as info:
        schedlab.simulate(w, platform=platform, progress=False)
    assert str(info.value).startswith(expected), str(info.value)


def test_numpy_integers_pass_the_python_check():
    p = Platform(
        (NodeGroup("a", count=np.int64(4), cores=np.int32(8), memory=np.int64(2**30)),),
        (Partition("p", ("a",), max_time=np.int64(60)),),
    )
    check_limits(p)
    assert NodeMachine(p, object()).capacity.tolist() == [[8, 2**30, 0]] * 4


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ("count = 4\ncores = 9223372036854775807", "node_groups.a.cores"),  # total overflowed
        ('count = 4\ncores = 8\nmemory = "99999999999999999999P"', "node_groups.a.memory"),
        ("count = 9223372036854775807\ncores = 8", "node_groups.a.count"),  # once a hang
    ],
)
def test_check_and_simulate_refuse_a_huge_platform_exit_2(tmp_path, capsys, body, key):
    platform = tmp_path / "huge.toml"
    platform.write_text(group(body), encoding="utf-8")
    trace = tmp_path / "t.swf"
    trace.write_text(TRACE, encoding="utf-8")
    for args in (
        ("platform", "check", str(platform)),
        ("simulate", str(trace), "--platform", str(platform)),
    ):
        code, out, err = run(capsys, *args)
        assert code == 2, (args, out, err)
        assert err.count("\n") == 1, err
        assert err.startswith(f"schedlab: error: {platform}: {key}: expected at most"), err


# --------------------------------------------------------------------------- inference


def workload(
    entries: dict[str, object], jobs: list[schedlab.Job] | None = None
) -> schedlab.Workload:
    header = Header()
    for label, value in entries.items():
        for item in value if isinstance(value, list) else [value]:
            header.add(label, item)
    if jobs is None:
        jobs = [schedlab.Job(job_number=1, submit_time=0, run_time=10, allocated_processors=2)]
    return schedlab.Workload.from_jobs(jobs, header)


def loads(platform: Platform) -> Platform:
    """What a written inferred file loads to (never an error)."""
    return platform_from_dict(tomllib.loads(dumps_platform(platform)), "inferred.toml")


@pytest.mark.parametrize(
    ("entries", "nodes", "cores", "guess"),
    [
        (  # the SWF reader now refuses such a header; a Workload from Python may not
            {"MaxProcs": "99999999999999999999", "MaxNodes": "4"},
            4,
            1,
            "MaxProcs 99999999999999999999 is more than a platform may hold",
        ),
        (  # not a number: said, not silently dropped
            {"MaxProcs": "many", "MaxNodes": "4"},
            4,
            1,
            "MaxProcs 'many' is not a whole number: taken as not given",
        ),
        (  # MaxNodes dropped: the largest job's 2 processors
            {"MaxNodes": str(2**40)},
            2,
            1,
            "MaxNodes 1099511627776 is more than a platform may hold (at most 1048576 (2**20))",
        ),
        (  # more processors than 2**20 one-core nodes: fewer nodes of several cores
            {"MaxProcs": str(2**30)},
            2**20,
            1024,
            "no MaxNodes: 1048576 nodes of 1024 cores for the 1073741824 processors of "
            "MaxProcs (more than 1048576 (2**20) one-core nodes)",
        ),
        (
            {"MaxProcs": str(2**20 + 1)},
            2**19 + 1,
            2,
            "no MaxNodes: 524289 nodes of 2 cores for the 1048577 processors of "
            "MaxProcs (more than 1048576 (2**20) one-core nodes; rounded up)",
        ),
        (
            {"MaxProcs": str(2**30), "MaxNodes": "2"},
            2**20,
            1024,
            "MaxProcs 1073741824 on MaxNodes 2 is more than 1048576 (2**20) cores per node",
        ),
        ({"MaxProcs": "-1"}, 2, 1, "MaxProcs -1 means unknown: taken as not given"),
        ({"MaxProcs": "0", "MaxNodes": "3"}, 3, 1, "MaxProcs 0 means unknown"),
        ({"MaxNodes": "-1", "MaxProcs": "8"}, 8, 1, "MaxNodes -1 means unknown"),
    ],
)
def test_infer_takes_unknown_and_huge_header_sizes_as_not_given(entries, nodes, cores, guess):
    found = infer_platform(workload(entries))
    (g,) = found.platform.node_groups
    assert (g.count, g.cores) == (nodes, cores)
    assert any(line.startswith(guess) for line in found.guesses), found.guesses
    assert loads(found.platform) == found.platform


def test_infer_refuses_a_largest_job_beyond_any_platform():
    jobs = [schedlab.Job(job_number=1, submit_time=0, run_time=10, allocated_processors=2**50)]
    with pytest.raises(SchedlabError, match="more than a platform may hold") as info:
        infer_platform(workload({"MaxProcs": "-1"}, jobs))
    assert "\n" not in str(info.value)


def test_infer_ignores_sizes_that_are_not_numbers():
    jobs = [
        schedlab.Job(job_number=1, submit_time=0, run_time=10, allocated_processors=float("inf")),
        schedlab.Job(job_number=2, submit_time=1, run_time=10, requested_processors=6),
    ]
    found = infer_platform(workload({}, jobs))
    assert found.platform.total_cores == 6


names = st.sampled_from(["batch", "batch", "a b", "a_b", "", "x" * 3, "é"])
counts = st.one_of(
    st.none(),
    st.integers(-3, 3),
    st.sampled_from([MAX_NODES, MAX_NODES + 1, 2**40, 2**40 + 1, 2**53 - 1, 2**63, 10**20]),
    st.integers(-(2**70), 2**70),
)


@settings(max_examples=150, deadline=None)
@given(
    max_nodes=counts,
    max_procs=counts,
    max_runtime=counts,
    partitions=st.lists(st.tuples(st.integers(-2, 5), names), max_size=4),
    queues=st.lists(st.tuples(st.integers(-2, 5), names), max_size=4),
    used=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=4),
)
def test_any_header_infers_a_platform_that_loads(
    max_nodes, max_procs, max_runtime, partitions, queues, used
):
    entries: dict[str, object] = {
        "Partition": [f"{n} {name}" for n, name in partitions],
        "Queue": [f"{n} {name}" for n, name in queues],
    }
    for label, value in (
        ("MaxNodes", max_nodes),
        ("MaxProcs", max_procs),
        ("MaxRuntime", max_runtime),
    ):
        if value is not None:
            entries[label] = str(value)
    jobs = [
        schedlab.Job(
            job_number=i + 1,
            submit_time=i,
            run_time=10,
            allocated_processors=4,
            partition_number=part,
            queue_number=queue,
        )
        for i, (part, queue) in enumerate(used)
    ]
    found = infer_platform(workload(entries, jobs))
    assert loads(found.platform) == found.platform


def test_infer_cli_unknown_header_values_and_duplicate_names(tmp_path, capsys):
    trace = tmp_path / "t.swf"
    trace.write_text(
        "; MaxProcs: -1\n; MaxRuntime: -1\n; MaxPartitions: 2\n"
        "; Partition: 1 batch\n; Partition: 2 batch\n; Queue: 1 batch\n; Queue: 2 batch\n"
        "1 0 0 10 4 -1 -1 4 60 -1 1 1 1 -1 1 1 -1 -1\n"
        "2 5 0 10 2 -1 -1 2 60 -1 1 1 1 -1 2 2 -1 -1\n",
        encoding="utf-8",
    )
    out_file = tmp_path / "p.toml"
    code, out, err = run(capsys, "platform", "infer", str(trace), "-o", str(out_file))
    assert code == 0, err
    p = load_platform(out_file)
    assert p.total_nodes == 4  # the largest job, as without MaxProcs
    (batch,) = p.partitions
    assert (batch.name, batch.queues, batch.max_time) == ("batch", ("batch",), None)
    assert "guess: MaxProcs -1 means unknown: taken as not given" in out
    assert "guess: MaxRuntime -1 means unknown: taken as not given" in out
    assert "guess: queues 1 and 2 are both named 'batch': listed once" in out
    assert "guess: partitions 1 and 2 are both named 'batch': merged into one partition" in out
    assert "guess: no MaxRuntime: partitions have no time limit" in out
