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
    not given are null (``member_basis``: the frame's, where it has one and a member is given).
    ``evidence``, ``explanation``, ``kafka_reference``, ``remedy``, ``severity`` and ``verdict``
    are required.
    """
    if "group" in columns:
        columns[s.GROUP_ID] = columns.pop("group")
    if columns.get("member") is not None and s.MEMBER_BASIS not in columns and s.MEMBER_BASIS in frame.columns:
        columns[s.MEMBER_BASIS] = F.when(_column(columns["member"]).isNotNull(), F.col(s.MEMBER_BASIS))
    unknown = set(columns) - set(s.FINDINGS_SCHEMA.fieldNames())
    if unknown:
        raise ValueError(f"{detector}: not finding fields: {sorted(unknown)}")
    columns[s.DETECTOR] = detector
    return frame.select(
        *[
            _typed(columns[field.name], field) if columns.get(field.name) is not None else _absent(field.name)
            for field in s.FINDINGS_SCHEMA.fields
        ]
    )


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


def text(value: Column, unknown: str) -> Column:
    """``value`` as text, or ``unknown`` where it is null: a rendered sentence never says "null"."""
    return F.coalesce(value.cast("string"), F.lit(unknown))


def at(stamp: Column, where: Column | None = None) -> Column:
    """``at 2024-06-01 09:00:00.000 UTC``, or for an undated line ``on an untimed line`` (with
    ``where``, its file and line): undated findings read as untimed, never "at null"."""
    dated = F.concat(F.lit("at "), F.date_format(stamp, "yyyy-MM-dd HH:mm:ss.SSS 'UTC'"))
    untimed = F.lit("on an untimed line") if where is None else F.concat(F.lit("on untimed line "), where)
    return F.coalesce(dated, untimed)


def place(entry: Column) -> Column:
    """An evidence entry (``line``) as ``file:line``."""
    return F.concat(entry["file"], F.lit(":"), entry["line"].cast("string"))


def bootstrap() -> Column:
    """How a command names the brokers (``recovery.BOOTSTRAP``: plan.md sets it)."""
    return F.lit('"$BOOTSTRAP_SERVERS"')


def quoted(value: Column) -> Column:
    """A name read from the logs as one shell word (``shlex.quote``): as it is when it is plain,
    else in single quotes, each quote in it closed, escaped and reopened."""
    return F.when(value.rlike(r"^[A-Za-z0-9._/=:,+@%-]+$"), value).otherwise(
        F.concat(F.lit("'"), F.regexp_replace(value, "'", "'\"'\"'"), F.lit("'"))
    )


def describe_command(group: Column) -> Column:
    """``kafka-consumer-groups --describe`` of ``group``: its committed offsets now."""
    named = F.coalesce(quoted(group), F.lit("<group>"))
    return F.concat(F.lit("kafka-consumer-groups.sh --bootstrap-server "), bootstrap(), F.lit(" --describe --group "), named)


OFFSETS_DUMP_COMMAND = (
    "kafka-dump-log.sh --offsets-decoder --files <log.dirs>/__consumer_offsets-<N>/<segment>.log"
    "  # N: the group id's Java hashCode, made positive, modulo offsets.topic.num.partitions (50 by default)"
)
"""Every commit of a group as the broker stored it, with its time (``--offsets-decoder``)."""


def end_offsets_command(topic: Column, partition: Column, time: str = "-1") -> Column:
    """``kafka-get-offsets --time -1`` (log end) or ``-2`` (log start) of one partition."""
    return F.concat(
        F.lit("kafka-get-offsets.sh --bootstrap-server "),
        bootstrap(),
        F.lit(" --topic "),
        quoted(topic),
        F.lit(" --partitions "),
        partition.cast("string"),
        F.lit(f" --time {time}"),
    )


def missing(what: Column, *commands: Column) -> Column:
    """The ``missing`` of an unmeasured finding: what would measure its range, and the commands."""
    return F.struct(what.alias("what"), F.array(*commands).alias("commands"))
