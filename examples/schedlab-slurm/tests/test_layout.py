"""Putting records back together: unescaped '|' and newlines in free-text columns."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab_slurm.layout import (
    FREE_TEXT,
    AlignmentError,
    _best_placement,
    align,
    column_pattern,
    physical_records,
)

COLUMNS = ["JobID", "Constraints", "ConsumedEnergy", "Elapsed", "JobName", "Layout",
           "State", "SubmitLine", "NCPUS"]


def test_equal_counts_is_identity():
    tokens = ["1", "", "0", "00:01:00", "x", "", "COMPLETED", "sbatch a.sh", "2"]
    assert align(tokens, COLUMNS) == tokens


def test_pipe_in_name_and_constraints():
    text = "7|cpu-a|cpu-b|0|00:01:00|Jo| bNa| me|Cyclic|COMPLETED|env | grep X|2"
    values = align(text.split("|"), COLUMNS)
    assert values[1] == "cpu-a|cpu-b"
    assert values[4] == "Jo| bNa| me"
    assert values[7] == "env | grep X"
    assert values[8] == "2"


def test_ambiguous_pipe_goes_to_the_value_it_ends():
    # Comment and Constraints both empty-able: "|cpu-a" (starts with |) loses.
    cols = ["Cluster", "Comment", "Constraints", "ConsumedEnergy", "CPUTime"]
    values = align("c1||cpu-a|cpu-b|0|00:00:00".split("|"), cols)
    assert values == ["c1", "", "cpu-a|cpu-b", "0", "00:00:00"]


def test_too_many_fields_without_free_text():
    with pytest.raises(AlignmentError, match="no column may contain"):
        align(["1", "2", "3"], ["JobID", "NCPUS"])


def test_too_few_fields():
    with pytest.raises(AlignmentError, match="expected 3 fields, found 2"):
        align(["1", "2"], ["JobID", "NCPUS", "State"])


def test_no_placement_fits():
    with pytest.raises(AlignmentError, match="no placement"):
        align(["1", "a", "b", "c"], ["JobID", "JobName", "NCPUS"])


def test_physical_records_joins_multi_line_values():
    lines = iter(["1|a|b\n", "2|sbatch x\n", "  then\n", "fi|z\n", "\n", "3|c|d\n"])
    assert list(physical_records(lines, 3)) == [
        (1, "1|a|b"),
        (2, "2|sbatch x\n  then\nfi|z"),
        (6, "3|c|d"),
    ]


def test_truncated_line_does_not_swallow_the_next_record():
    lines = iter(["1|a\n", "2|b|c\n"])
    assert list(physical_records(lines, 3)) == [(1, "1|a"), (2, "2|b|c")]


# Pieces of free text: anything but '|' and newlines, with a lower-case letter so
# that a piece can never pass for a number, a duration, a state or a layout.
_text = st.builds(
    lambda a, b, c: a + b + c,
    st.text(st.characters(codec="utf-8", exclude_characters="|\n\r"), max_size=4),
    st.sampled_from("abcxyzàé"),
    st.text(st.characters(codec="utf-8", exclude_characters="|\n\r"), max_size=4),
)


@given(
    name=st.lists(_text, min_size=1, max_size=4),
    constraints=st.lists(_text, min_size=1, max_size=3),
    submit=st.lists(_text, min_size=1, max_size=4),
    cpus=st.integers(1, 10**6),
    elapsed=st.integers(0, 10**7),
)
def test_alignment_recovers_values(name, constraints, submit, cpus, elapsed):
    """Free-text values with '|' inside come back exactly."""
    values = [
        "42",
        "|".join(constraints),
        "0",
        f"{elapsed // 3600:02d}:{elapsed // 60 % 60:02d}:{elapsed % 60:02d}",
        "|".join(name),
        "Cyclic",
        "COMPLETED",
        "|".join(submit),
        str(cpus),
    ]
    tokens = "|".join(values).split("|")
    got = align(tokens, COLUMNS)
    assert got == values


# ------------------------------------------------------------ linear time (audit fix)


def _quadratic_align(tokens, columns):
    """The former alignment (every count of extra tokens tried for every column and
    start: quadratic in the extra tokens), kept as the oracle of the linear one."""
    n, m = len(columns), len(tokens)
    extra = m - n
    free = [c in FREE_TEXT for c in columns]
    patterns = [column_pattern(c) for c in columns]
    inf = (1 << 30, 0, 0)
    best = [[inf] * (extra + 1) for _ in range(n + 1)]
    choice = [[0] * (extra + 1) for _ in range(n + 1)]
    best[n][extra] = (0, 0, 0)
    for i in range(n - 1, -1, -1):
        for e in range(extra + 1):
            start = i + e
            for k in range((extra - e if free[i] else 0) + 1):
                rest = best[i + 1][e + k]
                if rest[0] >= inf[0]:
                    continue
                if k == 0:
                    if patterns[i] is not None and patterns[i].match(tokens[start]) is None:
                        continue
                    cost = rest
                else:
                    pieces = tokens[start : start + k + 1]
                    edge = 2 * (pieces[0] == "") + (pieces[-1] == "")
                    cost = (rest[0] + edge, rest[1] + 1, rest[2] + i * k)
                if cost < best[i][e]:
                    best[i][e], choice[i][e] = cost, k
    if best[0][0][0] >= inf[0]:
        return None
    values, e, pos = [], 0, 0
    for i in range(n):
        k = choice[i][e]
        values.append("|".join(tokens[pos : pos + k + 1]))
        pos, e = pos + k + 1, e + k
    return values


def _linear(tokens, columns, use_numpy):
    free = [c in FREE_TEXT for c in columns]
    patterns = [column_pattern(c) for c in columns]
    counts = _best_placement(tokens, free, patterns, len(tokens) - len(columns), use_numpy)
    if counts is None:
        return None
    values, pos = [], 0
    for k in counts:
        values.append("|".join(tokens[pos : pos + k + 1]))
        pos += k + 1
    return values


_POOL = ["JobID", "JobName", "Constraints", "NCPUS", "Elapsed", "State", "SubmitLine",
         "Comment", "Cluster", "ReqMem", "Layout", "WorkDir", "Partition", "TimelimitRaw"]
_TOKENS = ["", "", "", "1", "a", "00:01:00", "COMPLETED", "x y", "2G", "Cyclic", "-3", "b",
           "UNLIMITED"]


@settings(max_examples=400, deadline=None)
@given(
    columns=st.lists(st.sampled_from(_POOL), min_size=1, max_size=7, unique=True).filter(
        lambda cs: any(c in FREE_TEXT for c in cs)
    ),
    data=st.data(),
)
def test_linear_alignment_equals_the_quadratic_one(columns, data):
    """Both implementations (lists, numpy) choose what the former rule chose, ties
    and failures included."""
    extra = data.draw(st.integers(1, 8))
    tokens = data.draw(
        st.lists(st.sampled_from(_TOKENS), min_size=len(columns) + extra,
                 max_size=len(columns) + extra)
    )
    want = _quadratic_align(tokens, columns)
    assert _linear(tokens, columns, use_numpy=False) == want
    assert _linear(tokens, columns, use_numpy=True) == want
    if want is None:
        with pytest.raises(AlignmentError, match="no placement"):
            align(tokens, columns)
    else:
        assert align(tokens, columns) == want


def test_many_pipes_in_a_free_text_column_take_linear_time():
    """24,000 '|' in a job name took over 10 s of CPU (quadratic: pipes_32000.sacct
    of the audit took 44 s); now a small fraction of a second, and 8 times as many
    pipes at most about 8 times as long."""
    columns = ["JobID", "JobName", "Elapsed", "State", "NCPUS"]

    def cpu_seconds(pipes):
        tokens = "|".join(["7", "x" + "|" * pipes, "00:01:00", "COMPLETED", "2"]).split("|")
        started = time.process_time()
        values = align(tokens, columns)
        assert values[1] == "x" + "|" * pipes and values[2:] == ["00:01:00", "COMPLETED", "2"]
        return time.process_time() - started

    small, large = cpu_seconds(3000), cpu_seconds(24000)
    assert large < 2
    assert large < 16 * small + 0.5


def test_many_short_lines_are_joined_in_linear_time():
    """200,000 short lines after the header took about 10 s (400,000: 107 s), each
    joined line re-counting the whole pending record; now one record, joined once."""
    started = time.process_time()
    records = list(physical_records(iter(["x\n"] * 200_000), 32))
    assert time.process_time() - started < 2
    assert len(records) == 1 and records[0][0] == 1
    assert records[0][1].count("\n") == 199_999
