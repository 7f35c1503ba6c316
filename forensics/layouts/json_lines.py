"""One JSON object per line, as logstash-logback-encoder and ECS loggers write them.

Field names tried, in order: timestamp ``@timestamp``/``timestamp``/``time`` (ISO text or
epoch millis); level ``level``/``log.level``/``log: {level}``/``severity``; logger
``logger_name``/``log.logger``/``log: {logger}``/``logger``; thread ``thread_name``/
``process.thread.name``/``process: {thread: {name}}``/``thread``; message ``message``/``msg``;
stack trace ``stack_trace``/``error.stack_trace``/``error: {stack_trace}``, appended to the message.
"""

from __future__ import annotations

import json

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from . import _common as c

NAME = "json_lines"
DESCRIPTION = "JSON lines (logstash / ECS fields: @timestamp, level, logger_name, thread_name, message)"
EXAMPLE = (
    '{"@timestamp":"2024-03-11T14:02:17.418Z","level":"INFO","thread_name":"main",'
    '"logger_name":"org.apache.kafka.clients.consumer.internals.ConsumerCoordinator",'
    '"message":"[Consumer clientId=consumer-orders-app-1, groupId=orders-app] (Re-)joining group"}'
)
FIRST_CHARS = "{"

_FLAT = [
    "@timestamp", "timestamp", "time", "level", "log.level", "severity", "logger_name", "log.logger",
    "logger", "thread_name", "process.thread.name", "thread", "message", "msg", "stack_trace",
    "error.stack_trace",
]
_S = StringType()
SCHEMA = StructType(
    [StructField(name, _S) for name in _FLAT]
    + [
        StructField("log", StructType([StructField("level", _S), StructField("logger", _S)])),
        StructField("process", StructType([StructField("thread", StructType([StructField("name", _S)]))])),
        StructField("error", StructType([StructField("stack_trace", _S)])),
    ]
)
_MESSAGE_KEYS = ('"message"', '"msg"')


def sniff(sample_lines) -> bool:
    lines = [line for line in sample_lines if line.strip()]
    return bool(lines) and sum(_is_record(line) for line in lines) >= max(1, 0.3 * len(lines))


def _is_record(line: str) -> bool:
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    return isinstance(obj, dict) and ("message" in obj or "msg" in obj)


def _parsed(value: Column) -> Column:
    return F.from_json(value, SCHEMA, {"mode": "PERMISSIVE"})


def head(value: Column) -> Column:
    """A JSON object line with a message field (checked without a full parse first)."""
    cheap = value.startswith("{") & (value.contains(_MESSAGE_KEYS[0]) | value.contains(_MESSAGE_KEYS[1]))
    record = _parsed(value)
    return cheap & F.coalesce(record["message"], record["msg"]).isNotNull()


def split(value: Column) -> Column:
    r = _parsed(value)
    message = F.coalesce(r["message"], r["msg"])
    stack = F.coalesce(r["stack_trace"], r.getField("error.stack_trace"), r["error"]["stack_trace"])
    return F.array(
        F.coalesce(r.getField("@timestamp"), r["timestamp"], r["time"]),
        F.coalesce(r["level"], r.getField("log.level"), r["log"]["level"], r["severity"]),
        F.coalesce(r["logger_name"], r.getField("log.logger"), r["log"]["logger"], r["logger"]),
        F.coalesce(r["thread_name"], r.getField("process.thread.name"), r["process"]["thread"]["name"], r["thread"]),
        F.lit(None).cast("string"),
        F.when(stack.isNull(), message).otherwise(F.concat_ws("\n", message, stack)),
    )


def to_utc(ts_text: Column, tz: Column) -> Column:
    """ISO text (zone-less read in ``tz``) or epoch milliseconds."""
    millis = F.timestamp_millis(ts_text.try_cast("long"))
    return F.when(ts_text.rlike(r"^\d{12,14}$"), millis).otherwise(c.iso_to_utc(ts_text, tz))
