"""``schedlab report --bin-width/--bins`` against hostile values: not a number,
infinite, or so many bins that the page would not fit in memory."""

from __future__ import annotations

import pytest
from schedlab.cli import main
from schedlab.errors import UsageError
from schedlab.report_data import MAX_BINS, bin_levels, check_bins


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--bin-width", "nan", "--bin-width nan: must be a positive, finite number of seconds"),
        ("--bin-width", "inf", "--bin-width inf: must be a positive, finite number of seconds"),
        ("--bins", "2000000", "--bins 2000000: must be at most 1,000,000"),
    ],
)
def test_bad_bin_options_are_one_line_naming_the_option(
    capsys, tmp_path, swf_dir, option, value, message
):
    page = tmp_path / "r.html"
    code, out, err = run_main(
        capsys, "report", str(swf_dir / "lublin_256.swf"), "--simulate", "fcfs", "-o",
        str(page), option, value,
    )  # fmt: skip
    assert code == 2, err
    assert err == f"schedlab: error: {message}\n"
    assert out == "" and not page.exists()


def test_a_bin_width_giving_too_many_bins_is_refused():
    span = 30 * 86400.0
    with pytest.raises(UsageError, match=r"^--bin-width 1: gives 2,592,000 bins .*1,000,000"):
        bin_levels(span, width=1.0)
    assert bin_levels(span, width=span / MAX_BINS)[0] == span / MAX_BINS  # the bound is fine
    with pytest.raises(UsageError, match="--bins 1000001"):
        bin_levels(span, target_bins=MAX_BINS + 1)
    for width in (float("nan"), float("inf"), 0.0, -5.0):
        with pytest.raises(UsageError, match="--bin-width"):
            check_bins(600, width)
    check_bins(600, None)
