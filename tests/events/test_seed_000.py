"""Events of the KAFKA-7672 report's log excerpt (seed 000): thread, task, changelog, reset offset."""

from __future__ import annotations

import pytest

from forensics.events import parse_events
from tests.helpers import part_of

THREAD = "AuditTrailBatch-StreamThread-1"


@pytest.fixture(scope="module")
def events(layout_fixtures):
    records = part_of(layout_fixtures, "logback_streams_kafka_7672.log").records
    return {row["line"]: row.asDict() for row in parse_events(records).collect()}


def pick(event: dict, *names: str) -> dict:
    return {name: event[name] for name in names}


def test_every_kafka_record_of_the_excerpt_is_typed(events):
    assert sorted(events) == [2, 3, 4, 6, 7, 8, 9, 10, 15, 16, 17]


def test_revocation_of_task_0_5_partition(events):
    assert pick(events[2], "event_type", "client_id", "group_id", "partitions", "template_id") == {
        "event_type": "consumer:group:revoked",
        "client_id": "AuditTrailBatch-StreamThread-1-consumer",
        "group_id": "AuditTrailBatch",
        "partitions": ["AuditTrailBatch-0-5"],
        "template_id": "G15",
    }


def test_generation_and_new_assignment(events):
    assert pick(events[6], "event_type", "generation") == {"event_type": "consumer:group:joined", "generation": 323}
    assert pick(events[7], "event_type", "partitions") == {
        "event_type": "consumer:group:assigned",
        "partitions": ["AuditTrailBatch-store1-repartition-1"],
    }


def test_thread_state_transitions(events):
    states = [(events[n]["thread"], events[n]["state_from"], events[n]["state_to"]) for n in (3, 8, 17)]
    assert states == [
        (THREAD, "PARTITIONS_ASSIGNED", "PARTITIONS_REVOKED"),
        (THREAD, "PARTITIONS_REVOKED", "PARTITIONS_ASSIGNED"),
        (THREAD, "PARTITIONS_ASSIGNED", "RUNNING"),
    ]
    assert {events[n]["event_type"] for n in (3, 8, 17)} == {"streams:thread:state"}


def test_task_1_1_created_then_found_without_checkpoint(events):
    assert pick(events[9], "event_type", "task", "thread") == {"event_type": "streams:task:created", "task": "1_1", "thread": THREAD}
    assert pick(events[15], "event_type", "task", "thread", "changelog", "topic", "partition") == {
        "event_type": "streams:checkpoint:missing",
        "task": "1_1",
        "thread": THREAD,
        "changelog": "AuditTrailBatch-store1-changelog-1",
        "topic": "AuditTrailBatch-store1-changelog",
        "partition": 1,
    }


def test_changelog_reset_to_offset_0_by_the_restore_consumer(events):
    assert pick(events[16], "event_type", "client_id", "group_id", "topic", "partition", "offset") == {
        "event_type": "consumer:offset:reset",
        "client_id": "AuditTrailBatch-StreamThread-1-restore-consumer",
        "group_id": None,
        "topic": "AuditTrailBatch-store1-changelog",
        "partition": 1,
        "offset": 0,
    }


def test_multiline_assignment_summary_keeps_its_task_lists(events):
    assert events[10]["event_type"] == "streams:assignment"
    assert events[10]["line_end"] == 14
    assert "current active tasks: [1_1]" in events[10]["message"]
