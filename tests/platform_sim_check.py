"""Shared helpers of the ``test_platform_sim_*`` tests: run a simulation on a
platform while recording every allocation the machine commits, and check a
node-level schedule from the outside (no node over-committed in any dimension at
any instant, no job outside its partition, starts after submissions).

The allocations are recorded by wrapping the engine's ``NodeMachine.commit``
through ``run_simulation(..., inspect=...)``: the machine forgets an allocation
when its job ends, so the checks keep their own copy. Loaded by the tests with
``importlib`` (the suite runs with ``--import-mode=importlib``).
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np
import schedlab
from schedlab.platform import NodeGroup, Partition, Platform
from schedlab.sim.runner import run_simulation


@attrs.define
class NodeRun:
    """One run: the result, the engine, and per job index the allocation it got
    (``(nodes, amounts)``) and the time it was committed."""

    result: Any
    engine: Any
    allocations: dict[int, tuple[np.ndarray, np.ndarray]]
    committed_at: dict[int, float]

    @property
    def state(self) -> Any:
        return self.engine.state

    @property
    def machine(self) -> Any:
        return self.engine.state.machine

    @property
    def excluded(self) -> dict[str, list[int]]:
        """``{reason: job numbers}`` of every non-empty exclusion reason (base and
        platform reasons), read from the engine's prepared inputs."""
        prepared = self.engine.prepared
        numbers = self.result_columns_job_numbers()
        return {
            reason: sorted(int(numbers[r]) for r in rows.tolist())
            for reason, rows in prepared.excluded.items()
            if len(rows)
        }

    def result_columns_job_numbers(self) -> np.ndarray:
        return self.engine.workload_columns["job_number"]

    def index_of(self, number: int) -> int:
        """The job index of the job numbered ``number``."""
        return self.state.table.job_number.index(number)

    def start(self, number: int) -> float:
        """Simulated start of job ``number``."""
        return float(self.state.start_time[self.index_of(number)])

    def starts(self) -> dict[int, float]:
        """``{job number: start}`` of every simulated job."""
        table = self.state.table
        return {
            int(table.job_number[j]): float(self.state.start_time[j]) for j in range(len(table))
        }

    def nodes(self, number: int) -> list[str]:
        """Names of the nodes job ``number`` ran on."""
        nodes, _ = self.allocations[self.index_of(number)]
        names = self.machine.node_names
        return [names[i] for i in nodes.tolist()]


def run(
    workload: schedlab.Workload,
    platform: Platform | str,
    backfill: Any = "easy",
    *,
    policy: Any = "fcfs",
    allocation: Any = "first-fit",
    kill: bool = False,
    estimator: Any = "requested",
    backfill_options: dict[str, Any] | None = None,
    log_reservations: bool = False,
    on_pass: dict[int, float] | None = None,
    whole: bool = True,
) -> NodeRun:
    """Simulate ``workload`` on ``platform``, recording every committed allocation
    (and, with ``log_reservations``, every reservation in
    ``state.reservation_log``; with ``on_pass``, the time of every pass by its
    number). A whole run (``schedlab.sim.whole_run``) commits nothing job by job:
    its allocations are read from ``machine.given`` afterwards (the engine checked
    them as a whole). ``whole=False`` hides the strategy's ``run_whole``: the
    engine's loop, pass by pass."""
    allocations: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    committed_at: dict[int, float] = {}
    seen: dict[str, Any] = {}

    def inspect(engine: Any) -> None:
        seen["engine"] = engine
        if not whole:
            engine.strategy.run_whole = None
        machine = engine.state.machine
        commit = machine.commit

        def recording_commit(job: int, alloc: Any) -> int:
            assert job not in allocations, f"job index {job} committed twice"
            allocations[job] = (alloc.nodes.copy(), alloc.amounts.copy())
            committed_at[job] = engine.state.now
            return int(commit(job, alloc))

        machine.commit = recording_commit
        commit_if_free = machine.commit_if_free

        def recording_commit_if_free(job: int, alloc: Any, partition: int) -> int:
            cores = int(commit_if_free(job, alloc, partition))
            if cores >= 0:
                assert job not in allocations, f"job index {job} committed twice"
                allocations[job] = (alloc.nodes.copy(), alloc.amounts.copy())
                committed_at[job] = engine.state.now
            return cores

        machine.commit_if_free = recording_commit_if_free
        if log_reservations:
            engine.state.reservation_log = {}
        if on_pass is not None:
            schedule = engine.strategy.schedule

            def timed_schedule(now: float) -> None:
                on_pass[engine.state.passes] = now
                schedule(now)

            engine.strategy.schedule = timed_schedule

    result = run_simulation(
        workload,
        policy=policy,
        backfill=backfill,
        procs=None,
        estimator=estimator,
        kill=kill,
        dependencies=False,
        policy_options=None,
        backfill_options=backfill_options,
        estimator_options=None,
        registry=None,
        progress=False,
        inspect=inspect,
        platform=platform,
        allocation=allocation,
    )
    engine = seen["engine"]
    if engine.whole_run:
        assert not allocations, "a whole run committed allocations job by job"
        for j, alloc in engine.state.machine.given.items():
            allocations[j] = (alloc.nodes.copy(), alloc.amounts.copy())
            committed_at[j] = engine.state.start_time[j]
    engine.workload_columns = workload.to_arrays()
    return NodeRun(result, engine, allocations, committed_at)


