"""Go's standard ``log`` package with its default flags (``log.LstdFlags``, to the microsecond
with ``log.Lmicroseconds``) behind an application's prefix: ``[sarama] 2019/07/15 03:11:40 msg``.

segmentio/kafka-go and Sarama log through any ``Printf``-er, most often a standard logger (Sarama's
README: ``log.New(os.Stdout, "[sarama] ", log.LstdFlags)``). The prefix, the application's own
text, names no logger of the client's: the record has none; Go's log writes no level, so a line with a level after its time is another layout's
(``generic``'s slashed dates). A head whose text opens a Go or Ruby client's group line
(``_common.GO_RUBY_OPENINGS``) is a Kafka record whatever else it holds (``KAFKA_LINE``): those
clients name no logger and their words need not hold ingest's cheap Kafka markers.
"""

from __future__ import annotations

from pyspark.sql import Column

from . import _common as c

NAME = "go_log"
DESCRIPTION = "Go's standard log: [prefix] yyyy/MM/dd HH:mm:ss[.micros] msg"
EXAMPLE = "[sarama] 2024/03/11 14:02:17 client/coordinator coordinator for consumergroup orders-app is #2 (kafka-2:9092)"
FIRST_CHARS = "[0123456789"
_PREFIX = r"(?:\[([\w.@-]+)\] )?"
"""The application's prefix (``[sarama] ``), group 1."""
_TIME = r"(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?) "
_NO_LEVEL = rf"(?![^\n]{{0,40}}?(?<![\w-])(?:{c.LEVELS})(?![\w-]))"
"""No level near the start of the text: a slashed-date layout with a level is ``generic``'s."""
HEAD = rf"(?s)^{_PREFIX}{_TIME}{_NO_LEVEL}(.*)$"
START = rf"^{_PREFIX}{_TIME}{_NO_LEVEL}"
TEMPLATE = c.replacement(ts_text="$2", message="$3")
SPLIT = (HEAD, TEMPLATE)
KAFKA_LINE = rf"^{_PREFIX}{_TIME}(?:{c.GO_RUBY_OPENINGS})"
"""A line of this layout whose text opens a Go or Ruby client's group line: a Kafka record."""


def sniff(sample_lines) -> bool:
    return c.sniff_regex(START, sample_lines)


def split(value: Column) -> Column:
    return c.split_fields(value, *SPLIT)


to_utc = c.any_to_utc
