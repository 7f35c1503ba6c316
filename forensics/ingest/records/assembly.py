"""Assembly: heads with their continuation text, parsed into record fields, with bucket and reason;
the rows that are no head, classified."""

from __future__ import annotations

from typing import NamedTuple

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ... import layouts
from ... import schema as s
from ...layouts import anchor
from ...layouts._common import SEP, any_to_utc, in_date_order, is_slashed, is_time_of_day
from ...spark import built_once
from .broken_heads import SPLIT_AFTER_HEAD, second_head_lines, split_heads
from .hard_wraps import joined_text, shown_width, whole_wrapped_heads, wrapped_once
from .kafka_filter import is_kafka, kafka_marked
from .pieces import is_partial, whole_head_lines
from .rewrite import Rewrite, rewritten

_LOGGER = r"[A-Za-z_$][\w.$]*"
_BROKEN_LOGGER = r"[A-Za-z_$][\w$]*\.[\w.$]*\n[\w.$]+|[A-Za-z_$][\w$]*\n[\w$]*\.[\w.$]*"
"""A logger a hard wrap broke in two (``(or`` then ``g.apache.kafka.streams...StreamThread:613)``):
a dotted name either side of one line break, which ``closing_fields`` takes out."""
LOGGER_IN_TEXT = (
    rf"(?s)^(.*?)[ \n]\(((?![\w$]+\.java:)(?:{_BROKEN_LOGGER}|{_LOGGER}))(?::\d+)?\)(?: \[([^\]\n]*)\]| - [\w.-]+=[^\n]*)?(\n|$)"
)
"""Kafka's log4j layout puts the logger at the end of the message, so in a record of several
lines (a message of several lines, a hard-wrapped line, then an exception) it closes the first
line that ends in `` (logger)`` (or in one a wrap broke over two lines: ``_BROKEN_LOGGER``), or
that is ``(logger)`` where a wrapper trimmed the space after a message's final line break
(logcli): group 2, removed by ``$1$4``. Strimzi's ``%d %p %m (%c) [%t]``
puts the thread after it, `` (logger) [thread]``: group 3; Confluent for Kubernetes' images a
context, `` (logger:line) - app=connect, clusterId=confluent``: removed with it."""
_CLOSING_FIELDS = (rf"{LOGGER_IN_TEXT}(.*)$", SEP.join(("$2", "$3", "$1$4$5")))
"""``LOGGER_IN_TEXT`` and the rest of the text, rewritten to logger, thread and text (``closing_fields``)."""
LOGGER_CLOSES = ("log4j", "generic")
"""Layouts in which a record's logger may close its message (``LOGGER_IN_TEXT``) where the head
gave none: Kafka's, whose multi-line messages carry it on their last line, and any layout of a
timestamp and a level, as Strimzi's."""

WRAPPER_FIELDS = ("w_level", "w_logger", "w_thread")
"""Record fields a wrapper may give (an export's level, logger and thread columns)."""


def record_ts(layout: Column, ts_text: Column, w_ts: Column, tz: Column, table: dict = layouts.LAYOUTS) -> Column:
    """A record's UTC time: its own line's timestamp, else its wrapper's (a time of day alone, a
    ``SLASHED`` date in no known order, or no time at all, in the line itself).

    The layouts that read any timestamp form (``_common.any_to_utc``) and the wrapper's time go
    through one ``any_to_utc``: the largest conversion is generated once, not once per use."""
    any_form = [name for name, module in table.items() if module.to_utc is any_to_utc]
    exact = {name: module for name, module in table.items() if name not in any_form}
    own_day = F.when(layout.isin(*any_form) & ~is_time_of_day(ts_text) & ~is_slashed(ts_text), ts_text)
    return F.coalesce(layouts.to_utc(layout, ts_text, tz, exact), any_to_utc(F.coalesce(own_day, w_ts), tz))


