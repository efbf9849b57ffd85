"""Estimate accuracy and PSP accuracy classes (schedlab.accuracy)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from schedlab.accuracy import (
    PSP_EDGES,
    accuracy_class,
    accuracy_class_index,
    accuracy_priority,
    class_intervals,
    class_labels,
    estimate_accuracy,
    last_window_mean,
    parse_edges,
    user_accuracy,
    user_accuracy_classes,
)
from schedlab.errors import UsageError

NAN = float("nan")


def test_psp_table_1_intervals():
    # Table 1 of the paper: a1 [0,0.2) ... a5 [0.8,1.0]; "an accuracy of 0.35 -> priority 2".
    assert class_labels() == ["a1", "a2", "a3", "a4", "a5"]
    assert class_intervals() == ["[0, 0.2)", "[0.2, 0.4)", "[0.4, 0.6)", "[0.6, 0.8)", "[0.8, 1]"]
    assert accuracy_priority(0.35) == 2
    values = [0.0, 0.1999, 0.2, 0.4, 0.59, 0.6, 0.8, 0.99, 1.0]
    assert [accuracy_class(v) for v in values] == [
        "a1",
        "a1",
        "a2",
        "a3",
        "a3",
        "a4",
        "a5",
        "a5",
        "a5",
    ]
    assert accuracy_class(NAN) == "unknown"
    assert accuracy_priority(NAN) == 0


def test_edge_values_survive_rounding_error():
    # The mean of 0.3, 0.3, 0.3, 0.1, 0.1, 0.1 is 0.19999999999999998 in floating
    # point: means are rounded before classing, so it lands on a2 as it should.
    _, means = user_accuracy(np.zeros(6), np.arange(6.0), np.array([0.3] * 3 + [0.1] * 3))
    assert means[0] < 0.2
    assert accuracy_class(means[0]) == "a2"
    assert accuracy_class(0.6 - 1e-15) == "a4"


def test_estimate_accuracy():
    acc = estimate_accuracy(np.array([5, 20, 0, NAN, 1, 1]), np.array([10, 10, 10, 10, 0, NAN]))
    np.testing.assert_array_equal(acc, [0.5, 1.0, 0.0, NAN, NAN, NAN])


def test_parse_edges():
    assert parse_edges("0.2/0.4/0.6/0.8") == PSP_EDGES
    assert parse_edges("0.25 0.5;0.75") == (0.25, 0.5, 0.75)
    for bad in ("", "0.5/0.4", "0/0.5", "0.5/1", "x"):
        with pytest.raises(UsageError):
            parse_edges(bad)


def test_last_window_mean_orders_by_completion_then_row():
    keys = np.array([1, 1, 1, 2, 2, NAN])
    order = np.array([30, 10, 20, 5, 5, 1])  # user 2's two jobs end together
    values = np.array([0.9, 0.1, 0.5, 0.2, 0.4, 0.7])
    ids, means = last_window_mean(keys, order, values, window=2)
    assert ids.tolist() == [1, 2]
    # user 1's last two by completion: 0.5 (t=20) and 0.9 (t=30); user 2: both.
    np.testing.assert_allclose(means, [0.7, 0.3])
    ids, means = last_window_mean(keys, order, values, window=1)
    # tie at t=5: the later row counts as the later completion.
    np.testing.assert_allclose(means, [0.9, 0.4])


def test_unknown_values_are_skipped_not_counted_in_window():
    _, means = user_accuracy(
        np.array([1, 1, 1]), np.array([1, 2, 3]), np.array([0.2, 0.4, NAN]), window=2
    )
    np.testing.assert_allclose(means, [0.3])
    with pytest.raises(UsageError):
        user_accuracy(np.array([1]), np.array([1]), np.array([1.0]), window=0)


def test_user_accuracy_classes_per_job():
    users = np.array([3, 1, 3, 2, NAN])
    ends = np.array([1, 2, 3, NAN, 5])
    acc = np.array([0.9, 0.1, 0.7, 0.5, 0.5])
    # user 3 -> 0.8 (a5), user 1 -> 0.1 (a1), user 2 -> end unknown -> 0, no user -> 0.
    assert user_accuracy_classes(users, ends, acc).tolist() == [5, 1, 5, 0, 0]


@given(st.lists(st.floats(0, 1), min_size=1, max_size=50))
def test_class_index_is_monotone_and_in_range(values):
    arr = np.sort(np.array(values))
    index = accuracy_class_index(arr)
    assert index.min() >= 1 and index.max() <= 5
    assert np.all(np.diff(index) >= 0)


@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.floats(0, 1e6), st.floats(0, 1)),
        min_size=1,
        max_size=60,
    ),
    st.integers(1, 12),
)
def test_last_window_mean_matches_a_plain_loop(rows, window):
    keys = np.array([r[0] for r in rows], dtype=float)
    order = np.array([r[1] for r in rows])
    values = np.array([r[2] for r in rows])
    ids, means = last_window_mean(keys, order, values, window)
    expected = {}
    for key in sorted(set(keys.tolist())):
        triples = enumerate(zip(keys, order, values, strict=True))
        mine = sorted((o, i, v) for i, (k, o, v) in triples if k == key)
        expected[key] = np.mean([v for _, _, v in mine[-window:]])
    assert ids.tolist() == list(expected)
    np.testing.assert_allclose(means, list(expected.values()), rtol=1e-12, atol=1e-15)
