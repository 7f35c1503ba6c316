"""Ruby's standard ``Logger`` with its default formatter:
``D, [2023-06-09T09:35:10.457572 #2162967] DEBUG -- progname: message``.

rdkafka-ruby (and Karafka on it) hands librdkafka's lines to this logger as
``rdkafka: [thrd:main]: ...``, without their facility (``events.prefix`` reads the rest). The
first letter repeats the severity; the process id, kept as the thread, tells forked workers
apart; the progname, often empty, is the logger. Ruby before 2.x wrote a space after the
microseconds. Times carry no zone: the source's. ruby-kafka (and Karafka 1.x on it) writes here too,
its consumer's lines opened by its tag (``KAFKA_LINE``).
"""

from __future__ import annotations

from pyspark.sql import Column

from . import _common as c

NAME = "ruby_logger"
DESCRIPTION = "Ruby Logger: L, [ISO #pid] LEVEL -- progname: msg"
EXAMPLE = (
    'D, [2023-06-09T09:35:10.457572 #2162967] DEBUG -- : rdkafka: [thrd:main]: Group "orders-app" '
    "changed join state wait-sync -> init (state up)"
)
FIRST_CHARS = "DIWEFA"
HEAD = rf"(?s)^[DIWEFA], \[({c.ISO_DATETIME}) +#(\d+)\] +(DEBUG|INFO|WARN|ERROR|FATAL|ANY) -- ([^\n\x01]*?): (.*)$"
START = rf"^[DIWEFA], \[{c.ISO_DATETIME} +#\d+\] "
KAFKA_LINE = rf"{START}+(?:DEBUG|INFO|WARN|ERROR|FATAL|ANY) -- [^\n\x01]*?: \[\[[^\]\n]*\] \{{[^{{}}\n]*\}}:\] "
"""A line whose message opens with the tag ruby-kafka's logger puts before a consumer's lines
(``[[<group>] {<topic>: <partitions>}:] ``, ``_common.GO_RUBY_OPENINGS``): a Kafka record, whatever words follow."""
TEMPLATE = c.replacement(ts_text="$1", level="$3", logger="$4", thread="$2", message="$5")
SPLIT = (HEAD, TEMPLATE)


def sniff(sample_lines) -> bool:
    return c.sniff_regex(HEAD, sample_lines)


def split(value: Column) -> Column:
    return c.split_fields(value, *SPLIT)


to_utc = c.iso_to_utc
