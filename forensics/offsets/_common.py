"""Pieces shared by the offset-dump parsers: the OFFSETS_SCHEMA, null handling, casts, time stamps.

Not a dump kind itself (the leading underscore keeps it out of ``DUMP_KINDS``). Every helper maps
Columns to Columns with ``pyspark.sql.functions`` only.
"""

from __future__ import annotations

import re
from typing import Iterable

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField

from ..layouts._common import iso_to_utc
from ..registry import literal_map
from ..schema import (  # noqa: F401 (re-exported for the dump modules; the table is defined in schema/offsets.py)
    CONSUMER_OFFSETS_COMMIT,
    DESCRIBE_MEMBERS,
    DESCRIBE_OFFSETS,
    DESCRIBE_STATE,
    DUMP_LOG_BATCH,
    KIND,
    LINE,
    LOG_OFFSETS,
    OFFSETS_SCHEMA,
    ROW_KINDS,
    SNAPSHOT_TS,
    SOURCE_FILE,
    as_ddl,
)

# Columns of the prepared lines every ``parse`` receives (see ``offsets.prepare_lines``).
VALUE = "value"
SECTION = "section"
"""The last section-start line (a table header, a ``Dumping <file>`` line) of the current block,
before this line; blank lines and snapshot stamps end a block. Null outside any section."""

# Snapshot stamps written between repeated dumps: ``# 2024-03-11T14:05:00Z`` or the output of
# ``date`` (``Tue Mar 11 14:05:00 UTC 2024``). A stamp may also be glued to the end of the last
# table row, as the 3.8-3.9 Java kafka-consumer-groups.sh writes no final newline.
_ISO = r"(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?)"
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_DATE = (
    r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (" + "|".join(_MONTHS) + r") +(\d{1,2}) (\d\d:\d\d:\d\d)"
    r"(?: ([A-Z]{1,5}|[+-]\d{4}))? (\d{4})"
)
STAMP = r"^(.*?)[#\s]*(?:" + _ISO + "|" + _DATE + r")\s*$"
"""Groups: 1 text before the stamp, 2 ISO text, 3 month, 4 day, 5 time, 6 zone, 7 year."""

_ZONE_OFFSETS = {
    "UTC": "+00:00",
    "GMT": "+00:00",
    "Z": "+00:00",
    "UT": "+00:00",
    "WET": "+00:00",
    "WEST": "+01:00",
    "BST": "+01:00",
    "CET": "+01:00",
    "CEST": "+02:00",
    "EET": "+02:00",
    "EEST": "+03:00",
    "MSK": "+03:00",
    "JST": "+09:00",
    "KST": "+09:00",
    "AEST": "+10:00",
    "AEDT": "+11:00",
    "EST": "-05:00",
    "EDT": "-04:00",
    "CST": "-06:00",
    "CDT": "-05:00",
    "MST": "-07:00",
    "MDT": "-06:00",
    "PST": "-08:00",
    "PDT": "-07:00",
}


def stamp_text(value: Column) -> Column:
    """The stamp at the end of ``value`` as ISO text with an offset (null if none or zone unknown)."""
    parts = F.split(F.regexp_replace(value, STAMP, "$2\u0001$3\u0001$4\u0001$5\u0001$6\u0001$7"), "\u0001")
    return F.when(value.rlike(STAMP), _stamp_iso(*[F.get(parts, i) for i in range(6)]))


def _stamp_iso(iso: Column, month: Column, day: Column, time: Column, zone: Column, year: Column) -> Column:
    month_number = literal_map({m: f"{i + 1:02d}" for i, m in enumerate(_MONTHS)})[month]
    offset = (
        F.when(zone == "", F.lit("+00:00"))
        .when(zone.rlike(r"^[+-]\d{4}$"), F.concat(F.substring(zone, 1, 3), F.lit(":"), F.substring(zone, 4, 2)))
        .otherwise(literal_map(_ZONE_OFFSETS)[zone])
    )
    date_iso = F.concat(year, F.lit("-"), month_number, F.lit("-"), F.lpad(day, 2, "0"), F.lit("T"), time, offset)
    return F.when(iso != "", iso).otherwise(date_iso)