def closing_fields(text: Column) -> Column:
    """``[logger, thread, the text without them]`` where a logger closes a line of ``text``
    (``LOGGER_IN_TEXT``), else ``[text]``: one pass of one regex; the line break a wrap left in
    the logger is taken out."""
    fields = F.split(F.regexp_replace(text, *_CLOSING_FIELDS), SEP, 3)
    return F.transform(
        fields, lambda field, i: F.when((i == 0) & (F.size(fields) == 3), F.regexp_replace(field, "\n", "")).otherwise(field)
    )


def assemble_records(
    stitched: DataFrame,
    host_of: Column,
    tz_of: Column,
    source_of: Column,
    table: dict = layouts.LAYOUTS,
    wrap_of: Column | None = None,
    partial_lines: bool = False,
    date_order_of: Column | None = None,
) -> DataFrame:
    """Heads with their continuation text, parsed into record fields, with bucket and reason.

    Each step is its own projection so that the per-layout expressions are evaluated (and
    compiled) once, not once per field that uses them. A wrapper's ``w_level``, ``w_logger``
    and ``w_thread`` (an export's columns) fill the fields the line itself lacks. ``wrap_of``:
    the width at which each file was hard-wrapped (null: not wrapped; see ``wrap_widths``);
    ``partial_lines``: whether some line is a piece of a line (``wrappers.PIECES``);
    ``date_order_of``: the order of each file's ``dd/MM/yyyy`` dates (``slashed_date_orders``).
    What differs from file to file (these, host, zone and source) is looked up into columns of
    the heads (``FILE_COLUMNS``) first, so that the steps' columns are built once per layout
    table and flags (``_assembly``).
    """
    for column in WRAPPER_FIELDS:
        if column not in stitched.columns:
            stitched = stitched.withColumn(column, F.lit(None).cast("string"))
    if "width" not in stitched.columns:
        stitched = stitched.withColumn("width", F.lit(None).cast("int"))
    steps = _assembly(tuple(table.items()), partial_lines, date_order_of is not None, wrap_of is not None)
    per_file = {"wrap_width": wrap_of, "file_host": host_of, "file_tz": tz_of, "file_source": source_of, "date_order": date_order_of}
    heads = stitched.where(F.col("layout").isNotNull()).select(
        "*", *[(F.lit(None).cast(FILE_COLUMNS[name]) if column is None else column).alias(name) for name, column in per_file.items()]
    )
    tails = stitched.where(steps.tail_rows).groupBy("uri", "head_line").agg(*steps.tail)
    joined = heads.join(tails, ["uri", "head_line"], "left")
    for rewrite in steps.rewrites:
        joined = rewritten(joined, rewrite)
    weak = anchor.weak_marks()[1]
    joined = anchor.with_fields(joined, F.col("value"), F.col("layout") == anchor.NAME, "anchor_parts", weak)
    with_text = joined.withColumn("parts", F.coalesce(F.col("anchor_parts"), steps.parts)).select("*", *steps.text)
    with_logger = with_text.withColumn("closing", steps.closing).select("*", *steps.logger)
    anchored = anchor.with_fields(with_logger, F.col("value"), steps.anchored, "anchored", weak)
    return anchored.withColumn("bucket", steps.bucket).select(*steps.record)


FILE_COLUMNS = {"wrap_width": "int", "file_host": "string", "file_tz": "string", "file_source": "string", "date_order": "string"}
"""The columns of each head that ``assemble_records`` looks up by its file, and their types."""


class Assembly(NamedTuple):
    """``assemble_records``' columns, step by step."""

    tail_rows: Column
    """Which rows of the stitched lines continue a head."""
    tail: tuple[Column, ...]
    """A head's last line and its continuation lines, aggregated by head."""
    rewrites: tuple[Rewrite, ...]
    """Heads made whole (pieces of a line, a head over two lines) before they are split."""
    parts: Column
    text: tuple[Column, ...]
    closing: Column
    logger: tuple[Column, ...]
    anchored: Column
    """Whether a head that its layout read as another logger's record carries a Kafka mark
    (``kafka_marked``): its fields are then read again around the mark (``anchor.with_fields``)."""
    bucket: Column
    record: tuple[Column, ...]
    """The record's columns, as ``stitched`` rows' ``uri`` and ``line`` and ``schema.RECORDS_SCHEMA``,
    and ``not_read``: its lines that carry a Kafka mark where the record is no Kafka record, the first
    of them ``first_not_read`` (a continuation line's, where the head holds no mark)."""


