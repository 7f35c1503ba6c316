"""Tomcat's ``OneLineFormatter`` (``org.apache.juli``), the formatter Tomcat's own
``conf/logging.properties`` gives its console (``catalina.out``), one record a line:

    11-Mar-2024 14:02:17.418 INFO [orders-listener-0] org.apache.kafka.clients.consumer.internals.ConsumerCoordinator.onJoinPrepare [Consumer clientId=..] Revoke previously assigned partitions orders-0

The default time format (``dd-MMM-yyyy HH:mm:ss`` and the milliseconds; month names in English),
java.util.logging's level, the thread, then the caller's class and method joined by a dot (SLF4J's
``slf4j-jdk14`` names the class that called the logger), then the message; a stack trace follows
on lines indented by a tab. The method is cut off the logger, and an inner class's ``$Handler``
too, so that ``AbstractCoordinator$2.onSuccess`` is ``AbstractCoordinator``'s line. Times carry no
zone: the source's. A ``timeFormat`` of one's own is not read here.
"""

from __future__ import annotations

from pyspark.sql import Column

from . import _common as c

NAME = "tomcat"
DESCRIPTION = "Tomcat's OneLineFormatter (catalina.out): dd-MMM-yyyy time, JUL level, [thread], class.method, message"
EXAMPLE = (
    "11-Mar-2024 14:02:17.418 INFO [orders-listener-0] org.apache.kafka.clients.consumer.internals.AbstractCoordinator.joinGroupIfNeeded "
    "[Consumer clientId=consumer-orders-app-1, groupId=orders-app] (Re-)joining group"
)
FIRST_CHARS = "0123"
_DATE = r"\d\d-[A-Z][a-z]{2}-\d{4} \d\d:\d\d:\d\d(?:\.\d{3})?"
_LEVEL = c.JUL_LEVELS
START = rf"^{_DATE} (?:{_LEVEL}) \["
HEAD = rf"(?s)^({_DATE}) ({_LEVEL}) \[([^\]\x01]*)\] ([A-Za-z_][\w.]*?)(?:\$[\w$]*)?\.[\w$<>-]+ (.*)$"
TEMPLATE = c.replacement(ts_text="$1", level="$2", thread="$3", logger="$4", message="$5")
SPLIT = (HEAD, TEMPLATE)


def sniff(sample_lines) -> bool:
    return c.sniff_regex(START, sample_lines)


def split(value: Column) -> Column:
    return c.split_fields(value, *SPLIT)


to_utc = c.any_to_utc
