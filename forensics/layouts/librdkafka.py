"""librdkafka's native log line: ``%7|1600000000.123|CGRPSTATE|rdkafka#consumer-1| [thrd:main]: msg``,
and the line of the log callback in librdkafka's examples, which C and C++ programs copy:
``1600000000.123 RDKAFKA-7-CGRPSTATE: rdkafka#consumer-1: [thrd:main]: msg``.

Fields: syslog level (0-7), epoch seconds with millis (UTC by definition), facility (kept as
the logger), the client handle name (kept as the client), the internal thread, the message.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from . import _common as c

NAME = "librdkafka"
DESCRIPTION = "librdkafka native log: %LEVEL|epoch.ms|FACILITY|handle| [thrd:name]: msg"
EXAMPLE = (
    '%7|1600000000.123|CGRPSTATE|rdkafka#consumer-1| [thrd:main]: Group "orders-app" changed state init -> query-coord (join-state init)'
)
FIRST_CHARS = "%0123456789"
HEAD = (
    r"(?s)^(?:%(\d)\|(\d{9,11}(?:\.\d{1,6})?)\|([A-Za-z0-9_]+)\|([^|\x01]*)\| "
    r"|(\d{9,11}\.\d{3}) RDKAFKA-(\d)-([A-Za-z0-9_]+): ([^:\x01]*): )"
    r"(?:\[thrd:([^\]\x01]*)\]: )?(.*)$"
)
TEMPLATE = c.replacement(ts_text="$2$5", level="$1$6", logger="$3$7", client="$4$8", thread="$9", message="$10")

SYSLOG_LEVELS = ("FATAL", "FATAL", "FATAL", "ERROR", "WARN", "INFO", "INFO", "DEBUG")
"""syslog severities 0-7 (emerg..debug) in log4j's names; 5 (notice) reads as INFO."""
_HANDLE = r"[^\]:\x01]*#(?:consumer|producer)-\d+"
THREAD = r"\[thrd:[^\]\x01]*\]: "
"""librdkafka's internal thread, ``[thrd:main]: ``, which opens the text of each of its lines."""
LOG_CALLBACK = (
    rf"(?:([A-Z][A-Z0-9_]*) \[({_HANDLE})\] |RDKAFKA-\d-([A-Z][A-Z0-9_]*): ({_HANDLE}): "
    rf"|\[([A-Z][A-Z0-9_]*)\] ({_HANDLE}): (?={THREAD})|rdkafka: (?={THREAD}))"
    rf"(?:{THREAD})?"
)
"""The opening of a librdkafka line an application's log callback hands to its own logger:
facility and handle name (``client.id#consumer-N``; groups 1-2, 3-4 or 5-6), then ``[thrd:name]: ``
and the message. confluent-kafka-python's ``logger=`` writes ``"%s [%s] %s" % (facility, handle,
text)`` (0.11.4-2.15); programs that copied librdkafka's example callback into their own logger
``RDKAFKA-7-FACILITY: handle: text``; Microsoft.Extensions.Logging adapters for Confluent.Kafka
``[FACILITY] handle: text``; rdkafka-ruby (Karafka) ``rdkafka: text``, without both."""
DECORATED = rf"[^\n\x01]{{0,100}}?(?:([\w.-]*#(?:consumer|producer)-\d+)\W{{0,4}}?)?(\"?){THREAD}"
"""A librdkafka line that an application's own log handler decorated in its own way, found by
``[thrd:name]: `` within its first 100 characters (a .NET or Go program's ``SetLogHandler``:
``Debug | [thrd:main]: ..``, ``[7] rdkafka#consumer-1 > [thrd:main]: ..``, ``From(orders#consumer-1)
[thrd:main]: ..``): the handle just before it, if any, is group 1; no facility. Group 2 is a
quote that opens the text where Serilog rendered it as a string property (its default),
``"rdkafka#consumer-5": "[thrd:main]: Group \\"orders\\" ..\"; level: Debug``. Tried after
``LOG_CALLBACK``, only on texts holding ``[thrd:``."""


def sniff(sample_lines) -> bool:
    return c.sniff_regex(HEAD, sample_lines)


def split(value: Column) -> Column:
    parts = c.split_fields(value, HEAD, TEMPLATE)
    names = F.array(*[F.lit(n) for n in SYSLOG_LEVELS])
    level = F.element_at(names, parts[1].cast("int") + 1)
    return F.array(parts[0], level, parts[2], parts[3], parts[4], parts[5])


def to_utc(ts_text: Column, tz: Column) -> Column:
    """Epoch seconds are UTC whatever the source's zone."""
    return F.timestamp_micros(F.round(ts_text.cast("decimal(20,6)") * 1_000_000).cast("long"))