def stamp_ts(text: Column) -> Column:
    """UTC timestamp of a ``stamp_text``; zone-less ISO text is read as UTC."""
    return iso_to_utc(text, F.lit("UTC"))


def before_stamp(value: Column) -> Column:
    """``value`` without a stamp glued to its end (unchanged when it has none)."""
    return F.when(value.rlike(STAMP), F.regexp_extract(value, STAMP, 1)).otherwise(value)


def dash_null(text: Column) -> Column:
    """Null for ``-``, empty or missing text (how the CLI prints a missing value), else the text."""
    return F.when(~F.trim(text).isin("-", ""), text)


def as_long(text: Column) -> Column:
    """Long from an integer text, null for ``-`` or anything else."""
    return F.when(F.trim(text).rlike(r"^-?\d{1,19}$"), F.trim(text)).try_cast("long")


def as_int(text: Column) -> Column:
    """Int from an integer text, null for ``-`` or anything else."""
    return F.when(F.trim(text).rlike(r"^-?\d{1,10}$"), F.trim(text)).try_cast("int")


def as_bool(text: Column) -> Column:
    """Boolean from ``true``/``false`` text, else null."""
    lower = F.lower(F.trim(text))
    return F.when(lower == "true", F.lit(True)).when(lower == "false", F.lit(False))


def millis_ts(millis: Column) -> Column:
    """Timestamp from epoch milliseconds (long column); null stays null."""
    return F.timestamp_millis(millis)


def to_offsets(df: DataFrame, kind: Column | str, **columns: Column) -> DataFrame:
    """Select ``df`` into OFFSETS_SCHEMA: provenance from ``df``, ``columns`` by name, nulls elsewhere."""
    unknown = set(columns) - set(OFFSETS_SCHEMA.fieldNames())
    if unknown:
        raise ValueError(f"not offsets columns: {sorted(unknown)}")
    given = {
        SOURCE_FILE: F.col(SOURCE_FILE),
        LINE: F.col(LINE),
        SNAPSHOT_TS: F.col(SNAPSHOT_TS),
        KIND: F.lit(kind) if isinstance(kind, str) else kind,
        **columns,
    }
    return df.select(*[_typed(given.get(f.name), f) for f in OFFSETS_SCHEMA.fields])


def _typed(value: Column | None, field: StructField) -> Column:
    """``value`` cast to the field's type; never-null fields get a (never used) default so that
    Spark knows them as non-nullable and the result's schema equals OFFSETS_SCHEMA."""
    typed = (F.lit(None) if value is None else value).cast(as_ddl(field.dataType))
    if not field.nullable:
        typed = F.coalesce(typed, F.lit("" if isinstance(field.dataType, StringType) else 0).cast(as_ddl(field.dataType)))
    return typed.alias(field.name)


def computed_once(df: DataFrame, **columns: Column) -> DataFrame:
    """Add ``columns``, computed once per row.

    A one-element ``inline`` is a barrier the optimizer does not inline through, so later uses
    refer to the values instead of repeating the expressions (which made the generated code of
    the larger parsers exceed the JVM's 64 KB method limit).
    """
    return df.select("*", F.inline(F.array(F.struct(*[col.alias(name) for name, col in columns.items()]))))


def share_match(patterns: Iterable[str], lines: Iterable[str], share: float = 0.3) -> bool:
    """True when at least ``share`` of the non-blank, non-stamp lines match one of ``patterns``."""
    compiled = [re.compile(p) for p in patterns]
    stamp = re.compile(STAMP)
    kept = [line.rstrip("\r\n") for line in lines if line.strip() and not re.fullmatch(r"[#\s]*", stamp.sub(r"\1", line.strip()))]
    hits = sum(1 for line in kept if any(c.search(line) for c in compiled))
    return bool(kept) and hits >= max(1, share * len(kept))
