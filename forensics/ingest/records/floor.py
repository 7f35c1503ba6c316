"""The anchor floor: a row that continues no head but carries a Kafka mark becomes a head."""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from ...layouts import anchor
from ...layouts._common import contains_any
from .broken_heads import STAMP_ONLY, leaves_bracket_open
from .head_marks import mark_heads
from .kafka_filter import kafka_marked

BARE_EXCEPTION = r"^\W{0,3}(?:CommitFailed|RebalanceInProgress|IllegalGeneration|UnknownMemberId|FencedInstanceId|TaskMigrated|ProducerFenced)(?:Exception|Error): "
"""A pasted Kafka exception by its simple name, ``CommitFailedException: Commit cannot be completed ..``
(a qualified one is stack-trace text, ``anchor.STACK_TEXT``, and opens a record only where
nothing stands above it: ``BARE_HEAD``)."""


def anchor_floor(marked: DataFrame, block_lines: int | None, hosts: bool) -> DataFrame:
    """``marked`` (stitched rows) where a row that is no head and continues none (it would be
    counted unparsed) becomes an ``anchor`` head (``layouts.anchor``) when it carries a Kafka mark
    (``kafka_marked``), a template's fixed text (``anchor.weak_marks``) or opens with a Kafka
    exception's simple name (``BARE_EXCEPTION``); the rows after it continue it (not a row dated
    in its first characters: ``mark_heads``). A row
    that is only a timestamp (``STAMP_ONLY``) above a Kafka line is the head of that line, broken
    after its time (``split_heads``).
    Only those rows are marked again: a row that continued no head is followed by rows that
    continue none either, up to the next head."""
    failed = F.col("layout").isNull() & F.col("head_line").isNull()
    value = F.col("value")
    needles, _ = anchor.weak_marks()
    weak = contains_any(value, anchor.weak_gate()) & F.exists(
        F.array(*[F.array(*[F.lit(part) for part in needle]) for needle in needles]),
        lambda needle: F.forall(needle, lambda part: value.contains(part)),
    )
    order = Window.partitionBy("uri").orderBy("line")
    broken = value.rlike(STAMP_ONLY) | leaves_bracket_open(value)  # a line a paste broke: its head goes on below
    after_stamp = F.coalesce((F.lag("line").over(order) == F.col("line") - 1) & F.lag(broken).over(order), F.lit(False))
    stamp_first = value.rlike(STAMP_ONLY) & F.coalesce(
        F.lead(kafka_marked(value)).over(order) & (F.lead("line").over(order) == F.col("line") + 1), F.lit(False)
    )
    layout = (
        F.when(after_stamp, F.lit(None).cast("string"))
        .when(stamp_first, F.lit(anchor.NAME))
        .when(kafka_marked(value) | weak | value.rlike(BARE_EXCEPTION), F.lit(anchor.NAME))
    )
    retried = marked.where(failed).drop("head_line").withColumn("layout", layout)
    return marked.where(~failed).unionByName(mark_heads(retried, block_lines, hosts).select(*marked.columns))
