"""structlog's ``ConsoleRenderer`` (its development default, often kept in production), also for
the standard library's records it renders (``ProcessorFormatter``: kafka-python's, aiokafka's):

    2024-03-11T14:02:17.418000Z [info     ] Successfully joined group orders-app with generation 12 [kafka.coordinator]

Columns, each left out where the event has no such key: the ``TimeStamper``'s time, the level in
lower case padded inside its brackets to the longest level name, the event padded to 30
characters, the logger in brackets, then the event's other keys as ``key=value`` (a team's
context variables, on every record): left out of the message, as other layouts leave out the
MDC, so that the client's words end it. An exception follows on the lines after.
``add_log_level`` names ``log.exception()`` ``error``; ``log.warn()`` ``warning``. Times are the ``TimeStamper``'s ISO form, with ``Z`` where
it writes UTC, else in the source's zone. Colours, where the renderer wrote them, are stripped
before (``ingest``).
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from . import _common as c

NAME = "structlog_console"
DESCRIPTION = "structlog's ConsoleRenderer: time [level    ] event [logger] key=value"
EXAMPLE = "2024-03-11T14:02:17.418000Z [info     ] Successfully joined group orders-app with generation 12 [kafka.coordinator]"
FIRST_CHARS = "0123456789"
LEVELS = ("debug", "info", "warning", "warn", "error", "critical", "exception", "notset")
_FIRST_LETTERS = sorted({level[0] for level in LEVELS})
_OPENING = rf"(?P<ts>{c.ISO_DATETIME}) \[(?P<level>{'|'.join(LEVELS)}) *\] "
START, _ = c.java_pattern(f"^{_OPENING}")
HEAD, _GROUPS = c.java_pattern(rf"(?s)^{_OPENING}(?P<event>[^\n]*?)(?: +\[(?P<logger>{c.LOGGER})\](?: [\w.-]+=[^\n]*)?)? *(?P<rest>\n.*)?$")
_NUMBER = {name: f"${number}" for name, number in _GROUPS}
TEMPLATE = c.replacement(
    ts_text=_NUMBER["ts"], level=_NUMBER["level"], logger=_NUMBER["logger"], message=_NUMBER["event"] + _NUMBER["rest"]
)
SPLIT = (HEAD, TEMPLATE)
_LONGEST_STAMP = 36
"""Where the `` [`` after the time may be at the latest: after ``2024-03-11T14:02:17.418000123+01:00``."""


def head(value: Column) -> Column:
    """``START``, tried only where the first `` [`` comes after a time's length and before a
    lower-case letter of a level: one substring scan first, since these lines open with digits,
    as the lines of most layouts do."""
    bracket = F.locate(" [", value)
    return (bracket >= 20) & (bracket <= _LONGEST_STAMP) & value.substr(bracket + 2, F.lit(1)).isin(*_FIRST_LETTERS) & value.rlike(START)


def sniff(sample_lines) -> bool:
    return c.sniff_regex(START, sample_lines)


def split(value: Column) -> Column:
    return c.split_fields(value, *SPLIT)


to_utc = c.iso_to_utc
