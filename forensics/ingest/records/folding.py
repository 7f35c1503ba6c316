"""Folding: the lines that cannot matter for Kafka become counts per split; Kafka candidates and
possible continuations keep a row each. Also the per-split facts read from the folded rows."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ... import layouts
from ... import schema as s
from ...contract import DAY_FIRST_ORDER, MONTH_FIRST_ORDER
from ...layouts._common import SLASHED_DATE, contains_any
from ...spark import built_once
from ..sampling import ALL, Recognisers
from .hard_wraps import WRAP_WIDTHS
from .kafka_filter import MULTI_LINE_MARKERS, kafka_markers
from .pieces import may_continue_partial
from .recognition import SECOND_LINES, TRIMMED_FRAME, recognise

STACK_FRAME = r"^\s+(at \S|\.\.\. \d+ )"
FRAME_PREFIX = 80
"""A stack frame is recognised by its first characters (regex on a prefix: no whole-line copy)."""
CONTROL_CHARS = r"[\x00-\x08\x0B\x0C\x0E-\x1F\x7F]"

FOLD_IRRELEVANT, FOLD_FRAME, FOLD_BINARY, FOLD_UNDECODABLE = -1, -50, -60, -61
FOLDS: dict[int, tuple[str, str | None]] = {
    FOLD_IRRELEVANT: (s.IRRELEVANT, None),
    FOLD_FRAME: (s.CONTINUATIONS, None),
    FOLD_BINARY: (s.UNPARSED, s.BINARY),
    FOLD_UNDECODABLE: (s.UNPARSED, s.UNDECODABLE),
}
"""Negative fold keys -> (bucket, reason) of the lines folded under them; the layout of folded
record heads is a column of the fold."""


def fold_lines(lines: DataFrame, table: dict = layouts.LAYOUTS, tried: Recognisers = ALL) -> DataFrame:
    """Group the lines of each split (``read.read_splits``) by key: Kafka candidates and possible
    continuations keep their own line number as key; the rest fold into one row per split,
    ``FOLDS`` key, layout and wrapper.

    Returns ``split, k, n, line, value, width, layout, wrapper, w_ts, w_host, uri, start``: ``n`` lines
    folded, ``line`` the first of them (within the split), ``value`` the text of a kept line and
    ``width`` the width a terminal showed it at (its wrapper's prefix in, colour codes out)
    (null for a fold), and the split's ``uri`` and ``start`` on the row holding its first line
    only. Every aggregate is fixed-width and the key is numbers but for the kept text, so Spark
    aggregates by hash, not by sorting every line, and hashes no file name per line.
    """
    key, folded, counted = _folding(tuple(table.items()), tried.wrappers, tried.loggerless)
    keyed = recognise(lines, table, tried).select(
        "split", "line", "layout", "wrapper", "w_ts", "w_host", key.alias("k"), "value", "width", "uri", "start"
    )
    return (
        keyed.select(*folded).groupBy("split", "k", "layout", "wrapper", "value", "width", "w_ts", "w_host", "uri", "start").agg(*counted)
    )


@built_once
def _folding(table_items: tuple, peeled: bool, loggerless: bool) -> tuple[Column, tuple[Column, ...], tuple[Column, ...]]:
    """``fold_lines``' columns for a layout table (its items), wrappers peeled or not, in layouts
    that may name no logger or not (``kafka_markers``): the fold key of a recognised line, the
    columns of a keyed line that its fold groups by, and the fold's counts (built once:
    ``spark.built_once``)."""
    table = dict(table_items)
    value = F.col("value")
    head = F.col("layout").isNotNull()
    first = F.substring(value, 1, 1)
    partial = may_continue_partial() if peeled else F.lit(False)
    second_line = F.col("layout").isin(*SECOND_LINES)  # its Kafka text may be on the next line, which the head's fold would orphan
    by_logger = layouts.is_kafka_line(F.col("layout"), value, table)  # a shortened Kafka logger (``spark``)
    candidate = head & (
        (F.col("layout") == "librdkafka")
        | contains_any(value, kafka_markers(loggerless) + MULTI_LINE_MARKERS)
        | partial
        | second_line
        | by_logger
    )
    trimmed_frame = F.col("wrapper").isNotNull() & value.startswith("at ") & value.rlike(f"^{TRIMMED_FRAME}")
    frame = (first.isin(" ", "\t") & F.substring(value, 1, FRAME_PREFIX).rlike(STACK_FRAME)) | trimmed_frame
    key = (
        F.when(candidate, F.col("line"))
        .when(head, F.lit(FOLD_IRRELEVANT))
        .when(frame, F.lit(FOLD_FRAME))
        .when(value.rlike(CONTROL_CHARS), F.lit(FOLD_BINARY))
        .when(~F.is_valid_utf8(value), F.lit(FOLD_UNDECODABLE))
        .otherwise(F.col("line"))
    )
    first_line = F.col("line") == 1
    kept = F.col("k") >= 0
    folded = (
        F.col("split"),
        F.col("k"),
        F.col("layout"),
        F.col("wrapper"),
        F.col("line"),
        F.when(kept, value).alias("value"),
        F.when(kept, F.col("width")).alias("width"),
        F.when(kept, F.col("w_ts")).alias("w_ts"),
        F.when(kept, F.col("w_host")).alias("w_host"),
        F.when(first_line, F.col("uri")).alias("uri"),
        F.when(first_line, F.col("start")).alias("start"),
    )
    return key, folded, (F.count(F.lit(1)).alias("n"), F.min("line").alias("line"))


def split_facts(folded: DataFrame) -> DataFrame:
    """Per split, layout (null: not a record head) and first-line marker: lines and the first
    such line, the widest kept line, and how many kept lines are exactly each of
    ``WRAP_WIDTHS`` wide (``width_80``, ...). Small; ``read.split_offsets`` reads the split's place in its file from it."""
    width = F.col("width")  # a line's length is counted once, not once per width
    widths = [F.sum(F.when(width == w, F.col("n"))).alias(f"width_{w}") for w in WRAP_WIDTHS]
    slashed = (F.col("layout") == "generic") & F.substring("value", 1, 4).contains("/")
    fields = [F.max(F.when(slashed, F.regexp_extract("value", _SLASHED_HEAD, i).try_cast("int"))).alias(f"slashed_{i}") for i in (1, 2)]
    return (
        folded.withColumn("width", F.coalesce(F.col("width"), F.length("value")))
        .groupBy("split", "uri", "start", "layout", "wrapper")
        .agg(F.sum("n").alias("lines"), F.min("line").alias("first_line"), F.max(width).alias("widest"), *widths, *fields)
    )


_SLASHED_HEAD = rf"^\[?{SLASHED_DATE}"
"""A kept line that opens with a ``SLASHED`` date: its first and second fields (``split_facts``)."""


def slashed_date_orders(split_rows, offsets) -> dict[str, str | None]:
    """File URI -> the order of its ``dd/MM/yyyy`` or ``MM/dd/yyyy`` dates (``_common.in_date_order``),
    from the largest first and second fields of its kept heads (``split_facts``): the day is
    the one past 12. None for a file whose dates never pass 12 (or both do): its times stay
    unread, counted, not read with day and month perhaps swapped."""
    largest: dict[str, list[int]] = {}
    for row in split_rows:
        if row["slashed_1"] is not None:
            first_second = largest.setdefault(offsets[row["split"]][0], [0, 0])
            first_second[0], first_second[1] = max(first_second[0], row["slashed_1"]), max(first_second[1], row["slashed_2"])
    return {
        uri: (DAY_FIRST_ORDER if first > 12 else MONTH_FIRST_ORDER) if (first > 12) != (second > 12) else None
        for uri, (first, second) in largest.items()
    }
