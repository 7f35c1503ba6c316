"""KIP-848 consumer protocol: rows per member epoch, partitions moved by reconciliation (3.9)."""

from __future__ import annotations

from tests.model.conftest import rows

SCENARIO = "kip848_3_9"
A, B = "host-a/consumer-orders-app-1", "host-b/consumer-orders-app-1"


def test_one_row_per_member_epoch(model):
    assert rows(model.rebalances, "generation", "protocol_type", "members_joined", "members_left", "trigger") == [
        (1, "consumer (KIP-848)", [], [], "first generation in the logs (earlier history not logged)"),
        (2, "consumer (KIP-848)", [B], [], "member joined (scale-up or restart)"),
    ]


def test_reconciliation_moves_three_partitions(model):
    (row,) = model.rebalances.where("generation = 2").collect()
    assert row["moved"] == [f"orders-{p}: {A} -> {B}" for p in (3, 4, 5)]
    assert rows(model.ownership.where("partition = 3"), "host", "generation", "from_ts", "to_ts", "ended") == [
        ("host-a", 1, "14:00:00.545", "14:01:03.563", "revoked"),
        ("host-b", 2, "14:01:05.541", None, "end of logs"),
    ]
