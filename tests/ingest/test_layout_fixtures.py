"""Ingest of one real-looking file per layout: exact accounting and the fields of chosen records."""

from __future__ import annotations

import re
from datetime import datetime
from itertools import accumulate

import pytest

from forensics.events import parse_events
from forensics.layouts import dotnet_console
from forensics.report.tables import layout_hint
from tests.helpers import buckets, ingest_paths, part_of, records_by_line

LAYOUTS = "layouts"


@pytest.fixture(scope="module")
def log4j(spark, data_dir):
    return ingest_paths(spark, data_dir / LAYOUTS / "log4j_consumer_3_6.log")


def test_log4j_accounting_adds_up_exactly(log4j):
    (entry,) = log4j.inputs
    assert entry["layout"] == "log4j"
    assert buckets(entry) == {"lines": 30, "records": 15, "continuations": 13, "irrelevant": 2, "unparsed": 0}
    assert buckets(log4j.accounting) == buckets(entry)


def test_log4j_multiline_record_takes_its_logger_from_its_last_line(log4j):
    record = records_by_line(log4j)[18]
    assert record["line_end"] == 23
    assert record["logger"] == "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"
    assert record["message"].startswith("[Consumer clientId=consumer-orders-app-1, groupId=orders-app] Updating assignment with\n")
    assert "Revoked partitions (owned - assigned):     [orders-1]" in record["message"]
    assert not record["message"].endswith("ConsumerCoordinator)")


def test_log4j_exception_line_joins_its_record_but_stack_frames_do_not(log4j):
    record = records_by_line(log4j)[25]
    assert record["line_end"] == 26
    assert record["level"] == "ERROR"
    assert record["message"].endswith(
        "org.apache.kafka.clients.consumer.CommitFailedException: Commit cannot be completed "
        "since the group has already rebalanced and assigned the partitions to another member."
    )


def test_log4j_fields_and_utc_timestamp(log4j):
    record = records_by_line(log4j)[7]
    assert record["ts"] == datetime(2024, 3, 11, 14, 2, 20, 470000)
    assert record["host"] == "log4j_consumer_3_6"
    assert record["source_file"].endswith("tests/data/layouts/log4j_consumer_3_6.log")
    assert record["layout"] == "log4j"
    assert "Successfully joined group with generation Generation{generationId=12" in record["message"]


def test_gzip_twin_gives_the_same_records(layout_fixtures, log4j):
    rotated = part_of(layout_fixtures, "log4j_consumer_3_6_rotated.log.gz")
    (entry,) = rotated.inputs
    assert entry["problem"] is None
    assert entry["host"] == "log4j_consumer_3_6_rotated"
    strip = lambda rows: {k: {f: v for f, v in r.items() if f not in ("source_file", "host")} for k, r in rows.items()}
    assert strip(records_by_line(rotated)) == strip(records_by_line(log4j))


def test_logback_seed_000_excerpt(spark, data_dir):
    result = ingest_paths(spark, data_dir / LAYOUTS / "logback_streams_kafka_7672.log", tz="Asia/Tokyo")
    (entry,) = result.inputs
    assert entry["layout"] == "logback"
    assert entry["tz"] == "Asia/Tokyo" and entry["tz_assumed"] is False
    assert buckets(entry) == {"lines": 21, "records": 11, "continuations": 7, "irrelevant": 3, "unparsed": 0}
    records = records_by_line(result)
    assert records[10]["line_end"] == 14  # the tab lines and the blank line after them
    assert records[15]["logger"] == "org.apache.kafka.streams.processor.internals.StoreChangelogReader"
    assert records[15]["message"].startswith("stream-thread [AuditTrailBatch-StreamThread-1]No checkpoint found for task 1_1")
    assert records[15]["ts"] == datetime(2018, 10, 22, 23, 27, 54, 357000)  # 08:27:54 in Tokyo


def test_spring_boot_both_generations_of_the_layout(layout_fixtures):
    result = part_of(layout_fixtures, "spring_boot_streams.log")
    (entry,) = result.inputs
    assert entry["layout"] == "spring_boot"
    assert buckets(entry) == {"lines": 6, "records": 3, "continuations": 1, "irrelevant": 2, "unparsed": 0}
    records = records_by_line(result)
    assert records[2]["thread"] == "-StreamThread-1"
    assert records[2]["logger"] == "o.a.k.s.p.internals.StreamThread"
    assert records[3]["ts"] == datetime(2024, 3, 11, 13, 2, 17, 530000)  # +01:00 in the text
    assert records[5]["line_end"] == 6


def test_json_lines_logstash_and_ecs_fields(spark, data_dir):
    result = ingest_paths(spark, data_dir / LAYOUTS / "json_lines_ecs_and_logstash.log")
    (entry,) = result.inputs
    assert entry["layout"] == "json_lines"
    assert buckets(entry) == {"lines": 6, "records": 4, "continuations": 0, "irrelevant": 1, "unparsed": 1}
    assert result.accounting["unparsed_by_reason"] == {"malformed JSON record": 1}
    records = records_by_line(result)
    assert records[1]["thread"] == "main" and records[1]["level"] == "INFO"
    assert records[2]["ts"] == datetime(2024, 3, 11, 14, 2, 20, 470000)
    assert records[4]["ts"] == datetime(2024, 3, 11, 14, 2, 25)
    assert records[4]["level"] == "ERROR" and records[4]["thread"] == "main"
    assert "\norg.apache.kafka.clients.consumer.CommitFailedException" in records[4]["message"]
    assert records[5]["thread"] == "kafka-coordinator-heartbeat-thread | orders-app"
    assert records[5]["ts"] == datetime(2024, 3, 11, 14, 2, 26, 100000)


def one_file(result, layout: str, *counts: int):
    """``result``, the ingest of one file (or its part of a directory's, ``part_of``), whose
    layout is ``layout`` and whose lines, records, continuations, irrelevant and unparsed lines
    number ``counts``."""
    (entry,) = result.inputs
    assert entry["layout"] == layout
    assert buckets(entry) == dict(zip(("lines", "records", "continuations", "irrelevant", "unparsed"), counts))
    return result


