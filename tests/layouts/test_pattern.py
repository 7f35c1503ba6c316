"""A user-named layout pattern (PatternLayout or Python logging) compiled into a layout:
recognition, field split and UTC timestamps checked in Spark on hand-written lines."""

from __future__ import annotations

import re

import pytest
from pyspark.sql import functions as F

from forensics.errors import ForensicsError
from forensics.layouts import json_lines, librdkafka, log4j, logback
from forensics.layouts._common import FIELDS
from forensics.layouts.pattern import compile_layout, family, looks_like_layout_pattern
from forensics.layouts.pattern.pieces import SAMPLE

MSG = "[Consumer clientId=c-1, groupId=g] (Re-)joining group"
CC = "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"
FRAME = "\tat org.apache.kafka.clients.consumer.KafkaConsumer.poll(KafkaConsumer.java:1234)"
FOREIGN = (log4j.EXAMPLE, json_lines.EXAMPLE, librdkafka.EXAMPLE, FRAME, "Caused by: java.io.IOException: x")
UTC_0 = ("2021-03-01 10:00:00.515", "2021-03-01 09:00:00.515")  # zone-less 10:00:00.515 read in UTC / Berlin
UNDATED = (None, None)


def case(pattern, line, fields, ts=UTC_0, foreign=FOREIGN, datefmt=None, id=None):
    """``fields``: (ts_text, level, logger, thread, message); the client is always empty."""
    ts_text, level, logger, thread, message = fields
    expected = [ts_text, level, logger, thread, "", message]
    return pytest.param(pattern, datefmt, line, expected, ts, foreign, id=id)


