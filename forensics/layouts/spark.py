"""Apache Spark's default log layout, and Hadoop's: the Kafka consumer of a Spark driver or
executor (Structured Streaming's Kafka source, its ``spark-kafka-source-..`` groups; DStreams;
Databricks, EMR and Dataproc driver logs) writes through it:

    24/03/11 14:02:17 INFO ConsumerCoordinator: [Consumer clientId=.., groupId=..] (Re-)joining group

Spark's ``log4j2-defaults.properties`` (3.3 to 4.x; the log4j 1 template before it):
``%d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex``, the logger's simple name; Hadoop's console layout
writes ``%c{2}`` (``internals.ConsumerCoordinator``). The year has two digits (read as 20yy),
the time no zone (the source's) and mostly no fraction (a team's ``HH:mm:ss.SS`` has one); a
stack trace follows on its own lines.
"""

from __future__ import annotations

import re

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..registry import literal_map
from . import _common as c

NAME = "spark"
DESCRIPTION = "Spark's and Hadoop's default log4j layout: yy/MM/dd HH:mm:ss, level, logger's last names, ': ', message"
EXAMPLE = (
    "24/03/11 14:02:17 INFO ConsumerCoordinator: "
    "[Consumer clientId=consumer-spark-kafka-source-0f3c-driver-0-1, groupId=spark-kafka-source-0f3c-driver-0] (Re-)joining group"
)
FIRST_CHARS = "0123456789"
_DATE = r"\d\d/\d\d/\d\d \d\d:\d\d:\d\d(?:[.,]\d{1,3})?"
_BEFORE_LOGGER = rf"^{_DATE} (?:{c.LEVELS}) +"
START = rf"{_BEFORE_LOGGER}{c.LOGGER}: "
HEAD = rf"(?s)^({_DATE}) ({c.LEVELS}) +({c.LOGGER}): (.*)$"
TEMPLATE = c.replacement(ts_text="$1", level="$2", logger="$3", message="$4")

KAFKA_CLASSES = {
    "org.apache.kafka.clients.consumer.internals": (
        "AbstractCoordinator",
        "ConsumerCoordinator",
        "ConsumerUtils",
        "SubscriptionState",
        "Fetcher",
        "FetchCollector",
        "CompletedFetch",
        "AbstractStickyAssignor",
        "ConsumerRebalanceListenerInvoker",
        "LegacyKafkaConsumer",
        "ClassicKafkaConsumer",
        "AsyncKafkaConsumer",
        "MembershipManagerImpl",
        "ConsumerMembershipManager",
        "CommitRequestManager",
        "HeartbeatRequestManager",
        "ConsumerHeartbeatRequestManager",
        "CoordinatorRequestManager",
    ),
    "org.apache.kafka.clients.consumer": ("KafkaConsumer", "ConsumerConfig"),
    "org.apache.kafka.clients.producer": ("KafkaProducer", "ProducerConfig"),
    "org.apache.kafka.clients.producer.internals": ("TransactionManager", "Sender"),
    "org.apache.kafka.common.utils": ("AppInfoParser",),
}
"""The Java client's classes by package, as Spark's ``%c{1}`` and Hadoop's ``%c{2}`` shorten their
loggers: a record's logger is their full name again, so that it is a Kafka record by its logger
as in any other layout. Some of their lines carry no log-context prefix to tell them by
(``ConsumerUtils``' committed offsets from Kafka 3.7, which Spark 4's client is; every line
before Kafka 1.0)."""
FULL_NAMES = {
    short: f"{package}.{name}"
    for package, names in KAFKA_CLASSES.items()
    for name in names
    for short in (name, f"{package.rpartition('.')[2]}.{name}")
}
"""``ConsumerCoordinator`` and ``internals.ConsumerCoordinator`` -> the class's full name."""
KAFKA_LINE = rf"{_BEFORE_LOGGER}(?:{'|'.join(re.escape(short) for short in FULL_NAMES)}): "
"""A line of this layout whose logger is one of ``KAFKA_CLASSES``: a Kafka record whatever its message."""


def head(value: Column) -> Column:
    """``START``, tried only on a line whose third character is the date's ``/``: most lines that
    open with a digit are ISO dates, which one character tells apart."""
    return (F.substring(value, 3, 1) == "/") & value.rlike(START)


def sniff(sample_lines) -> bool:
    return c.sniff_regex(START, sample_lines)


def split(value: Column) -> Column:
    """The fields of ``HEAD``, the logger of a Kafka class (``FULL_NAMES``) by its full name."""
    parts = c.split_fields(value, HEAD, TEMPLATE)
    logger = parts[c.FIELDS.index("logger")]
    full = F.coalesce(literal_map(FULL_NAMES)[logger], logger)
    return F.array(*[full if name == "logger" else parts[i] for i, name in enumerate(c.FIELDS)])


def to_utc(ts_text: Column, tz: Column) -> Column:
    """``yy/MM/dd HH:mm:ss[.SSS]`` in ``tz``, the century being this one."""
    return c.iso_to_utc(F.concat(F.lit("20"), F.translate(ts_text, "/", "-")), tz)
