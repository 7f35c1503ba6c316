"""Structured one-line layouts: JSON families (log4j2 JsonLayout / JsonTemplateLayout, ECS,
logstash, GCP, Bunyan / pino) and logfmt. One Spark job per module fixture; the cases read its rows."""

from __future__ import annotations

import json

import pytest
from pyspark.sql import functions as F

from forensics.layouts import json_lines, librdkafka, log4j, logback, logfmt, spring_boot
from forensics.layouts._common import FIELDS

MSG = "[Consumer clientId=c-1, groupId=g] (Re-)joining group"
CC = "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"
AT_515 = ("2021-03-01 10:00:00.515", "2021-03-01 10:00:00.515")  # in the text's own zone: same in UTC and Berlin
LOCAL_515 = ("2021-03-01 10:00:00.515", "2021-03-01 09:00:00.515")  # zone-less: read in UTC / in Berlin
OTHER_EXAMPLES = (log4j.EXAMPLE, logback.EXAMPLE, spring_boot.EXAMPLE, librdkafka.EXAMPLE)


def j(**fields) -> str:
    return json.dumps(fields, separators=(",", ":"))


def frame(cls, method, file, line):
    return {"class": cls, "method": method, "file": file, "line": line, "exact": False, "location": "kafka-clients.jar", "version": "3.6.0"}