def test_librdkafka_native_lines(layout_fixtures):
    records = records_by_line(one_file(part_of(layout_fixtures, "librdkafka_consumer.log"), "librdkafka", 5, 5, 0, 0, 0))
    assert records[1]["ts"] == datetime(2024, 3, 11, 14, 2, 17, 118000)
    assert (records[1]["level"], records[4]["level"], records[5]["level"]) == ("DEBUG", "INFO", "WARN")
    assert records[1]["logger"] == "CGRPSTATE" and records[1]["client"] == "rdkafka#consumer-1"
    assert records[1]["thread"] == "main"
    assert records[1]["message"].startswith('Group "orders-app" changed state init -> query-coord')


def test_librdkafka_lines_of_the_examples_log_callback(layout_fixtures):
    """``%u.%03u RDKAFKA-%i-%s: %s: %s`` (librdkafka's examples, copied into many C programs): the
    example's own ``% ...`` lines are no records; the one after a record continues it."""
    records = records_by_line(one_file(part_of(layout_fixtures, "librdkafka_example_logger.log"), "librdkafka", 8, 6, 1, 0, 1))
    assert records[2]["ts"] == datetime(2024, 3, 11, 14, 2, 17, 118000)
    assert (records[2]["level"], records[8]["level"]) == ("DEBUG", "WARN")
    assert (records[2]["logger"], records[2]["client"], records[2]["thread"]) == ("CGRPSTATE", "rdkafka#consumer-1", "main")
    assert records[2]["message"].startswith('Group "orders-app" changed state init -> query-coord')
    assert records[3]["message"].startswith("kafka-1:9092/1: Group ")


def test_ruby_logger_with_rdkafka_rubys_lines(layout_fixtures):
    """Ruby's ``Logger`` (Karafka): the process id as the thread, the progname as the logger,
    librdkafka's ``rdkafka: [thrd:main]: ..`` lines read as librdkafka's own."""
    result = one_file(part_of(layout_fixtures, "ruby_logger_karafka.log"), "ruby_logger", 10, 7, 0, 3, 0)
    records = records_by_line(result)
    assert records[2]["ts"] == datetime(2024, 3, 11, 14, 2, 17, 118204)
    assert (records[2]["level"], records[8]["level"], records[2]["thread"], records[2]["logger"]) == ("DEBUG", "WARN", "48211", None)
    assert records[2]["message"].startswith('rdkafka: [thrd:main]: Group "orders-app" changed state')
    events = {e["line"]: e for e in parse_events(result.records).collect()}
    assert sorted(events) == [2, 3, 4, 5, 6, 8, 9]
    assert (events[2]["event_type"], events[2]["group_id"]) == ("consumer:group:member_state", "orders-app")
    assert (events[5]["event_type"], events[5]["generation"]) == ("consumer:group:joined", 7)
    assert events[8]["event_type"] == "consumer:group:session_timeout"


def test_structlog_console_renderer_with_kafka_pythons_records(layout_fixtures):
    """structlog's ``ConsoleRenderer`` rendering kafka-python's records (``ProcessorFormatter``):
    the level padded in its brackets, the event padded, the logger in brackets after it, the
    application's context (``key=value`` after the logger) left out of the message, the
    application's own records (one with a traceback) not Kafka's."""
    result = one_file(part_of(layout_fixtures, "structlog_console_kafka_python.log"), "structlog_console", 12, 5, 4, 3, 0)
    records = records_by_line(result)
    assert records[3]["ts"] == datetime(2024, 3, 11, 14, 2, 17, 418530)
    assert (records[2]["level"], records[2]["logger"], records[2]["message"]) == (
        "INFO",
        "kafka.coordinator",
        "(Re-)joining group orders-app",
    )
    assert (records[7]["level"], records[5]["logger"]) == ("WARN", "kafka.coordinator.consumer")
    assert records[7]["message"] == "Heartbeat failed for group orders-app because it is rebalancing"
    events = {e["line"]: e for e in parse_events(result.records).collect()}
    assert {line: e["event_type"] for line, e in events.items()} == {
        2: "consumer:group:join_started",
        3: "consumer:group:joined",
        4: "consumer:group:assignment_finished",
        5: "consumer:group:assigned",
        7: "consumer:group:heartbeat_failed",
    }
    assert (events[3]["generation"], events[5]["partitions"]) == (12, ["orders-0", "orders-1"])


JUL_RECORDS = {1: 2, 3: 4, 5: 6, 7: 8, 9: 10, 11: 12, 15: 17, 19: 20, 21: 22, 23: 24}
"""java.util.logging's fixture: each Kafka record's head line -> its last line (a stack frame is folded)."""


def jul_checks(result):
    """What java.util.logging's two-line heads give, as ``jul_simpleformatter.log`` holds them."""
    records = records_by_line(result)
    assert {line: record["line_end"] for line, record in records.items()} == JUL_RECORDS
    assert (records[5]["ts"], records[21]["ts"], records[23]["ts"]) == (
        datetime(2024, 3, 11, 14, 2, 17),
        datetime(2024, 3, 12, 9, 5, 5),
        datetime(2024, 3, 12, 12, 5, 6),
    )
    assert [records[line]["level"] for line in (1, 15, 23)] == ["INFO", "ERROR", "WARN"]
    assert (
        records[3]["logger"] == "org.apache.kafka.clients.consumer.internals.AbstractCoordinator"
    )  # $FindCoordinatorResponseHandler cut off
    assert records[23]["logger"] == "org.apache.kafka.clients.consumer.KafkaConsumer"  # a caller without a method
    assert records[5]["message"] == "[Consumer clientId=consumer-orders-app-1, groupId=orders-app] (Re-)joining group"
    assert records[15]["message"].endswith(
        "\norg.apache.kafka.clients.consumer.CommitFailedException: Commit cannot be completed "
        "since the group has already rebalanced and assigned the partitions to another member."
    )
    events = {e["line"]: e for e in parse_events(result.records).collect()}
    assert sorted(events) == [1, 3, 5, 7, 9, 11, 15, 19, 21]
    assert (events[7]["event_type"], events[7]["generation"], events[7]["group_id"]) == ("consumer:group:joined", 12, "orders-app")
    assert (events[11]["event_type"], events[15]["event_type"]) == ("consumer:group:assigned", "consumer:offset:commit_failed")