CASES = [
    case(
        "%d{yyyy-MM-dd HH:mm:ss.SSS} | %-5level | [%thread] | %logger{36} | %msg%n",
        f"2021-03-01 10:00:00.515 | INFO  | [kafka-coordinator-heartbeat-thread | g] | o.a.k.c.c.i.ConsumerCoordinator | {MSG}",
        ("2021-03-01 10:00:00.515", "INFO", "o.a.k.c.c.i.ConsumerCoordinator", "kafka-coordinator-heartbeat-thread | g", MSG),
        id="pipes",
    ),
    case(
        "%d [%t] %-5p %c{1.} - %m%n",
        "2021-03-01 10:00:00,515 [main] WARN  o.a.k.c.NetworkClient - [Consumer clientId=c-1, groupId=g] "
        "Connection to node 1 (localhost/127.0.0.1:9092) could not be established.",
        (
            "2021-03-01 10:00:00,515",
            "WARN",
            "o.a.k.c.NetworkClient",
            "main",
            "[Consumer clientId=c-1, groupId=g] Connection to node 1 (localhost/127.0.0.1:9092) could not be established.",
        ),
        id="d-t-p-c",
    ),
    case(
        "%date{ISO8601} %level [%thread] %logger{10} [%file:%line] %msg%n",
        f"2021-03-01T10:00:00,515 ERROR [main] o.a.k.c.c.KafkaConsumer [KafkaConsumer.java:1234] {MSG}",
        ("2021-03-01T10:00:00,515", "ERROR", "o.a.k.c.c.KafkaConsumer", "main", MSG),
        id="iso8601-log4j2-T",
    ),
    case(
        "%date{ISO8601} %level [%thread] %logger{10} [%file:%line] %msg%n",
        f"2021-03-01 10:00:00,515 ERROR [main] o.a.k.c.c.KafkaConsumer [?:?] {MSG}",
        ("2021-03-01 10:00:00,515", "ERROR", "o.a.k.c.c.KafkaConsumer", "main", MSG),
        id="iso8601-logback-space",
    ),
    case(
        "%d{HH:mm:ss.SSS} [%t] %-5level %logger{36} - %msg%n",
        f"10:00:00.515 [main] INFO  {CC} - {MSG}",
        ("10:00:00.515", "INFO", CC, "main", MSG),
        ts=UNDATED,
        id="log4j2-default-time-only",
    ),
    case(
        "[%d] %p %m (%c)%n",
        f"[2021-03-01 10:00:00,515] INFO {MSG} ({CC})",
        ("2021-03-01 10:00:00,515", "INFO", CC, "", MSG),
        foreign=(logback.EXAMPLE, *FOREIGN[1:]),
        id="kafka",
    ),
    case(
        "[%d] %p %m (%c)%n",
        "[2021-03-01 10:00:00,515] INFO [Consumer clientId=c-1, groupId=g] Updating assignment with",
        ("2021-03-01 10:00:00,515", "INFO", "", "", "[Consumer clientId=c-1, groupId=g] Updating assignment with"),
        foreign=(logback.EXAMPLE, *FOREIGN[1:]),
        id="kafka-multiline-first-line",
    ),
    case(
        "%d{dd MMM yyyy HH:mm:ss,SSS} %-5p [%t] %c - %m%n",
        f"01 Mar 2021 10:00:00,515 INFO  [main] {CC} - {MSG}",
        ("01 Mar 2021 10:00:00,515", "INFO", CC, "main", MSG),
        id="dd-MMM-yyyy",
    ),
    case(
        "%d{DEFAULT} %p %c - %m%n",
        f"2021-03-01 10:00:00,515 DEBUG {CC} - {MSG}",
        ("2021-03-01 10:00:00,515", "DEBUG", CC, "", MSG),
        id="DEFAULT",
    ),
    case(
        "%d{ISO8601_OFFSET_DATE_TIME_HHCMM} %p %c - %m%n",
        f"2021-03-01T10:00:00,515+02:00 INFO {CC} - {MSG}",
        ("2021-03-01T10:00:00,515+02:00", "INFO", CC, "", MSG),
        ts=("2021-03-01 08:00:00.515", "2021-03-01 08:00:00.515"),
        id="offset-in-text",
    ),
    case(
        "%d{ABSOLUTE} %-5p [%c{1}] %m%n",
        f"10:00:00,515 INFO  [ConsumerCoordinator] {MSG}",
        ("10:00:00,515", "INFO", "ConsumerCoordinator", "", MSG),
        ts=UNDATED,
        id="ABSOLUTE",
    ),
    case(
        "%d{UNIX_MILLIS} %5p %m%n",
        f"1614592800515  INFO {MSG}",
        ("1614592800515", "INFO", "", "", MSG),
        ts=("2021-03-01 10:00:00.515", "2021-03-01 10:00:00.515"),
        id="UNIX_MILLIS",
    ),
    case(
        "%d{COMPACT} %-5level %logger - %msg%n",
        f"20210301100000515 INFO  {CC} - {MSG}",
        ("20210301100000515", "INFO", CC, "", MSG),
        id="COMPACT",
    ),
    case(
        "%d{EEE, dd MMM yyyy HH:mm:ss.SSS} %p %c - %m%n",
        f"Mon, 01 Mar 2021 10:00:00.515 INFO {CC} - {MSG}",
        ("Mon, 01 Mar 2021 10:00:00.515", "INFO", CC, "", MSG),
        id="day-name",
    ),
    case(
        "%highlight(%-5level) %d{yyyy-MM-dd HH:mm:ss.SSS} [%thread] %logger - %msg%n",
        f"\x1b[34mINFO \x1b[0;39m 2021-03-01 10:00:00.515 [main] {CC} - {MSG}",
        ("2021-03-01 10:00:00.515", "INFO", CC, "main", MSG),
        id="highlight-ansi",
    ),
    case(
        "%style{%d{ISO8601}}{black} %highlight{%-5level }[%style{%t}{bright,blue}] %style{%C{1.}}{bright,yellow}: %msg%n%throwable",
        f"2021-03-01T10:00:00,515 INFO  [main] o.a.k.c.c.i.ConsumerCoordinator: {MSG}",
        ("2021-03-01T10:00:00,515", "INFO", "o.a.k.c.c.i.ConsumerCoordinator", "main", MSG),
        id="log4j2-style",
    ),
    case(
        "%d %5p %pid --- [%15.15t] %-40.40logger{39} : %m%n%ex",
        f"2021-03-01 10:00:00,515  INFO 4242 --- [           main] o.a.k.c.c.internals.ConsumerCoordinator  : {MSG}",
        ("2021-03-01 10:00:00,515", "INFO", "o.a.k.c.c.internals.ConsumerCoordinator", "main", MSG),
        id="spring-like-widths",
    ),
    case(
        "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %.-1p [%t] %C.%M(%F:%L) %X{traceId} %marker - %msg%n",
        f"2021-03-01T10:00:00.515+01:00 W [main] {CC}.joinGroup(ConsumerCoordinator.java:42) abc123  - {MSG}",
        ("2021-03-01T10:00:00.515+01:00", "WARN", CC, "main", MSG),
        ts=("2021-03-01 09:00:00.515", "2021-03-01 09:00:00.515"),
        id="one-letter-level-class-mdc-marker",
    ),
    case(
        "%d{yyyy-MM-dd HH:mm:ss.SSS, Asia/Tokyo} %-5level %logger - %replace(%msg){'[\\r\\n]+', ' '}%n%throwable",
        f"2021-03-01 10:00:00.515 ERROR {CC} - {MSG}",
        ("2021-03-01 10:00:00.515", "ERROR", CC, "", MSG),
        ts=("2021-03-01 01:00:00.515", "2021-03-01 01:00:00.515"),
        id="zone-option-replace",
    ),
    case(
        "%d{HH:mm:ss,SSS} [%t] %mdc %-5p %c - %m%n",
        f"10:00:00,515 [main] k1=v1, k2=v2 INFO  {CC} - {MSG}",
        ("10:00:00,515", "INFO", CC, "main", MSG),
        ts=UNDATED,
        id="mdc-comma-in-date",
    ),
    case(
        "%(asctime)s %(levelname)s %(name)s: %(message)s",
        f"2021-03-01 10:00:00,515 INFO kafka.consumer.group: {MSG}",
        ("2021-03-01 10:00:00,515", "INFO", "kafka.consumer.group", "", MSG),
        id="py-basic",
    ),
    case(
        "%(asctime)s - %(name)s - %(levelname)s - %(message)s",
        f"2021-03-01 10:00:00,515 - kafka.conn - WARNING - {MSG}",
        ("2021-03-01 10:00:00,515", "WARNING", "kafka.conn", "", MSG),
        id="py-dashes",
    ),
    case(
        "[%(asctime)s] %(levelname)-8s [%(threadName)s] %(name)s %(message)s",
        f"[2021-03-01 10:00:00,515] INFO     [Thread-1 (worker)] kafka.coordinator.consumer {MSG}",
        ("2021-03-01 10:00:00,515", "INFO", "kafka.coordinator.consumer", "Thread-1 (worker)", MSG),
        foreign=(logback.EXAMPLE, *FOREIGN),
        id="py-thread",
    ),
    case(
        "%(created)f %(process)d %(thread)d %(module)s.%(funcName)s:%(lineno)d %(filename)s %(levelname).1s %(message)s",
        f"1614592800.515000 4242 140234 group.join:42 group.py E {MSG}",
        ("1614592800.515000", "ERROR", "", "140234", MSG),
        ts=("2021-03-01 10:00:00.515", "2021-03-01 10:00:00.515"),
        id="py-created-ids",
    ),
    case(
        "%(asctime)s.%(msecs)03d %(levelname)s %(name)s %(message)s",
        f"2021-03-01T10:00:00.005 INFO kafka.conn {MSG}",
        ("2021-03-01T10:00:00.005", "INFO", "kafka.conn", "", MSG),
        ts=("2021-03-01 10:00:00.005", "2021-03-01 09:00:00.005"),
        datefmt="%Y-%m-%dT%H:%M:%S",
        id="py-datefmt-msecs",
    ),
    case(
        "%(asctime)s,%(msecs)d %(levelname)s %(message)s",
        f"01/03/2021 10:00:00,5 INFO {MSG}",
        ("01/03/2021 10:00:00.5", "INFO", "", "", MSG),
        ts=("2021-03-01 10:00:00.005", "2021-03-01 09:00:00.005"),
        datefmt="%d/%m/%Y %H:%M:%S",
        id="py-unpadded-msecs",
    ),
]


