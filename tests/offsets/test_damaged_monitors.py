"""Lag-monitor documents as pastes damage them (issue 86, item 4): a Burrow partition entry alone,
a JavaScript literal, a response cut before its end, a response a REST client rendered without
commas. Their complete entries are read, each at its ``start`` / ``end`` line; a cut entry gives
nothing, and nothing of a healthy response changes."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from forensics.offsets import burrow, offsets_accounting, read_offsets, sniff_file

DATA = Path(__file__).parent.parent / "data"
DAMAGED = DATA / "offsets_damaged"
ENTRY_ALONE, JS_LITERAL, CUT = DAMAGED / "burrow_entry_alone.json", DAMAGED / "burrow_js_literal.txt", DAMAGED / "burrow_cut.json"
HEALTHY = DATA / "offsets" / "burrow_rewind.json"
COLUMNS = ("line", "group_id", "topic", "partition", "current_offset", "lag", "state", "host", "commit_ts")


def at(minute: int) -> datetime:
    return datetime(2025, 2, 3, 9, minute)


EXPECTED = {
    ENTRY_ALONE.name: [
        (7, None, "settlements", 2, 90412, 12, "REWIND", "/10.4.0.17", at(40)),
        (13, None, "settlements", 2, 90377, 61, "REWIND", "/10.4.0.17", at(41)),
    ],
    JS_LITERAL.name: [
        (14, "ledger-settle", "settlements", 0, 71100, 3, "OK", "/10.4.0.17", at(40)),
        (15, "ledger-settle", "settlements", 0, 71200, 0, "OK", "/10.4.0.17", at(41)),
    ],
    CUT.name: [
        (1, "ledger-settle", "settlements", 0, 71100, 3, "OK", "/10.4.0.17", at(40)),  # partition 1 is cut: nothing
        (1, "ledger-settle", "settlements", 0, 71200, 0, "OK", "/10.4.0.17", at(41)),
    ],
}


@pytest.fixture(scope="module")
def rows(spark):
    paths = [str(p) for p in (ENTRY_ALONE, JS_LITERAL, CUT, HEALTHY)]
    found: dict[str, list] = {}
    for row in read_offsets(spark, paths).select("source_file", *COLUMNS).collect():
        found.setdefault(Path(row["source_file"]).name, []).append(tuple(row[c] for c in COLUMNS))
    return {name: sorted(values, key=lambda r: (r[0], r[4])) for name, values in found.items()}, offsets_accounting(spark, paths)


@pytest.mark.parametrize("path", [ENTRY_ALONE, JS_LITERAL, CUT])
def test_damaged_documents_are_sniffed_as_burrow(path):
    assert sniff_file(str(path)) == "burrow"
    assert burrow.MARKER.search(path.read_bytes())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_their_complete_entries_are_read_at_their_lines(rows, name):
    assert rows[0][name] == EXPECTED[name]


def test_a_healthy_response_reads_as_before(rows):
    assert [r[0] for r in rows[0][HEALTHY.name]] == [16, 22, 37, 43, 58, 64]


def test_every_line_is_accounted_for(rows):
    accounting = rows[1]
    lines = sum(len(p.read_text().splitlines()) for p in (ENTRY_ALONE, JS_LITERAL, CUT, HEALTHY))
    assert accounting["lines"] == lines and accounting["unparsed"] == 0
    assert accounting["records"] == 6 + 6


def test_other_json_is_no_burrow_document():
    assert not burrow.sniff(['{"topic": "t", "partition": 0, "offset": 5}'])  # no commit window: not an entry
    assert not burrow.sniff(['{"level":"INFO","message":"lag of topic: t, partition: 0, start: {offset: 5}, end: {offset: 6}"}'])
    assert not burrow.sniff(["[2025-02-03 09:41:00,000] INFO topic: t, partition: 0, start: {offset: 5}, end: {offset: 6} (x.Y)"])