def test_java_util_logging_heads_over_two_lines(layout_fixtures):
    """``SimpleFormatter``'s default: the date and the caller, then ``LEVEL: message`` on the
    next line, which joins the head; the caller's inner class is cut off the logger."""
    jul_checks(one_file(part_of(layout_fixtures, "jul_simpleformatter.log"), "jul", 24, 10, 13, 1, 0))


def test_java_util_logging_behind_kubectl_timestamps(spark, data_dir, tmp_path):
    """Behind a wrapper that dates every line, the ``LEVEL: message`` line still continues its head."""
    lines = (data_dir / LAYOUTS / "jul_simpleformatter.log").read_text().splitlines()
    wrapped = tmp_path / "orders-0.log"
    wrapped.write_text("".join(f"2024-03-11T14:{i:02d}:17.418123456Z {line}\n" for i, line in enumerate(lines)))
    result = one_file(ingest_paths(spark, wrapped), "jul", 24, 10, 13, 1, 0)
    assert result.inputs[0]["wrappers"] == {"kubectl": 24}
    jul_checks(result)


def test_tomcat_one_line_formatter(layout_fixtures):
    """catalina.out in Tomcat's ``OneLineFormatter``: the caller's method and inner class are cut
    off the logger, JUL's levels read as log4j's, the tab-indented stack trace continues its record."""
    result = one_file(part_of(layout_fixtures, "tomcat_catalina.log"), "tomcat", 16, 8, 4, 4, 0)
    records = records_by_line(result)
    assert records[5]["ts"] == datetime(2024, 3, 11, 14, 2, 20, 532000)
    assert [(records[n]["level"], records[n]["logger"]) for n in (3, 5, 10, 16)] == [
        ("INFO", "org.apache.kafka.common.utils.AppInfoParser"),
        ("INFO", "org.apache.kafka.clients.consumer.internals.AbstractCoordinator"),
        ("ERROR", "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"),
        ("WARN", "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"),
    ]
    assert records[4]["thread"] == "orders-listener-0"
    assert records[4]["message"] == "[Consumer clientId=consumer-orders-app-1, groupId=orders-app] (Re-)joining group"
    events = {e["line"]: (e["event_type"], e["generation"], e["partition"], e["offset"]) for e in parse_events(result.records).collect()}
    assert events == {
        3: ("consumer:version", None, None, None),
        4: ("consumer:group:join_started", None, None, None),
        5: ("consumer:group:joined", 12, None, None),
        6: ("consumer:group:synced", 12, None, None),
        7: ("consumer:group:assigned", None, None, None),
        8: ("consumer:offset:set_committed", None, 0, 40112),
        10: ("consumer:offset:commit_failed", None, 1, 5120),
        16: ("consumer:group:lost", None, None, None),
    }


SPARK_EVENTS = {
    3: ("config:block", None, None, None),
    9: ("consumer:version", None, None, None),
    10: ("consumer:subscribed", None, None, None),
    11: ("consumer:group:coordinator_discovered", None, None, None),
    12: ("consumer:group:join_started", None, None, None),
    13: ("consumer:group:joined", 1, None, None),
    14: ("consumer:group:synced", 1, None, None),
    15: ("consumer:group:assigned", None, None, None),
    16: ("consumer:offset:no_committed", None, 0, None),
    17: ("consumer:offset:set_committed", None, 1, 5120),
    18: ("consumer:offset:reset", None, 0, 0),
    22: ("consumer:group:revoked", None, None, None),
}
"""The Kafka events of ``spark_structured_streaming_driver.log`` by line."""


def test_spark_default_layout_of_a_structured_streaming_driver(layout_fixtures, spark):
    """A Spark 4 driver's log in Spark's default ``%d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex``: the
    Kafka source's consumer joins its ``spark-kafka-source-..`` group. A Kafka class's logger is
    its full name again, and so Kafka 3.9's committed offset, which ``ConsumerUtils`` logs with
    no log-context prefix, is a Kafka record (line 17). Spark's own lines and the Kafka source's
    warning are irrelevant; the config block, the stack trace and the progress JSON continue
    their records."""
    result = one_file(part_of(layout_fixtures, "spark_structured_streaming_driver.log"), "spark", 26, 12, 10, 4, 0)
    records = records_by_line(result)
    assert (records[3]["line_end"], records[22]["line_end"]) == (8, 22)
    assert records[13]["ts"] == datetime(2024, 3, 11, 14, 2, 21)
    assert [(records[n]["level"], records[n]["logger"]) for n in (9, 17)] == [
        ("INFO", "org.apache.kafka.common.utils.AppInfoParser"),
        ("INFO", "org.apache.kafka.clients.consumer.internals.ConsumerUtils"),
    ]
    assert records[12]["message"].endswith("-driver-0] (Re-)joining group")
    events = parse_events(result.records).collect()
    assert {e["line"]: (e["event_type"], e["generation"], e["partition"], e["offset"]) for e in events} == SPARK_EVENTS
    assert {e["group_id"] for e in events if e["line"] > 9 and e["line"] != 17} == {
        "spark-kafka-source-6f1d2b7e-3c4a-4f0e-9d2b-1a7c5e8f9b20-1288410531-driver-0"
    }


