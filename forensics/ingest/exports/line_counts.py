"""The accounting of every physical line of each export: entries' lines and lines outside any entry."""

from __future__ import annotations

from functools import reduce
from typing import Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ...spark import rows_together
from .reading import read_export
from .shape import ARRAY_KINDS, ExportLines, ExportShape


def export_line_counts(spark: SparkSession, shapes: Mapping[str, ExportShape], rows: DataFrame) -> dict[str, ExportLines]:
    """The line accounting of each export at the paths of ``shapes``, whose entries ``rows``
    are (``read_exports``' rows, or any with their ``uri``, ``line`` and ``line_end``): one
    Spark job however many exports there are. Where ``rows`` has a boolean ``joined`` column
    (entries joined to the entry before them, ``records.with_continuing_entries``), its count
    too, as ``ExportLines.joined``."""
    physical = reduce(DataFrame.unionByName, [spark.read.text(path).select(F.lit(path).alias("uri")) for path in shapes])
    arrays = [path for path, shape in shapes.items() if shape.kind in ARRAY_KINDS]  # elements may share lines: count the lines they cover
    covered = rows.where(F.col("uri").isin(*arrays)).select("uri", F.explode(F.sequence("line", "line_end")).alias("l")).distinct()
    joined = F.count_if(F.col("joined")) if "joined" in rows.columns else F.lit(0)
    truncated = F.count_if(F.col("truncated")) if "truncated" in rows.columns else F.lit(0)
    lines, entries, *shared = rows_together(
        [
            physical.groupBy("uri").count(),
            rows.groupBy("uri").agg(
                F.count(F.lit(1)).alias("n"),
                F.sum(F.col("line_end") - F.col("line") + 1).alias("span"),
                joined.alias("joined"),
                truncated.alias("truncated"),
            ),
            *([covered.groupBy("uri").count()] if arrays else []),
        ]
    )
    physical_lines = {row["uri"]: row["count"] for row in lines}
    of_entries = {row["uri"]: row for row in entries}
    covered_lines = {row["uri"]: row["count"] for rows_of in shared for row in rows_of}
    counts = {}
    for path in shapes:
        stats = of_entries.get(path)
        n, span, joined_n, cut = (stats["n"], stats["span"] or 0, stats["joined"], stats["truncated"]) if stats else (0, 0, 0, 0)
        covering = covered_lines.get(path, 0) if path in arrays else span
        total = physical_lines.get(path, 0)
        counts[path] = ExportLines(lines=total, entries=n, entry_lines=covering, outside=total - covering, joined=joined_n, truncated=cut)
    return counts


def export_line_count(spark: SparkSession, path: str, shape: ExportShape, rows: DataFrame | None = None) -> ExportLines:
    """``export_line_counts`` of the one export at ``path``; ``rows`` is ``read_export``'s
    result (else read again)."""
    rows = read_export(spark, path, shape) if rows is None else rows
    return export_line_counts(spark, {path: shape}, rows.select(F.lit(path).alias("uri"), "*"))[path]
