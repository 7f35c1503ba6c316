"""Kafka CLI offset dumps -> one offsets table (``OFFSETS_SCHEMA``), with Spark native functions only.

Dump kinds, one module each, registered in ``DUMP_KINDS``:

* ``consumer_groups``: ``kafka-consumer-groups.sh --describe`` (offsets, ``--members [--verbose]``,
  ``--state``), 1.0-4.x;
* ``consumer_offsets_topic``: ``kafka-console-consumer.sh --topic __consumer_offsets`` with the
  OffsetsMessageFormatter, 0.10.2-4.x (Scala and JSON renderings);
* ``get_offsets``: ``kafka-get-offsets.sh`` / GetOffsetShell, 0.10.2-4.x;
* ``dump_log``: ``kafka-dump-log.sh`` batch lines, 1.x-4.x;
* ``burrow``: Burrow's consumer ``/lag`` and ``/status`` HTTP responses (JSON, compact or
  pretty-printed), 0.x-1.9;
* ``prometheus``: the Prometheus text exposition of kafka_exporter 0.1-1.9 and kafka-lag-exporter
  0.3-0.8 (one scrape or many).

Each module exposes ``KIND``, ``ROW_KINDS``, ``sniff(lines) -> bool`` (on a Python sample, for
callers that have one), ``MARKER`` (a bytes pattern that an input holding rows of the kind
contains, ``kinds_present``), ``skip(value) -> Column`` (lines the tool prints that hold no row)
and ``parse(lines) -> DataFrame`` in OFFSETS_SCHEMA, and optionally ``section(value) -> Column``
(lines that start a block, such as a table header, whose text later lines need) and
``structure_lines(lines) -> DataFrame`` (``source_file, line``, repeats allowed, of the lines
around its rows in a document it parsed, such as a JSON response's punctuation: skipped lines
that ``skip`` cannot tell from their text alone).

Kinds are recognised per line, so one file may hold several dumps one after another. A line
holding only a time stamp (``# 2024-03-11T14:05:00Z``, ``Tue Mar 11 14:05:00 UTC 2024`` from
``date``) sets ``snapshot_ts`` for the rows below it, which turns repeated dumps into a time
series; rows before any stamp get the ``snapshot_ts`` argument, else null.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from types import ModuleType
from typing import Iterable, Sequence

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from ..ingest.read import open_local, read_lines, spark_key
from ..registry import registry
from ..spark import empty_of, kept_in_the_driver, materialise, materialised_together, rows_together, scratch_checkpoints
from . import _common as c
from . import burrow, consumer_groups, consumer_offsets_topic, dump_log, get_offsets, prometheus
from ._common import OFFSETS_SCHEMA, ROW_KINDS

DUMP_KINDS: dict[str, ModuleType] = registry("KIND", consumer_groups, consumer_offsets_topic, get_offsets, dump_log, burrow, prometheus)

_RAW = "_raw"
_STAMP = "_stamp"
_BLANK = "_blank"


def sniff(lines: Iterable[str]) -> str | None:
    """``KIND`` of the first dump kind whose ``sniff`` accepts the sample lines, else None."""
    sample = list(lines)
    return next((kind for kind, module in DUMP_KINDS.items() if module.sniff(sample)), None)


SNIFF_LINES = 50


def sniff_file(path: str) -> str | None:
    """``KIND`` of the offset dump a local file (plain or ``.gz``) holds, from its first lines;
    None for anything else (a log, an unreadable or damaged file, a URI)."""
    try:
        with open_local(path, "rt", encoding="utf-8", errors="replace") as handle:
            sample = [line.rstrip("\r\n") for _, line in zip(range(SNIFF_LINES), handle)]
    except (OSError, EOFError, ValueError):
        return None
    return sniff(sample) if sample else None


def _section_start(value: Column) -> Column:
    starts = [module.section(value) for module in DUMP_KINDS.values() if hasattr(module, "section")]
    return F.coalesce(*starts) if starts else F.lit(None).cast("string")


def prepare_lines(lines: DataFrame, snapshot_ts: datetime | str | None = None) -> DataFrame:
    """Lines from ``read_lines`` made ready for every ``parse``.

    Adds ``source_file`` (plain path), ``value`` (the line without a stamp glued to its end),
    ``section`` (see ``_common.SECTION``) and ``snapshot_ts`` (the last stamp above the line, else
    the argument), all with one window over each file's lines.
    """
    base = c.computed_once(
        lines.select(spark_key(F.col("uri")).alias(c.SOURCE_FILE), F.col("line").cast("long").alias(c.LINE), F.col("value").alias(_RAW)),
        _has_stamp=F.col(_RAW).rlike(c.STAMP),
        value=c.before_stamp(F.col(_RAW)),
    )
    has_stamp, body = F.col("_has_stamp"), F.col(c.VALUE)
    marked = base.select(
        "*",
        (F.trim(F.col(_RAW)) == "").alias(_BLANK),
        (has_stamp & body.rlike(r"^[#\s]*$")).alias(_STAMP),
        F.when(has_stamp, F.array(c.stamp_ts(c.stamp_text(F.col(_RAW))))).alias("_stamp_ts"),
    )
    marker = F.when(~F.col(_STAMP) & ~F.col(_BLANK), _section_start(body)).when(F.col(_BLANK) | has_stamp, F.lit(""))
    earlier = Window.partitionBy(c.SOURCE_FILE).orderBy(c.LINE).rowsBetween(Window.unboundedPreceding, -1)
    last_stamp = F.last(F.col("_stamp_ts"), ignorenulls=True).over(earlier)
    fallback = F.lit(snapshot_ts).cast("timestamp") if snapshot_ts is not None else F.lit(None).cast("timestamp")
    return marked.select(
        c.SOURCE_FILE,
        c.LINE,
        c.VALUE,
        _RAW,
        _STAMP,
        _BLANK,
        F.nullif(F.last(marker, ignorenulls=True).over(earlier), F.lit("")).alias(c.SECTION),
        F.when(last_stamp.isNull(), fallback).otherwise(F.element_at(last_stamp, 1)).alias(c.SNAPSHOT_TS),
    )


def parse_lines(prepared: DataFrame, kinds: Iterable[str] | None = None) -> DataFrame:
    """The offsets table of prepared lines: the ``parse`` of every dump kind (of ``kinds``, by
    default all), unioned; the empty table when ``kinds`` is empty."""
    frames = [module.parse(prepared) for module in _modules(kinds)]
    if not frames:
        return empty_of(prepared.sparkSession, OFFSETS_SCHEMA)
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result


def _modules(kinds: Iterable[str] | None) -> list[ModuleType]:
    return list(DUMP_KINDS.values()) if kinds is None else [DUMP_KINDS[kind] for kind in kinds]


MARKED_BYTES = 64 * 1024 * 1024
"""Up to this many bytes of dumps, ``kinds_present`` reads them to find the kinds they may hold."""


def kinds_present(paths: Sequence[str]) -> tuple[str, ...] | None:
    """The dump kinds whose ``MARKER`` some file of ``paths`` holds: the only kinds that can give
    rows of these files, in ``DUMP_KINDS`` order. None (every kind) when some path is not a local
    file, or cannot be read whole (a damaged gzip), or the files hold more than ``MARKED_BYTES``.

    Each kind parsed costs Spark the analysis and the optimisation of its plan over the lines,
    whether the lines hold its rows or not, so a kind whose marker no file holds is not parsed."""
    found: set[str] = set()
    budget = MARKED_BYTES
    for path in paths:
        data = _whole(path, budget)
        if data is None:
            return None
        budget -= len(data)
        found |= {kind for kind, module in DUMP_KINDS.items() if kind not in found and module.MARKER.search(data)}
    return tuple(kind for kind in DUMP_KINDS if kind in found)


def _whole(path: str, most: int) -> bytes | None:
    """The bytes of a local file (plain or ``.gz``, decompressed) if it holds at most ``most``,
    else None (too large, not a local file, unreadable, or a damaged gzip)."""
    if not os.path.isfile(path) or (not path.endswith(".gz") and os.path.getsize(path) > most):
        return None
    try:
        with open_local(path) as handle:
            data = handle.read(most + 1)
    except (OSError, EOFError, ValueError):
        return None
    return data if len(data) <= most else None


def _names(paths: Sequence[str] | str) -> list[str]:
    return [str(paths)] if isinstance(paths, (str, os.PathLike)) else [str(p) for p in paths]


def _read(spark: SparkSession, names: list[str]) -> DataFrame:
    sizes = {p: (os.path.getsize(p) if os.path.isfile(p) else None) for p in names}
    return read_lines(spark, names, sizes)


def read_offsets(spark: SparkSession, paths: Sequence[str] | str, snapshot_ts: datetime | str | None = None) -> DataFrame:
    """Read Kafka CLI offset dumps in place into one DataFrame in ``OFFSETS_SCHEMA``.

    Parameters
    ----------
    spark : SparkSession
    paths : sequence of str
        Files (local paths or URIs Spark can read); ``.gz`` is read transparently.
    snapshot_ts : datetime or str, optional
        Snapshot time of rows that have no time stamp line above them.

    Returns
    -------
    DataFrame
        One row per dump row, with its file and 1-based line number.
    """
    names = _names(paths)
    return parse_lines(prepare_lines(_read(spark, names), snapshot_ts), kinds_present(names))


@dataclass(frozen=True)
class OffsetDumps:
    """Offset dumps read and parsed once: the offsets ``table`` (materialised), where every
    input line went (``offsets_accounting``), the rows per dump kind and the snapshot times."""

    table: DataFrame
    accounting: dict
    by_kind: dict[str, int]
    snapshots: list[datetime]
    """In no order, as PySpark gives them (``contract.in_utc``)."""


def read_offsets_accounted(spark: SparkSession, paths: Sequence[str] | str, snapshot_ts: datetime | str | None = None) -> OffsetDumps:
    """``read_offsets`` and ``offsets_accounting`` of ``paths``, with the rows per kind and the
    snapshot times: the dumps read and parsed once, the three small summaries read in one Spark
    job (``spark.rows_together``). The prepared lines are released once counted
    (``spark.scratch_checkpoints``). In a small incident (``spark.kept_in_the_driver``) they
    and the table are kept by one job, which prepares the few lines twice."""
    names = _names(paths)
    kinds = kinds_present(names)
    with scratch_checkpoints(spark) as keep:
        prepared = prepare_lines(_read(spark, names), snapshot_ts)
        if kept_in_the_driver(spark):
            prepared, table = materialised_together([prepared, parse_lines(prepared, kinds)])
        else:
            prepared = materialise(prepared)
            table = materialise(parse_lines(prepared, kinds))
        table = keep(table)
        totals, by_kind, snapshots = rows_together(
            [
                _accounting(prepared, table, kinds),
                table.groupBy("kind").count(),
                table.select("snapshot_ts").where(F.col("snapshot_ts").isNotNull()).distinct(),
            ]
        )
    accounting = {k: int(totals[0][k]) for k in ("lines", "rows", "skipped", "unparsed", "records")}
    return OffsetDumps(table, accounting, {r["kind"]: r["count"] for r in by_kind}, [r["snapshot_ts"] for r in snapshots])


def offsets_accounting(spark: SparkSession, paths: Sequence[str] | str) -> dict:
    """Where every input line went: ``{"lines", "rows", "skipped", "unparsed", "records"}``.

    ``rows`` counts lines that gave offsets rows, ``skipped`` blank lines, stamp lines, headers,
    notes, the JSON around a response's rows and other lines the tools print that hold no row,
    ``unparsed`` the rest, so that ``rows + skipped + unparsed == lines``. ``records`` is the
    number of offsets rows (more than ``rows`` when JSON records ran together on one line, or one
    line holds several rows, as a compact Burrow response does). One small aggregate is collected.
    """
    return read_offsets_accounted(spark, paths).accounting


def _line_marks(prepared: DataFrame, table: DataFrame, kinds: Iterable[str] | None) -> DataFrame:
    """Per line that gave rows of ``table`` or that the ``structure_lines`` of a kind of
    ``kinds`` (default all) names: ``source_file, line, _records`` (its rows) and
    ``_structure`` (named), with one aggregate."""
    marks = table.select(c.SOURCE_FILE, c.LINE, F.lit(1).alias("_records"), F.lit(False).alias("_structure"))
    for module in _modules(kinds):
        if hasattr(module, "structure_lines"):
            named = module.structure_lines(prepared).select(c.SOURCE_FILE, c.LINE)
            marks = marks.unionByName(named.select("*", F.lit(0).alias("_records"), F.lit(True).alias("_structure")))
    return marks.groupBy(c.SOURCE_FILE, c.LINE).agg(F.sum("_records").alias("_records"), F.max("_structure").alias("_structure"))


def _accounting(prepared: DataFrame, table: DataFrame, kinds: Iterable[str] | None) -> DataFrame:
    """``offsets_accounting`` of the ``prepared`` lines that gave the offsets ``table`` (parsed
    as ``kinds``): one row. A line that any kind's ``skip`` names is skipped, whichever kinds
    were parsed."""
    skip = F.col(_STAMP) | F.col(_BLANK) | F.coalesce(F.col("_structure"), F.lit(False))
    for module in DUMP_KINDS.values():
        skip = skip | module.skip(F.col(c.VALUE))
    joined = prepared.join(_line_marks(prepared, table, kinds), [c.SOURCE_FILE, c.LINE], "left")
    is_row = F.coalesce(F.col("_records"), F.lit(0)) > 0
    return joined.agg(
        F.count(F.lit(1)).alias("lines"),
        F.count(F.when(is_row, 1)).alias("rows"),
        F.count(F.when(~is_row & skip, 1)).alias("skipped"),
        F.count(F.when(~is_row & ~skip, 1)).alias("unparsed"),
        F.coalesce(F.sum("_records"), F.lit(0)).alias("records"),
    )


__all__ = [
    "DUMP_KINDS",
    "MARKED_BYTES",
    "OFFSETS_SCHEMA",
    "OffsetDumps",
    "ROW_KINDS",
    "kinds_present",
    "offsets_accounting",
    "parse_lines",
    "prepare_lines",
    "read_offsets",
    "read_offsets_accounted",
    "sniff",
    "sniff_file",
]