JSON_CASES = {
    "log4j2-jsonlayout-instant": (
        j(
            instant={"epochSecond": 1614592800, "nanoOfSecond": 515000000},
            thread="main",
            level="INFO",
            loggerName=CC,
            message=MSG,
            endOfBatch=False,
            loggerFqcn="org.apache.logging.slf4j.Log4jLogger",
            threadId=1,
        ),
        ("1614592800.515000000", "INFO", CC, "main", MSG),
        AT_515,
    ),
    "log4j2-jsonlayout-timemillis-frames": (
        j(
            timeMillis=1614592800515,
            thread="main",
            level="ERROR",
            loggerName=CC,
            message="commit failed",
            thrown={
                "commonElementCount": 0,
                "localizedMessage": "boom",
                "message": "boom",
                "name": "org.apache.kafka.common.KafkaException",
                "extendedStackTrace": [
                    frame("org.apache.kafka.clients.consumer.KafkaConsumer", "poll", "KafkaConsumer.java", 1234),
                    frame("com.example.Loop", "run", "Loop.java", 7),
                ],
            },
        ),
        (
            "1614592800515",
            "ERROR",
            CC,
            "main",
            "commit failed\norg.apache.kafka.common.KafkaException: boom"
            "\n\tat org.apache.kafka.clients.consumer.KafkaConsumer.poll(KafkaConsumer.java:1234)"
            "\n\tat com.example.Loop.run(Loop.java:7)",
        ),
        AT_515,
    ),
    "log4j2-jsonlayout-stacktrace-as-string": (
        j(
            timeMillis=1614592800515,
            thread="main",
            level="WARN",
            loggerName=CC,
            message=MSG,
            thrown={"name": "java.io.IOException", "message": "x", "extendedStackTrace": "java.io.IOException: x\n\tat a.B.c(B.java:1)"},
        ),
        ("1614592800515", "WARN", CC, "main", MSG + "\njava.io.IOException: x\n\tat a.B.c(B.java:1)"),
        AT_515,
    ),
    "log4j2-ecs-template": (
        j(
            **{
                "@timestamp": "2021-03-01T10:00:00.515Z",
                "ecs.version": "1.2.0",
                "log.level": "WARN",
                "message": MSG,
                "process.thread.name": "main",
                "log.logger": CC,
                "error.type": "java.io.IOException",
                "error.message": "x",
                "error.stack_trace": "java.io.IOException: x\n\tat a.B.c(B.java:1)",
            }
        ),
        ("2021-03-01T10:00:00.515Z", "WARN", CC, "main", MSG + "\njava.io.IOException: x\n\tat a.B.c(B.java:1)"),
        AT_515,
    ),
    "ecs-error-without-trace": (
        j(
            **{
                "@timestamp": "2021-03-01T10:00:00.515Z",
                "log.level": "ERROR",
                "message": MSG,
                "error.type": "java.io.IOException",
                "error.message": "x",
            }
        ),
        ("2021-03-01T10:00:00.515Z", "ERROR", None, None, MSG + "\njava.io.IOException: x"),
        AT_515,
    ),
    "logstash-logback-encoder": (
        j(
            **{
                "@timestamp": "2021-03-01T11:00:00.515+01:00",
                "@version": "1",
                "message": MSG,
                "logger_name": CC,
                "thread_name": "main",
                "level": "INFO",
                "level_value": 20000,
                "stack_trace": "java.io.IOException: x",
            }
        ),
        ("2021-03-01T11:00:00.515+01:00", "INFO", CC, "main", MSG + "\njava.io.IOException: x"),
        AT_515,
    ),
    "zone-less-timestamp": (
        j(**{"@timestamp": "2021-03-01 10:00:00,515", "level": "INFO", "logger_name": CC, "message": MSG}),
        ("2021-03-01 10:00:00,515", "INFO", CC, None, MSG),
        LOCAL_515,
    ),
    "gcp-spring-seconds-nanos": (
        j(
            **{
                "timestampSeconds": 1614592800,
                "timestampNanos": 515000000,
                "severity": "WARNING",
                "thread": "main",
                "logger": CC,
                "message": MSG,
                "context": "default",
                "logging.googleapis.com/trace": "projects/p/traces/1",
            }
        ),
        ("1614592800.515000000", "WARNING", CC, "main", MSG),
        AT_515,
    ),
    "gcp-timestamp-object-labels": (
        j(
            **{
                "severity": "ERROR",
                "message": MSG,
                "timestamp": {"seconds": 1614592800, "nanos": 515000000},
                "logging.googleapis.com/labels": {"levelName": "ERROR", "levelValue": "40000", "loggerName": CC},
            }
        ),
        ("1614592800.515000000", "ERROR", CC, None, MSG),
        AT_515,
    ),
    "gcp-export-textpayload": (
        j(
            insertId="x1",
            textPayload=MSG,
            timestamp="2021-03-01T10:00:00.515Z",
            severity="DEFAULT",
            labels={"loggerName": CC},
            logName="projects/p/logs/stdout",
            receiveTimestamp="2021-03-01T10:00:01Z",
        ),
        ("2021-03-01T10:00:00.515Z", "", CC, None, MSG),
        AT_515,
    ),
    "gcp-export-jsonpayload": (
        j(jsonPayload={"message": MSG, "thread": "main", "logger": CC}, timestamp="2021-03-01T10:00:00.515123456Z", severity="ALERT"),
        ("2021-03-01T10:00:00.515123456Z", "FATAL", CC, "main", MSG),
        AT_515,
    ),
    "gcp-time": (
        j(time="2021-03-01T10:00:00.515Z", severity="NOTICE", message=MSG),
        ("2021-03-01T10:00:00.515Z", "NOTICE", None, None, MSG),
        AT_515,
    ),
    "bunyan": (
        j(name="orders", hostname="h", pid=42, level=30, msg=MSG, time="2021-03-01T10:00:00.515Z", v=0),
        ("2021-03-01T10:00:00.515Z", "INFO", "orders", None, MSG),
        AT_515,
    ),
    "pino": (
        j(
            level=50,
            time=1614592800515,
            pid=42,
            hostname="h",
            name="kafkajs",
            msg=MSG,
            err={"type": "Error", "message": "x", "stack": "Error: x\n    at f (a.js:1:1)"},
        ),
        ("1614592800515", "ERROR", "kafkajs", None, MSG + "\nError: x\n    at f (a.js:1:1)"),
        AT_515,
    ),
    "serilog-clef-template": (  # CompactJsonFormatter: the template and its properties, no rendered message
        j(
            **{
                "@t": "2021-03-01T10:00:00.5150000Z",
                "@mt": "{Name}: {Message} ({Count,3} in {Elapsed:0.0} ms; {Count})",
                "@r": ["1520.3"],
                "@l": "Warning",
                "Name": "rdkafka#consumer-1",
                "Message": '[thrd:main]: Group "g" rejoining',
                "Count": 3,
                "Elapsed": 1520.25,
                "SourceContext": "Orders.KafkaLog",
            }
        ),
        (
            "2021-03-01T10:00:00.5150000Z",
            "Warning",
            "Orders.KafkaLog",
            None,
            'rdkafka#consumer-1: [thrd:main]: Group "g" rejoining (3 in 1520.25 ms; 3)',
        ),
        AT_515,
    ),
    "serilog-clef-template-destructured-escaped-missing": (
        j(
            **{
                "@t": "2021-03-01T10:00:00.515Z",
                "@mt": "Assigned {@Partitions} by {$Strategy} {{as told}} to {Member} {0}",
                "Partitions": [{"Topic": "orders", "Partition": 0}],
                "Strategy": "range",
                "0": "c-1",
            }
        ),
        (
            "2021-03-01T10:00:00.515Z",
            "Information",
            None,
            None,
            'Assigned [{"Topic":"orders","Partition":0}] by range {as told} to {Member} c-1',
        ),
        AT_515,
    ),
    "serilog-clef-template-values-as-written": (  # a value's braces and holes are its own text
        j(
            **{
                "@t": "2021-03-01T10:00:00.515Z",
                "@mt": "Commit {Offsets} ({{{Batch}}}) {Batch}",
                "Offsets": "{orders-0=OffsetAndMetadata{offset=42, metadata=''}} {Batch}",
                "Batch": 17,
            }
        ),
        (
            "2021-03-01T10:00:00.515Z",
            "Information",
            None,
            None,
            "Commit {orders-0=OffsetAndMetadata{offset=42, metadata=''}} {Batch} ({17}) 17",
        ),
        AT_515,
    ),
    "spark-structured-logging": (  # Spark 4's SparkLayout.json: ts, msg, context (MDC), exception {class, msg, stacktrace}
        j(
            ts="2021-03-01T10:00:00.515Z",
            level="WARN",
            msg=MSG,
            context={"executor_id": "driver"},
            exception={
                "class": "org.apache.kafka.common.errors.TimeoutException",
                "msg": "Timeout of 60000ms expired",
                "stacktrace": [
                    {
                        "class": "org.apache.kafka.clients.consumer.KafkaConsumer",
                        "method": "position",
                        "file": "KafkaConsumer.java",
                        "line": 1764,
                    }
                ],
            },
            logger="ConsumerCoordinator",
        ),
        (
            "2021-03-01T10:00:00.515Z",
            "WARN",
            "ConsumerCoordinator",
            None,
            MSG + "\norg.apache.kafka.common.errors.TimeoutException: Timeout of 60000ms expired"
            "\n\tat org.apache.kafka.clients.consumer.KafkaConsumer.position(KafkaConsumer.java:1764)",
        ),
        AT_515,
    ),
    "zap-epoch-seconds-exception-text": (  # Go's zap production encoder; structlog's format_exc_info writes exception as text
        j(level="error", ts=1614592800.515, caller="consumer/group.go:88", msg=MSG, exception="Traceback (most recent call last):\n  x"),
        ("1.614592800515E9", "error", None, None, MSG + "\nTraceback (most recent call last):\n  x"),
        AT_515,
    ),
    "serilog-clef-rendered-wins": (
        j(**{"@t": "2021-03-01T10:00:00.515Z", "@m": MSG, "@mt": "{Text}", "Text": "other"}),
        ("2021-03-01T10:00:00.515Z", "Information", None, None, MSG),
        AT_515,
    ),
}

