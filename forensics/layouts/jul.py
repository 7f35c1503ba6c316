"""java.util.logging's ``SimpleFormatter`` in its default format, a record's head over two lines:

    Jul 17, 2024 1:50:29 PM org.apache.kafka.clients.consumer.internals.ConsumerCoordinator onJoinComplete
    INFO: [Consumer clientId=consumer-orders-app-1, groupId=orders-app] Adding newly assigned partitions: orders-0

(``%1$tb %1$td, %1$tY %1$tl:%1$tM:%1$tS %1$Tp %2$s%n%4$s: %5$s%6$s%n``): the date in English,
the hour of 12 and ``AM``/``PM``, the caller's class and method (SLF4J's ``slf4j-jdk14``, which a
Kafka client logs through where an application uses no other backend, names the class that
called the logger), then the level and the message. An inner class's ``$Handler`` is cut off the
logger, so that ``AbstractCoordinator$FindCoordinatorResponseHandler`` is ``AbstractCoordinator``'s
line. Times carry no zone: the source's. Ingest joins the second line to the first
(``SECOND_LINE``) before the head is split; the rest of the record (a stack trace) continues it.
"""

from __future__ import annotations

from pyspark.sql import Column

from . import _common as c

NAME = "jul"
DESCRIPTION = "java.util.logging SimpleFormatter: date, caller class and method; then LEVEL: msg"
EXAMPLE = (
    "Jul 17, 2024 1:50:29 PM org.apache.kafka.clients.consumer.internals.AbstractCoordinator sendJoinGroupRequest\n"
    "INFO: [Consumer clientId=consumer-orders-app-1, groupId=orders-app] (Re-)joining group"
)
FIRST_CHARS = "ADFJMNOS"
_DATE = r"[A-Z][a-z]{2} \d\d?, \d{4} \d\d?:\d\d:\d\d [AP]M"
_LEVEL = c.JUL_LEVELS
SECOND_LINE = rf"(?:{_LEVEL}): "
"""The second line of a record's head: the level, a colon, the message."""
START = rf"^{_DATE} [A-Za-z_$][\w.$]*(?: [\w$<>-]+)?(?:\n|$)"
HEAD = rf"(?s)^({_DATE}) ([A-Za-z_][\w.]*)[\w$]*(?: [\w$<>-]+)?(?:\n({_LEVEL}): )?(.*)$"
TEMPLATE = c.replacement(ts_text="$1", level="$3", logger="$2", message="$4")
SPLIT = (HEAD, TEMPLATE)


def sniff(sample_lines) -> bool:
    return c.sniff_regex(START, sample_lines)


def split(value: Column) -> Column:
    return c.split_fields(value, *SPLIT)


to_utc = c.any_to_utc
