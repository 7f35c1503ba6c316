"""Eager (range) rebalance when a second consumer joins: Kafka 3.0, tests/data/model/eager_3_0."""

from __future__ import annotations

from tests.model.conftest import rows

SCENARIO = "eager_3_0"
A, B = "host-a/consumer-orders-app-1", "host-b/consumer-orders-app-1"


def test_one_row_per_generation_with_members_and_leader(model):
    assert rows(model.rebalances, "generation", "members", "leader", "protocol", "protocol_type") == [
        (5, [A], A, "range", "eager"),
        (6, [A, B], A, "range", "eager"),
    ]


def test_rebalance_into_generation_6_timing_and_trigger(model):
    (row,) = model.rebalances.where("generation = 6").collect()
    assert row["start_ts"].strftime("%H:%M:%S.%f")[:-3] == "10:00:30.215"  # host-b's first JoinGroup
    assert row["joined_ts"].strftime("%H:%M:%S.%f")[:-3] == "10:00:33.473"
    assert row["end_ts"].strftime("%H:%M:%S.%f")[:-3] == "10:00:33.500"  # host-b's assignment, the last
    assert row["duration_ms"] == 3285
    assert [(a["member"], a["assigned_ts"].strftime("%H:%M:%S.%f")[:-3]) for a in row["assignments"]] == [
        (A, "10:00:33.495"),
        (B, "10:00:33.500"),
    ]
    assert (row["members_joined"], row["members_left"]) == ([B], [])
    assert row["trigger"] == "member joined (scale-up or restart)"
    assert row["moved"] == [f"orders-{p}: {A} -> {B}" for p in (3, 4, 5)]
    assert (row["start_file"].endswith("host-b/app.log"), row["start_line"]) == (True, 6)


def test_ownership_table_has_its_documented_columns(model):
    from forensics.model.ownership import OWNERSHIP_COLUMNS

    assert tuple(model.ownership.columns) == OWNERSHIP_COLUMNS


def test_ownership_intervals_exact(model):
    expected = []
    for p in range(6):
        expected.append((p, "host-a", 5, "09:58:03.472", "10:00:31.000", "revoked", 13, 30))
        if p < 3:
            expected.append((p, "host-a", 6, "10:00:33.495", None, "end of logs", 40, None))
        else:
            expected.append((p, "host-b", 6, "10:00:33.500", None, "end of logs", 12, None))
    columns = ("partition", "host", "generation", "from_ts", "to_ts", "ended", "from_line", "to_line")
    assert rows(model.ownership, *columns) == sorted(expected, key=lambda r: tuple("" if v is None else str(v) for v in r))


def test_synchronised_clocks_are_not_corrected(model):
    assert rows(model.clock_skew, "host", "reference", "corrected") == [("host-a", "host-a", False), ("host-b", "host-a", False)]
    (b,) = model.clock_skew.where("host = 'host-b'").collect()
    assert abs(b["offset_ms"]) <= 5
