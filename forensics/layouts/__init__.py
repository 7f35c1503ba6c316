"""Log layouts: one module per layout, all registered in ``LAYOUTS``.

Each module exposes ``NAME``, ``DESCRIPTION``, ``EXAMPLE``, ``FIRST_CHARS`` (a cheap gate
tested before any regex), ``sniff(sample_lines) -> bool``, ``split(value) -> array column``
of the fields in ``FIELDS`` order, ``to_utc(ts_text, tz) -> timestamp column`` and either a
``HEAD`` regex (optionally a cheaper ``START`` regex that recognises the same lines) or a
``head(value) -> bool column``; ``SPLIT = (regex, template)`` may stand for ``split`` where one
``regexp_replace`` gives the fields; ``SECOND_LINE``, a regex of the line that completes a head
written over two lines (``jul``, ``dotnet_console``), which ingest joins to it before the split; a layout with neither (``message_only``) is only given by
ingest, never recognised from a line by itself.

A line is recognised per line, in the order of ``LAYOUTS``, so one file may mix layouts;
a file's layout is the one most of its records use.
"""

from __future__ import annotations

from functools import reduce
from types import ModuleType

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..registry import literal_map, registry
from . import (
    anchor,
    dotnet_console,
    generic,
    go_log,
    json_lines,
    jul,
    librdkafka,
    log4j,
    logback,
    logfmt,
    message_only,
    ruby_logger,
    spark,
    spring_boot,
    structlog_console,
    tomcat,
)
from ._common import FIELDS
from ._common import split_fields as split_by_regex

LAYOUTS: dict[str, ModuleType] = registry(
    "NAME",
    log4j,
    logback,
    spring_boot,
    json_lines,
    librdkafka,
    ruby_logger,
    jul,
    tomcat,
    spark,
    dotnet_console,
    logfmt,
    structlog_console,
    generic,
    go_log,
    message_only,
    anchor,
)
"""The built-in layouts in recognition order: the exact forms first, ``generic`` after them."""
ONE_LINE = (json_lines.NAME, logfmt.NAME)
"""Layouts whose records are one line each: nothing continues them."""
FALLBACK = generic.NAME
"""Tried after the exact layouts and after the wrappers (``ingest.wrappers``) have been peeled."""
NAMED_LOGGERS = (logback.NAME, spring_boot.NAME, jul.NAME, tomcat.NAME, librdkafka.NAME)
"""Layouts whose every record head names its logger (their ``HEAD`` requires one; librdkafka's
facility, whose lines are Kafka's by their layout). ``log4j``'s is optional: its heads name one
where they match ``log4j.NAMED_LOGGER``."""


def with_user_layout(user) -> dict:
    """``LAYOUTS`` with a user's compiled layout (``--layout``) tried first; ``LAYOUTS`` when None."""
    return LAYOUTS if user is None else {**registry("NAME", user), **LAYOUTS}


def _first_char_gate(value: Column, chars: str) -> Column:
    first = F.substring(value, 1, 1)
    return first.isin(*chars) if len(chars) > 1 else first == chars


def is_head(layout: ModuleType, value: Column) -> Column:
    """True where ``value`` starts a record in ``layout`` (cheap first-character gate first; a
    layout with no ``FIRST_CHARS`` has no gate)."""
    test = layout.head(value) if hasattr(layout, "head") else value.rlike(getattr(layout, "START", layout.HEAD))
    if not layout.FIRST_CHARS:
        return F.coalesce(test, F.lit(False))
    return F.when(_first_char_gate(value, layout.FIRST_CHARS), test).otherwise(F.lit(False))


def head_layout(value: Column, table: dict = LAYOUTS, only: str | None = None) -> Column:
    """Name of the first layout of ``table`` (or only its layout ``only``) in which ``value``
    starts a record, else null (always null where no layout of ``table`` is recognised from a
    line by itself: a table the samples narrowed to the anchor and ``message_only``)."""
    expr = None
    for name, layout in table.items():
        if only is not None and name != only:
            continue
        if not hasattr(layout, "head") and not hasattr(layout, "HEAD"):
            continue  # never recognised from a line by itself (message_only)
        expr = (F.when if expr is None else expr.when)(is_head(layout, value), F.lit(name))
    return F.lit(None).cast("string") if expr is None else expr  # a table of no layout with a head


def is_kafka_line(layout_name: Column, value: Column, table: dict = LAYOUTS) -> Column:
    """True where ``value``, a head of a layout that shortens its loggers (one with ``KAFKA_LINE``,
    ``spark``), names a Kafka client's class: a Kafka record even with no other mark of one."""
    tests = [(layout_name == name) & value.rlike(layout.KAFKA_LINE) for name, layout in table.items() if hasattr(layout, "KAFKA_LINE")]
    return reduce(lambda a, b: a | b, tests, F.lit(False))


def split_fields(layout_name: Column, value: Column, table: dict = LAYOUTS) -> Column:
    """The head line's fields as an array in ``FIELDS`` order, by the line's layout.

    The layouts split by one regex (``SPLIT``) share one ``regexp_replace`` whose regex and
    template are looked up by layout: its code is generated once. A branch of regex code per
    layout would make the records' projection too large a method for the JIT to compile."""
    by_regex = {name: layout.SPLIT for name, layout in table.items() if hasattr(layout, "SPLIT")}
    expr = None
    if by_regex:
        regex = literal_map({name: pair[0] for name, pair in by_regex.items()})[layout_name]
        template = literal_map({name: pair[1] for name, pair in by_regex.items()})[layout_name]
        expr = F.when(layout_name.isin(*by_regex), split_by_regex(value, regex, template))
    for name, layout in table.items():
        if name not in by_regex and hasattr(layout, "split"):  # the anchor's come from anchor.with_fields
            expr = (F.when if expr is None else expr.when)(layout_name == name, layout.split(value))
    return F.lit(None).cast("array<string>") if expr is None else expr


def to_utc(layout_name: Column, ts_text: Column, tz: Column, table: dict = LAYOUTS) -> Column:
    """UTC timestamp of a head line's timestamp text, by the line's layout: one branch per
    conversion function, so layouts sharing one are converted by the same code."""
    by_function: dict = {}
    for name, layout in table.items():
        by_function.setdefault(layout.to_utc, []).append(name)
    expr = None
    for function, names in by_function.items():
        expr = (F.when if expr is None else expr.when)(layout_name.isin(*names), function(ts_text, tz))
    return F.lit(None).cast("timestamp") if expr is None else expr


def sniff(sample_lines) -> str | None:
    """Name of the first layout whose ``sniff`` accepts the sample, else None."""
    lines = list(sample_lines)
    return next((name for name, layout in LAYOUTS.items() if layout.sniff(lines)), None)


__all__ = ["FIELDS", "LAYOUTS", "head_layout", "is_head", "is_kafka_line", "sniff", "split_fields", "to_utc", "with_user_layout"]
