"""PSP's policy and the metrics' accuracy-class grouping agree on class edges."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from schedlab.accuracy import accuracy_class_index
from schedlab.policies.psp import accuracy_class


@given(st.lists(st.floats(0, 1), min_size=1, max_size=10))
def test_policy_and_metrics_put_a_mean_in_the_same_class(ratios):
    mean = sum(ratios) / len(ratios)
    assert accuracy_class(mean) == int(accuracy_class_index(np.array([mean]))[0])


def test_a_mean_a_hair_below_an_edge_counts_as_the_edge():
    mean = (0.1 + 0.2 + 0.3) / 3  # 0.19999999999999998 in binary floating point
    assert accuracy_class(mean) == 2