def test_hadoop_layout_of_a_dstream_executor_in_the_old_wording(spark, tmp_path):
    """Hadoop's console layout (``%c{2}``: ``internals.ConsumerCoordinator``) around a Kafka 0.10
    client of a Spark 2 DStream, whose lines carry no log-context prefix and name their group at
    the end (SPARK-22968's report): Kafka records by their loggers alone."""
    group = "use_a_separate_group_id_for_each_stream"
    path = tmp_path / "executor-2.log"
    path.write_text(
        f"18/01/05 09:48:27 INFO internals.ConsumerCoordinator: Revoking previously assigned partitions [kssh-7, kssh-4] for group {group}\n"
        f"18/01/05 09:48:27 INFO internals.AbstractCoordinator: (Re-)joining group {group}\n"
        f"18/01/05 09:48:27 INFO internals.AbstractCoordinator: Successfully joined group {group} with generation 5\n"
        f"18/01/05 09:48:27 INFO internals.ConsumerCoordinator: Setting newly assigned partitions [kssh-7] for group {group}\n"
        "18/01/05 09:48:28 ERROR scheduler.JobScheduler: Error generating jobs for time 1515145708000 ms\n"
        "java.lang.IllegalStateException: No current assignment for partition kssh-4\n"
    )
    result = one_file(ingest_paths(spark, path), "spark", 6, 4, 1, 1, 0)
    records = records_by_line(result)
    assert (records[1]["ts"], records[1]["logger"]) == (
        datetime(2018, 1, 5, 9, 48, 27),
        "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator",
    )
    events = sorted((e["line"], e["event_type"], e["generation"], e["group_id"]) for e in parse_events(result.records).collect())
    assert events == [
        (1, "consumer:group:revoked", None, group),
        (2, "consumer:group:join_started", None, group),
        (3, "consumer:group:joined", 5, group),
        (4, "consumer:group:assigned", None, group),
    ]


def test_flink_default_layout_leaves_the_diagnostic_context_out_of_the_message(spark, tmp_path):
    """Flink's ``%d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m`` (its log4j-console.properties):
    the empty NDC ``[]`` after the padded logger is no part of the message, whose Kafka prefix
    then opens it and its events are read."""
    cc = "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"
    prefix = "[Consumer clientId=orders-enricher-0, groupId=orders-enricher]"
    path = tmp_path / "taskmanager.log"
    path.write_text(
        f"2024-03-11 14:02:17,418 INFO  {cc:<60} [] - {prefix} (Re-)joining group\n"
        f"2024-03-11 14:02:20,470 INFO  {cc:<60} [] - {prefix} Successfully joined group with generation "
        "Generation{generationId=12, memberId='orders-enricher-0-0f0e', protocol='range'}\n"
        f"2024-03-11 14:02:20,481 INFO  {'org.apache.flink.runtime.taskmanager.Task':<60} [] - Source: orders (1/2)#0 switched from INITIALIZING to RUNNING.\n"
        f"2024-03-11 14:02:20,483 INFO  {cc:<60} [] - {prefix} Adding newly assigned partitions: orders-0, orders-1\n"
    )
    result = one_file(ingest_paths(spark, path), "generic", 4, 3, 0, 1, 0)
    assert records_by_line(result)[1]["message"] == f"{prefix} (Re-)joining group"
    events = sorted((e["line"], e["event_type"], e["generation"]) for e in parse_events(result.records).collect())
    assert events == [(1, "consumer:group:join_started", None), (2, "consumer:group:joined", 12), (4, "consumer:group:assigned", None)]


def test_day_first_dates_of_custom_patterns(layout_fixtures):
    """logback's ``%d{dd-MM-yyyy HH:mm:ss.SSS} [%thread] %-5level %logger{36} - %msg`` across a
    midnight, and log4j2's ``%d{dd.MM.yyyy HH:mm:ss,SSS}`` (German locale): dates read day first,
    ``02.04.2024`` as April 2."""
    result = one_file(part_of(layout_fixtures, "logback_day_first.log"), "generic", 13, 10, 2, 1, 0)
    records = records_by_line(result)
    assert (records[3]["ts"], records[5]["ts"]) == (datetime(2024, 3, 15, 23, 59, 59, 417000), datetime(2024, 3, 16, 0, 0, 0, 21000))
    assert (records[3]["level"], records[3]["logger"], records[3]["thread"]) == (
        "INFO",
        "o.a.k.c.c.i.ConsumerCoordinator",
        "billing-listener-0-C-1",
    )
    events = {e["line"]: (e["event_type"], e["generation"], e["partition"], e["offset"]) for e in parse_events(result.records).collect()}
    assert events == {
        1: ("consumer:version", None, None, None),
        2: ("consumer:version", None, None, None),
        3: ("consumer:group:revoked", None, None, None),
        4: ("consumer:group:revoked", None, None, None),  # Spring's container witnessing the same callback
        5: ("consumer:group:join_started", None, None, None),
        6: ("consumer:group:joined", 41, None, None),
        7: ("consumer:group:synced", 41, None, None),
        8: ("consumer:group:assigned", None, None, None),
        9: ("consumer:offset:set_committed", None, 0, 88120),
    }
    dots = records_by_line(one_file(part_of(layout_fixtures, "log4j2_day_first_dots.log"), "generic", 6, 6, 0, 0, 0))
    assert dots[1]["ts"] == datetime(2024, 4, 2, 9, 14, 7, 551000)
    assert dots[6]["logger"] == "org.apache.kafka.clients.consumer.internals.SubscriptionState"


