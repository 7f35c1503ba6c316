"""Reading CSV/TSV exports into one row per record, placed on its physical lines.

The file is read line by line (``read.read_lines``, split by split). RFC 4180 quotes (doubled
inside a value) toggle, so a line with an odd number of ``"`` opens or closes a quoted value that
runs over lines; the k-th such line opens one when k is odd. Those lines are few: Spark sorts
them per file and pairs them into spans (``listed_spans``), and a join on buckets of lines gives
each line its span. A line outside every span is a record; a span's lines, joined with LF, are
one. Spark's ``from_csv`` splits each record into cells. The header is the first non-empty line
(``ExportShape.header_line``); a value left open by a cut download runs to the last line. A
quote inside an unquoted value, which RFC 4180 does not allow, would throw the pairing off.
"""

from __future__ import annotations

from functools import reduce
from typing import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from .platforms import UTC_SUFFIX
from .read_common import null_column
from .shape import ROLES, ExportShape

_FIELD_GLUE = "\u0001"


QUOTE_BUCKET_LINES = 64
"""Lines per bucket of the join that finds the quoted span around a line: a span of n lines is
listed under n/64 + 2 buckets at most, and a line is compared with the spans of its bucket only."""


def delimited_rows(lines: DataFrame, shape: ExportShape, listed: DataFrame, number: int) -> DataFrame:
    """The rows of a csv/tsv file, whose ``lines`` are ``read.read_lines``' rows, placed on
    their physical lines (see the module's docstring); ``listed``: the quoted values that run
    over lines (``listed_spans``), the file's under its ``number``. The same table of spans is
    in the plan of every file: one broadcast for all."""
    inside = (_bucket_key(F.lit(number), _bucket(lines["line"])) == listed["key"]) & lines["line"].between(listed["start"], listed["end"])
    spanned = lines.join(F.broadcast(listed), inside, "left").select("line", "value", "start", "end")
    alone = spanned.where(F.col("start").isNull()).select("line", F.col("line").alias("line_end"), F.col("value").alias("text"))
    in_order = F.array_sort(F.collect_list(F.struct("line", "value")))
    parts = spanned.where(F.col("start").isNotNull()).groupBy("start", "end").agg(in_order.alias("parts"))
    # a span's first line taken from its parts, not its grouping key: a filter on the key would be
    # pushed into the table of spans, and each file's two branches would broadcast it apart
    joined = parts.select(
        F.col("parts")[0]["line"].alias("line"),
        F.col("end").alias("line_end"),
        F.array_join(F.transform("parts", lambda part: part["value"]), "\n").alias("text"),
    )
    records = alone.unionByName(joined).where(F.col("line") != shape.header_line)
    cells = [f"_c{i}" for i in range(len(shape.header))]
    options = {"sep": "\t" if shape.kind == "tsv" else ",", "quote": '"', "escape": '"', "mode": "PERMISSIVE"}
    schema = ", ".join(f"{c} string" for c in cells)
    parsed = records.select("line", "line_end", F.from_csv("text", schema, options).alias("cells")).select("line", "line_end", "cells.*")
    blank = F.coalesce(F.trim(F.concat_ws(_FIELD_GLUE, *cells)), F.lit("")) == ""
    return parsed.where(~blank).select(
        "line", "line_end", *[_cell(shape, cells, role).alias(role) for role in ROLES], F.lit(False).alias("truncated")
    )


def _bucket(line: Column) -> Column:
    return (line / QUOTE_BUCKET_LINES).cast("long")


def listed_spans(files: Sequence[DataFrame]) -> DataFrame:
    """The quoted values that run over several lines (the module's docstring) of each csv/tsv
    of ``files`` (their ``read.read_lines`` rows), each listed under every bucket of
    ``QUOTE_BUCKET_LINES`` lines it reaches into, by ``key`` (``_bucket_key`` of the file's
    number in ``files`` and the bucket), ``start`` and ``end`` (its first and last line): a join
    on the key compares a line with the spans of its bucket only. Built by Spark where the join
    needs it (a broadcast: one job for all files): per file, the lines with an odd number of
    quotes, which are few, sorted into one array, and its last line, where a value left open by
    a cut download ends; the k-th such line opens a value when k is odd."""
    odd = F.when(_occurrences(F.col("value"), '"') % 2 == 1, F.col("line"))
    lines = reduce(
        DataFrame.unionByName, [rows.select(F.lit(number).alias("number"), "line", odd.alias("odd")) for number, rows in enumerate(files)]
    )
    toggles = lines.groupBy("number").agg(F.array_sort(F.collect_list("odd")).alias("t"), F.max("line").alias("last"))
    t = F.col("t")
    openers = F.filter(F.sequence(F.lit(0), F.size(t), F.lit(2)), lambda k: k < F.size(t))

    def span(k: Column) -> Column:  # the k-th toggle opens a value, the next (or the file's last line) closes it
        return F.struct(F.get(t, k).alias("start"), F.coalesce(F.get(t, k + 1), F.col("last")).alias("end"))

    spans = toggles.select("number", F.explode(F.transform(openers, span)).alias("span")).select("number", "span.*")
    buckets = spans.select("number", "start", "end", F.explode(F.sequence(_bucket(F.col("start")), _bucket(F.col("end")))).alias("bucket"))
    return buckets.select(_bucket_key(F.col("number"), F.col("bucket")).alias("key"), "start", "end")


_FILE_KEYS = 1 << 40
"""Bucket keys per file in ``listed_spans``: more buckets than any file has lines."""


def _bucket_key(number: Column, bucket: Column) -> Column:
    """The key of ``bucket`` of the file numbered ``number`` (``listed_spans``): one long, which
    a hash join compares faster than a file name and a bucket."""
    return number.cast("long") * _FILE_KEYS + bucket


def _occurrences(text: Column, char: str) -> Column:
    """How often ``char`` (one byte in UTF-8) occurs in ``text``: byte lengths, which Spark
    knows without counting characters."""
    return F.octet_length(text) - F.octet_length(F.replace(text, F.lit(char), F.lit("")))


def _cell(shape: ExportShape, cells: list[str], role: str) -> Column:
    """The column of ``role`` among the positional ``cells`` (first header cell of that name)."""
    name = shape.columns.get(role)
    if name is None or name not in shape.header:
        return null_column()
    cell = F.col(cells[shape.header.index(name)])
    return F.concat(cell, F.lit(" UTC")) if role == "time" and name.upper().endswith(UTC_SUFFIX.upper()) else cell
