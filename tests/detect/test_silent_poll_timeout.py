"""aiokafka leaves its group when max_poll_interval_ms runs out without logging why: a leave that
states no reason, then the member's own rejoin with no new subscription between, is a poll
timeout. Closing (no rejoin) or a new subscription before the rejoin is not."""

from __future__ import annotations

import pytest

from tests.detect.incidents import Incident, analyse_apart, renamed

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


def apart(lines: list[str], group: str, member: str) -> list[str]:
    """A copy in group ``group``, topic ``<group>-shipments``, its member id starting ``member``:
    named apart from another incident of its run."""
    names = {"group dispatch": f"group {group}", "'dispatch'": f"'{group}'", "shipments": f"{group}-shipments", "0d9e8f7a": member}
    return renamed(lines, names)


INCIDENTS = {
    "stalled": Incident({"dispatcher-1": START + STALLED}),
    "closed": Incident({"dispatcher-2": apart(START + STALLED[:1], "closing", "1d9e8f7a")}),
    "new": Incident({"dispatcher-3": apart(START + CLOSED_AND_NEW, "resubscribing", "2d9e8f7a")}),
}
"""Analysed in one run (``analyse_apart``): closed and new in copies named apart."""


@pytest.fixture(scope="module")
def found(spark, tmp_path_factory) -> dict[str, list[dict]]:
    return analyse_apart(spark, tmp_path_factory.mktemp("silent") / "logs", INCIDENTS)


def poll_timeouts(found: dict[str, list[dict]], incident: str) -> list[dict]:
    return [f for f in found[incident] if f["detector"] == "poll_timeout"]


def test_a_leave_then_a_rejoin_while_subscribed_is_a_poll_timeout(found):
    found = poll_timeouts(found, "stalled")
    assert [(f["group"], f["host"]) for f in found] == [("dispatch", "dispatcher-1")]
    assert "no line says so" in found[0]["explanation"] and [e["line"] for e in found[0]["evidence"]] == [6]


def test_closing_or_subscribing_again_is_no_poll_timeout(found):
    assert poll_timeouts(found, "closed") == []
    assert poll_timeouts(found, "new") == []
