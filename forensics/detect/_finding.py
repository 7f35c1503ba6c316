"""The one way a detector turns rows into findings (``schema.FINDINGS_SCHEMA``)."""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from .. import schema as s
from ..spark import built_once, empty_of


def all_of(spark, found: list[DataFrame]) -> DataFrame:
    """The findings of ``found`` in one DataFrame: the empty findings table when there are none
    (every detector or risk skipped for want of rows in its sources)."""
    return reduce(DataFrame.unionByName, found) if found else empty_of(spark, s.FINDINGS_SCHEMA)


def _column(value) -> Column:
    return value if isinstance(value, Column) else F.lit(value)


def line(file: str | Column = s.SOURCE_FILE, number: str | Column = s.LINE) -> Column:
    """One evidence entry: a file and its 1-based line number."""
    file = F.col(file) if isinstance(file, str) else file
    number = F.col(number) if isinstance(number, str) else number
    return F.when(number.isNotNull(), F.struct(file.alias("file"), number.cast("long").alias("line")))


def lines(*parts: Column) -> Column:
    """Evidence from single entries and arrays of entries: sorted, distinct, nulls dropped."""
    arrays = [F.coalesce(part, F.array()) for part in parts]
    merged = F.flatten(F.array(*arrays)) if len(arrays) > 1 else arrays[0]
    return F.array_sort(F.array_distinct(F.filter(merged, lambda entry: entry.isNotNull())))


def one(entry: Column) -> Column:
    """A single evidence entry as an array (for ``lines``)."""
    return F.array(entry)


def findings(frame: DataFrame, detector: str, **columns) -> DataFrame:
    """Rows of ``frame`` as findings of ``detector``.

    ``columns`` maps finding fields (``group`` for ``group_id``) to Columns or literals; fields
    not given are null. ``evidence``, ``explanation``, ``kafka_reference``, ``remedy``,
    ``severity`` and ``verdict`` are required.
    """
    if "group" in columns:
        columns[s.GROUP_ID] = columns.pop("group")
    unknown = set(columns) - set(s.FINDINGS_SCHEMA.fieldNames())
    if unknown:
        raise ValueError(f"{detector}: not finding fields: {sorted(unknown)}")
    columns[s.DETECTOR] = detector
    return frame.select(*[
        _typed(columns[field.name], field) if columns.get(field.name) is not None else _absent(field.name)
        for field in s.FINDINGS_SCHEMA.fields
    ])


def _typed(value, field) -> Column:
    """``value`` as the finding field ``field`` (a ``StructField`` of ``FINDINGS_SCHEMA``)."""
    return _column(value).cast(s.as_ddl(field.dataType)).alias(field.name)


@built_once
def _absent(name: str) -> Column:
    """The null of finding field ``name``, built once (``spark.built_once``): a detector leaves
    half of the 20 fields out, and each Column built is calls into the JVM."""
    return _typed(None, s.FINDINGS_SCHEMA[name])


def duration_ms(end: Column, start: Column) -> Column:
    return ((F.unix_micros(end) - F.unix_micros(start)) / 1000).cast("long")
