"""Application layouts with the logger before the message: logback, log4j ``%d %-5p %c - %m``.

Covers ``2018-10-23 08:27:07,684 INFO  org.apache...ConsumerCoordinator - msg`` (the
KAFKA-7672 report), ``%d [%thread] %-5level %logger{36} - %msg`` and
``%d %-5level [%thread] %logger - %msg``, and the Kafka Streams quickstart's time-only
``%d{HH:mm:ss,SSS} %-5p %-60c %x - %m`` (no date: its timestamps stay null and are reported).
Loggers may be abbreviated (``o.a.k.c.c.i.ConsumerCoordinator``).
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from . import _common as c

NAME = "logback"
DESCRIPTION = "Logback / log4j application layout: %d %-5level [%thread] %logger - %msg"
EXAMPLE = (
    "2018-10-23 08:27:07,684 INFO  org.apache.kafka.clients.consumer.internals.ConsumerCoordinator - "
    "[Consumer clientId=AuditTrailBatch-StreamThread-1-consumer, groupId=AuditTrailBatch] "
    "Revoking previously assigned partitions [AuditTrailBatch-0-5]"
)
FIRST_CHARS = "0123456789"
_THREAD = r"\[([^\]\x01]*)\]"
HEAD = (
    rf"(?s)^({c.ISO_DATETIME}|{c.TIME_OF_DAY}) +(?:{_THREAD} +)?({c.LEVELS}) +(?:{_THREAD} +)?"
    rf"({c.LOGGER}) +- (.*)$"
)
TEMPLATE = c.replacement(ts_text="$1", level="$3", logger="$5", thread="$2$4", message="$6")


def sniff(sample_lines) -> bool:
    return c.sniff_regex(HEAD, sample_lines)


SPLIT = (HEAD, TEMPLATE)


def split(value: Column) -> Column:
    return c.split_fields(value, *SPLIT)


def to_utc(ts_text: Column, tz: Column) -> Column:
    """Dated text as in ISO form; time-only text (quickstart layout) gives null."""
    return F.when(ts_text.rlike(r"^\d{4}-"), c.iso_to_utc(ts_text, tz))
