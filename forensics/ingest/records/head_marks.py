"""Each kept row marked with the nearest head above it that it continues, a file or a block at a time."""

from __future__ import annotations

from pyspark.sql import DataFrame, Window, WindowSpec
from pyspark.sql import functions as F

from ... import layouts
from ...layouts import anchor
from .broken_heads import DATE_ONLY, TIME_FIRST
from .kafka_filter import kafka_marked


def mark_heads(kept: DataFrame, block_lines: int | None = None, hosts: bool = False) -> DataFrame:
    """``kept`` with ``head_line``: the line of the nearest head above a row when every line
    in between is kept (and the head may have continuation lines), the row's own line for a
    head, else null.

    With ``hosts``, a row behind a wrapper that names its host (``w_host``) continues the
    nearest head of that host, or of none named, in the run of kept lines it is in: where the
    lines of several writers interleave in one file (stern, ``kubectl logs -f --prefix``,
    ``docker compose logs``), one writer's config block or stack trace goes on across another
    writer's lines, and is never taken into the other writer's record.

    In blocks (``block_lines``), a window orders each block alone; the rows that open a block
    with no head above them in it take the head its earlier blocks carry (``_carried``), where
    that head is of their host. A date alone above a head that opens with a time of day is made
    that head (``dated_heads``).
    """
    block = F.lit(0) if block_lines is None else F.floor((F.col("line") - 1) / block_lines)
    by_block = Window.partitionBy("uri", "block").orderBy("line")
    upto = by_block.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    is_head = F.col("layout").isNotNull()
    host = F.col("w_host") if hosts else F.lit(None).cast("string")
    head = F.struct(F.col("line").alias("line"), F.col("rn").alias("rn"), F.col("layout").alias("layout"), host.alias("host"))
    numbered = dated_heads(kept.withColumn("block", block), by_block).withColumn("rn", F.row_number().over(by_block))
    nearest = F.last(F.when(is_head, head), True).over(upto)
    if hosts:
        by_host = Window.partitionBy("uri", "block", "w_host").orderBy("line").rowsBetween(Window.unboundedPreceding, Window.currentRow)
        unnamed = F.last(F.when(is_head & F.col("w_host").isNull(), head), True).over(upto)
        numbered = numbered.withColumn("any", nearest).withColumn("unnamed", unnamed)  # one window over the block, then one per host
        own = F.last(F.when(is_head, head), True).over(by_host)
        nearest = F.when(F.col("w_host").isNull(), F.col("any")).otherwise(F.greatest(own, F.col("unnamed")))  # structs order by line first
    marked = numbered.withColumn("head", nearest).select(
        *kept.columns,
        "block",
        "rn",
        F.col("head.line").alias("head_line"),
        F.col("head.rn").alias("head_rn"),
        F.col("head.layout").alias("head_layout"),
        F.col("head.host").alias("head_host"),
    )
    contiguous = F.col("line") - F.col("head_line") == F.col("rn") - F.col("head_rn")  # line - rn is constant along a run of kept lines
    may_continue = ~F.col("head_layout").isin(*layouts.ONE_LINE)
    ends_anchored = (
        (F.col("head_layout") == anchor.NAME) & F.col("value").rlike(anchor.DATED) & ~kafka_marked(F.col("value"))
    )  # another logger's record
    joined = ~is_head & contiguous & may_continue & ~ends_anchored
    helpers = ("block", "rn", "head_rn", "head_layout", "head_host")
    if block_lines is None:
        return marked.withColumn("head_line", F.when(is_head | joined, F.col("head_line"))).drop(*helpers)
    opening = F.col("head_line").isNull() & (
        F.col("line") - F.col("block") * block_lines == F.col("rn")
    )  # every line of the block up to here kept
    states = marked.select(
        "uri",
        "block",
        "line",
        F.when(is_head | joined, F.when(may_continue, F.col("head_line")).otherwise(F.lit(-1)))
        .when(opening, F.lit(0))
        .otherwise(F.lit(-1))
        .alias("carries"),
        F.when(is_head | joined, F.col("head_host")).alias("carries_host"),
    )
    carried = _carried(states, block_lines)
    # The window leaves the rows partitioned by (uri, block): only the small ``carried`` moves to
    # them, where a broadcast of it would be a Spark job of its own.
    with_carry = marked.join(carried.hint("shuffle_hash"), ["uri", "block"], "left")
    of_host = host.isNull() | F.col("carried_host").isNull() | (host == F.col("carried_host"))
    head_line = F.when(is_head | joined, F.col("head_line")).when(opening & of_host, F.col("carried"))
    return with_carry.withColumn("head_line", head_line).drop(*helpers, "carried", "carried_host")


def _carried(states: DataFrame, block_lines: int) -> DataFrame:
    """Per ``(uri, block)``, the head line that reaches into the block from the blocks before
    it (``carried``; absent or null: none) and that head's host (``carried_host``), from each
    row's ``carries``: the head line a row passes on when it ends a block (-1: none; 0: the head
    passed into the block), and ``carries_host``.

    A block passes a head on only when its last line is kept; its own head when that last line
    continues it, else the one passed into it when every line of the block is kept.
    """
    ends = states.groupBy("uri", "block").agg(
        F.max_by("carries", "line").alias("carries"), F.max_by("carries_host", "line").alias("host"), F.max("line").alias("end")
    )
    passes = F.when(F.col("end") == (F.col("block") + 1) * block_lines, F.col("carries")).otherwise(F.lit(-1))
    by_file = Window.partitionBy("uri").orderBy("block")
    earlier = by_file.rowsBetween(Window.unboundedPreceding, -1)
    runs = ends.select(
        "uri", "block", "host", passes.alias("passes"), (F.col("block") - F.row_number().over(by_file)).alias("run")
    )  # run: equal along consecutive blocks
    source = F.last(F.when(F.col("passes") != 0, F.struct("run", F.col("passes").alias("head"), "host")), True).over(earlier)
    chained = runs.select("uri", "block", "run", source.alias("source"))
    reaches = (F.col("source.run") == F.col("run")) & (F.col("source.head") > 0)
    return chained.select(
        "uri", "block", F.when(reaches, F.col("source.head")).alias("carried"), F.when(reaches, F.col("source.host")).alias("carried_host")
    )


def dated_heads(rows: DataFrame, order: WindowSpec) -> DataFrame:
    """``rows`` where a line that is only a date (``DATE_ONLY``) right above a head that opens with
    a time of day (``TIME_FIRST``) is made the head, in that head's layout, and the head's line
    continues it: a paste broke the line after its date (``2021-05-17`` then ``08:12:40.313 INFO
    ..``). ``split_heads`` joins the two lines again; the record is cited from the date's line."""
    short = F.length("value") <= 16
    date_only = F.col("layout").isNull() & short & F.col("value").rlike(DATE_ONLY)
    time_first = F.col("layout").isNotNull() & F.col("value").rlike(TIME_FIRST)
    below = F.lead(F.when(time_first, F.struct("line", "layout"))).over(order)
    above = F.lag(F.when(date_only, F.col("line"))).over(order)
    takes = date_only & (below["line"] == F.col("line") + 1)
    given = time_first & (above == F.col("line") - 1)
    layout = F.when(takes, below["layout"]).when(given, F.lit(None).cast("string")).otherwise(F.col("layout"))
    return rows.select(*[layout.alias(c) if c == "layout" else c for c in rows.columns])
