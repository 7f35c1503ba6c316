"""Log layouts: one module per layout, all registered in ``LAYOUTS``.

Each module exposes ``NAME``, ``DESCRIPTION``, ``EXAMPLE``, ``FIRST_CHARS`` (a cheap gate
tested before any regex), ``sniff(sample_lines) -> bool``, ``split(value) -> array column``
of the fields in ``FIELDS`` order, ``to_utc(ts_text, tz) -> timestamp column`` and either a
``HEAD`` regex (optionally a cheaper ``START`` regex that recognises the same lines) or a
``head(value) -> bool column``.

A line is recognised per line, in the order of ``LAYOUTS``, so one file may mix layouts;
a file's layout is the one most of its records use.
"""

from __future__ import annotations

from types import ModuleType

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..registry import registry
from . import json_lines, librdkafka, log4j, logback, spring_boot
from ._common import FIELDS


LAYOUTS: dict[str, ModuleType] = registry("NAME", log4j, logback, spring_boot, json_lines, librdkafka)


def _first_char_gate(value: Column, chars: str) -> Column:
    first = F.substring(value, 1, 1)
    return first.isin(*chars) if len(chars) > 1 else first == chars


def is_head(layout: ModuleType, value: Column) -> Column:
    """True where ``value`` starts a record in ``layout`` (cheap first-character gate first)."""
    gate = _first_char_gate(value, layout.FIRST_CHARS)
    test = layout.head(value) if hasattr(layout, "head") else value.rlike(getattr(layout, "START", layout.HEAD))
    return F.when(gate, test).otherwise(F.lit(False))


def head_layout(value: Column) -> Column:
    """Name of the first layout in which ``value`` starts a record, else null."""
    expr = None
    for name, layout in LAYOUTS.items():
        expr = (F.when if expr is None else expr.when)(is_head(layout, value), F.lit(name))
    return expr


def split_fields(layout_name: Column, value: Column) -> Column:
    """The head line's fields as an array in ``FIELDS`` order, by the line's layout."""
    expr = None
    for name, layout in LAYOUTS.items():
        expr = (F.when if expr is None else expr.when)(layout_name == name, layout.split(value))
    return expr


def to_utc(layout_name: Column, ts_text: Column, tz: Column) -> Column:
    """UTC timestamp of a head line's timestamp text, by the line's layout."""
    expr = None
    for name, layout in LAYOUTS.items():
        expr = (F.when if expr is None else expr.when)(layout_name == name, layout.to_utc(ts_text, tz))
    return expr


def sniff(sample_lines) -> str | None:
    """Name of the first layout whose ``sniff`` accepts the sample, else None."""
    lines = list(sample_lines)
    return next((name for name, layout in LAYOUTS.items() if layout.sniff(lines)), None)


__all__ = ["FIELDS", "LAYOUTS", "head_layout", "is_head", "sniff", "split_fields", "to_utc"]