def test_slashed_dates_read_in_the_order_their_file_shows(layout_fixtures, spark, tmp_path):
    """``%d{dd/MM/yyyy HH:mm:ss.SSS}`` (British locale): ``14/07/2024`` shows the day first, so
    ``09/07/2024`` is July 9. A file whose dates never pass 12 shows no order: its records are
    counted unparsed (bad timestamp), not read perhaps swapped; one with ``03/15/2024`` is read
    month first."""
    result = one_file(part_of(layout_fixtures, "log4j2_slashed_day_first.log"), "generic", 6, 5, 0, 1, 0)
    records = records_by_line(result)
    assert [records[line]["ts"] for line in (1, 4, 6)] == [
        datetime(2024, 7, 9, 23, 58, 41, 207000),
        datetime(2024, 7, 10, 0, 0, 2, 114000),
        datetime(2024, 7, 14, 8, 15, 0, 2000),
    ]
    line = "{} 14:02:17.418 [main] INFO  o.a.k.c.c.i.ConsumerCoordinator - [Consumer clientId=c1, groupId=g1] Revoke previously assigned partitions t-0\n"
    (tmp_path / "ambiguous.log").write_text(line.format("03/04/2024") + line.format("04/03/2024"))
    (ambiguous,) = one_file(ingest_paths(spark, tmp_path / "ambiguous.log"), "generic", 2, 0, 0, 0, 2).inputs
    assert ambiguous["date_order"] == "unknown"
    assert layout_hint({"kind": "log", **ambiguous}).startswith("its dates between slashes never pass 12")
    (tmp_path / "american.log").write_text(line.format("03/04/2024") + line.format("03/15/2024"))
    american = one_file(ingest_paths(spark, tmp_path / "american.log"), "generic", 2, 2, 0, 0, 0)
    records = records_by_line(american)
    assert (records[1]["ts"], records[2]["ts"]) == (datetime(2024, 3, 4, 14, 2, 17, 418000), datetime(2024, 3, 15, 14, 2, 17, 418000))
    assert [r.inputs[0]["date_order"] for r in (result, american)] == ["day_first", "month_first"]


def test_a_paste_that_kept_level_and_kafka_logger_but_lost_its_times(layout_fixtures):
    """Logstash's ``[INFO ][logger]`` and a logback line cut before the level: each line that
    opens with a level and a Kafka logger is a record, untimed and in line order."""
    result = one_file(part_of(layout_fixtures, "untimed_level_logger.log"), "message_only", 10, 8, 2, 0, 0)
    records = records_by_line(result)
    assert result.inputs[0]["undated_records"] == 8
    assert [(records[line]["level"], records[line]["logger"]) for line in (1, 6, 7, 10)] == [
        ("INFO", "org.apache.kafka.common.utils.AppInfoParser"),
        ("INFO", "o.a.k.c.c.i.ConsumerCoordinator"),
        ("ERROR", "o.a.k.c.c.i.ConsumerCoordinator"),
        ("WARN", "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"),
    ]
    assert records[4]["line_end"] == 5  # Logstash's own line, with no Kafka logger, continues the record above it
    assert (
        records[6]["message"] == "[Consumer clientId=logstash-0, groupId=logstash] Revoke previously assigned partitions events-0, events-1"
    )
    events = {e["line"]: e["event_type"] for e in parse_events(result.records).collect()}
    assert events == {
        1: "consumer:version",
        2: "consumer:group:join_started",
        3: "consumer:group:joined",
        4: "consumer:group:assigned",
        6: "consumer:group:revoked",
        7: "consumer:offset:commit_failed",
        10: "consumer:offset:no_committed",
    }


def test_a_paste_of_kafkajs_text_lines_that_lost_their_times(spark, data_dir, tmp_path):
    """KafkaJS's documented text form (``INFO [ConsumerGroup] msg {"groupId":..}``) pasted without
    the times a wrapper gave it: each line that opens with a level and a KafkaJS namespace is an
    untimed record, its level read and its namespace kept, and a JSON line of the application's
    own between them is no Kafka record."""
    console = data_dir / "witnesses" / "clients" / "kafkajs_console" / "svc-f" / "app.log"
    paste = tmp_path / "paste.txt"
    paste.write_text("".join(line.split(" ", 1)[1] + "\n" for line in console.read_text().splitlines()))
    result = one_file(ingest_paths(spark, paste), "message_only", 6, 5, 0, 1, 0)
    records = records_by_line(result)
    assert result.inputs[0]["undated_records"] == 5
    assert (records[4]["level"], records[4]["logger"], records[4]["message"][:36]) == (
        "DEBUG",
        None,
        "[ConsumerGroup] Received assignment ",
    )
    events = {e["line"]: (e["event_type"], e["generation"], e["member_id"]) for e in parse_events(result.records).collect()}
    assert events == {
        4: ("consumer:group:joined", 8, "parcel-svc-75027282-006a-42bc-96a4-93b885769770"),
        5: ("consumer:group:assigned", None, "parcel-svc-75027282-006a-42bc-96a4-93b885769770"),
    }


RDKAFKA_EVENTS = {
    2: ("consumer:group:member_state", None),
    3: ("consumer:group:joined", 7),
    4: ("consumer:group:member_state", None),
    5: ("consumer:group:session_timeout", None),
}
"""The librdkafka lines of ``serilog_clef_rdkafka.log`` (and its kubectl twin) by line: event type, generation."""


def rdkafka_events(result) -> dict:
    events = {e["line"]: e for e in parse_events(result.records).collect()}
    assert {line: (e["event_type"], e["generation"]) for line, e in events.items()} == RDKAFKA_EVENTS
    assert {events[line]["group_id"] for line in (2, 4)} == {"orders-app"}  # the JoinGroup response and the timeout name none
    return events


def test_serilog_compact_json_of_a_dotnet_clients_librdkafka_lines(layout_fixtures):
    """Serilog's CLEF (``@t``, ``@m``, ``@l``, none for Information, ``@x``, ``SourceContext``) from a
    Confluent.Kafka log handler that writes ``{Name}: {Message}``: librdkafka's lines, typed
    though their logger is the application's; the application's own records are irrelevant."""
    result = one_file(part_of(layout_fixtures, "serilog_clef_rdkafka.log"), "json_lines", 6, 4, 0, 2, 0)
    records = records_by_line(result)
    assert (records[2]["ts"], records[2]["level"], records[5]["level"]) == (datetime(2024, 3, 11, 14, 2, 17, 118204), "DEBUG", "WARN")
    assert records[2]["logger"] == "Orders.KafkaLog"
    events = rdkafka_events(result)
    assert events[3]["client_id"] == "rdkafka#consumer-1"


