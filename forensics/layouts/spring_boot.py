"""Spring Boot's default console/file layout.

Boot 1.x/2.x: ``%d{yyyy-MM-dd HH:mm:ss.SSS} %5p ${PID} --- [%15.15t] %-40.40logger{39} : %m``;
Boot 3.x writes an ISO date with offset, and 3.2+ adds ``[app-name]`` before the thread and,
where Micrometer tracing runs, the correlation ids ``[<trace id>-<span id>]`` after it. Teams
add to it: Spring Cloud Sleuth's ``logging.pattern.level`` (``%5p [app,trace,span]``), and MDC
values as ``key=value`` before the level.
The thread is cut to its last 15 characters, so the Kafka prefix in the message is the better
source of the thread name.
"""

from __future__ import annotations

from pyspark.sql import Column

from . import _common as c

NAME = "spring_boot"
DESCRIPTION = "Spring Boot default layout: %d %5p PID --- [thread] logger : msg"
EXAMPLE = (
    "2024-03-11 14:02:17.418  INFO 41873 --- [-StreamThread-1] o.a.k.s.p.internals.StreamThread         : "
    "stream-thread [wordcount-app-StreamThread-1] State transition from PARTITIONS_ASSIGNED to RUNNING"
)
FIRST_CHARS = "0123456789"
HEAD = (
    rf"(?s)^({c.ISO_DATETIME}) +(?:[\w.-]+=[^\s=]* +)*({c.LEVELS}) +(?:\[[^\]\x01]*\] +)?\d+ +--- +(?:\[[^\]\x01]*\] +)?\[ *([^\]\x01]*)\] +"
    rf"(?:\[[0-9A-Fa-f, -]*\] +)?({c.LOGGER}) *: (.*)$"
)
TEMPLATE = c.replacement(ts_text="$1", level="$2", thread="$3", logger="$4", message="$5")


def sniff(sample_lines) -> bool:
    return c.sniff_regex(HEAD, sample_lines)


SPLIT = (HEAD, TEMPLATE)


def split(value: Column) -> Column:
    return c.split_fields(value, *SPLIT)


to_utc = c.iso_to_utc