@built_once
def _assembly(table_items: tuple, partial_lines: bool, dated: bool, wrapped: bool = False) -> Assembly:
    """``assemble_records``' columns for a layout table (its items), with pieces of lines or not,
    with a date order for some file or not, with a file hard-wrapped or not. Built once (``spark.built_once``): splitting and
    dating the fields of every layout take hundreds of calls into the JVM to build."""
    table = dict(table_items)
    piece_wrapper = (F.col("wrapper") if partial_lines else F.lit(None).cast("string")).alias("wrapper")
    second = second_head_lines()
    rewrites = (
        ((whole_head_lines(table),) if partial_lines else ())
        + ((whole_wrapped_heads(table),) if wrapped else ())
        + ((second,) if second else ())
        + (split_heads(table),)
    )
    parts = F.col("parts")
    ts_text = F.nullif(parts[0], F.lit(""))
    glued = F.col("wrap_width").isNotNull()
    if partial_lines:
        glued = glued | F.exists("tail", lambda piece: is_partial(piece["wrapper"]))
    first_piece = F.col("tail")[0]["value"]
    text = (
        F.when(F.col("tail").isNull(), parts[5])
        .when(wrapped_once(), F.concat(parts[5], first_piece))
        .when(
            (F.trim(parts[5]) == "") & first_piece.rlike(SPLIT_AFTER_HEAD),
            F.concat_ws(
                "\n", F.regexp_replace(first_piece, SPLIT_AFTER_HEAD, ""), F.concat_ws("\n", F.slice("tail.value", 2, F.size("tail")))
            ),
        )
        .when(~glued, F.concat_ws("\n", parts[5], F.concat_ws("\n", F.col("tail.value"))))
        .otherwise(joined_text(parts[5], shown_width(), F.col("wrap_width"), F.col("tail")))
        .alias("text"),
        (in_date_order(ts_text, F.col("date_order")) if dated else ts_text).alias("ts_text"),
    )
    closed = F.size("closing") == 3
    logger = (
        F.coalesce(F.nullif(parts[2], F.lit("")), F.when(closed, F.col("closing")[0]), F.col("w_logger")).alias("logger_"),
        F.coalesce(closed, F.lit(False)).alias("logger_in_tail"),
        F.when(closed, F.nullif(F.col("closing")[1], F.lit(""))).alias("thread_in_tail"),
        record_ts(F.col("layout"), F.col("ts_text"), F.col("w_ts"), F.col("file_tz"), table).alias("ts_"),
    )
    ts, ts_text = F.col("ts_"), F.col("ts_text")
    relevant = is_kafka(F.col("layout"), F.col("logger_"), parts[5])
    bad_ts = ts.isNull() & ts_text.isNotNull() & ~ts_text.rlike(r"^\d\d:\d\d:\d\d")
    message = F.when(F.col("logger_in_tail"), F.col("closing")[2]).otherwise(F.col("text"))
    anchored = F.col("anchored")
    is_anchored = anchored.isNotNull()
    anchor_text = F.when(F.col("tail").isNull(), anchored[5]).otherwise(
        F.concat_ws("\n", anchored[5], F.concat_ws("\n", F.col("tail.value")))
    )
    anchor_day = F.when((anchored[0] != "") & ~is_time_of_day(anchored[0]), anchored[0])
    record_time = F.when(is_anchored, any_to_utc(F.coalesce(anchor_day, F.col("w_ts")), F.col("file_tz"))).otherwise(ts)
    bucket = F.col("bucket")
    marked_tail = F.filter("tail", lambda piece: kafka_marked(piece["value"]))
    not_read = F.when(bucket != s.RECORDS, kafka_marked(F.col("value")).cast("int") + F.coalesce(F.size(marked_tail), F.lit(0))).otherwise(
        F.lit(0)
    )
    first_not_read = F.when(
        bucket != s.RECORDS,
        F.coalesce(F.when(kafka_marked(F.col("value")), F.col("line")), F.array_min(F.transform(marked_tail, lambda piece: piece["line"]))),
    )
    return Assembly(
        tail_rows=F.col("layout").isNull() & F.col("head_line").isNotNull(),
        tail=(
            F.max("line").alias("line_end"),
            F.sort_array(F.collect_list(F.struct("line", "value", piece_wrapper, "width"))).alias("tail"),
        ),
        rewrites=rewrites,
        parts=layouts.split_fields(F.col("layout"), F.col("value"), table),
        text=text,
        closing=F.when(F.col("layout").isin(*LOGGER_CLOSES) & (parts[2] == ""), closing_fields(F.col("text"))),
        logger=logger,
        anchored=~relevant & (F.col("layout") != anchor.NAME) & kafka_marked(F.col("value")),
        bucket=F.when(is_anchored, F.lit(s.RECORDS))
        .when(~relevant, F.lit(s.IRRELEVANT))
        .when(bad_ts, F.lit(s.UNPARSED))
        .otherwise(F.lit(s.RECORDS)),
        record=(
            F.col("uri"),
            F.col("line"),
            F.col("bucket"),
            F.when(F.col("bucket") == s.UNPARSED, F.lit(s.BAD_TIMESTAMP)).alias("reason"),
            F.col("value").alias("sample"),
            record_time.isNull().alias("undated"),
            F.col("wrapper"),
            F.col("file_source").alias(s.SOURCE_FILE),
            F.coalesce(F.col("w_host"), F.col("file_host")).alias(s.HOST),
            F.coalesce(F.col("line_end"), F.col("line")).alias(s.LINE_END),
            F.when(is_anchored, F.lit(anchor.NAME)).otherwise(F.col("layout")).alias(s.LAYOUT),
            record_time.alias(s.TS),
            layouts._common.normalise_level(
                F.coalesce(F.nullif(F.when(is_anchored, anchored[1]).otherwise(parts[1]), F.lit("")), F.col("w_level"))
            ).alias(s.LEVEL),
            F.when(is_anchored, F.nullif(anchored[2], F.lit(""))).otherwise(F.col("logger_")).alias(s.LOGGER),
            F.coalesce(
                F.nullif(F.when(is_anchored, anchored[3]).otherwise(parts[3]), F.lit("")), F.col("thread_in_tail"), F.col("w_thread")
            ).alias(s.THREAD),
            F.nullif(parts[4], F.lit("")).alias(s.CLIENT),
            F.when(is_anchored, anchor_text).otherwise(message).alias(s.MESSAGE),
            not_read.alias("not_read"),
            first_not_read.alias("first_not_read"),
        ),
    )


