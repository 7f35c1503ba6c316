"""Ingest: files -> Kafka log records with provenance, and the accounting of every line.

``ingest(spark, paths)`` resolves the inputs, reads them in place with Spark, recognises the
layout of each line, stitches continuation lines to their record, and returns the records
(``schema.RECORDS_SCHEMA``) with a per-file and total accounting in which
``records + continuations + irrelevant + unparsed == lines``. This module holds the entry
points; ``pipeline`` runs one ingest, reading log files as text (``text_logs``: folded and
stitched by ``records``) and log-platform exports as entries (``export_logs``, ``exports``),
and ``accounting`` counts every line.
"""

from __future__ import annotations

from types import ModuleType
from typing import Iterable, Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .. import layouts
from .. import schema as s
from ..layouts.pattern import compile_layout
from ..registry import literal_map
from ..spark import in_step_with_cores, sql_settings
from .accounting import KAFKA_NOT_READ, Ingested, host_overlaps, not_read_text
from .paths import InputFile, Inputs, check_time_zone, resolve_inputs, route_inputs, text_bytes
from .pipeline import ingested
from .read import read_lines, readable_paths, spark_key
from .records import kafka_lines as _kafka_lines
from .records import may_be_kafka_line
from .sampling import needed_recognisers


def ingest(
    spark: SparkSession,
    paths: Iterable[str],
    hosts: Mapping[str, str] | None = None,
    tz: str = "UTC",
    tz_by_source: Mapping[str, str] | None = None,
    layout: str | None = None,
    columns: Mapping[str, str] | None = None,
) -> Ingested:
    """Read ``paths`` (files, directories, globs; plain or .gz) into Kafka records.

    ``hosts`` / ``tz_by_source`` map a host name or path glob to a host name / time zone;
    ``tz`` is the zone of zone-less timestamps everywhere else (reported as assumed when UTC);
    ``layout`` is a user's layout pattern (``--layout``: logback / log4j2 PatternLayout or Python
    ``logging`` format), tried before the built-in layouts; ``columns`` maps the roles of an
    export's columns (``time``, ``host``, ``message``, ...) where the usual names do not tell.
    """
    return ingest_files(spark, resolve_inputs(paths, hosts, tz, tz_by_source), layout, columns)


def user_layout(pattern: str | None) -> ModuleType | None:
    """A user's layout pattern compiled into a layout (one clear error for a wrong one)."""
    return None if not pattern else compile_layout(pattern)


def ingest_files(
    spark: SparkSession, files: list[InputFile], layout: str | None = None, columns: Mapping[str, str] | None = None
) -> Ingested:
    """Read resolved input ``files`` (see ``resolve_inputs``) into Kafka records, recognising
    record heads in the user's ``layout`` pattern first when given. Log-platform exports
    (``exports.sniff_export``; ``columns`` names their time / host / message ... columns) are
    read by their columns, the rest as lines of text. Shuffles as ``spark.in_step_with_cores``."""
    with sql_settings(spark, in_step_with_cores(spark, text_bytes(files))):
        return ingested(spark, files, layouts.with_user_layout(user_layout(layout)), columns)


def kafka_lines(spark: SparkSession, files: list[InputFile], layout: str | None = None) -> DataFrame:
    """Line-level Kafka records of resolved input ``files`` (``records.kafka_lines``): the
    fast first look at an incident, with file and line but no stitching or accounting."""
    read_paths = readable_paths(files)
    if not read_paths:
        return spark.createDataFrame([], s.RECORDS_SCHEMA).drop(s.LINE_END)
    table = layouts.with_user_layout(user_layout(layout))
    tried = needed_recognisers(read_paths, table)
    sizes = {p: f.size for p, f in read_paths.items()}
    marked = read_lines(spark, list(read_paths), sizes, where=may_be_kafka_line(F.col("value"), tried.loggerless))
    path = spark_key(F.col("uri"))  # evaluated on the Kafka lines only
    return _kafka_lines(
        marked,
        host_of=literal_map({p: f.host for p, f in read_paths.items()})[path],
        tz_of=F.coalesce(literal_map({p: f.tz for p, f in read_paths.items()})[path], F.lit("UTC")),
        source_of=F.coalesce(literal_map({p: f.path for p, f in read_paths.items()})[path], path),
        table=tried.table(table),
        tried=tried,
    )


__all__ = [
    "Ingested",
    "InputFile",
    "Inputs",
    "check_time_zone",
    "host_overlaps",
    "ingest",
    "ingest_files",
    "kafka_lines",
    "resolve_inputs",
    "route_inputs",
    "text_bytes",
    "user_layout",
    "KAFKA_NOT_READ",
    "not_read_text",
]
