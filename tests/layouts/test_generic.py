"""The layout recognised by its parts: field orders and forms teams and frameworks write."""

from __future__ import annotations

from datetime import datetime

import pytest
from pyspark.sql import functions as F

from forensics.layouts import generic

PREFIX = "[Consumer clientId=c-1, groupId=g] (Re-)joining group"
KAFKA_CC = "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"
CASES = [
    # line, (ts text, level, logger, thread)
    (
        f"2024-03-11 14:02:17.418 | INFO  | [main] | o.a.k.c.c.i.ConsumerCoordinator | {PREFIX}",
        ("2024-03-11 14:02:17.418", "INFO", "o.a.k.c.c.i.ConsumerCoordinator", "main"),
    ),
    (
        f"2024-03-11 14:02:17,418 INFO  [main] o.a.k.c.c.i.ConsumerCoordinator:267 - {PREFIX}",
        ("2024-03-11 14:02:17,418", "INFO", "o.a.k.c.c.i.ConsumerCoordinator", "main"),
    ),
    (
        f"2024-03-11 14:02:17,418 WARN  [main] ConsumerCoordinator(ConsumerCoordinator.java:311) - {PREFIX}",
        ("2024-03-11 14:02:17,418", "WARN", "ConsumerCoordinator", "main"),
    ),
    (f"INFO 2024-03-11 14:02:17 [main] {KAFKA_CC} - {PREFIX}", ("2024-03-11 14:02:17", "INFO", KAFKA_CC, "main")),
    (
        f"2024-03-11 14:02:17,418 INFO  [org.apa.kaf.cli.con.int.ConsumerCoordinator] (executor-thread-1) {PREFIX}",
        ("2024-03-11 14:02:17,418", "INFO", "org.apa.kaf.cli.con.int.ConsumerCoordinator", "executor-thread-1"),
    ),
    (f"INFO  [2024-03-11 14:02:17,418] {KAFKA_CC}: {PREFIX}", ("2024-03-11 14:02:17,418", "INFO", KAFKA_CC, None)),
    (f"14:02:17.418 [main] ERROR {KAFKA_CC} - {PREFIX}", ("14:02:17.418", "ERROR", KAFKA_CC, None)),
    (
        f"2024-03-11T14:02:17.418123Z WARN [kafka-coordinator-heartbeat-thread | g] o.a.k.c.c.i.ConsumerCoordinator - {PREFIX}",
        ("2024-03-11T14:02:17.418123Z", "WARN", "o.a.k.c.c.i.ConsumerCoordinator", "kafka-coordinator-heartbeat-thread | g"),
    ),
    (f"2024-03-11 14:02:17 INFO {PREFIX}", ("2024-03-11 14:02:17", "INFO", None, None)),
    (f"11 Mar 2024 14:02:17,418 INFO  ConsumerCoordinator - {PREFIX}", ("11 Mar 2024 14:02:17,418", "INFO", "ConsumerCoordinator", None)),
    (f"2024-03-11 14:02:17,418 - {KAFKA_CC} - INFO - {PREFIX}", ("2024-03-11 14:02:17,418", "INFO", KAFKA_CC, None)),
    # Python's logging cookbook, %(asctime)s - %(name)s - %(levelname)s - %(message)s, an application's logger
    (f"2024-03-11 14:02:17,418 - BalanceListener - INFO - {PREFIX}", ("2024-03-11 14:02:17,418", "INFO", "BalanceListener", None)),
    (f"2024-03-11 14:02:17,418 - __main__ - WARNING - {PREFIX}", ("2024-03-11 14:02:17,418", "WARNING", "__main__", None)),
    # %d{HH:mm:ss.SSS} [%level] [%logger:%line] [%thread] - (confluentinc/parallel-consumer's logs)
    (f"14:02:17.418 [INFO] [{KAFKA_CC}:338] [pc-broker-poll] - {PREFIX}", ("14:02:17.418", "INFO", KAFKA_CC, "pc-broker-poll")),
    # Flink's %d %-5p %-60c %x - %m: the logger padded, an empty NDC or an MDC before " - "
    (f"2024-03-11 14:02:17,418 INFO  {KAFKA_CC:<60} [] - {PREFIX}", ("2024-03-11 14:02:17,418", "INFO", KAFKA_CC, None)),
    (f"2024-03-11 14:02:17,418 WARN  {KAFKA_CC} {{job=orders, task=3}} - {PREFIX}", ("2024-03-11 14:02:17,418", "WARN", KAFKA_CC, None)),
    # Akka's documented [%date{ISO8601}] [%level] [%logger] [%thread] [%X{akkaSource}] - %msg (Alpakka Kafka's consumers)
    (
        f"[2024-03-11 14:02:17,418] [INFO] [{KAFKA_CC}] [orders-akka.kafka.default-dispatcher-12] [] - {PREFIX}",
        ("2024-03-11 14:02:17,418", "INFO", KAFKA_CC, "orders-akka.kafka.default-dispatcher-12"),
    ),
    # Play's default file layout, %date [%level] from %logger in %thread - %message (Lagom's, Alpakka Kafka's users)
    (
        f"2024-03-11 14:02:17,418 [INFO] from {KAFKA_CC} in application-akka.kafka.default-dispatcher-15 - {PREFIX}",
        ("2024-03-11 14:02:17,418", "INFO", KAFKA_CC, "application-akka.kafka.default-dispatcher-15"),
    ),
    # loguru's default {time:YYYY-MM-DD HH:mm:ss.SSS} | {level: <8} | {name}:{function}:{line} - {message}, a
    # standard logging handler's records passed on to it (kafka-python's logger, a module's own code)
    (
        f"2024-03-11 14:02:17.418 | INFO     | kafka.coordinator:_handle_join_group_response:520 - {PREFIX}",
        ("2024-03-11 14:02:17.418", "INFO", "kafka.coordinator", None),
    ),
    (
        f"2024-03-11 14:02:17.418 | WARNING  | aiokafka.consumer.group_coordinator:<module>:1 - {PREFIX}",
        ("2024-03-11 14:02:17.418", "WARNING", "aiokafka.consumer.group_coordinator", None),
    ),
    # Logstash's own layout [%d{ISO8601}][%-5p][%-25c] (the pipeline and plugin ids after the logger)
    (f"[2024-03-11T14:02:17,418][INFO ][{KAFKA_CC}][main] {PREFIX}", ("2024-03-11T14:02:17,418", "INFO", KAFKA_CC, "main")),
]
BRACKETED_BEFORE = [
    # line, (ts text, level, logger, thread), the message
    (
        "[2024-03-11T14:02:15,001][INFO ][logstash.agent           ] Successfully started Logstash API endpoint {:port=>9600}",
        ("2024-03-11T14:02:15,001", "INFO", "logstash.agent", None),
        "Successfully started Logstash API endpoint {:port=>9600}",
    ),
    (
        f"[2024-03-11T14:02:17,418][INFO ][{KAFKA_CC}][main][8d6f0c1a2b3c] {PREFIX}",
        ("2024-03-11T14:02:17,418", "INFO", KAFKA_CC, "main"),
        f"[8d6f0c1a2b3c] {PREFIX}",
    ),
    # Strimzi's %d{ISO8601} %p %m (%c) [%t]: the coordinator's prefix is the message's start, no thread
    (
        "2020-07-09 16:39:46,261 INFO [GroupCoordinator 0]: Stabilized group kafka-connect generation 311127280 (__consumer_offsets-7) "
        "(kafka.coordinator.group.GroupCoordinator) [data-plane-kafka-request-handler-5]",
        ("2020-07-09 16:39:46,261", "INFO", None, None),
        "[GroupCoordinator 0]: Stabilized group kafka-connect generation 311127280 (__consumer_offsets-7) "
        "(kafka.coordinator.group.GroupCoordinator) [data-plane-kafka-request-handler-5]",
    ),
    (
        "2024-03-11 14:02:17,418 INFO [Worker clientId=connect-1, groupId=connect-cluster] Rebalance started "
        "(org.apache.kafka.connect.runtime.distributed.WorkerCoordinator) [DistributedHerder-connect-1-1]",
        ("2024-03-11 14:02:17,418", "INFO", None, None),
        "[Worker clientId=connect-1, groupId=connect-cluster] Rebalance started "
        "(org.apache.kafka.connect.runtime.distributed.WorkerCoordinator) [DistributedHerder-connect-1-1]",
    ),
]
"""Heads whose message opens with a bracketed field: a Logstash plugin's id, or Kafka's own
log-context prefix, which is never a thread."""