def classify_others(stitched: DataFrame, first_head: Column, file_layout: Column) -> DataFrame:
    """Bucket and reason of kept non-head rows: continuation, or unparsed with a reason.

    ``first_head`` is the line number of the file's first record head (null: none) and
    ``file_layout`` the file's main layout; JSON-lines files have no continuation lines.
    """
    rows = stitched.where(F.col("layout").isNull())
    json_file = F.coalesce(file_layout.isin(*layouts.ONE_LINE), F.lit(False))
    after_first_head = F.coalesce(first_head < F.col("line"), F.lit(False))
    continues = ~json_file & (F.col("head_line").isNotNull() | after_first_head)
    reason = (
        F.when(json_file, F.lit(s.MALFORMED_JSON))
        .when(first_head.isNull(), F.lit(s.UNKNOWN_LAYOUT))
        .otherwise(F.lit(s.NO_RECORD_TO_CONTINUE))
    )
    return rows.select(
        "uri",
        "line",
        F.when(continues, F.lit(s.CONTINUATIONS)).otherwise(F.lit(s.UNPARSED)).alias("bucket"),
        F.when(~continues, reason).alias("reason"),
        F.col("value").alias("sample"),
        F.when(F.col("head_line").isNull() & kafka_marked(F.col("value")), F.lit(1)).otherwise(F.lit(0)).alias("not_read"),
    ).withColumn("first_not_read", F.when(F.col("not_read") > 0, F.col("line")))
