"""A member frozen past both session.timeout.ms and max.poll.interval.ms (SIGSTOP, a long GC
pause): the coordinator expires its session first, and its heartbeat thread logs the poll
timeout only when the process runs again. The expiry removed it: a session_timeout. A member
whose poll timeout came first still gets poll_timeout only."""

from __future__ import annotations

import pytest

from tests.detect.incidents import Incident, analyse_apart, renamed

CC = "(org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)"
GC = "(kafka.coordinator.group.GroupCoordinator)"
MEMBER_ID = "billing-2-4f0c9a7e-1b2d-4c3e-8f5a-6d7e8f901234"
POLL_TIMEOUT = (
    "consumer poll timeout has expired. This means the time between subsequent calls to poll() was longer than the "
    "configured max.poll.interval.ms, which typically implies that the poll loop is spending too much time processing "
    "messages. You can address this either by increasing max.poll.interval.ms or by reducing the maximum size of "
    "batches returned in poll() with max.poll.records."
)


def client(ts: str, level: str, text: str) -> str:
    return f"[2025-07-03 11:{ts}] {level} [Consumer clientId=billing-2, groupId=invoices] {text} {CC}"


def coordinator(ts: str, text: str) -> str:
    return f"[2025-07-03 11:{ts}] INFO [GroupCoordinator 2]: {text} {GC}"


def logs(expired_at: str) -> dict[str, list[str]]:
    return {
        "billing-2": [
            client(
                "05:00,000",
                "INFO",
                f"Successfully joined group with generation Generation{{generationId=4, memberId='{MEMBER_ID}', protocol='range'}}",
            ),
            client("05:30,000", "WARN", POLL_TIMEOUT),
        ],
        "broker-2": [
            coordinator(expired_at, f"Member {MEMBER_ID} in group invoices has failed, removing it from the group"),
            coordinator(
                expired_at,
                f"Preparing to rebalance group invoices in state PreparingRebalance with old generation 4 "
                f"(__consumer_offsets-9) (reason: removing member {MEMBER_ID} on heartbeat expiration)",
            ),
            coordinator("05:45,000", "Stabilized group invoices generation 5 (__consumer_offsets-9) with 1 members"),
        ],
    }


def timeouts(found: list[dict]) -> list[tuple]:
    return sorted((f["detector"], f["member"]) for f in found if f["detector"] in ("session_timeout", "poll_timeout"))


INCIDENTS = {
    "expired_first": Incident(logs("05:20,000")),
    "poll_timeout_first": Incident(
        {
            host.replace("-2", "-3"): renamed(lines, {"invoices": "receipts", "billing-2": "billing-3"})
            for host, lines in logs("05:40,000").items()
        }
    ),
}
"""Analysed in one run (``analyse_apart``): poll_timeout_first's copy in group ``receipts``, its
member billing-3 on hosts billing-3 and broker-3, named apart from expired_first's."""


@pytest.fixture(scope="module")
def found(spark, tmp_path_factory) -> dict[str, list[dict]]:
    return analyse_apart(spark, tmp_path_factory.mktemp("frozen") / "logs", INCIDENTS)


def test_expired_before_its_poll_timeout_is_a_session_timeout(found):
    assert timeouts(found["expired_first"]) == [("session_timeout", "billing-2/billing-2")]


def test_poll_timeout_before_the_expiry_stays_a_poll_timeout(found):
    assert timeouts(found["poll_timeout_first"]) == [("poll_timeout", "billing-3/billing-3")]