@pytest.fixture(scope="module")
def split(spark):
    rows = spark.createDataFrame([(line,) for line, _ in CASES], "value string")
    parts = rows.select("value", F.col("value").rlike(generic.START).alias("head"), generic.split(F.col("value")).alias("p"))
    return {r["value"]: (r["head"], r["p"]) for r in parts.collect()}


@pytest.mark.parametrize("line, fields", CASES, ids=range(len(CASES)))
def test_fields_by_their_parts(split, line, fields):
    head, parts = split[line]
    ts, level, logger, thread = fields
    assert head
    assert (parts[0], parts[1], parts[2] or None) == (ts, level, logger)
    if thread:
        assert parts[3] == thread
    assert parts[5] == PREFIX  # the Kafka prefix is never taken for a thread


@pytest.mark.parametrize("line, fields, message", BRACKETED_BEFORE, ids=range(len(BRACKETED_BEFORE)))
def test_fields_before_a_bracketed_message(spark, line, fields, message):
    parts = (
        spark.createDataFrame([(line,)], "value string")
        .select(F.col("value").rlike(generic.START).alias("head"), generic.split(F.col("value")).alias("p"))
        .first()
    )
    assert parts["head"]
    assert (parts["p"][0], parts["p"][1], parts["p"][2] or None, parts["p"][3] or None) == fields
    assert parts["p"][5] == message


