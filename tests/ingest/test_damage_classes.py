"""The damage classes the transformation property (``test_damage``) found Kafka records lost to,
each on a hand-written fixture in ``tests/data/damage`` (issue 86): every Kafka line is read into
its event, with its own time and the host its wrapper names, and nothing is counted as not read."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from forensics import schema as s
from forensics.events import parse_events
from forensics.ingest import KAFKA_NOT_READ, ingest

DAMAGE = Path(__file__).resolve().parent.parent / "data" / "damage"
EXPECTED = {
    ("indented_syslog.log", 1): "consumer:group:assigned",
    ("indented_syslog.log", 3): "consumer:offset:commit_failed",
    ("date_time_split.log", 1): "consumer:group:join_started",
    ("date_time_split.log", 2): "consumer:group:joined",
    ("date_time_split.log", 3): "consumer:group:assigned",
    ("name_prefix_config.log", 1): "config:block",
    ("name_prefix_config.log", 7): "consumer:subscribed",
    ("host_json.log", 1): "consumer:group:join_started",
    ("host_json.log", 3): "consumer:group:assigned",
    ("headerless_unquoted.csv", 1): "consumer:group:assigned",
    ("wrapped_in_prefix.log", 1): "consumer:group:assigned",
    ("kibana_row_first_column.log", 2): "consumer:group:join_started",
}


@pytest.fixture(scope="module")
def damaged(spark):
    result = ingest(spark, [str(DAMAGE)])
    events = {(Path(r[s.SOURCE_FILE]).name, r[s.LINE]): r.asDict() for r in parse_events(result.records).collect()}
    records = {(Path(r[s.SOURCE_FILE]).name, r[s.LINE]): r.asDict() for r in result.records.collect()}
    return result, events, records


def test_every_kafka_line_is_read_into_its_event(damaged):
    result, events, _ = damaged
    assert {key: events[key][s.EVENT_TYPE] for key in EXPECTED if key in events} == EXPECTED
    assert {Path(entry["path"]).name: entry[KAFKA_NOT_READ] for entry in result.inputs} == dict.fromkeys({name for name, _ in EXPECTED}, 0)


def test_an_indented_wrapper_is_peeled_on_every_line(damaged):
    _, events, records = damaged
    head = records[("indented_syslog.log", 3)]
    assert head[s.HOST] == "pantry-2" and head[s.LINE_END] == 4  # its stack frame is counted as a continuation
    assert "java[811]" not in head[s.MESSAGE] and "\norg.apache.kafka.clients.consumer.CommitFailedException: Commit" in head[s.MESSAGE]
    assert records[("indented_syslog.log", 1)][s.LINE_END] == 1  # another logger's line ends the record
    assert events[("indented_syslog.log", 1)][s.PARTITIONS] == ["shelf-0", "shelf-1"]


def test_a_date_and_time_split_by_a_tab_spaces_or_underscore_is_the_records_time(damaged):
    _, _, records = damaged
    assert [records[("date_time_split.log", n)][s.TS] for n in (1, 2, 3)] == [
        datetime(2024, 5, 2, 9, 14, 3, 221000),
        datetime(2024, 5, 2, 9, 14, 4, 5000),
        datetime(2024, 5, 2, 9, 14, 4, 120000),
    ]
    assert records[("date_time_split.log", 3)][s.LINE_END] == 3  # the dated line below is another logger's record


def test_a_name_prefix_is_peeled_and_colour_codes_without_esc_open_no_bracket(damaged):
    _, events, records = damaged
    block = records[("name_prefix_config.log", 1)]
    assert block[s.LINE_END] == 6 and block[s.HOST] == "larder-1" and block[s.TS] == datetime(2024, 5, 2, 9, 14, 3)
    assert "larder-1:" not in block[s.MESSAGE] and "\n\tclient.id = consumer-larder-1\n" in block[s.MESSAGE]  # the settings, a line each
    assert events[("name_prefix_config.log", 1)]["config_kind"] == "Consumer"
    assert records[("name_prefix_config.log", 7)][s.HOST] == "larder-1"


def test_a_host_before_json_records_and_a_record_no_json_reader_takes(damaged):
    _, events, records = damaged
    assert records[("host_json.log", 1)][s.HOST] == "pantry-7f2a"
    assert records[("host_json.log", 1)][s.TS] == datetime(2024, 5, 2, 9, 14, 3, 221000)
    assert records[("host_json.log", 3)][s.TS] == datetime(2024, 5, 2, 9, 14, 4, 12000)  # a tab in its time: no JSON, read by the anchor
    assert events[("host_json.log", 3)][s.PARTITIONS] == ["shelf-0", "shelf-1"]  # the JSON record's end is no part of the message


def test_a_headerless_csv_export_that_quotes_only_where_it_must(damaged):
    result, events, records = damaged
    (entry,) = [e for e in result.inputs if e["path"].endswith("headerless_unquoted.csv")]
    assert entry.get("export")  # read by its columns, not as lines of text
    head = records[("headerless_unquoted.csv", 1)]
    assert head[s.HOST] == "pantry-2" and head[s.TS] == datetime(2024, 5, 2, 9, 14, 3, 221000)
    assert events[("headerless_unquoted.csv", 1)][s.PARTITIONS] == ["shelf-0", "shelf-1"]


def test_a_hard_wrap_inside_the_log_context_prefix_is_glued_without_a_space(damaged):
    _, events, records = damaged
    head = records[("wrapped_in_prefix.log", 1)]
    assert head[s.LINE_END] == 2 and head[s.TS] == datetime(2024, 5, 2, 9, 14, 3, 221000)
    assert events[("wrapped_in_prefix.log", 1)][s.GROUP_ID] == "larder"
    assert events[("wrapped_in_prefix.log", 1)][s.PARTITIONS] == ["shelf-0", "shelf-1", "shelf-2", "shelf-3"]


def test_a_kibana_row_copied_with_its_empty_first_column_is_peeled(damaged):
    """Discover's rows open with the expand toggle's empty column: a tab before the row's time;
    behind it, franz-go's zap JSON is read as it would be on its own."""
    _, events, records = damaged
    head = records[("kibana_row_first_column.log", 2)]
    assert head[s.LINE_END] == 2 and head[s.TS] == datetime(2024, 5, 2, 9, 14, 3, 224312)  # zap's own time, finer than Kibana's
    assert events[("kibana_row_first_column.log", 2)][s.GROUP_ID] == "depot"


def test_kafka_lines_in_another_loggers_record_get_no_layout_hint():
    """A broker's ``KafkaConfig`` block names Kafka classes in a layout read whole: a ``--layout``
    would not read it, so none is hinted; lines in no layout still get the hint."""
    from forensics.ingest import not_read_text

    read_whole = {KAFKA_NOT_READ: 2, "kafka_not_read_line": 3, "layouts": {"log4j": 40}, s.UNPARSED: 0, "export": None}
    assert "--layout" not in not_read_text(read_whole) and "other loggers' records" in not_read_text(read_whole)
    assert not_read_text({**read_whole, s.UNPARSED: 5}).endswith("try --layout PATTERN")
    assert not_read_text({**read_whole, "export": "csv"}).endswith("try --columns time=..,message=..")
    assert not_read_text({**read_whole, KAFKA_NOT_READ: 0}) is None
