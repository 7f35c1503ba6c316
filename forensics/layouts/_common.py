"""Pieces shared by the layout modules: field order, level names, timestamp normalisation."""

from __future__ import annotations

import re
from typing import Iterable

from pyspark.sql import Column
from pyspark.sql import functions as F

SEP = "\u0001"
"""Separates the extracted fields in one regexp_replace; field patterns exclude it."""

FIELDS = ("ts_text", "level", "logger", "thread", "client", "message")
"""Canonical order of the fields every layout extracts from a record's first line."""

LEVELS = "TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|SEVERE|CRITICAL"
ISO_DATETIME = r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[,.]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?"
TIME_OF_DAY = r"\d\d:\d\d:\d\d[,.]\d{3}"
LOGGER = r"[A-Za-z_$][\w.$]*"

_LEVEL_ALIASES = {"WARNING": "WARN", "SEVERE": "ERROR", "CRITICAL": "FATAL", "NOTICE": "INFO"}


def replacement(**groups: str) -> str:
    """A regexp_replace template emitting the canonical fields, message last.

    ``groups`` maps field name to a Java group reference such as ``"$1"`` (``"$2$4"``
    concatenates alternatives; a group that did not take part appends nothing).
    """
    return SEP.join(groups.get(name, "") for name in FIELDS)


def split_fields(value: Column, head: str, template: str) -> Column:
    """Extract all fields of a head line with ONE regex evaluation: array in FIELDS order."""
    return F.split(F.regexp_replace(value, head, template), SEP, len(FIELDS))


def normalise_level(level: Column) -> Column:
    """Upper-case level names, folding WARNING/SEVERE/CRITICAL/NOTICE to log4j's names."""
    upper = F.upper(F.trim(level))
    mapping = F.create_map(*[F.lit(x) for pair in _LEVEL_ALIASES.items() for x in pair])
    return F.coalesce(mapping[upper], F.when(upper != "", upper))


def iso_to_utc(ts_text: Column, tz: Column) -> Column:
    """UTC timestamp from an ISO-like text; zone-less text is read in the source's zone ``tz``.

    Accepts ``,`` or ``.`` before the fraction, ``T`` or a space, and ``Z``/``+01:00``/``+0100``.
    Unparseable text gives null (the caller accounts it as a bad timestamp).
    """
    text = F.regexp_replace(F.regexp_replace(ts_text, ",", "."), r"([+-]\d\d)(\d\d)$", "$1:$2")
    has_zone = text.rlike(r"(Z|[+-]\d\d:\d\d)$")
    parsed = F.try_to_timestamp(text)
    return F.when(has_zone, parsed).otherwise(F.to_utc_timestamp(parsed, tz))


def sniff_regex(pattern: str, sample_lines: Iterable[str], share: float = 0.3) -> bool:
    """True when at least ``share`` of the non-blank sample lines start a record of the layout."""
    compiled = re.compile(pattern)
    lines = [line for line in sample_lines if line.strip()]
    hits = sum(1 for line in lines if compiled.match(line))
    return bool(lines) and hits >= max(1, share * len(lines))
