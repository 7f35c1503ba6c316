"""logfmt lines: ``time=2021-03-01T10:00:00.515Z level=info logger=.. thread=main msg="..."``.

A head is a line made only of ``key=value`` pairs (values bare, or quoted with ``\\"``,
``\\\\``, ``\\n``, ``\\t`` escapes) with a ``msg``/``message`` pair. Fields, by key:
time ``time``/``ts``/``timestamp``/``t`` (ISO text, epoch seconds or milliseconds);
level ``level``/``lvl``/``severity`` (log15's ``dbug``/``eror``/``crit`` too); logger
``logger``, else ``caller``, else ``name``; thread ``thread``; message ``msg``/``message``,
with ``stacktrace``/``stack_trace`` appended. The first pair with a key counts.
A franz-go group record (Go's ``log/slog`` through ``kslog``: ``msg=synced group=g
assigned="t[0 1]"``) keeps its client's pairs in the message, in ``kgo.BasicLogger``'s form
(``synced; group: g, assigned: t[0 1]``: ``_common.franz_go_text``).

A record is one line: multi-line text is escaped inside its quoted value.
Native Spark regex functions only.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from . import _common as c

NAME = "logfmt"
DESCRIPTION = 'logfmt key=value lines: time=.. level=.. logger=.. thread=.. msg=".."'
EXAMPLE = (
    "time=2024-03-11T14:02:17.418Z level=info logger=org.apache.kafka.clients.consumer.internals.ConsumerCoordinator "
    'thread=main msg="[Consumer clientId=consumer-orders-app-1, groupId=orders-app] (Re-)joining group"'
)
FIRST_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_@"

KEY = r"[A-Za-z_@][\w.@/-]*"
VALUE = r'(?:"(?:[^"\\]++|\\.)*+"|[^\s"]*+)'
"""A quoted value (possessive: no backtracking into it) or a bare one."""
PAIR = rf"{KEY}={VALUE}"
_GAP = r"[ \t]+"
HEAD = rf"^(?:{PAIR}{_GAP})*?(?:msg|message)={VALUE}(?:{_GAP}{PAIR})*+[ \t]*$"
"""Only pairs, one of them the message."""

TIME_KEYS = ("time", "ts", "timestamp", "t")
LEVEL_KEYS = ("level", "lvl", "severity")
LOGGER_KEYS = (("logger",), ("caller",), ("name",))
THREAD_KEYS = ("thread",)
MESSAGE_KEYS = ("msg", "message")
STACK_KEYS = ("stacktrace", "stack_trace")
LEVEL_NAMES = {
    "DBUG": "DEBUG",
    "DBG": "DEBUG",
    "EROR": "ERROR",
    "ERR": "ERROR",
    "CRIT": "FATAL",
    "TRCE": "TRACE",
    "TRC": "TRACE",
    "WRN": "WARN",
    "INF": "INFO",
    "FTL": "FATAL",
    "PANIC": "FATAL",
}
"""Short level names (log15, zerolog) in log4j's names; the rest are upper-cased later."""
_BACKSLASH = "\u0002"


def value_of(line: Column, keys: tuple[str, ...]) -> Column:
    """The raw value (quotes kept) of the first pair whose key is one of ``keys``, else null.

    The regex walks whole pairs from the line's start, so a key inside a quoted value never counts.
    """
    pattern = rf"^(?:{PAIR}{_GAP})*?(?:{'|'.join(keys)})(={VALUE})"
    return F.substring(F.nullif(F.regexp_extract(line, pattern, 1), F.lit("")), 2, 1 << 30)


def unquote(raw: Column) -> Column:
    """A bare value as is; a quoted one without its quotes and with its escapes resolved."""
    inner = F.regexp_replace(raw, r'(?s)^"(.*)"$', "$1")
    text = F.regexp_replace(inner, r"\\\\", _BACKSLASH)
    for escape, char in ((r'\\"', '"'), (r"\\n", "\n"), (r"\\t", "\t"), (r"\\r", "\r")):
        text = F.regexp_replace(text, escape, char)
    text = F.regexp_replace(text, _BACKSLASH, r"\\")
    return F.when(raw.startswith('"'), text).otherwise(raw)


def field(line: Column, keys: tuple[str, ...]) -> Column:
    return unquote(value_of(line, keys))


def head(value: Column) -> Column:
    """A logfmt line with a message (cheap substring test first)."""
    cheap = value.contains("msg=") | value.contains("message=")
    return cheap & value.rlike(HEAD)


def sniff(sample_lines) -> bool:
    return c.sniff_regex(HEAD, sample_lines)


def _level(line: Column) -> Column:
    level = field(line, LEVEL_KEYS)
    names = F.create_map(*[F.lit(x) for pair in LEVEL_NAMES.items() for x in pair])
    return F.coalesce(names[F.upper(level)], level)


def franz_go_record(line: Column) -> Column:
    """A franz-go group record: ``msg`` is one of its messages and a ``group`` pair follows (or a
    ``why`` that names one: ``_common.FRANZ_GO_FETCHED``)."""
    message = rf'(?:^|[ \t])msg=(?:"{c.FRANZ_GO_WORDS}"|{c.FRANZ_GO_WORDS})[ \t]'
    positions = line.contains(f' why="{c.FRANZ_GO_FETCHED}') & line.rlike(rf'(?:^|[ \t])msg="{c.FRANZ_GO_POSITIONS}"[ \t]')
    return (line.contains(" group=") & line.rlike(message)) | positions


def pairs(line: Column) -> tuple[Column, Column]:
    """The keys and the values (unquoted) of a line's pairs, in order. The line is only pairs
    (``HEAD``), so each match starts where the one before ended: a key inside a quoted value
    is never one."""
    keys = F.regexp_extract_all(line, F.lit(f"({KEY})={VALUE}"), F.lit(1))
    values = F.regexp_extract_all(line, F.lit(f"{KEY}=({VALUE})"), F.lit(1))
    return keys, F.transform(values, unquote)


def split(value: Column) -> Column:
    message, stack = c.franz_go_text(franz_go_record(value), field(value, MESSAGE_KEYS), *pairs(value)), field(value, STACK_KEYS)
    return F.array(
        field(value, TIME_KEYS),
        _level(value),
        F.coalesce(*[field(value, keys) for keys in LOGGER_KEYS]),
        field(value, THREAD_KEYS),
        F.lit(None).cast("string"),
        F.when(stack.isNull(), message).otherwise(F.concat_ws("\n", message, stack)),
    )


to_utc = c.any_to_utc