@pytest.mark.parametrize("line", ["2024-03-11 14:02:17 - the nightly job - INFO - done", "2024-03-11 14:02:17 - job - done - INFO"])
def test_a_simple_name_is_a_logger_only_between_dashes_before_the_level(spark, line):
    assert spark.createDataFrame([(line,)], "value string").select(F.col("value").rlike(generic.START)).first()[0] is False


@pytest.mark.parametrize(
    "line",
    ["Caused by: java.io.IOException: x", "\tat com.example.Foo.bar(Foo.java:10)", "2024-03-11 something else", "INFO nothing dated"],
)
def test_lines_without_a_timestamp_and_a_level_start_no_record(spark, line):
    assert spark.createDataFrame([(line,)], "value string").select(F.col("value").rlike(generic.START)).first()[0] is False


def test_every_timestamp_form_to_utc(spark):
    texts = [
        "2024-03-11 14:02:17,418",
        "2024/03/11 14:02:17.418",
        "2024-03-11T14:02:17.418+01:00",
        "2024-03-11 14:02:17 UTC",
        "11 Mar 2024 14:02:17,418",
        "Mar 11, 2024 @ 14:02:17.418",
        "1710165737418",
        "1710165737.418",
        "14:02:17.418",
    ]
    frame = spark.createDataFrame([(t,) for t in texts], "t string").select("t", generic.to_utc(F.col("t"), F.lit("UTC")).alias("u"))
    got = {r["t"]: r["u"] for r in frame.collect()}
    want = datetime(2024, 3, 11, 14, 2, 17, 418000)
    assert got["2024-03-11T14:02:17.418+01:00"] == datetime(2024, 3, 11, 13, 2, 17, 418000)
    assert got["2024-03-11 14:02:17 UTC"] == datetime(2024, 3, 11, 14, 2, 17)
    assert got["14:02:17.418"] is None  # a time of day names no day
    assert got["1710165737418"] == got["1710165737.418"]
    for text in ("2024-03-11 14:02:17,418", "2024/03/11 14:02:17.418", "11 Mar 2024 14:02:17,418", "Mar 11, 2024 @ 14:02:17.418"):
        assert got[text] == want, text


def test_a_numeric_date_with_the_day_first_between_dashes_or_dots(spark):
    """``%d{dd-MM-yyyy ..}`` and ``%d{dd.MM.yyyy ..}``: the day first, even where it could be a
    month (``02.04.2024`` is April 2); a month-first text (``03-15-2024``) gives no time, and a
    date between slashes, first field day or month by locale, starts no record."""
    texts = ["15-03-2024 14:02:17.418", "02.04.2024 09:14:07,551", "11-03-2024T14:02:17.418+01:00", "03-15-2024 14:02:17.418"]
    frame = spark.createDataFrame([(t,) for t in texts], "t string").select(
        "t", generic.to_utc(F.col("t"), F.lit("Europe/Berlin")).alias("u")
    )
    got = {r["t"]: r["u"] for r in frame.collect()}
    assert got == {
        "15-03-2024 14:02:17.418": datetime(2024, 3, 15, 13, 2, 17, 418000),
        "02.04.2024 09:14:07,551": datetime(2024, 4, 2, 7, 14, 7, 551000),
        "11-03-2024T14:02:17.418+01:00": datetime(2024, 3, 11, 13, 2, 17, 418000),
        "03-15-2024 14:02:17.418": None,
    }
    lines = [
        f"{date} 14:02:17.418 [main] INFO  o.a.k.c.c.i.ConsumerCoordinator - {PREFIX}"
        for date in ("15-03-2024", "15.03.2024", "15/03/2024")
    ]
    starts = spark.createDataFrame([(line,) for line in lines], "value string").select(F.col("value").rlike(generic.START)).collect()
    assert [row[0] for row in starts] == [True, True, True]  # a slashed date's order is its file's (ingest.records.slashed_date_orders)