def _observe(spark, layout, line, foreign):
    """One Spark row: START/HEAD matches, split fields, UTC times (tz UTC and Berlin), foreign matches."""
    value = F.col("value")
    parts = layout.split(value)
    ts_text = F.nullif(parts[0], F.lit(""))

    def utc(tz):
        return F.date_format(layout.to_utc(ts_text, F.lit(tz)), "yyyy-MM-dd HH:mm:ss.SSS")

    row = (
        spark.createDataFrame([(line,)], "value string")
        .select(
            value.rlike(layout.START).alias("start"),
            value.rlike(layout.HEAD).alias("head"),
            parts.alias("parts"),
            utc("UTC").alias("utc"),
            utc("Europe/Berlin").alias("berlin"),
            F.array(*[F.lit(other).rlike(layout.START) for other in foreign]).alias("foreign"),
        )
        .first()
    )
    return row


@pytest.mark.parametrize("pattern, datefmt, line, expected, ts, foreign", CASES)
def test_compiled_pattern_reads_its_line(spark, pattern, datefmt, line, expected, ts, foreign):
    layout = compile_layout(pattern, datefmt=datefmt)
    row = _observe(spark, layout, line, foreign)
    assert row["start"] and row["head"]
    assert dict(zip(FIELDS, row["parts"])) == dict(zip(FIELDS, expected))
    assert (row["utc"], row["berlin"]) == ts
    assert not any(row["foreign"]), "a line of another layout matched START"
    assert layout.sniff([line]) and not layout.sniff(list(foreign))
    assert layout.FIRST_CHARS == "" or line[0] in layout.FIRST_CHARS