def check_node_schedule(run_: NodeRun) -> None:
    """Every invariant a node-level schedule must keep, whatever the strategy:

    * every simulated job got exactly one allocation, committed at its start, no
      earlier than its submission, and ran for its run time;
    * the allocation lies in the job's partition, covers its demand in every
      dimension (on its node count when it named one), and on an exclusive
      partition holds whole nodes;
    * at no instant is any node over-committed in any dimension (a job ending at
      ``t`` frees its amounts for one starting at ``t``);
    * every input job is simulated or excluded with exactly one reason.

    An ``AssertionError`` says what broke."""
    state = run_.state
    machine = run_.machine
    table = state.table
    n = len(table)
    assert sorted(run_.allocations) == list(range(n)), "a simulated job got no allocation"
    capacity = machine.capacity
    events: list[tuple[float, int, int]] = []
    for j in range(n):
        start, end = state.start_time[j], state.end_time[j]
        assert start == start, f"job index {j} never started"
        assert start >= table.submit[j], f"job index {j} started before its submission"
        assert math.isclose(end - start, table.run_time[j], rel_tol=1e-12, abs_tol=1e-6), (
            f"job index {j} ran {end - start}, not its run time {table.run_time[j]}"
        )
        assert run_.committed_at[j] == start, f"job index {j} committed at another time"
        nodes, amounts = run_.allocations[j]
        part = machine.partitions[state.partition_of[j]]
        outside = np.setdiff1d(nodes, part.nodes)
        assert not len(outside), (
            f"job index {j} of partition {part.name!r} ran on nodes {outside.tolist()} outside it"
        )
        assert len(np.unique(nodes)) == len(nodes), f"job index {j} got a node twice"
        demand = state.demand[j]
        assert (amounts.sum(axis=0) >= demand.total).all(), (
            f"job index {j} got {amounts.sum(axis=0).tolist()} for a demand of "
            f"{demand.total.tolist()}"
        )
        assert (amounts >= 0).all() and amounts.any(axis=1).all()
        if demand.nodes:
            assert len(nodes) == demand.nodes, f"job index {j} got {len(nodes)} nodes"
        if demand.max_nodes:
            assert len(nodes) <= demand.max_nodes, f"job index {j} over its max_nodes"
        if part.exclusive:
            assert (amounts == capacity[nodes]).all(), (
                f"job index {j} shares a node of exclusive partition {part.name!r}"
            )
        events.append((end, 0, j))
        events.append((start, 1, j))
    events.sort()
    used = np.zeros_like(capacity)
    for t, kind, j in events:
        nodes, amounts = run_.allocations[j]
        if kind == 0:
            used[nodes] -= amounts
            continue
        used[nodes] += amounts
        over = np.argwhere(used[nodes] > capacity[nodes])
        assert not len(over), (
            f"t={t:g}: node {machine.node_names[int(nodes[over[0][0]])]} over-committed in "
            f"{machine.dims[int(over[0][1])]} after job index {j} started"
        )
    excluded = sum(len(rows) for rows in run_.engine.prepared.excluded.values())
    every = np.concatenate([run_.engine.prepared.order, *run_.engine.prepared.excluded.values()])
    assert len(every) == len(np.unique(every)) == n + excluded, "a job counted twice"
    assert n + excluded == len(run_.engine.workload_columns), "a job was lost"


def job(number: int, submit: float, cores: int, run: float, **extras: Any) -> schedlab.Job:
    """A job with exact estimates; ``memory_gib`` (per core) becomes SWF's
    requested memory (KB per processor), the other keywords ``request.*``
    extras (``partition``, ``gpus``, ``nodes`` ...)."""
    memory = extras.pop("memory_gib", None)
    requested = extras.pop("requested_time", run)
    return schedlab.Job(
        job_number=number,
        submit_time=submit,
        run_time=run,
        requested_time=requested,
        requested_processors=cores,
        requested_memory=None if memory is None else memory * 1024 * 1024,
        status=1,
        user_id=1,
        extras={f"request.{k}": v for k, v in extras.items()},
    )


