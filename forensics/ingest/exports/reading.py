"""Reading exports: one row per entry, with the physical lines it spans, however many exports there are."""

from __future__ import annotations

from functools import reduce
from typing import Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ...errors import ForensicsError
from ..read import read_lines
from .read_common import local_size
from .read_delimited import delimited_rows, listed_spans
from .read_json import array_rows, ndjson_rows
from .shape import KINDS, OUTPUT_COLUMNS, ROLES, ExportShape


def read_exports(spark: SparkSession, shapes: Mapping[str, ExportShape]) -> DataFrame:
    """One row per entry of each export, ``shapes`` mapping its path (a path or URI as Spark
    reads it; a local name starting with ``.`` or ``_`` must be staged first, see
    ``read.readable_paths``) to its shape: ``uri`` (that path), ``line``, ``line_end`` (long,
    physical 1-based lines where the entry starts and ends) and the ``ROLES`` (string, null where
    the export has no such column). Rows come in any order.

    However many exports there are, the rows' plan holds one table of the quoted values that
    run over lines of all the csv/tsv (``listed_spans``), which Spark builds by one job when
    the rows are read; this runs a job only for a csv/tsv larger than a split
    (``read.read_lines``' count of its splits). A JSON array's elements are placed on their
    lines by a scan of its text in the driver (``element_spans``)."""
    for shape in shapes.values():
        _check_shape(shape)
    delimited = {
        path: read_lines(spark, [path], {path: local_size(path)}) for path, shape in shapes.items() if shape.kind in ("csv", "tsv")
    }
    listed = listed_spans(list(delimited.values())) if delimited else None
    numbers = {path: number for number, path in enumerate(delimited)}
    parts = []
    for path, shape in shapes.items():
        if shape.kind in ("csv", "tsv"):
            rows = delimited_rows(delimited[path], shape, listed, numbers[path])
        else:
            rows = {"ndjson": ndjson_rows, "json_array": array_rows, "json_documents": array_rows}[shape.kind](spark, path, shape)
        parts.append(rows.select(F.lit(path).alias("uri"), *OUTPUT_COLUMNS))
    return reduce(DataFrame.unionByName, parts)


def read_export(spark: SparkSession, path: str, shape: ExportShape) -> DataFrame:
    """``read_exports`` of the one export at ``path``, without its ``uri``."""
    return read_exports(spark, {path: shape}).drop("uri")


def _check_shape(shape: ExportShape) -> None:
    if shape.kind not in KINDS:
        raise ForensicsError(f"Unknown export kind {shape.kind!r}.", f"Use one of {', '.join(KINDS)}.")
    unknown = set(shape.columns) - set(ROLES)
    if unknown or "message" not in shape.columns:
        raise ForensicsError(
            f"Export columns {sorted(shape.columns)} need a message role and only roles of {', '.join(ROLES)}.",
            "Build the shape with sniff_export.",
        )
