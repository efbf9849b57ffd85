"""The bounds of the ``lublin`` generator's ``procs`` and ``jobs`` (docs/models.md,
"Bounds of procs"): a machine beyond 2**31 - 1 processors is a one-line error
instead of negative sizes; a machine too small for the default size parameters is
an error naming ``procs`` and the smallest that works, not options never given."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import schedlab
from schedlab.cli import main
from schedlab.errors import UsageError
from schedlab.formats import lublin


def error(spec: str) -> str:
    with pytest.raises(UsageError) as info:
        schedlab.read(spec)
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    "spec",
    [
        "lublin:jobs=10,procs=99999999999999999999",
        "lublin:jobs=10,procs=2147483648",
        "lublin:jobs=10,procs=2147483648,types=no",
    ],
)
def test_procs_beyond_the_limit_is_an_error(spec):
    procs = spec.split("procs=")[1].split(",")[0]
    assert error(spec) == (
        f"generator lublin: option procs={procs}: must be at most 2147483647 (2**31 - 1)"
    )


def test_jobs_beyond_the_limit_is_an_error():
    assert error("lublin:jobs=2147483648") == (
        "generator lublin: option jobs=2147483648: must be at most 2147483647 (2**31 - 1)"
    )


def test_the_largest_procs_gives_valid_sizes():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once a RuntimeWarning of numpy's cast
        w = schedlab.read(f"lublin:jobs=2000,procs={lublin.MAX_PROCS},seed=1")
    size = w.to_arrays()["allocated_processors"]
    assert np.isfinite(size).all()
    assert size.min() >= 1 and size.max() <= lublin.MAX_PROCS
    assert size.max() > 2**20  # the machine's size is used, not clipped
    assert w.header.max_procs == lublin.MAX_PROCS


@pytest.mark.parametrize(
    ("procs", "types", "smallest"),
    [(1, "yes", 32), (2, "yes", 32), (3, "yes", 32), (31, "yes", 32), (9, "no", 10)],
)
def test_procs_too_small_for_the_default_sizes_names_procs(procs, types, smallest):
    message = error(f"lublin:jobs=10,procs={procs},types={types}")
    assert message.startswith(f"generator lublin: option procs={procs}: too small"), message
    assert f"procs must be at least {smallest}" in message


@pytest.mark.parametrize(("procs", "types"), [(32, "yes"), (10, "no")])
def test_the_smallest_procs_said_works(procs, types):
    w = schedlab.read(f"lublin:jobs=50,procs={procs},types={types}")
    assert w.to_arrays()["allocated_processors"].max() <= procs


def test_the_smallest_procs_covers_every_class():
    # The interactive class fails first, the batch one needs more (ulow_batch=6).
    message = error("lublin:jobs=10,procs=4,ulow_batch=6")
    assert "option procs=4: too small" in message and "at least 256" in message
    schedlab.read("lublin:jobs=10,procs=256,ulow_batch=6")


def test_a_given_umed_is_what_a_derived_uhi_must_reach():
    message = error("lublin:jobs=10,procs=4,umed_inter=3")
    assert message.startswith("generator lublin: option procs=4: too small"), message
    assert "uhi_inter=0.5 (it follows procs) falls below umed_inter=3" in message
    assert "at least 23" in message
    schedlab.read("lublin:jobs=10,procs=23,umed_inter=3")


def test_size_parameters_given_make_any_procs_usable():
    w = schedlab.read("lublin:jobs=20,procs=1,types=no,ulow=0,umed=0,uhi=0")
    assert set(w.to_arrays()["allocated_processors"]) == {1.0}


def test_parameters_out_of_range_by_themselves_keep_their_own_message():
    # procs is not what is wrong here: the message names the options given.
    assert "options ulow=-1" in error("lublin:procs=64,ulow=-1,types=no")
    assert "options ulow=0.9, umed=0.5" in error("lublin:procs=64,ulow=0.9,umed=0.5,types=no")


def test_a_job_count_the_memory_cannot_hold_is_a_usage_error(monkeypatch):
    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(lublin, "arrival_times", no_memory)
    assert error("lublin:jobs=100") == (
        "generator lublin: option jobs=100: not enough memory to generate so many jobs"
    )


def test_simulate_with_huge_procs_is_one_line_exit_2(tmp_path, capsys):
    out = tmp_path / "lub.swf"
    with pytest.raises(SystemExit) as info:
        main(["simulate", "lublin:jobs=10,procs=99999999999999999999", "-o", str(out)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err == (
        "schedlab: error: generator lublin: option procs=99999999999999999999: "
        "must be at most 2147483647 (2**31 - 1)\n"
    )
    assert not out.exists()
