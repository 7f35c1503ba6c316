"""Microsoft.Extensions.Logging's console in its default ``simple`` format (.NET 5+; a .NET
program's Confluent.Kafka log handler writes librdkafka's lines through it):

    info: Orders.KafkaLog[0]
          rdkafka#consumer-1: [thrd:main]: Group "orders-app" changed join state wait-sync -> steady (state up)

A head over two lines: the level in four letters (``trce dbug info warn fail crit``), the
category (kept as the logger) and the event id, then the message indented by six spaces, as is
each further line of it. ``SingleLine = true`` puts the message after the event id on the same
line. The format writes no time: a record is dated by its wrapper (a container's runtime dates
each line). A ``TimestampFormat`` before the level is not read: its lines would open with digits,
as most layouts' lines do, and the cheap first-character gate would let every one of them in.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from . import _common as c

NAME = "dotnet_console"
DESCRIPTION = ".NET Microsoft.Extensions.Logging console: level: Category[event id], then the message indented"
EXAMPLE = (
    "info: Orders.KafkaLog[0]\n"
    '      rdkafka#consumer-1: [thrd:main]: Group "orders-app" changed join state wait-sync -> steady (state up)'
)
FIRST_CHARS = "tdiwfc"
LEVELS = {"trce": "TRACE", "dbug": "DEBUG", "info": "INFO", "warn": "WARN", "fail": "ERROR", "crit": "FATAL"}
_OPENING = rf"({'|'.join(LEVELS)}): ([^\s\[\x01]+)\[-?\d+\]"
SECOND_LINE = " {6}(?! )"
"""The second line of a record's head: the message, six spaces in."""
START = rf"^{_OPENING}(?: |\n|$)"
HEAD = rf"(?s)^{_OPENING}(?: |\n {{6}}(?! ))?(.*)$"
TEMPLATE = c.replacement(level="$1", logger="$2", message="$3")


def sniff(sample_lines) -> bool:
    return c.sniff_regex(START, sample_lines)


def split(value: Column) -> Column:
    parts = c.split_fields(value, HEAD, TEMPLATE)
    level = F.create_map(*[F.lit(x) for pair in LEVELS.items() for x in pair])[parts[1]]
    return F.array(parts[0], level, parts[2], parts[3], parts[4], parts[5])


to_utc = c.any_to_utc
