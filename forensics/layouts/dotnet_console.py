"""Microsoft.Extensions.Logging's console in its default ``simple`` format (.NET 5+; a .NET
program's Confluent.Kafka log handler writes librdkafka's lines through it):

    info: Orders.KafkaLog[0]
          rdkafka#consumer-1: [thrd:main]: Group "orders-app" changed join state wait-sync -> steady (state up)

A head over two lines: the level in four letters (``trce dbug info warn fail crit``), the
category (kept as the logger) and the event id, then the message indented by six spaces, as is
each further line of it. ``SingleLine = true`` puts the message after the event id on the same
line. By default the format writes no time, and a record is dated by its wrapper (a container's
runtime dates each line). ``TimestampFormat`` writes one before the level, as the format string
says, often in brackets (``"yyyy-MM-dd HH:mm:ss "``, ``"[HH:mm:ss] "``, Microsoft's own example):
any ``ANY_TIMESTAMP`` form is read there; a time of day alone names no day, and the wrapper's
time dates the record. Such lines open with digits, as most layouts' lines do: the layouts before
this one in ``LAYOUTS`` have taken theirs, and ``head`` looks for the level before its regex.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from . import _common as c

NAME = "dotnet_console"
DESCRIPTION = ".NET Microsoft.Extensions.Logging console: level: Category[event id], then the message indented"
EXAMPLE = (
    'info: Orders.KafkaLog[0]\n      rdkafka#consumer-1: [thrd:main]: Group "orders-app" changed join state wait-sync -> steady (state up)'
)
FIRST_CHARS = "tdiwfc0123456789["
LEVELS = {"trce": "TRACE", "dbug": "DEBUG", "info": "INFO", "warn": "WARN", "fail": "ERROR", "crit": "FATAL"}
_STAMP = rf"\[?(?P<ts>{c.ANY_TIMESTAMP})\]? *"
"""``TimestampFormat``'s time, if any (in brackets, as the format may write it)."""
_OPENING = rf"(?:{_STAMP})?(?P<level>{'|'.join(LEVELS)}): (?P<logger>[^\s\[\x01]+)\[-?\d+\]"
SECOND_LINE = " {6}(?! )"
"""The second line of a record's head: the message, six spaces in."""
START, _ = c.java_pattern(rf"^{_OPENING}(?: |\n|$)")
HEAD, _GROUPS = c.java_pattern(rf"(?s)^{_OPENING}(?: |\n {{6}}(?! ))?(?P<message>.*)$")
_NUMBER = {name: f"${number}" for name, number in _GROUPS}
TEMPLATE = c.replacement(ts_text=_NUMBER["ts"], level=_NUMBER["level"], logger=_NUMBER["logger"], message=_NUMBER["message"])


def head(value: Column) -> Column:
    """``START``, tried only on a line whose first ``: `` closes a level (``dbug: ``): one
    substring scan first, since a dated head opens with digits, as the lines of most layouts do
    (no form of a time holds ``: ``)."""
    level_at = F.locate(": ", value) - 4
    return (level_at >= 1) & value.substr(level_at, F.lit(4)).isin(*LEVELS) & value.rlike(START)


def sniff(sample_lines) -> bool:
    return c.sniff_regex(START, sample_lines)


def split(value: Column) -> Column:
    parts = c.split_fields(value, HEAD, TEMPLATE)
    level = F.create_map(*[F.lit(x) for pair in LEVELS.items() for x in pair])[parts[1]]
    return F.array(parts[0], level, parts[2], parts[3], parts[4], parts[5])


to_utc = c.any_to_utc
