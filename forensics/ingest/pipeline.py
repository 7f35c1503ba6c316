"""One ingest of resolved input files: text and exports read, records assembled, every line
accounted for."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import reduce
from typing import Iterable, Mapping

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from .. import contract as c
from .. import layouts
from .. import schema as s
from ..registry import literal_map
from ..spark import SORTED_AGGREGATION, materialise, rows_together, sql_settings
from .accounting import SAMPLE_CHARS, SAMPLES_PER_REASON, Ingested, iso_time, listed_samples, per_file_counts, summarised
from .export_logs import export_shapes, read_export_logs
from .gzip_check import gzip_problem
from .paths import InputFile
from .read import readable_paths
from .records import assemble_records, in_time_order
from .text_logs import classify_text_others, has_partial_lines, read_text_logs


def _gzip_problems(files: Iterable[InputFile]) -> dict[str, str]:
    local_gz = [f.path for f in files if f.compressed and not f.is_uri and not f.problem]
    with ThreadPoolExecutor(max_workers=2) as pool:
        return {p: problem for p, problem in zip(local_gz, pool.map(gzip_problem, local_gz), strict=True) if problem}


def ingested(spark: SparkSession, files: list[InputFile], table: dict, columns: Mapping[str, str] | None) -> Ingested:
    read_paths = readable_paths(files)
    if not read_paths:
        return summarised(files, {}, {}, spark.createDataFrame([], s.RECORDS_SCHEMA), [])
    shapes = export_shapes(read_paths, columns)
    text_paths = {p: f for p, f in read_paths.items() if p not in shapes}

    with ThreadPoolExecutor(max_workers=1) as background:
        gz_future = background.submit(_gzip_problems, files)
        text = read_text_logs(spark, text_paths, table) if text_paths else None
        exported = read_export_logs(spark, shapes, read_paths, table) if shapes else None
        gz_problems = gz_future.result()

    parts = [part for part in (text, exported) if part]
    by_uri = {uri: file for part in parts for uri, file in part.by_uri.items()}
    facts = [fact for part in parts for fact in part.facts]
    stitched = reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), [part.stitched for part in parts])
    spans = text.spans if text else {}
    date_orders = text.date_orders if text else {}
    known_orders = {uri: order for uri, order in date_orders.items() if order}
    with sql_settings(spark, SORTED_AGGREGATION):  # a record's continuation lines are collected by sorting
        heads = materialise(
            _in_file_order(
                spans,
                assemble_records(
                    stitched,
                    host_of=literal_map({u: f.host for u, f in by_uri.items()})[F.col("uri")],
                    tz_of=literal_map({u: f.tz for u, f in by_uri.items()})[F.col("uri")],
                    source_of=literal_map({u: f.path for u, f in by_uri.items()})[F.col("uri")],
                    table=table if exported else layouts_in_use(table, facts),
                    wrap_of=literal_map(text.wraps, "int")[F.col("uri")] if text and text.wraps else None,
                    partial_lines=bool(text) and has_partial_lines(text.facts),
                    date_order_of=literal_map(known_orders)[F.col("uri")] if known_orders else None,
                ),
            )
        )
    pasted = (F.col(s.LAYOUT) == "message_only") & F.col("wrapper").isNull()  # promoted by stitch
    rows = heads.select(
        "uri", "line", "bucket", "reason", "sample", "undated", pasted.alias("pasted"), s.TS, s.LAYOUT, "not_read", "first_not_read"
    )
    if text:
        rows = rows.unionByName(_in_file_order(spans, classify_text_others(text.stitched, text.facts)), allowMissingColumns=True)
    if exported:
        rows = rows.unionByName(exported.folded, allowMissingColumns=True)
    counts, first_records, unparsed = rows_together(
        [
            rows.groupBy("uri", "bucket", "reason", "undated", "pasted", s.LAYOUT).agg(
                F.count(F.lit(1)).alias("count"),
                F.min(s.TS).alias("first_ts"),
                F.max(s.TS).alias("last_ts"),
                F.sum("not_read").alias("not_read"),
                F.min("first_not_read").alias("first_not_read"),
            ),
            _first_records(heads),
            _first_unparsed(rows),
        ]
    )
    records = heads.where(F.col("bucket") == s.RECORDS).select(*s.RECORDS_SCHEMA.fieldNames())
    folded_rows = text.folded_rows if text else []
    per_file = per_file_counts(facts, counts, folded_rows, by_uri)
    for head in first_records:
        per_file[by_uri[head["uri"]].path]["head"] = {k: (iso_time(v) if k == s.TS else v) for k, v in head.asDict().items() if k != "uri"}
    for uri, description in (exported.descriptions if exported else {}).items():
        per_file[read_paths[uri].path]["export"] = description
    for uri, order in date_orders.items():
        per_file[by_uri[uri].path]["date_order"] = order or c.UNKNOWN_DATE_ORDER
    samples = listed_samples(unparsed, folded_rows, by_uri)
    return summarised(files, per_file, gz_problems, records, samples)


def _in_file_order(spans: dict[str, tuple[int, int]], rows: DataFrame) -> DataFrame:
    """``rows`` of files read newest first (``spans``, numbered in time order) at their lines in
    the file again; a record of such a file is cited by its head line alone (``line_end``), its
    continuation lines being above it."""
    if not spans:
        return rows
    placed = rows.withColumn("line", in_time_order(spans))
    if "first_not_read" in rows.columns:
        placed = placed.withColumn("first_not_read", in_time_order(spans, F.col("first_not_read")))
    if s.LINE_END not in rows.columns:
        return placed
    reversed_file = F.col("uri").isin(*spans)
    return placed.withColumn(s.LINE_END, F.when(reversed_file, F.col("line")).otherwise(F.col(s.LINE_END)))


def layouts_in_use(table: dict, facts: list[dict]) -> dict:
    """The layouts of ``table`` that head some line of the files (``text_logs._file_facts``), and
    ``message_only`` and ``anchor`` (stitch gives them to untimed pastes and Kafka lines in no layout): the records' projection is generated
    for these alone, so it stays small."""
    seen = {fact["layout"] for fact in facts} | {"message_only", layouts.anchor.NAME}
    return {name: layout for name, layout in table.items() if name in seen}


def _first_records(heads: DataFrame) -> DataFrame:
    """Each file's first record (``forensics layouts`` shows it): its ``uri`` and fields, the
    message cut to ``SAMPLE_CHARS``. Found by the least record line of each file, joined back:
    a minimum of the record's fields would sort every record."""
    records = heads.where(F.col("bucket") == s.RECORDS)
    first = records.groupBy("uri").agg(F.min("line").alias("line"))
    fields = ("line", s.LAYOUT, s.TS, s.LEVEL, s.LOGGER, s.THREAD)
    return records.join(first, ["uri", "line"]).select("uri", *fields, F.substring(s.MESSAGE, 1, SAMPLE_CHARS).alias(s.MESSAGE))


def _first_unparsed(rows: DataFrame) -> DataFrame:
    """The first ``SAMPLES_PER_REASON`` unparsed lines of each file and reason (small)."""
    rank = F.row_number().over(Window.partitionBy("uri", "reason").orderBy("line"))
    return (
        rows.where(F.col("bucket") == s.UNPARSED)
        .withColumn("rank", rank)
        .where(F.col("rank") <= SAMPLES_PER_REASON)
        .select("uri", "line", "reason", F.substring("sample", 1, SAMPLE_CHARS).alias("text"))
    )
