"""Findings of the PSP conformance audit (all documentation): the docs claim nothing
for the PSP paper that the paper does not say, and label schedlab's own choices and
hypotheses as such; the multifactor PSP factor is documented as class over the
number of classes; ``psp-fing`` documents the rounding it does; the jobs-per-user
range quoted for seed 1 is the generator's."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import schedlab

ROOT = Path(__file__).resolve().parent.parent
PAPER = ROOT.parent / "shared" / "specs" / "psp-paper.txt"


def _text(relative: str) -> str:
    """A file of the repository with its whitespace runs collapsed to one space."""
    return " ".join((ROOT / relative).read_text(encoding="utf-8").split())


# ------------------------------------------------------ claims the paper does not make

#: Sentences that attributed to the paper what it never says (audit finding 1).
UNSUPPORTED = [
    ("docs/experiments.md", "the paper's baseline"),
    ("docs/experiments.md", "age at least"),
    ("docs/experiments.md", "section 3, Algorithm 1"),
    ("docs/simulation.md", "this is how the PSP paper ran PSP"),
    ("policies/multifactor.py", "This is how the PSP paper ran PSP"),
    ("policies/multifactor.py", "one factor among others"),
    ("policies/psp_experiment/reference.py", "EASY backfilling)"),
]


@pytest.mark.parametrize(("relative", "phrase"), UNSUPPORTED)
def test_no_claim_the_paper_does_not_make(relative, phrase):
    assert phrase not in _text(relative)


#: What the paper does say, quoted where the docs now label schedlab's choices.
QUOTES = {
    "docs/experiments.md": [
        "We included our code in the Multifactor implementation",
        "The priority is a number between 1 and 5",
        "The default behavior of Maui is defined by a first-come, first-served (FCFS)"
        " batch scheduler, plus EASY Backfilling",
    ],
    "docs/simulation.md": ["We included our code in the Multifactor implementation"],
    "policies/multifactor.py": [
        "We included our code in the Multifactor implementation",
        "The priority is a number between 1 and 5",
    ],
    "policies/psp_experiment/reference.py": ["SLURM simulator"],
}


@pytest.mark.skipif(not PAPER.exists(), reason="needs ../shared/specs/psp-paper.txt")
@pytest.mark.parametrize(
    ("relative", "quote"), [(f, q) for f, quotes in QUOTES.items() for q in quotes]
)
def test_quotes_of_the_paper_are_the_papers(relative, quote):
    paper = " ".join(PAPER.read_text(encoding="utf-8").split())
    assert quote in paper
    assert quote in _text(relative)


@pytest.mark.parametrize(
    ("relative", "label"),
    [
        ("docs/experiments.md", "schedlab's hypothesis"),
        ("docs/experiments.md", "schedlab's choice"),
        ("docs/simulation.md", "schedlab's hypothesis"),
        ("policies/multifactor.py", "schedlab's hypothesis"),
        ("policies/psp_experiment/reference.py", "schedlab's choice"),
    ],
)
def test_schedlab_choices_are_labelled(relative, label):
    assert label in _text(relative)


@pytest.mark.skipif(not PAPER.exists(), reason="needs ../shared/specs/psp-paper.txt")
def test_the_multifactor_sentence_is_cited_in_its_section():
    paper = PAPER.read_text(encoding="utf-8")
    # "Section 4 describes the proposed PSP algorithm"; the sentence and Algorithm 1
    # come after that section's heading and before section 5's.
    assert "Section 4 describes the proposed PSP algorithm" in paper
    start = paper.index("The proposed Penalty Scheduling Policy")
    end = paper.index("Workload analysis and problem instances")
    assert start < paper.index("We included our code in the Multifactor") < end
    assert start < paper.index("Algorithm 1.") < end
    assert "(section 4, Algorithm 1)" in _text("docs/experiments.md")


# ------------------------------------------------------ the multifactor PSP factor


def test_simulation_doc_gives_the_psp_factor_over_the_number_of_classes():
    from schedlab.policies.multifactor import Multifactor

    zero = {"weight_age": 0, "weight_size": 0, "weight_fairshare": 0, "weight_queue": 0}
    two = Multifactor(weight_psp=1000, psp_edges="0.5", **zero)
    five = Multifactor(weight_psp=1000, **zero)
    # A newcomer is in the highest class: 2 of 2 and 5 of 5, both 1.0 (class / 5
    # would give 0.4 with two classes).
    assert two.psp_factor(7) == 1.0
    assert five.psp_factor(7) == 1.0
    doc = _text("docs/simulation.md")
    paragraph = doc[doc.index("The PSP accuracy class can be one more factor") :][:900]
    assert "class / 5" not in paragraph
    assert "`weight_psp * class / classes`" in paragraph
    assert "len(psp_edges) + 1" in paragraph


# ------------------------------------------------------ psp-fing's rounding


def test_psp_fing_rounds_requested_times_to_the_nearest_second():
    from schedlab.formats import psp_fing
    from schedlab.formats.psp_fing import _user_accuracies

    w = schedlab.read("psp-fing:scenario=GE,seed=1,accuracy_concentration=inf")
    a = w.to_arrays()
    run, req = a["run_time"], a["requested_time"]
    user = a["user_id"].astype(int)
    base, _ = _user_accuracies("GE", 20, 1, 0.005)
    exact = run / base[user - 1]
    expected = np.maximum(np.minimum(np.round(exact), 864000), run)
    assert np.array_equal(req, expected)
    assert np.any(req < np.minimum(np.ceil(exact), 864000))  # not rounded up
    doc = " ".join((psp_fing.__doc__ or "").split())
    assert "rounded up" not in doc
    assert "rounded to the nearest second" in doc


# ------------------------------------------------------ jobs per user, seed 1


def test_jobs_per_user_range_of_seed_1_is_measured():
    doc = _text("docs/experiments.md")
    found = re.search(r"\((\d+) to (\d+) jobs per user for seed 1\)", doc)
    assert found is not None
    w = schedlab.read("psp-fing:scenario=CF,seed=1")
    counts = np.bincount(w.to_arrays()["user_id"].astype(int))[1:]
    assert (int(found.group(1)), int(found.group(2))) == (int(counts.min()), int(counts.max()))
