"""Lines -> Kafka log records, with every line accounted for.

One pass over all lines recognises record heads by layout and folds everything that cannot
matter for Kafka (other applications' records, stack frames, binary junk) into counts per
file. What remains (heads that may be Kafka records, and lines that may continue them) is
small, and only there are continuation lines stitched to their record: a line continues the
nearest head above it when every line in between is also in that subset.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .. import layouts
from .. import schema as s

KAFKA_MARKERS = ("kafka", "o.a.k.", "clientId=", "stream-", "state-updater [")
"""Cheap substring test: a line containing none of these cannot be a Kafka client record by
itself (a Kafka logger, or a log-context prefix such as ``stream-thread [``). Each needle is
one more scan of every line, so they are few and short."""
MULTI_LINE_MARKERS = ("Config values:",)
"""Heads of multi-line records whose logger comes only on their last line (log4j layout)."""

KAFKA_LOGGER = r"^(org\.apache\.kafka|o\.a\.k)\."
KAFKA_PREFIX = (
    r"^(\[(Consumer|ShareConsumer|Producer|AdminClient) |stream-(thread|client) \[|"
    r"global-stream-thread \[|state-updater \[|task \[)"
)
STACK_FRAME = r"^\s+(at \S|\.\.\. \d+ )"
FRAME_PREFIX = 80
"""A stack frame is recognised by its first characters (regex on a prefix: no whole-line copy)."""
CONTROL_CHARS = r"[\x00-\x08\x0B\x0C\x0E-\x1F\x7F]"
TRAILING_LOGGER = r" \(([\w.$]+)\)$"
SAMPLE_CHARS = 500
SAMPLES_PER_REASON = 5

_LAYOUT_NAMES = list(layouts.LAYOUTS)
FOLD_FRAME, FOLD_BINARY, FOLD_UNDECODABLE = -50, -60, -61
FOLDS: dict[int, tuple[str, str | None, str | None]] = {
    **{-1 - i: (s.IRRELEVANT, None, name) for i, name in enumerate(_LAYOUT_NAMES)},
    FOLD_FRAME: (s.CONTINUATIONS, None, None),
    FOLD_BINARY: (s.UNPARSED, s.BINARY, None),
    FOLD_UNDECODABLE: (s.UNPARSED, s.UNDECODABLE, None),
}
"""Negative fold keys -> (bucket, reason, layout) of the lines folded under them."""


def _contains_any(value: Column, needles) -> Column:
    test = None
    for needle in needles:
        test = value.contains(needle) if test is None else test | value.contains(needle)
    return test


def fold_lines(lines: DataFrame) -> DataFrame:
    """Group the lines of each split (``read.read_splits``) by key: Kafka candidates and possible
    continuations keep their own line number as key; the rest fold into one row per split and
    ``FOLDS`` key.

    Returns ``split, k, n, line, value, layout, uri, start``: ``n`` lines folded, ``line`` the
    first of them (within the split), ``value`` the text of a kept line (null for a fold), and
    the split's ``uri`` and ``start`` on the row holding its first line only. Every aggregate is
    fixed-width and the key is numbers but for the kept text, so Spark aggregates by hash, not by
    sorting every line, and hashes no file name per line.
    """
    value = F.col("value")
    with_layout = lines.withColumn("layout", layouts.head_layout(value))
    head = F.col("layout").isNotNull()
    first = F.substring(value, 1, 1)
    candidate = head & ((F.col("layout") == "librdkafka") | _contains_any(value, KAFKA_MARKERS + MULTI_LINE_MARKERS))
    irrelevant_key = -F.array_position(F.array(*map(F.lit, _LAYOUT_NAMES)), F.col("layout"))  # -1 - index, as FOLDS
    frame = first.isin(" ", "\t") & F.substring(value, 1, FRAME_PREFIX).rlike(STACK_FRAME)
    key = (
        F.when(candidate, F.col("line"))
        .when(head, irrelevant_key)
        .when(frame, F.lit(FOLD_FRAME))
        .when(value.rlike(CONTROL_CHARS), F.lit(FOLD_BINARY))
        .when(~F.is_valid_utf8(value), F.lit(FOLD_UNDECODABLE))
        .otherwise(F.col("line"))
    )
    keyed = with_layout.select("split", "line", "layout", key.alias("k"), value, "uri", "start")
    first_line = F.col("line") == 1
    return (
        keyed.select(
            "split",
            "k",
            "layout",
            "line",
            F.when(F.col("k") >= 0, value).alias("value"),
            F.when(first_line, F.col("uri")).alias("uri"),
            F.when(first_line, F.col("start")).alias("start"),
        )
        .groupBy("split", "k", "layout", "value", "uri", "start")
        .agg(F.count(F.lit(1)).alias("n"), F.min("line").alias("line"))
    )


def split_facts(folded: DataFrame) -> DataFrame:
    """Per split, layout (null: not a record head) and first-line marker: lines and the first
    such line. Small; ``read.split_offsets`` reads the split's place in its file from it."""
    return folded.groupBy("split", "uri", "start", "layout").agg(F.sum("n").alias("lines"), F.min("line").alias("first_line"))


def stitch(kept: DataFrame) -> DataFrame:
    """Mark each kept row with the head it continues (``head_line``) where it continues one."""
    by_file = Window.partitionBy("uri").orderBy("line")
    upto = by_file.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    is_head = F.col("layout").isNotNull()
    numbered = kept.withColumn("rn", F.row_number().over(by_file))
    marked = numbered.select(
        "*",
        F.last(F.when(is_head, F.col("line")), True).over(upto).alias("head_line"),
        F.last(F.when(is_head, F.col("rn")), True).over(upto).alias("head_rn"),
        F.last(F.when(is_head, F.col("layout")), True).over(upto).alias("head_layout"),
    )
    contiguous = F.col("line") - F.col("head_line") == F.col("rn") - F.col("head_rn")
    joined = ~is_head & contiguous & (F.col("head_layout") != "json_lines")  # a JSON record is one line
    return marked.withColumn("head_line", F.when(is_head | joined, F.col("head_line")))


def is_kafka(layout: Column, logger: Column, message: Column) -> Column:
    """A record of a Kafka client: a librdkafka line, a Kafka logger, or a Kafka log-context
    prefix (``[Consumer clientId=..]``, ``stream-thread [..]``) opening the message."""
    return (layout == "librdkafka") | F.coalesce(logger, F.lit("")).rlike(KAFKA_LOGGER) | message.rlike(KAFKA_PREFIX)


def may_be_kafka_line(value: Column) -> Column:
    """The cheap test ``kafka_lines`` wants its lines to pass: a few substring scans, no regex."""
    return _contains_any(value, KAFKA_MARKERS) | (F.substring(value, 1, 1) == "%")


def kafka_lines(marked: DataFrame, host_of: Column, tz_of: Column, source_of: Column) -> DataFrame:
    """Line-level Kafka records: each Kafka record head parsed on its own line, with file and
    line number, no stitching and no accounting (a quick first look; ``ingest`` does the rest).

    ``marked`` holds the lines that pass ``may_be_kafka_line``, so most lines never reach a regex.
    """
    value = F.col("value")
    heads = marked.withColumn("layout", layouts.head_layout(value)).where(F.col("layout").isNotNull())
    parts = F.col("parts")
    parsed = heads.withColumn("parts", layouts.split_fields(F.col("layout"), value)).select(
        source_of.alias(s.SOURCE_FILE), host_of.alias(s.HOST), F.col("line").alias(s.LINE), F.col("layout").alias(s.LAYOUT),
        layouts.to_utc(F.col("layout"), F.nullif(parts[0], F.lit("")), tz_of).alias(s.TS),
        layouts._common.normalise_level(parts[1]).alias(s.LEVEL), F.nullif(parts[2], F.lit("")).alias(s.LOGGER),
        F.nullif(parts[3], F.lit("")).alias(s.THREAD), F.nullif(parts[4], F.lit("")).alias(s.CLIENT),
        parts[5].alias(s.MESSAGE),
    )
    return parsed.where(is_kafka(F.col(s.LAYOUT), F.col(s.LOGGER), F.col(s.MESSAGE)))


def assemble_records(stitched: DataFrame, host_of: Column, tz_of: Column, source_of: Column) -> DataFrame:
    """Heads with their continuation text, parsed into record fields, with bucket and reason.

    Each step is its own projection so that the per-layout expressions are evaluated (and
    compiled) once, not once per field that uses them.
    """
    heads = stitched.where(F.col("layout").isNotNull())
    tails = (
        stitched.where(F.col("layout").isNull() & F.col("head_line").isNotNull())
        .groupBy("uri", "head_line")
        .agg(F.max("line").alias("line_end"), F.sort_array(F.collect_list(F.struct("line", "value"))).alias("tail"))
    )
    parts = F.col("parts")
    with_parts = heads.join(tails, ["uri", "head_line"], "left").withColumn(
        "parts", layouts.split_fields(F.col("layout"), F.col("value"))
    )
    with_text = with_parts.select(
        "*",
        F.when(F.col("tail").isNull(), parts[5])
        .otherwise(F.concat_ws("\n", parts[5], F.concat_ws("\n", F.col("tail.value"))))
        .alias("text"),
        F.nullif(parts[0], F.lit("")).alias("ts_text"),
    )
    from_tail = F.when(
        (F.col("layout") == "log4j") & (parts[2] == "") & F.col("tail").isNotNull(),
        F.nullif(F.regexp_extract("text", TRAILING_LOGGER, 1), F.lit("")),
    )
    with_logger = with_text.select(
        "*",
        F.coalesce(F.nullif(parts[2], F.lit("")), from_tail).alias("logger_"),
        from_tail.isNotNull().alias("logger_in_tail"),
        layouts.to_utc(F.col("layout"), F.col("ts_text"), tz_of).alias("ts_"),
    )
    ts, ts_text = F.col("ts_"), F.col("ts_text")
    relevant = is_kafka(F.col("layout"), F.col("logger_"), parts[5])
    bad_ts = ts.isNull() & ts_text.isNotNull() & ~ts_text.rlike(r"^\d\d:\d\d:\d\d")
    bucket = F.when(~relevant, F.lit(s.IRRELEVANT)).when(bad_ts, F.lit(s.UNPARSED)).otherwise(F.lit(s.RECORDS))
    message = F.when(F.col("logger_in_tail"), F.regexp_replace("text", TRAILING_LOGGER, "")).otherwise(F.col("text"))
    return with_logger.withColumn("bucket", bucket).select(
        "uri",
        F.col("line"),
        "bucket",
        F.when(F.col("bucket") == s.UNPARSED, F.lit(s.BAD_TIMESTAMP)).alias("reason"),
        F.col("value").alias("sample"),
        ts.isNull().alias("undated"),
        source_of.alias(s.SOURCE_FILE),
        host_of.alias(s.HOST),
        F.coalesce(F.col("line_end"), F.col("line")).alias(s.LINE_END),
        F.col("layout").alias(s.LAYOUT),
        ts.alias(s.TS),
        layouts._common.normalise_level(parts[1]).alias(s.LEVEL),
        F.col("logger_").alias(s.LOGGER),
        F.nullif(parts[3], F.lit("")).alias(s.THREAD),
        F.nullif(parts[4], F.lit("")).alias(s.CLIENT),
        message.alias(s.MESSAGE),
    )


def classify_others(stitched: DataFrame, first_head: Column, file_layout: Column) -> DataFrame:
    """Bucket and reason of kept non-head rows: continuation, or unparsed with a reason.

    ``first_head`` is the line number of the file's first record head (null: none) and
    ``file_layout`` the file's main layout; JSON-lines files have no continuation lines.
    """
    rows = stitched.where(F.col("layout").isNull())
    json_file = F.coalesce(file_layout == "json_lines", F.lit(False))
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
    )
