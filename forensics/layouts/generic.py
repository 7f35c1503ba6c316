"""Any team's own pattern layout, recognised by the parts of its first line, not by one regex.

A head is a timestamp at the start (optionally in brackets; any ``ANY_TIMESTAMP`` form: ISO
with or without ``T``, zone or fraction, ``%d{DATE}``, Kibana's, epoch, a time of day) and a
level token, with optional PID, thread and logger fields between them and the message, in the
orders logback / log4j2 / framework defaults write them, separated by spaces or `` | ``:

- ``%d | %-5level | [%thread] | %logger{36} | %msg`` (custom pipe layouts);
- ``%d %-5level [%thread] %logger{36}:%line - %msg`` and ``%logger{0}(%file:%line)``;
- ``%d{HH:mm:ss.SSS} [%t] %-5level %logger{36} - %msg`` (log4j2's default, no date);
- ``%d %-5p [%c{3.}] (%t) %s%e`` (Quarkus: abbreviated logger in brackets, thread in parentheses);
- ``%-5level [%d] %logger: %msg`` (Dropwizard: level first);
- ``%d - %logger - %level - %msg`` (fields between `` - ``, the logger before the level, as
  Python's logging cookbook writes it, where a logger may be a simple name);
- ``%d %level [%thread] %msg`` with no logger (Kafka identity then comes from the message's
  log-context prefix);
- ``%d{HH:mm:ss.SSS} [%level] [%logger:%line] [%thread] - %msg`` (a bracketed logger, then the thread);
- ``[%d{ISO8601}][%-5p][%-25c]`` (Logstash's own layout: fields glued, the logger padded);
- ``%d %p %m (%c) [%t]`` (Strimzi's brokers and Connect: Kafka's logger and the thread close the
  message; ingest takes them off it, ``records.LOGGER_IN_TEXT``);
- ``%d %-5p %-60c %x - %m`` (Flink's default: the logger padded, then the diagnostic context);
- ``%date [%level] from %logger in %thread - %message`` (Play's default file layout).

The layouts before this one in ``LAYOUTS`` keep their exact forms; this one takes what they miss.
A bracketed field that opens Kafka's log-context prefix (``[Consumer clientId=..``,
``[GroupCoordinator 0]: ``) is never a thread: it starts the message.
"""

from __future__ import annotations

import re

from pyspark.sql import Column

from . import _common as c

NAME = "generic"
DESCRIPTION = "Any layout of timestamp, level and optional thread / logger fields, by its parts"
EXAMPLE = (
    "2024-03-11 14:02:17.418 | INFO  | [main] | o.a.k.c.c.i.ConsumerCoordinator | "
    "[Consumer clientId=consumer-orders-app-1, groupId=orders-app] (Re-)joining group"
)
FIRST_CHARS = "0123456789[TDINWEFSC"

