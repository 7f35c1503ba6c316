"""Kafka lines read by their content whatever surrounds them (issue 86, item 1): one hand-written
fixture per failure class in ``tests/data/anchor``, each read into the event its Kafka line holds,
with the time, level, logger and thread that stand before the Kafka text."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from forensics import schema as s
from forensics.events import parse_events
from forensics.ingest import KAFKA_NOT_READ, ingest

ANCHOR = Path(__file__).resolve().parent.parent / "data" / "anchor"
EXPECTED = {
    ("camel_thread_brackets.log", 1): "consumer:group:assigned",
    ("pipe_date_time_columns.log", 1): "consumer:group:join_started",
    ("name_prefix.log", 1): "consumer:group:join_started",
    ("compose_indented.log", 1): "consumer:group:join_started",
    ("lost_escape.log", 1): "consumer:group:join_started",
    ("level_cut.log", 1): "consumer:group:heartbeat_failed",
    ("ts_level_bracket.log", 1): "consumer:group:join_started",
    ("key_value_fields.log", 1): "consumer:group:join_started",
    ("markdown_table.md.log", 3): "consumer:group:join_started",
    ("syslog_no_tag.log", 1): "consumer:group:join_started",
    ("shipper_receive_time.log", 1): "consumer:group:join_started",
    ("cpp_compact_date.log", 1): "consumer:group:join_started",
    ("markdown_quote_bold.log", 1): "coordinator:group:stabilized",
    ("markdown_quote_bold.log", 2): "coordinator:group:assignment_received",
    ("markdown_quote_bold.log", 3): "coordinator:group:preparing_rebalance",
    ("jira_indented.log", 1): "consumer:group:join_started",
    ("jira_indented.log", 3): "consumer:group:assigned",
    ("pipe_trailing_method.log", 1): "consumer:offset:reset",
    ("backtick_quote.txt", 1): "consumer:group:heartbeat_failed",
    ("level_thread_simple_logger.txt", 1): "consumer:offset:commit_failed",
    ("python_viewer_prefix.log", 1): "consumer:group:join_started",
    ("python_viewer_prefix.log", 2): "consumer:group:joined",
    ("wrapped_once.log", 2): "consumer:group:assigned",
    ("split_head.log", 1): "consumer:subscribed",
    ("split_head.log", 4): "consumer:offset:reset",
    ("split_date_head.log", 1): "consumer:offset:seek_strategy",
    ("split_date_head.log", 4): "consumer:offset:seek_strategy",
    ("team_prefix_short_marks.log", 2): "consumer:group:joined",  # fixed texts each too short to mark a line, together enough
}


@pytest.fixture(scope="module")
def anchored(spark):
    result = ingest(spark, [str(ANCHOR)])
    events = parse_events(result.records).select(s.SOURCE_FILE, s.LINE, s.EVENT_TYPE).collect()
    records = {(Path(r[s.SOURCE_FILE]).name, r[s.LINE]): r.asDict() for r in result.records.collect()}
    return result, {(Path(e[0]).name, e[1]): e for e in events}, records


def test_every_class_is_read_into_its_event(anchored):
    _, events, _ = anchored
    found = {key: events[key][2] for key in EXPECTED if key in events}
    assert found == EXPECTED


def test_fields_are_taken_from_what_stands_before_the_kafka_text(anchored):
    result, _, records = anchored
    at = datetime(2024, 5, 2, 9, 14, 3, 221000)
    for name in (
        "pipe_date_time_columns.log",
        "shipper_receive_time.log",
        "cpp_compact_date.log",
        "camel_thread_brackets.log",
        "lost_escape.log",
    ):
        assert records[(name, 1)][s.TS] == at, name  # the line's own time, not a shipper's receive time
    assert records[("level_cut.log", 1)][s.LEVEL] == "WARN"
    assert records[("cpp_compact_date.log", 1)][s.LEVEL] == "INFO"
    assert records[("camel_thread_brackets.log", 1)][s.THREAD] == "Camel (depot) thread #4 - KafkaConsumer[parcels]"
    assert records[("camel_thread_brackets.log", 1)][s.LOGGER] == "o.a.k.c.c.internals.ConsumerCoordinator"
    assert records[("pipe_trailing_method.log", 1)][s.LOGGER] == "org.apache.kafka.clients.consumer.internals.SubscriptionState"
    assert not records[("pipe_trailing_method.log", 1)][s.MESSAGE].endswith(")")
    assert records[("key_value_fields.log", 1)][s.LOGGER] == "org.apache.kafka.clients.consumer.internals.AbstractCoordinator"
    assert records[("level_thread_simple_logger.txt", 1)][s.LEVEL] == "ERROR"
    assert records[("python_viewer_prefix.log", 2)][s.TS] == datetime(2024, 5, 2, 9, 14, 6, 4000)
    assert records[("split_head.log", 1)][s.TS] == at and records[("split_head.log", 1)][s.LINE_END] == 3
    split_date = records[("split_date_head.log", 1)]  # a date alone above a head of a time of day: its date
    assert split_date[s.TS] == datetime(2024, 5, 2, 9, 14, 5, 112000) and split_date[s.LINE_END] == 3
    assert split_date[s.MESSAGE].startswith("[Consumer clientId=consumer-depot-12, groupId=depot] Seeking")
    by_name = {Path(entry["path"]).name: entry for entry in result.inputs}
    assert by_name["pipe_date_time_columns.log"]["host"] != "2024-05-02"  # date and time columns are no docker compose service
    assert not result.records.where(F.col(s.HOST) == "2024-05-02").count()


def test_another_loggers_line_ends_the_kafka_record_above_it(anchored):
    result, _, records = anchored
    for name in ("name_prefix.log", "compose_indented.log"):
        assert records[(name, 1)][s.LINE_END] == 1, name
        assert "polling" not in records[(name, 1)][s.MESSAGE]
    assert records[("wrapped_once.log", 2)][s.MESSAGE].endswith("parcels-0, parcels-1, parcels-2, parcels-3")
    assert result.accounting[KAFKA_NOT_READ] == 0


def test_every_weak_mark_holds_a_piece_of_the_gate():
    """The floor scans a line for the catalogue's fixed texts only where it holds a gate piece
    (``anchor.weak_gate``): a text holding none would never be looked for."""
    from forensics.layouts import anchor

    gate = anchor.weak_gate()
    assert gate and len(gate) < len(anchor.weak_marks()[0]) / 4
    assert [parts for parts in anchor.weak_marks()[0] if not any(piece in part for part in parts for piece in gate)] == []
