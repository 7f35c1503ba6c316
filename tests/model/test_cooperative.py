"""Cooperative-sticky: two rounds, only the moved partitions are revoked (Kafka 3.6)."""

from __future__ import annotations

from tests.model.conftest import rows

SCENARIO = "cooperative_3_6"
A, B = "host-a/consumer-orders-app-1", "host-b/consumer-orders-app-1"


def test_two_cooperative_rounds_after_the_join(model):
    assert rows(model.rebalances, "generation", "protocol_type", "members_joined", "trigger") == [
        (11, "cooperative", [], "first generation in the logs (earlier history not logged)"),
        (12, "cooperative", [B], "member joined (scale-up or restart)"),
        (13, "cooperative", [], "cooperative follow-up round (partitions revoked in the previous one)"),
    ]


def test_partitions_move_in_the_second_round_only(model):
    moved = {r["generation"]: r["moved"] for r in model.rebalances.collect()}
    assert moved[12] == []
    assert moved[13] == [f"orders-{p}: {A} -> {B}" for p in (3, 4, 5)]


def test_kept_partitions_are_never_revoked(model):
    assert rows(model.ownership, "partition", "host", "generation", "from_ts", "to_ts", "ended", "from_line", "to_line") == sorted(
        [(p, "host-a", 11, "11:59:03.493", None, "end of logs", 19, None) for p in (0, 1, 2)]
        + [(p, "host-a", 11, "11:59:03.493", "12:00:11.233", "revoked", 19, 40) for p in (3, 4, 5)]
        + [(p, "host-b", 13, "12:00:11.306", None, "end of logs", 30, None) for p in (3, 4, 5)],
        key=lambda r: tuple("" if v is None else str(v) for v in r),
    )