def test_serilog_compact_json_templates_read_as_their_rendered_twin(layout_fixtures):
    """Serilog's ``CompactJsonFormatter`` (its JSON default) writes the message template (``@mt``,
    ``{Name}: {Message}``) and the properties, not the message: each record reads as the rendered
    twin (``serilog_clef_rdkafka.log``) does, and its librdkafka lines are typed alike."""
    template = one_file(part_of(layout_fixtures, "serilog_clef_template_rdkafka.log"), "json_lines", 6, 4, 0, 2, 0)
    rendered = part_of(layout_fixtures, "serilog_clef_rdkafka.log")

    def fields(result):
        return {line: (r["ts"], r["level"], r["logger"], r["message"]) for line, r in records_by_line(result).items()}

    assert fields(template) == fields(rendered)
    assert rdkafka_events(template)[3]["client_id"] == "rdkafka#consumer-1"


def test_a_dotnet_handlers_level_and_librdkafka_text_behind_kubectl(spark, tmp_path):
    """``Debug | [thrd:main]: ..`` (a handler that writes the level and the text only), dated by
    ``kubectl logs --timestamps``; the application's line between them is irrelevant."""
    lines = [
        'Debug | [thrd:main]: Group "orders-app" changed state init -> query-coord (join-state init)',
        "Debug | [thrd:main]: JoinGroup response: GenerationId 7, Protocol range, LeaderId orders-svc-4e1f (me), my MemberId "
        "orders-svc-4e1f, member metadata count 2: (no error)",
        "Received Message from partition [0] with offset 2062379",
        'Debug | [thrd:main]: Group "orders-app" changed join state wait-sync -> wait-assign-call (state up)',
        "Warning | [thrd:main]: Consumer group session timed out (in join-state steady) after 45002 ms without a successful "
        "response from the group coordinator (broker 2, last error was Success): revoking assignment and rejoining group",
    ]
    path = tmp_path / "orders-svc.log"
    path.write_text("".join(f"2024-03-11T14:02:{17 + i:02d}.118204000Z {line}\n" for i, line in enumerate(lines)))
    result = one_file(ingest_paths(spark, path), "message_only", 5, 4, 0, 1, 0)
    assert sorted(records_by_line(result)) == [1, 2, 4, 5]
    assert sorted((e["event_type"], e["generation"]) for e in parse_events(result.records).collect()) == sorted(RDKAFKA_EVENTS.values())


DOTNET_CONSOLE = "dotnet_console_rdkafka.log"


def test_dotnet_console_heads_over_two_lines(layout_fixtures):
    """Microsoft.Extensions.Logging's console: ``dbug: Category[0]``, then the message six spaces
    in; no time of its own; a head whose Kafka text is on its second line is kept for it."""
    result = one_file(part_of(layout_fixtures, DOTNET_CONSOLE), "dotnet_console", 14, 4, 8, 2, 0)
    records = records_by_line(result)
    assert {line: (r["line_end"], r["level"], r["logger"], r["ts"]) for line, r in records.items()} == {
        3: (4, "DEBUG", "Orders.KafkaLog", None),
        5: (6, "DEBUG", "Orders.KafkaLog", None),
        7: (8, "DEBUG", "Orders.KafkaLog", None),
        9: (10, "WARN", "Orders.KafkaLog", None),
    }
    assert (
        records[3]["message"] == 'rdkafka#consumer-1: [thrd:main]: Group "orders-app" changed state init -> query-coord (join-state init)'
    )
    assert sorted((e["event_type"], e["generation"]) for e in parse_events(result.records).collect()) == sorted(RDKAFKA_EVENTS.values())


def test_dotnet_console_behind_kubectl_timestamps(spark, data_dir, tmp_path):
    """The runtime dates each line: a record takes its head line's time."""
    lines = (data_dir / LAYOUTS / DOTNET_CONSOLE).read_text().splitlines()
    wrapped = tmp_path / "orders-svc-0.log"
    wrapped.write_text("".join(f"2024-03-11T14:02:{17 + i:02d}.118204000Z {line}\n" for i, line in enumerate(lines)))
    result = one_file(ingest_paths(spark, wrapped), "dotnet_console", 14, 4, 8, 2, 0)
    records = records_by_line(result)
    assert [records[line]["ts"] for line in (3, 9)] == [datetime(2024, 3, 11, 14, 2, 19, 118204), datetime(2024, 3, 11, 14, 2, 25, 118204)]
    assert records[9]["message"].startswith("rdkafka#consumer-1: [thrd:main]: Consumer group session timed out")


