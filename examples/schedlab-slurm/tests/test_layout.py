"""Putting records back together: unescaped '|' and newlines in free-text columns."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedlab_slurm.layout import AlignmentError, align, physical_records

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
