"""aiokafka leaves its group when max_poll_interval_ms runs out without logging why: a leave that
states no reason, then the member's own rejoin with no new subscription between, is a poll
timeout. Closing (no rejoin) or a new subscription before the rejoin is not."""

from __future__ import annotations

from tests.detect.test_seed_cases import analyse, write

GC = "aiokafka.consumer.group_coordinator"


def aio(ts: str, level: str, text: str, logger: str = GC) -> str:
    return f"2025-09-09 21:{ts} {level} {logger} {text}"


START = [
    aio("10:00,100", "INFO", "Updating subscribed topics to: frozenset({'shipments'})", "aiokafka.consumer.subscription_state"),
    aio("10:00,200", "INFO", "(Re-)joining group dispatch"),
    aio("10:00,300", "INFO", "Joined group 'dispatch' (generation 3) with member_id aiokafka-0.14.0-0d9e8f7a-6b5c-4d3e-9f1a-2b3c4d5e6f70"),
    aio("10:00,310", "INFO", "Successfully synced group dispatch with generation 3"),
    aio("10:00,320", "INFO", "Setting newly assigned partitions {TopicPartition(topic='shipments', partition=1)} for group dispatch"),
]
STALLED = [
    aio("10:20,000", "INFO", "LeaveGroup request succeeded"),
    aio(
        "10:20,040",
        "ERROR",
        "OffsetCommit failed for group dispatch due to group error ([Error 25] UnknownMemberIdError: dispatch), will rejoin",
    ),
    aio(
        "10:20,050",
        "INFO",
        "Revoking previously assigned partitions frozenset({TopicPartition(topic='shipments', partition=1)}) for group dispatch",
    ),
    aio("10:24,000", "INFO", "(Re-)joining group dispatch"),
]
CLOSED_AND_NEW = [
    aio("10:20,000", "INFO", "LeaveGroup request succeeded"),
    aio("10:21,000", "INFO", "Updating subscribed topics to: frozenset({'shipments'})", "aiokafka.consumer.subscription_state"),
    aio("10:21,100", "INFO", "(Re-)joining group dispatch"),
]


def poll_timeouts(spark, root, lines) -> list[dict]:
    return [f for f in analyse(spark, write(root, {"dispatcher-1": lines})) if f["detector"] == "poll_timeout"]


def test_a_leave_then_a_rejoin_while_subscribed_is_a_poll_timeout(spark, tmp_path):
    found = poll_timeouts(spark, tmp_path, START + STALLED)
    assert [(f["group"], f["host"]) for f in found] == [("dispatch", "dispatcher-1")]
    assert "no line says so" in found[0]["explanation"] and [e["line"] for e in found[0]["evidence"]] == [6]


def test_closing_or_subscribing_again_is_no_poll_timeout(spark, tmp_path):
    assert poll_timeouts(spark, tmp_path / "closed", START + STALLED[:1]) == []
    assert poll_timeouts(spark, tmp_path / "new", START + CLOSED_AND_NEW) == []