@pytest.mark.parametrize(
    ("stamp", "kubectl"),
    [
        ("2024-03-11 14:02:{second:02d}.118 ", False),  # TimestampFormat = "yyyy-MM-dd HH:mm:ss.fff "
        ("[2024-03-11T14:02:{second:02d}.118Z] ", False),  # "[yyyy-MM-ddTHH:mm:ss.fffZ] ", UseUtcTimestamp
        ("14:02:{second:02d} ", True),  # "HH:mm:ss " (Microsoft's example): no day, the runtime's time dates it
    ],
)
def test_dotnet_console_with_a_timestamp_format(spark, data_dir, tmp_path, stamp, kubectl):
    """``TimestampFormat`` writes a time before each head's level: the records and events are the
    undated file's, each dated by its own time, or by the runtime's where that names no day."""
    heads = re.compile(rf"^(?:{'|'.join(dotnet_console.LEVELS)}): ")
    lines = [
        stamp.format(second=17 + i) + line if heads.match(line) else line
        for i, line in enumerate((data_dir / LAYOUTS / DOTNET_CONSOLE).read_text().splitlines())
    ]
    if kubectl:
        lines = [f"2024-03-11T15:00:{17 + i:02d}.118204000Z {line}" for i, line in enumerate(lines)]
    path = tmp_path / "orders-svc.log"
    path.write_text("".join(f"{line}\n" for line in lines))
    result = one_file(ingest_paths(spark, path), "dotnet_console", 14, 4, 8, 2, 0)
    records = records_by_line(result)
    assert {line: (r["line_end"], r["level"], r["logger"]) for line, r in records.items()} == {
        3: (4, "DEBUG", "Orders.KafkaLog"),
        5: (6, "DEBUG", "Orders.KafkaLog"),
        7: (8, "DEBUG", "Orders.KafkaLog"),
        9: (10, "WARN", "Orders.KafkaLog"),
    }
    assert records[3]["ts"] == (datetime(2024, 3, 11, 15, 0, 19, 118204) if kubectl else datetime(2024, 3, 11, 14, 2, 19, 118000))
    assert (
        records[3]["message"] == 'rdkafka#consumer-1: [thrd:main]: Group "orders-app" changed state init -> query-coord (join-state init)'
    )
    assert sorted((e["event_type"], e["generation"]) for e in parse_events(result.records).collect()) == sorted(RDKAFKA_EVENTS.values())


def test_dotnet_json_console_of_the_same_lines(spark, data_dir, tmp_path):
    """Microsoft.Extensions.Logging's ``json`` console, one object per record, its ``Timestamp``,
    ``LogLevel``, ``Category``, ``Message`` and ``Exception`` read."""
    import json

    lines = (data_dir / LAYOUTS / DOTNET_CONSOLE).read_text().splitlines()
    levels = {"info": "Information", "dbug": "Debug", "warn": "Warning", "fail": "Error"}
    objects = [
        {
            "Timestamp": f"2024-03-11T14:02:{17 + i:02d}.118Z",
            "EventId": 0,
            "LogLevel": levels[head[:4]],
            "Category": head[6:].split("[")[0],
            "Message": body.strip(),
            "State": {"Message": body.strip()},
        }
        for i, (head, body) in enumerate(zip(lines[0:12:2], lines[1:12:2]))
    ]
    objects[-1]["Exception"] = "\n".join(line.strip() for line in lines[12:])
    path = tmp_path / "orders-svc.json"
    path.write_text("".join(json.dumps(o) + "\n" for o in objects))
    result = one_file(ingest_paths(spark, path), "json_lines", 6, 4, 0, 2, 0)
    records = records_by_line(result)
    assert [(records[line]["ts"], records[line]["level"], records[line]["logger"]) for line in (2, 5)] == [
        (datetime(2024, 3, 11, 14, 2, 18, 118000), "DEBUG", "Orders.KafkaLog"),
        (datetime(2024, 3, 11, 14, 2, 21, 118000), "WARN", "Orders.KafkaLog"),
    ]
    assert sorted((e["event_type"], e["generation"]) for e in parse_events(result.records).collect()) == sorted(RDKAFKA_EVENTS.values())


def test_directory_of_all_layouts_sums_its_files(layout_fixtures):
    result = layout_fixtures
    assert len(result.inputs) == 22
    for bucket in ("lines", "records", "continuations", "irrelevant", "unparsed"):
        assert result.accounting[bucket] == sum(entry[bucket] for entry in result.inputs)
    assert result.accounting["lines"] == 30 + 30 + 21 + 6 + 6 + 5 + 5 + 13 + 12 + 8 + 10 + 24 + 10 + 6 + 14 + 16 + 13 + 6 + 6 + 6 + 26 + 12
    assert result.records.count() == result.accounting["records"]


@pytest.fixture(scope="module")
def strimzi(layout_fixtures):
    return part_of(layout_fixtures, "strimzi_broker.log", "strimzi_connect_sink.log")


def test_strimzi_layout_takes_logger_and_thread_off_the_messages_end(strimzi):
    """Strimzi's ``%d{ISO8601} %p %m (%c) [%t]`` (its brokers' and Connect's default): the
    coordinator's ``[GroupCoordinator 0]: `` opens the message, and the logger and the thread
    that close it, on a record's last line, are its fields."""
    broker = {r["line"]: r for r in strimzi.records.collect() if r["source_file"].endswith("strimzi_broker.log")}
    assert sorted(broker) == [1, 2, 4, 5]  # line 3 is the log's, not the coordinator's: counted irrelevant
    assert strimzi.inputs[0]["irrelevant"] == 1
    stabilized = broker[4]
    assert (stabilized["logger"], stabilized["thread"]) == ("kafka.coordinator.group.GroupCoordinator", "executor-Rebalance")
    assert (
        stabilized["message"]
        == "[GroupCoordinator 0]: Stabilized group connect-my-sink generation 3 (__consumer_offsets-17) with 1 members"
    )
    assert stabilized["ts"] == datetime(2024, 3, 11, 14, 2, 18, 425000)
    connect = {r["line"]: r for r in strimzi.records.collect() if r["source_file"].endswith("strimzi_connect_sink.log")}
    config = connect[1]
    assert (config["line_end"], config["logger"]) == (7, "org.apache.kafka.clients.consumer.ConsumerConfig")
    assert config["message"].startswith("ConsumerConfig values: \n\tallow.auto.create.topics = true")
    assert config["message"].rstrip().endswith("max.poll.interval.ms = 300000")
    offset = connect[12]
    assert offset["logger"] == "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"
    assert offset["message"].endswith("(id: 0 rack: null)], epoch=3}}")