@pytest.mark.parametrize("pattern, datefmt", sorted({(p.values[0], p.values[1]) for p in CASES}, key=str))
def test_generated_example_matches_its_own_head(pattern, datefmt):
    layout = compile_layout(pattern, datefmt=datefmt)
    assert layout.EXAMPLE and layout.sniff([layout.EXAMPLE])
    match = re.match(layout.HEAD, layout.EXAMPLE)
    fields = match.expand(re.sub(r"\$(\d+)", r"\\g<\1>", layout.TEMPLATE)).split("\x01")
    assert fields[FIELDS.index("message")] == SAMPLE["message"]


def test_contract_attributes_and_families():
    layout = compile_layout("[%d] %p %m (%c)%n", name="kafka-own")
    assert layout.NAME == "kafka-own" and layout.FAMILY == "java" and layout.FIRST_CHARS == "["
    assert layout.HEAD.startswith("(?s)^") and layout.HEAD.endswith("$") and layout.START.startswith("^")
    assert layout.TEMPLATE.count("\x01") == len(FIELDS) - 1
    assert family("%(asctime)s %(message)s") == "python" and family("%d %m%n") == "java"
    assert compile_layout("%t %m%n").FIRST_CHARS == ""  # thread first: no first-character gate


def test_property_defaults_are_substituted():
    layout = compile_layout("%d{${LOG_DATEFORMAT_PATTERN:-yyyy-MM-dd HH:mm:ss.SSS}} ${LOG_LEVEL_PATTERN:-%5p} %m%n")
    assert re.match(layout.HEAD, "2021-03-01 10:00:00.515  INFO hello")


@pytest.mark.parametrize(
    "pattern, needles",
    [
        ("%d %foo %m%n", ("%foo", "%logger", "%msg")),
        ("%d{yyyy-MM-dd GGG} %m", ("'GGG'",)),
        ("[%t] %p %c%n", ("neither a date", "nor a message")),
        ("%(asctime)s %(bogus)s %(message)s", ("%(bogus)", "levelname")),
        ("%(asctime)s %s %(message)s", ("%(name)s",)),
        ("%d{yyyy-MM-dd %m", ("not closed",)),
        ("%highlight(%p %m", ("not closed",)),
        ("${LOG_PATTERN}", ("${LOG_PATTERN}",)),
        ("   ", ("empty",)),
    ],
)
def test_clear_errors(pattern, needles):
    with pytest.raises(ForensicsError) as error:
        compile_layout(pattern)
    assert all(needle in str(error.value) for needle in needles), str(error.value)


def test_python_datefmt_errors_name_the_code():
    with pytest.raises(ForensicsError, match="%Q"):
        compile_layout("%(asctime)s %(message)s", datefmt="%Y %Q")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("%d [%t] %-5p %c - %m%n", True),
        ("[%d] %p %m (%c)%n", True),
        ("%(asctime)s %(message)s", True),
        ("%msg%n", True),
        ("%d{ISO8601} %m", True),
        ("app.log", False),
        ("/var/log/kafka/server.log", False),
        ("logs/app-%d.log", False),
        ("report%20final.log", False),
        ("C:\\logs\\my app.log", False),
    ],
)
def test_looks_like_layout_pattern(text, expected):
    assert looks_like_layout_pattern(text) is expected