def workload(*jobs: schedlab.Job) -> schedlab.Workload:
    return schedlab.Workload.from_jobs(list(jobs))


def first_jobs_on_exclusive_nodes(
    path: Any, jobs: int, group: NodeGroup
) -> tuple[schedlab.Workload, Platform]:
    """The first ``jobs`` jobs of the trace at ``path`` and one exclusive partition
    of ``group`` (what ``schedlab platform infer`` writes for an SWF log)."""
    trace = schedlab.read(path)
    w = schedlab.Workload(trace.header.copy(), columns=trace.to_arrays().take(np.arange(jobs)))
    return w, Platform((group,), (Partition("all", (group.name,), sharing="exclusive"),))


def assert_whole_nodes_and_a_queue(run_: NodeRun) -> None:
    """Every allocation holds its nodes whole (their capacity), and a queue formed
    (over 100 jobs waited)."""
    capacity = run_.engine.state.machine.capacity
    for nodes, amounts in run_.allocations.values():
        assert (amounts == capacity[nodes]).all()  # whole nodes
    waits = run_.result.workload.to_arrays()["wait_time"]
    assert (waits > 0).sum() > 100


def write_platform(tmp_path: Any, text: str, name: str = "platform.toml") -> str:
    """Write a TOML platform into ``tmp_path``; its path."""
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def assert_same_schedule(python: NodeRun, compiled: NodeRun) -> None:
    """The two runs start every job at the same time on the same nodes with the
    same amounts (a compiled pass against the Python pass)."""
    assert compiled.starts() == python.starts()
    assert compiled.allocations.keys() == python.allocations.keys()
    for j, (nodes, amounts) in python.allocations.items():
        got_nodes, got_amounts = compiled.allocations[j]
        assert got_nodes.tolist() == nodes.tolist(), f"job index {j}: nodes"
        assert got_amounts.tolist() == amounts.tolist(), f"job index {j}: amounts"


def disjoint_platforms(draw: Any) -> Platform:
    """(A hypothesis ``st.composite`` body: ``st.composite(disjoint_platforms)``.)
    Two or three partitions, each over node groups of its own (1-3 nodes of 1-4
    cores, memory and a GPU or not), each shared or exclusive, with random tiers."""
    from hypothesis import strategies as st

    groups: list[NodeGroup] = []
    partitions = []
    for p in range(draw(st.integers(2, 3))):
        names = []
        for g in range(draw(st.integers(1, 2))):
            name = f"p{p}g{g}"
            groups.append(
                NodeGroup(
                    name,
                    count=draw(st.integers(1, 3)),
                    cores=draw(st.integers(1, 4)),
                    memory=draw(st.sampled_from([None, 2 * 2**30, 4 * 2**30])),
                    gpus=draw(st.integers(0, 1)),
                )
            )
            names.append(name)
        partitions.append(
            Partition(
                f"part{p}",
                tuple(names),
                sharing=draw(st.sampled_from(["shared", "shared", "exclusive"])),
                priority_tier=draw(st.integers(0, 2)),
            )
        )
    return Platform(tuple(groups), tuple(partitions))


def split_by_size(path: Any, jobs: int, small: int, large: int) -> tuple[Any, Platform]:
    """The first ``jobs`` jobs of the trace at ``path``, each sent to partition
    ``small`` (at most 8 processors) or ``large``, and a platform of those two
    partitions, sharing no node: ``small`` and ``large`` shared nodes of 8 cores
    and 12 GiB."""
    trace = schedlab.read(path)
    out = []
    for j in trace.jobs[:jobs]:
        part = "small" if j.requested_processors <= 8 else "large"
        out.append(attrs.evolve(j, extras={**j.extras, "request.partition": part}))
    platform = Platform(
        (NodeGroup("s", small, 8, memory=12 * 2**30), NodeGroup("l", large, 8, memory=12 * 2**30)),
        (
            Partition("small", ("s",), sharing="shared"),
            Partition("large", ("l",), sharing="shared"),
        ),
    )
    return schedlab.Workload.from_jobs(out), platform


def queued_in_both(run_: NodeRun, least: int) -> bool:
    """Whether more than ``least`` jobs waited in each partition of
    :func:`split_by_size`'s platform."""
    cols = run_.result.workload.to_arrays()
    waits = cols["wait_time"]
    small = cols["requested_processors"] <= 8
    return bool((waits[small] > 0).sum() > least and (waits[~small] > 0).sum() > least)


def overlapping_platform() -> Platform:
    """Two partitions sharing node group ``b`` (outside the compiled passes' cover)."""
    return Platform(
        (NodeGroup("a", 2, 2), NodeGroup("b", 2, 2)),
        (
            Partition("p", ("a", "b"), sharing="shared"),
            Partition("q", ("b",), sharing="shared"),
        ),
    )