def test_strimzi_broker_and_connect_lines_become_the_groups_events(strimzi):
    events = parse_events(strimzi.records).collect()
    types = sorted(e["event_type"] for e in events if e["source_file"].endswith("strimzi_broker.log"))
    assert types == sorted(
        [
            "coordinator:group:member_joined",
            "coordinator:group:preparing_rebalance",
            "coordinator:group:stabilized",
            "coordinator:group:assignment_received",
        ]
    )
    assert {e["generation"] for e in events if e["event_type"] == "coordinator:group:stabilized"} == {3}
    consumer = {e["event_type"] for e in events if e["source_file"].endswith("strimzi_connect_sink.log")}
    assert {"consumer:group:join_started", "consumer:group:joined", "consumer:group:assigned"} <= consumer


def test_a_connect_workers_group_lines_are_its_clusters_rebalances(layout_fixtures):
    """A Kafka Connect worker's coordinator runs the consumer's group code under its own logger
    (``WorkerCoordinator``) and prefix (``[Worker clientId=.., groupId=..]``): its join, sync and
    rejoin lines are the Connect cluster's group events, its "Rebalance started" a join request
    (G112); the herder's own lines stay unrecognised."""
    result = part_of(layout_fixtures, "connect_worker.log")
    events = parse_events(result.records).collect()
    assert {(e["client_id"], e["group_id"]) for e in events} == {("connect-1", "connect-cluster")}
    assert sorted((e["line"], e["event_type"], e["generation"]) for e in events if e["generation"] is not None) == [
        (6, "consumer:group:joined", 20),
        (7, "consumer:group:synced", 20),
        (12, "consumer:group:joined", 21),
    ]
    assert sorted(e["line"] for e in events) == [1, 2, 3, 4, 5, 6, 7, 10, 11, 12]  # not the herder's lines


FAUST_REVOKED = """\
[2020-10-29 16:15:07,450] [644661] [INFO] Revoking previously assigned partitions 
┌Topic Partition Set──────────────┬────────────┐
│ topic                           │ partitions │
├─────────────────────────────────┼────────────┤
│ lockup-demo-__assignor-__leader │ {0}        │
│ my-topic                        │ {0-11}     │
└─────────────────────────────────┴────────────┘ for group lockup-demo 
[2020-10-29 16:15:07,484] [644661] [WARNING] Got exception CancelledError() 
[2020-10-29 16:15:08,113] [644661] [INFO] [^---Recovery]: Resuming flow... 
"""
"""Faust's worker log (``[%(asctime)s] [%(process)s] [%(levelname)s] %(message)s %(extra)s``, so a
space ends each line; its own table in place of a set of partitions), as in robinhood/faust#678."""


def test_python_clients_lines_without_a_logger_are_read_by_their_words(spark, tmp_path):
    """kafka-python's and aiokafka's lines where the layout writes no logger (Faust's, a team's
    ``logging.basicConfig``): every PY entry of the catalogue, written in Faust's layout after
    its own lines, is a Kafka record and gets its entry's event type. The revoke with Faust's
    table is a record too, with the table as its continuation lines: a revoke of the partitions
    the table names (PY41), not the Java consumer's K08 that its first line alone would be."""
    from forensics.catalogue import load_catalogue

    python_entries = [t for t in load_catalogue() if t.reference_id.startswith("PY")]
    messages = [t.example.split(" ", 4)[4] for t in python_entries]
    path = tmp_path / "worker.log"
    path.write_text(FAUST_REVOKED + "".join(f"[2024-03-11 14:02:{i % 60:02d},418] [4242] [INFO] {m} \n" for i, m in enumerate(messages)))
    tables = sum(m.count("\n") for m in messages)  # PY40's and PY41's continuation lines
    starts = list(accumulate((1 + m.count("\n") for m in messages[:-1]), initial=FAUST_REVOKED.count("\n") + 1))
    result = one_file(ingest_paths(spark, path), "generic", starts[-1] + messages[-1].count("\n"), 1 + len(messages), 6 + tables, 2, 0)
    assert records_by_line(result)[1]["line_end"] == 7
    events = {e["line"]: e for e in parse_events(result.records).collect()}
    assert (events[1]["event_type"], events[1]["template_id"], events[1]["group_id"]) == ("consumer:group:revoked", "PY41", "lockup-demo")
    assert events[1]["partitions"] == ["lockup-demo-__assignor-__leader-0", *(f"my-topic-{p}" for p in range(12))]
    # the event type and the group of each entry's example; a Java template of the same words may
    # read a line (G01, G03) where it reads it alike
    assert {line: (e["event_type"], e["group_id"]) for line, e in events.items() if line > 1} == {
        start: (t.event_type, dict(t.fields).get("group_id")) for start, t in zip(starts, python_entries)
    }


def test_python_clients_lines_in_kafkas_layout_without_a_logger_are_read_beside_a_java_log(spark, data_dir, tmp_path):
    """A team's ``logging.basicConfig(format="[%(asctime)s] %(levelname)s %(message)s")`` writes
    Kafka's own layout without its logger. The samples show a record of one line that names none
    (``sampling.names_no_logger``), so the clients' words (``records.CLIENT_WORDS``) are looked
    for in every file of the analysis: each one-line PY entry of the catalogue is read, beside a
    Java client's log that names its loggers and by itself needs no words."""
    from forensics.catalogue import load_catalogue
    from forensics.ingest.sampling import needed_recognisers

    python_entries = [t for t in load_catalogue() if t.reference_id.startswith("PY") and "\n" not in t.example]
    messages = [t.example.split(" ", 4)[4] for t in python_entries]
    path = tmp_path / "worker.log"
    path.write_text("".join(f"[2024-03-11 14:02:{i % 60:02d},418] INFO {m}\n" for i, m in enumerate(messages)))
    java = sorted(str(p) for p in (data_dir / "shapes" / "plain_log4j").iterdir())
    assert not needed_recognisers(java).loggerless and needed_recognisers([*java, str(path)]).loggerless
    result = ingest_paths(spark, *java, path)
    events = [e for e in parse_events(result.records).collect() if e["source_file"] == str(path)]
    assert {e["line"]: e["event_type"] for e in events} == {line: t.event_type for line, t in enumerate(python_entries, 1)}
