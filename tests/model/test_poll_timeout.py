"""Poll-timeout eviction: the stalled member leaves, its partitions move, it comes back (2.8)."""

from __future__ import annotations

from tests.model.conftest import rows

SCENARIO = "poll_timeout_2_8"
A, B = "host-a/consumer-orders-app-1", "host-b/consumer-orders-app-1"


def test_eviction_is_the_trigger_of_generation_21(model):
    (row,) = model.rebalances.where("generation = 21").collect()
    assert row["trigger"] == "member left: poll timeout (max.poll.interval.ms)"
    assert row["members_left"] == [B] and row["members"] == [A]
    assert row["start_ts"].strftime("%H:%M:%S.%f")[:-3] == "13:05:10.015"
    assert row["duration_ms"] == 285
    assert row["moved"] == [f"orders-{p}: {B} -> {A}" for p in (3, 4, 5)]


def test_evicted_member_rejoins_in_generation_22(model):
    (row,) = model.rebalances.where("generation = 22").collect()
    assert row["members_joined"] == [B]
    assert row["moved"] == [f"orders-{p}: {A} -> {B}" for p in (3, 4, 5)]


def test_evicted_members_intervals_end_when_it_left(model):
    assert rows(model.ownership.where("partition = 4"), "host", "generation", "from_ts", "to_ts", "ended", "from_line", "to_line") == [
        ("host-a", 21, "13:05:10.300", "13:06:03.126", "revoked", 39, 50),
        ("host-b", 20, "13:00:03.684", "13:05:10.015", "member left", 27, 30),
        ("host-b", 22, "13:06:03.174", None, "end of logs", 46, None),
    ]
