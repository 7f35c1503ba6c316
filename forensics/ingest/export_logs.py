"""Log-platform exports read as entries: each entry a head, the rest of its message one
continuation row, the entries that cannot be Kafka records only counted."""

from __future__ import annotations

from typing import Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .. import schema as s
from ..layouts._common import any_to_utc
from ..registry import literal_map
from ..spark import materialise
from .exports import SNIFF_CHARS, ExportShape, export_line_counts, read_exports, sniff_export
from .part import Part
from .paths import InputFile
from .read import open_local
from .records import entry_continues, may_be_kafka_entry, recognise, with_continuing_entries


def export_shapes(read_paths: Mapping[str, InputFile], columns: Mapping[str, str] | None) -> dict[str, ExportShape]:
    """Spark path -> export shape, for the local files that are log-platform exports (sniffed
    from their first ``exports.SNIFF_CHARS`` characters)."""
    shapes = {}
    for path, file in read_paths.items():
        if not file.is_uri:
            shape = sniff_export(_head_text(path), dict(columns) if columns else None)
            if shape is not None:
                shapes[path] = shape
    return shapes


def _head_text(path: str) -> str:
    try:
        with open_local(path, "rt", encoding="utf-8", errors="replace") as handle:
            return handle.read(SNIFF_CHARS)
    except (OSError, EOFError):
        return ""


def read_export_logs(spark: SparkSession, shapes: Mapping[str, ExportShape], read_paths: Mapping[str, InputFile], table: dict) -> Part:
    """The exports' entries as heads (the first line of the message, recognised in any layout,
    dated and hosted by the export's columns) with the rest of the message as one tail row.
    Entries that cannot be Kafka records (``records.may_be_kafka_entry``) go no further than
    their count, with their layout, as irrelevant heads (``Part.folded``). All exports are read
    together, by the same few Spark jobs however many there are.

    Accounting: an entry's first line is its record; its other lines are continuations; the
    header, blank lines and a JSON array's brackets are irrelevant (not log lines)."""
    exported = read_exports(spark, shapes)
    rows = _entry_rows(exported, table)
    tz = literal_map({path: read_paths[path].tz for path in shapes})[F.col("uri")]
    dated = F.when(F.col("time").isNotNull(), F.col("line"))
    seen = (
        rows.groupBy("uri")
        .agg(
            F.max(F.col("continues").cast("int")).alias("continues"),
            F.min_by("time", dated).alias("first"),
            F.max_by("time", dated).alias("last"),
        )
        .select("uri", "continues", F.coalesce(any_to_utc(F.col("first"), tz) > any_to_utc(F.col("last"), tz), F.lit(False)).alias("later"))
    )
    seen_rows = seen.collect()
    continuing = [
        row["uri"] for row in seen_rows if row["continues"] and shapes[row["uri"]].kind != "json_array"
    ]  # an entry per physical line (elements of an array may share one)
    if continuing:  # read again, joined
        newest_first = F.col("uri").isin(*[row["uri"] for row in seen_rows if row["later"]])  # the export runs newest first
        exported = materialise(with_continuing_entries(exported, tz, newest_first, continuing))
        rows = _entry_rows(exported.where(~F.col("joined")), table)
    counts = export_line_counts(spark, shapes, exported if continuing else rows)
    message_only = F.coalesce(s.LAYOUT, F.lit("message_only"))
    folded = rows.where(~F.col("kept")).select(
        "uri",
        "line",
        F.lit(s.IRRELEVANT).alias("bucket"),
        F.lit(True).alias("undated"),
        F.lit(False).alias("pasted"),
        message_only.alias(s.LAYOUT),
    )
    kept_entries = rows.where(F.col("kept"))
    heads = kept_entries.select(
        "uri",
        "line",
        F.col("line").alias("head_line"),
        message_only.alias(s.LAYOUT),
        "value",
        F.coalesce("wrapper", F.lit("export")).alias("wrapper"),
        F.coalesce("w_ts", "time").alias("w_ts"),
        F.coalesce("host", "w_host").alias("w_host"),
        F.col("level").alias("w_level"),
        F.col("logger").alias("w_logger"),
        F.col("thread").alias("w_thread"),
    )
    rest = F.expr("substring(message, length(substring_index(message, '\n', 1)) + 2)")
    tails = kept_entries.where(F.col("message").contains("\n")).select(
        "uri",
        F.col("line_end").alias("line"),
        F.col("line").alias("head_line"),
        F.lit(None).cast("string").alias(s.LAYOUT),
        rest.alias("value"),
    )
    stitched = materialise(heads.unionByName(tails, allowMissingColumns=True))
    facts = [
        {
            "uri": path,
            "layout": None,
            "wrapper": "export",
            "lines": count.lines,
            "first_line": None,
            "export": True,
            "buckets": {s.CONTINUATIONS: count.entry_lines - count.entries + count.joined, s.IRRELEVANT: count.outside},
        }
        for path, count in counts.items()
    ]
    descriptions = {
        path: f"{shape.platform or 'unknown platform'} {shape.kind}, {counts[path].entries:,} entries, columns "
        + ", ".join(f"{r}={c}" for r, c in shape.columns.items())
        for path, shape in shapes.items()
    }
    return Part(stitched, facts, {path: read_paths[path] for path in shapes}, descriptions=descriptions, folded=folded)


def _entry_rows(exported: DataFrame, table: dict) -> DataFrame:
    """The exports' entries recognised, materialised: the first line of the message as ``value``,
    ``kept`` where the entry may be a Kafka record (``records.may_be_kafka_entry``; the others
    keep no text), ``continues`` where it may continue the entry before it (``records.entry_continues``)."""
    message = F.coalesce(F.col("message"), F.lit(""))
    entries = exported.select(
        "uri",
        "line",
        "line_end",
        F.substring_index(message, "\n", 1).alias("value"),
        message.alias("message"),
        "time",
        "host",
        "level",
        "logger",
        "thread",
        entry_continues().alias("continues"),
    )
    recognised = recognise(entries, table)
    kept = may_be_kafka_entry(F.col("layout"), F.col("message"), F.col("logger"))
    return materialise(
        recognised.select(
            "uri",
            "line",
            "line_end",
            "layout",
            kept.alias("kept"),
            "continues",
            *[F.when(kept, F.col(c)).alias(c) for c in recognised.columns if c not in ("uri", "line", "line_end", "layout", "continues")],
        )
    )
