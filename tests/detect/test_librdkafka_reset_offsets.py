"""librdkafka resets to a logical offset (``offset reset ... to offset BEGINNING/END``) and names
the offset it went to on a later line, ``Offset BEGINNING/END request for T [p] returned offset
N``: an out-of-range skip measured to N, and a reset to END of a partition that had no records
(N at the log start) loses nothing."""

from __future__ import annotations

import pytest

from tests.detect.incidents import Incident, analyse_apart, keys, renamed

JOIN = '%7|1736512000.100|JOINGROUP|rdkafka#consumer-1| [thrd:main]: I am elected leader for group "ledger-app" with 1 member(s)'


def rdk(ts: str, level: int, text: str) -> str:
    return f"%{level}|1736512{ts}|OFFSET|rdkafka#consumer-1| [thrd:main]: {text}"


def out_of_range(ts: str, partition: int, at: int) -> str:
    return rdk(
        ts,
        4,
        f"ledger [{partition}]: offset reset (at offset {at} (leader epoch 3), broker 1) to offset BEGINNING "
        "(leader epoch -1): fetch failed due to requested offset not available on the broker: Broker: Offset out of range",
    )


def no_commit(ts: str, partition: int) -> list[str]:
    return [
        f"%7|1736512{ts}|OFFSETFETCH|rdkafka#consumer-1| [thrd:main]: Adding ledger [{partition}] back to pending list with offset INVALID",
        rdk(
            ts,
            7,
            f"ledger [{partition}]: offset reset (at offset INVALID (leader epoch -1), broker -1) to offset END (leader epoch -1): "
            "no previously committed offset available: Local: No offset stored",
        ),
    ]


def returned(ts: str, query: str, partition: int, offset: int) -> str:
    return rdk(ts, 7, f"Offset {query} request for ledger [{partition}] returned offset {offset} ({offset}) leader epoch 3")


INCIDENTS = {
    "out_of_range": Incident({"w1": [JOIN, out_of_range("010.000", 5, 2200), returned("010.100", "BEGINNING", 5, 2650)]}),
    "reset_to_end": Incident(
        {
            "w2": renamed(
                [
                    JOIN,
                    *no_commit("020.000", 1),
                    returned("020.100", "END", 1, 0),
                    *no_commit("030.000", 2),
                    *no_commit("030.010", 2),
                    returned("030.100", "END", 2, 75),
                ],
                {'"ledger-app"': '"journal-app"'},
            )
        }
    ),
}
"""Analysed in one run (``analyse_apart``); reset_to_end in group ``journal-app`` on host w2, named
apart from out_of_range's ``ledger-app`` on w1 (their partitions of ``ledger`` differ)."""


@pytest.fixture(scope="module")
def found(spark, tmp_path_factory) -> dict[str, list[dict]]:
    return analyse_apart(spark, tmp_path_factory.mktemp("librdkafka") / "logs", INCIDENTS)


def test_an_out_of_range_reset_is_measured_to_the_offset_its_query_returned(found):
    found = [f for f in found["out_of_range"] if f["detector"] == "out_of_range_reset"]
    assert keys(found) == [("out_of_range_reset", "ledger-app", "ledger", 5, None, 2200, 2650, 450, "loss", None, True)]
    assert [e["line"] for e in found[0]["evidence"]] == [2, 3]


def test_a_reset_to_end_measured_by_its_returned_offset(found):
    """Partition 1 was empty (END returned 0): nothing lost. Partition 2 had 75 records before
    the reset, queried twice (a second assignment repeated the reset before the answer)."""
    found = [f for f in found["reset_to_end"] if f["verdict"] in ("loss", "duplication")]
    assert keys(found) == [("reset_to_latest_gap", "journal-app", "ledger", 2, None, 0, 75, 75, "loss", None, False)]