LOGFMT_CASES = {
    "brief": (
        f'time=2021-03-01T10:00:00.515Z level=info logger={CC} thread=main msg="{MSG}"',
        ("2021-03-01T10:00:00.515Z", "info", CC, "main", MSG),
        AT_515,
    ),
    "escapes-caller-stack": (
        r'ts=2021-03-01T10:00:00.515 lvl=eror caller=consumer.go:42 msg="said \"hi\" C:\\temp\nnext" '
        r'stacktrace="java.io.IOException: x\n\tat a.B.c(B.java:1)"',
        (
            "2021-03-01T10:00:00.515",
            "ERROR",
            "consumer.go:42",
            None,
            'said "hi" C:\\temp\nnext\njava.io.IOException: x\n\tat a.B.c(B.java:1)',
        ),
        LOCAL_515,
    ),
    "keys-inside-quotes-do-not-count": (
        'level=warn msg="time=1999 logger=fake" name=kafka.consumer timestamp=1614592800515',
        ("1614592800515", "warn", "kafka.consumer", None, "time=1999 logger=fake"),
        AT_515,
    ),
    "message-key-epoch-seconds": (
        't=1614592800.515 severity=DEBUG message=plain-word thread="kafka-coordinator-heartbeat-thread | g"',
        ("1614592800.515", "DEBUG", None, "kafka-coordinator-heartbeat-thread | g", "plain-word"),
        AT_515,
    ),
    "logger-wins-over-caller": (
        f'caller=c.go:1 logger={CC} time=2021-03-01T10:00:00.515Z msg=""',
        ("2021-03-01T10:00:00.515Z", None, CC, None, ""),
        AT_515,
    ),
}
LOGFMT_NOT_HEADS = [
    "time=2021-03-01T10:00:00.515Z level=info",  # no message
    'level=info msg="unterminated',
    "hello world msg=x",  # bare words
    " msg=x",
    'level=info msg="a" trailing"quote',
    *OTHER_EXAMPLES,
    json_lines.EXAMPLE,
]

