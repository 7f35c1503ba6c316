"""Reading JSON exports into one row per entry, placed on its physical lines.

- ndjson: one entry per non-blank physical line (``read.read_lines``).
- json_array: Spark parses the array (``from_json`` to ``array<string>``, ``posexplode``); the
  first and last physical line of each element come from a bounded driver-side scan of the
  text (``json_scan.element_spans``), joined by position.
- json_documents, or an array a cut paste left open: the elements the scan finds whole, then
  what the cut one holds (``salvage.cut_elements``).
"""

from __future__ import annotations

import json
import re

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from ...errors import ForensicsError
from ..read import open_local, read_lines
from .json_fields import json_path, parse_path
from .json_scan import scan_array
from .read_common import local_size, null_column
from .salvage import cut_elements
from .shape import ROLES, ExportShape

MAX_ARRAY_CHARS = 256 * 1024 * 1024
"""A JSON array is scanned on the driver for its elements' lines; platforms cap such downloads
(10,000 entries and less), so a larger array is refused with a hint to convert it to NDJSON."""


def _json_fields(value: Column, shape: ExportShape) -> list[Column]:
    """The ``ROLES`` of JSON entries in ``value``."""
    return [
        (F.get_json_object(value, json_path(shape.columns[role])) if role in shape.columns else null_column()).alias(role) for role in ROLES
    ]


def ndjson_rows(spark: SparkSession, path: str, shape: ExportShape) -> DataFrame:
    """One entry per non-blank line; a line that is no JSON object keeps its text as message. A
    line cut before its end (``truncated``) gives the fields written whole before the cut
    (``_salvaged``)."""
    lines = read_lines(spark, [path], {path: local_size(path)}).where(F.col("value").rlike(r"\S"))
    value = F.col("value")
    opens = value.rlike(r"^\s*\{")
    truncated = opens & F.get_json_object(value, "$").isNull()
    fields = [
        F.coalesce(field, F.when(truncated, _salvaged(value, shape.columns.get(role)))).alias(role)
        for role, field in zip(ROLES, _json_fields(value, shape), strict=True)
    ]
    message = F.coalesce(
        F.get_json_object(value, json_path(shape.columns["message"])),
        F.when(truncated, _salvaged(value, shape.columns["message"])),
        F.when(~opens, value),
    )
    fields[-1] = message.alias("message")
    return lines.select(F.col("line"), F.col("line").alias("line_end"), *fields, truncated.alias("truncated"))


def _salvaged(value: Column, path: str | None) -> Column:
    """The value of the top-level field ``path`` in the text of a JSON object cut before its end,
    where the field was written whole before the cut (a string decoded, a number as written)."""
    keys = parse_path(path) if path else []
    if len(keys) != 1:
        return null_column()
    written = F.regexp_extract(value, r'"' + re.escape(json.dumps(keys[0])[1:-1]) + r'"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*)', 1)
    decoded = F.from_json(F.concat(F.lit("["), written, F.lit("]")), "array<string>")[0]
    return F.when(written != "", decoded)


def array_rows(spark: SparkSession, path: str, shape: ExportShape) -> DataFrame:
    """Elements parsed by Spark, placed on their lines by ``element_spans`` (a scan of the text
    in the driver: Spark has no way to tell where an element starts inside a whole-file string,
    and platforms cap such downloads; ``MAX_ARRAY_CHARS`` bounds it). Exports are local files."""
    size = local_size(path) or 0
    if size > MAX_ARRAY_CHARS:
        raise ForensicsError(
            f"{path} is a JSON array of {size} bytes, too large to place its entries on their lines.",
            "Convert it to one entry per line, e.g. jq -c '.[]' in.json > out.ndjson, and read that.",
        )
    with open_local(path, "rt", encoding="utf-8", errors="replace", newline="") as handle:
        text = handle.read()
    spans, closed = scan_array(text)
    if shape.kind == "json_array" and closed:
        whole = spark.read.text(path, wholetext=True).select(F.regexp_replace("value", "^\ufeff", "").alias("value"))
        elements = whole.select(F.posexplode(F.from_json("value", "array<string>")).alias("pos", "entry"))
        where = spark.createDataFrame([(i, a, b) for i, (a, b) in enumerate(spans)], "pos int, line long, line_end long")
        return elements.join(where, "pos", "left").select(
            "line", "line_end", *_json_fields(F.col("entry"), shape), F.lit(False).alias("truncated")
        )
    entries = spark.createDataFrame(cut_elements(text, shape.kind), "line long, line_end long, entry string, truncated boolean")
    return entries.select("line", "line_end", *_json_fields(F.col("entry"), shape), "truncated")
