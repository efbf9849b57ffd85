"""Grid Engine consumable requests are held to the reader's bounds (2**53 - 1 per
slot and for the job), in the careful and the bulk path, strict and lenient
(docs/formats/sge.md, "Requests in the category")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import schedlab
from schedlab.errors import FormatError
from schedlab.formats.sge.mapping import consumable_problem

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "sge"
RECORD = (DATA / "xdmod_sge_accounting-logs.log").read_text().splitlines()[0]
PLAIN = "s_rt=36000 -pe mype 1"

pytestmark = pytest.mark.realdata


def _record(request: str, job: int = 22947) -> str:
    assert PLAIN in RECORD
    return RECORD.replace(PLAIN, request).replace(":22947:", f":{job}:")


def test_amounts_at_and_above_the_bound() -> None:
    assert consumable_problem("-l lic=9007199254740991", 1) is None
    assert "per slot" in (consumable_problem("-l lic=9007199254740992", 1) or "")
    assert "per slot" in (consumable_problem("-l lic=" + "9" * 400, float("nan")) or "")
    # the job total: 2**51 per slot for 2 slots is within, for 4 it is not
    assert consumable_problem(f"-l lic={2**51}", 2) is None
    assert "for 4 slots" in (consumable_problem(f"-l lic={2**51}", 4) or "")
    # limits and booleans are no consumables
    assert consumable_problem("-l h_rt=99999999999999999999,highmem=false", 1) is None


@pytest.mark.parametrize(
    "request_text, says",
    [
        ("s_rt=36000,lic=" + "9" * 400 + " -pe mype 4", "per slot"),
        ("s_rt=36000,lic=100000000000000000 -pe mype 1", "per slot"),
        ("s_rt=36000,gpu=10000000000000 -pe mype 1000", "for 1000 slots"),
    ],
)
def test_an_out_of_range_consumable_is_an_error_naming_line_and_field(
    tmp_path: Path, request_text: str, says: str
) -> None:
    path = tmp_path / "accounting"
    path.write_text(_record(request_text) + "\n")
    with pytest.raises(FormatError) as caught:
        schedlab.read(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:1: field category: consumable ")
    assert says in message
    done = subprocess.run(
        [sys.executable, "-m", "schedlab", "info", str(path)], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and "field category: consumable" in done.stderr


def test_many_records_one_bad_consumable_bulk_path(tmp_path: Path) -> None:
    """In a file long enough for the bulk reader, the one record out of range is
    still found (strict: an error at its line; lenient: skipped and counted), and
    the others keep their consumables."""
    lines = [_record(f"s_rt=36000,lic=2 -pe mype {1 + k % 4}", 1000 + k) for k in range(3000)]
    lines[1234] = _record("s_rt=36000,lic=5000000000000000 -pe mype 2", 2234)
    path = tmp_path / "accounting"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(FormatError, match=r"accounting:1235: field category: consumable lic"):
        schedlab.read(path)
    w = schedlab.read(path, lenient=True)
    assert len(w.jobs) == 2999
    assert w.meta["skipped"] == 1
    totals = {j.extras["sge.job_number"]: j.extras["request.lic"] for j in w.jobs}
    assert 2234 not in totals
    assert totals[1001] == 4 and totals[1003] == 8


def test_jsonl_category_is_checked_too(tmp_path: Path) -> None:
    source = DATA / "ocs-9.0.0_release-notes_accounting.jsonl"
    first = source.read_text().splitlines()[0]
    assert '"category":"-l gpu=2"' in first
    path = tmp_path / "accounting.jsonl"
    path.write_text(
        first.replace('"category":"-l gpu=2"', '"category":"-l gpu=' + "9" * 30 + '"') + "\n"
    )
    with pytest.raises(FormatError, match=r"accounting.jsonl:1: field category: consumable gpu"):
        schedlab.read(path)