OTHER_EXAMPLES_AND_JUNK = [*OTHER_EXAMPLES, logfmt.EXAMPLE, '{"level":"INFO","logger":"x"}', "{not json"]


def _observe(spark, layout, lines):
    """Per line: head(), the split fields, and its UTC time read in UTC and in Berlin.

    The fields are a projection of their own, as in ingest: to_utc then reads a column."""
    value, parts = F.col("value"), F.col("parts")

    def utc(tz):
        return F.date_format(layout.to_utc(F.nullif(parts[0], F.lit("")), F.lit(tz)), "yyyy-MM-dd HH:mm:ss.SSS")

    df = spark.createDataFrame([(line,) for line in lines], "value string")
    split = df.select(value, layout.head(value).alias("head"), layout.split(value).alias("parts")).localCheckpoint()
    rows = split.select(value, "head", parts, utc("UTC").alias("utc"), utc("Europe/Berlin").alias("berlin")).collect()
    return {row["value"]: row for row in rows}


@pytest.fixture(scope="module")
def json_rows(spark):
    return _observe(spark, json_lines, [line for line, _, _ in JSON_CASES.values()] + OTHER_EXAMPLES_AND_JUNK)


@pytest.fixture(scope="module")
def logfmt_rows(spark):
    return _observe(spark, logfmt, [line for line, _, _ in LOGFMT_CASES.values()] + LOGFMT_NOT_HEADS)


def _check(row, fields, ts):
    ts_text, level, logger, thread, message = fields
    assert row["head"] is True
    assert dict(zip(FIELDS, row["parts"])) == dict(zip(FIELDS, [ts_text, level, logger, thread, None, message]))
    assert (row["utc"], row["berlin"]) == ts


@pytest.mark.parametrize("name", list(JSON_CASES))
def test_json_family_fields_and_utc(json_rows, name):
    line, fields, ts = JSON_CASES[name]
    _check(json_rows[line], fields, ts)
    assert json_lines.sniff([line])


@pytest.mark.parametrize("line", OTHER_EXAMPLES_AND_JUNK)
def test_json_head_rejects_other_lines(json_rows, line):
    assert not json_rows[line]["head"]
    assert not json_lines.sniff([line])


@pytest.mark.parametrize("name", list(LOGFMT_CASES))
def test_logfmt_fields_and_utc(logfmt_rows, name):
    line, fields, ts = LOGFMT_CASES[name]
    _check(logfmt_rows[line], fields, ts)
    assert logfmt.sniff([line]) and line[0] in logfmt.FIRST_CHARS


@pytest.mark.parametrize("line", LOGFMT_NOT_HEADS)
def test_logfmt_rejects_other_lines(logfmt_rows, line):
    assert not logfmt_rows[line]["head"]
    assert not logfmt.sniff([line])


def test_logfmt_example_is_its_own_and_no_other_layouts():
    assert logfmt.sniff([logfmt.EXAMPLE])
    for layout in (log4j, logback, spring_boot, json_lines, librdkafka):
        assert not layout.sniff([logfmt.EXAMPLE]), layout.NAME
