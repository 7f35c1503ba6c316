"""The headline numbers with unmeasured findings (issue 85): a loss the logs prove but cannot
count is "unmeasured", never "0 (at most)". Hand-written findings, no Spark."""

from __future__ import annotations

from forensics.cli.text import format_findings_headline
from forensics.report.publish import index_html
from forensics.report.tables import damage_text, headline


def finding(verdict: str, records: int | None, exact: bool, missing: bool = False) -> dict:
    return {
        "detector": "reset_to_latest_gap",
        "verdict": verdict,
        "group": "billing-events",
        "topic": "invoices",
        "partition": 4,
        "offset_from": None if records is None else 10,
        "offset_to": None if records is None else 10 + records,
        "records": records,
        "exact": exact,
        "missing": {"what": "the log end at the reset", "commands": ["kafka-get-offsets.sh ..."]} if missing else None,
    }


def test_an_unmeasured_loss_alone_reads_unmeasured_not_zero_at_most():
    h = headline({"findings": [finding("loss", None, False, missing=True)]})
    assert h["records_lost"] == 0 and h["lost_unmeasured"] == 1 and not h["lost_is_bound"]
    assert damage_text(h, "lost") == "unmeasured in 1 finding"
    assert damage_text(h, "duplicated") == "0"
    assert "records lost unmeasured in 1 finding, processed twice 0" in format_findings_headline(h)
    page = index_html([("inc", "inc.html", h)])
    assert '<tr class="loss">' in page and '<td class="num">unmeasured in 1 finding</td>' in page


def test_measured_counts_keep_their_bound_beside_unmeasured_findings():
    h = headline(
        {
            "findings": [
                finding("loss", 25, True),
                finding("loss", 7, False),
                finding("loss", None, False, missing=True),
                finding("loss", None, False, missing=True),
                finding("duplication", 3, True),
            ]
        }
    )
    assert damage_text(h, "lost") == "32 (at most), and unmeasured in 2 findings"
    assert damage_text(h, "duplicated") == "3"


def test_an_old_headline_without_the_unmeasured_counts_still_renders():
    h = {"records_lost": 5, "records_duplicated": 0, "lost_is_bound": True, "duplicated_is_bound": False}
    assert (damage_text(h, "lost"), damage_text(h, "duplicated")) == ("5 (at most)", "0")
