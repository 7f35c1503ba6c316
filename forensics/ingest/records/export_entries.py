"""Exports' entries that continue the entry before them (one entry per physical line of a
container's output): joined to it."""

from __future__ import annotations

from typing import Sequence

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ...layouts._common import any_to_utc
from .recognition import CONTINUATION_TEXT

CONTINUATION_PREFIX = 256
"""``CONTINUATION_TEXT`` is looked for in an export's message by its first characters (a regex
on a prefix: the whole of a message that holds a stack trace is not scanned)."""


def entry_continues() -> Column:
    """Whether an export's entry continues the entry before it: its message opens indented (a
    stack frame, a config block's setting) or with stack-trace text (``CONTINUATION_TEXT``), as
    where a log platform stored each physical line of a container's output as an entry."""
    message = F.coalesce(F.col("message"), F.lit(""))
    return F.substring(message, 1, 1).isin(" ", "\t") | F.substring(message, 1, CONTINUATION_PREFIX).rlike(CONTINUATION_TEXT)


def with_continuing_entries(entries: DataFrame, tz: Column, newest_first: Column, files: Sequence[str]) -> DataFrame:
    """Exports' ``entries`` (``exports.read_exports``' rows) with each entry of one of ``files``
    that continues (``entry_continues``) the nearest entry before it in time, of the same export,
    host and source, that does not: its message joined to that entry's, a line each in the
    order written, and the entry marked ``joined``. Entries of one time are in file order,
    reversed where the export runs ``newest_first``; ``tz``: the zone of the export's times.
    Each entry of ``files`` has lines of its own (not a JSON array's elements, which may share one)."""
    in_file_order = F.when(newest_first, -F.col("line")).otherwise(F.col("line"))
    order = Window.partitionBy("uri", "host", "source").orderBy(any_to_utc(F.col("time"), tz), in_file_order)
    continues = entry_continues() & F.col("uri").isin(*files)
    placed = entries.select(
        "*",
        continues.alias("continues"),
        F.row_number().over(order).alias("position"),
        F.last(F.when(~continues, F.col("line")), True).over(order.rowsBetween(Window.unboundedPreceding, Window.currentRow)).alias("head"),
    )
    joined = placed.where(F.col("continues") & F.col("head").isNotNull())
    texts = joined.groupBy("uri", F.col("head").alias("line")).agg(
        F.array_join(F.transform(F.array_sort(F.collect_list(F.struct("position", "message"))), lambda e: e["message"]), "\n").alias("more")
    )
    message = F.when(F.col("more").isNull(), F.col("message")).otherwise(F.concat_ws("\n", F.col("message"), F.col("more")))
    return placed.join(texts, ["uri", "line"], "left").select(
        *[message.alias(c) if c == "message" else c for c in entries.columns],
        (F.col("continues") & F.col("head").isNotNull()).alias("joined"),
    )