_SEP = r"(?:\s*\|\s*|\s+-\s+|\s+|(?<=\])(?=\[))"
"""Between fields: `` | ``, `` - ``, white space, or nothing between a ``]`` and a ``[`` (Logstash's ``[%d][%-5p][%-25c]``)."""
_LEVEL = rf"\[?\s*(?:{c.LEVELS})\s*\]?"
_NAME = r"(?:[A-Za-z_$][\w$]*\.)+[A-Za-z_$][\w$]*"
_KAFKA_PREFIX = f"(?:{'|'.join(re.escape(opening[1:]) for opening in c.BRACKETED_OPENINGS)})"
"""After a ``[``, the openings of Kafka's log-context prefixes (``_common.BRACKETED_OPENINGS``: a
client's, a Connect worker's, the group coordinator's in a broker): the message's start, never a thread."""
_KAFKAJS = rf"{c.KAFKAJS_NAMESPACES}\] [^\n]*{c.KAFKAJS_CONTEXT}"
"""After a ``[``, a KafkaJS namespace that opens its message (``_common.KAFKAJS_MESSAGE``), never a thread."""
_THREAD = rf"\[(?!{_NAME}(?::\d+)?\s*\])(?!{_KAFKA_PREFIX})(?!{_KAFKAJS})(?P<thread_a>[^\]\x01]*)\]"
_FUNCTION = r"(?::(?:[A-Za-z_]\w*|<module>))"
"""loguru's ``{name}:{function}:{line}``: the function between the logger and its line."""
_LOGGER = (
    rf"(?:\[(?P<logger_a>{_NAME})(?::\d+)?\s*\](?:{_SEP}\[(?!{_KAFKA_PREFIX})(?P<thread_c>[^\]\x01]*)\])?"
    rf"|(?P<logger_b>{_NAME}|[A-Za-z_$][\w$]*(?=\(|\s+[-:]\s))(?:{_FUNCTION}?:\d+|\([\w$]+\.java:\d+\))?"
    rf"|\((?P<logger_c>[\w$]+)\.java:\d+\)"
    rf"|from (?P<logger_e>{_NAME}) in (?P<thread_d>[^\x01]+?)(?=\s+-\s))"
)
_SIMPLE_NAME = r"[A-Za-z_$][\w$]*"
_DASHED_LEVEL = rf"\s+-\s+(?:{c.LEVELS})\s+-\s"
"""Python's ``%(asctime)s - %(name)s - %(levelname)s - %(message)s`` (the logging cookbook's):
there a logger may be a simple name (``__main__``, ``root``, ``BalanceListener``)."""
_END = r"(?:\s*[-:|](?=\s|$)\s*|\s+|$|(?<=\])(?=\[))"
_CONTEXT = rf"\s+(?:\[(?!{_KAFKA_PREFIX})[^\]\x01]*\]|\{{[^}}\x01]*\}})(?=\s+-\s)"
"""The diagnostic context between the logger and `` - ``: log4j's ``%x`` (NDC, ``[]`` when empty)
or ``%X`` (MDC, ``{}``), as Flink's default ``%-60c %x - %m`` writes it; left out of the message."""


def _level(group: str) -> str:
    return rf"\[?\s*(?P<{group}>{c.LEVELS})\s*\]?"


_HEAD_NAMED = (
    rf"(?s)^(?:{_level('level_a')}{_SEP})?\[?(?P<ts>{c.ANY_TIMESTAMP})\]?"
    rf"(?:{_SEP}\d+)?(?:{_SEP}---)?(?:{_SEP}(?P<logger_d>{_NAME}|{_SIMPLE_NAME}(?={_DASHED_LEVEL}))(?={_SEP}{_LEVEL}))?(?:{_SEP}{_level('level_b')})?(?:{_SEP}{_THREAD})?(?:{_SEP}{_level('level_c')})?"
    rf"(?:{_SEP}{_LOGGER})?(?:{_SEP}\((?P<thread_b>[^)\x01]*)\))?(?:{_CONTEXT})?{_END}(?P<message>.*)$"
)
HEAD, _GROUPS = c.java_pattern(_HEAD_NAMED)
_NUMBER = {name: f"${number}" for name, number in _GROUPS}
TEMPLATE = c.replacement(
    ts_text=_NUMBER["ts"],
    level=_NUMBER["level_a"] + _NUMBER["level_b"] + _NUMBER["level_c"],
    logger=_NUMBER["logger_a"] + _NUMBER["logger_b"] + _NUMBER["logger_c"] + _NUMBER["logger_d"] + _NUMBER["logger_e"],
    thread=_NUMBER["thread_a"] + _NUMBER["thread_b"] + _NUMBER["thread_c"] + _NUMBER["thread_d"],
    message=_NUMBER["message"],
)
START = (
    rf"^(?:{_LEVEL}{_SEP}\[?(?:{c.ANY_TIMESTAMP})\]?"
    rf"|\[?(?:{c.ANY_TIMESTAMP})\]?(?:{_SEP}(?:\d+|---|\[[^\]\x01]*\]|{_NAME}))*{_SEP}{_LEVEL}"
    rf"|(?:{c.ANY_TIMESTAMP})\s+-\s+{_SIMPLE_NAME}(?={_DASHED_LEVEL})\s+-\s+{_LEVEL})(?:\s|$|(?<=\]))"
)
"""A timestamp and a level at the start, in either order: enough to know a record begins."""


def sniff(sample_lines) -> bool:
    return c.sniff_regex(START, sample_lines)


SPLIT = (HEAD, TEMPLATE)


def split(value: Column) -> Column:
    return c.split_fields(value, *SPLIT)


to_utc = c.any_to_utc
