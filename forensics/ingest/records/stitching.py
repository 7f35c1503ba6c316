"""Stitching: continuation lines joined to their record head, files written newest first put in
the order written."""

from __future__ import annotations

from typing import Mapping

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ...registry import literal_map
from .broken_heads import DATE_ONLY
from .floor import anchor_floor
from .head_marks import mark_heads
from .kafka_filter import BARE_HEAD

BLOCK_LINES = 1 << 18
"""Lines of a file stitched by one window task: a file longer than this is stitched block by
block, so that no task sorts and holds a whole file: a long file would run the task out of
execution memory in a driver of the default size (docs/performance.md)."""


def in_time_order(spans: Mapping[str, tuple[int, int]], line: Column | None = None) -> Column:
    """Each row's ``line`` numbered in the order its file's lines were written, where the file
    runs newest first (``spans``: its URI -> the line of its first record head and its last
    line, ``F`` and ``N``): from ``F`` on, ``F + N - line``; the lines above ``F`` (a download's
    header) keep their number. Its own inverse: applied again it gives the file's line numbers.
    ``stitch`` and ``assemble_records`` then join each continuation line to the head written
    before it, in the order written."""
    first = literal_map({uri: first for uri, (first, _) in spans.items()}, "bigint")[F.col("uri")]
    last = literal_map({uri: last for uri, (_, last) in spans.items()}, "bigint")[F.col("uri")]
    line = F.col("line") if line is None else line
    return F.when(first.isNotNull() & (line >= first), first + last - line).otherwise(line)


def stitch(
    kept: DataFrame,
    first_head: Column | None = None,
    untimed: list[str] | None = None,
    block_lines: int | None = None,
    hosts: bool = False,
    leading_block_lines: int | None = None,
) -> DataFrame:
    """Mark each kept row with the head it continues (``head_line``) where it continues one.

    Before the first record head of its file (``first_head``: its line, null when the file has
    none), a row that opens with Kafka's log-context prefix or an exception class
    (``BARE_HEAD``: an excerpt pasted without timestamps) becomes a ``message_only`` head, and
    the rows after it may continue it. ``untimed``: the URIs of the files that have lines before
    their first head (None: any file may); the others are stitched in one pass. ``block_lines``:
    stitch in blocks of that many lines (``BLOCK_LINES``; None: a file at a time);
    ``leading_block_lines``: the same for the rows before their file's first head, which are
    few where a file has a head early (an excerpt that opens inside a stack trace). ``hosts``:
    some file names a host on its lines (``wrappers.NAMING_HOSTS``); then a row whose wrapper
    names another host than the head above it continues no head.
    """

    def mark(rows: DataFrame, blocks: int | None = block_lines) -> DataFrame:
        return mark_heads(rows, blocks, hosts)

    def promote(rows: DataFrame, blocks: int | None = block_lines) -> DataFrame:
        return mark(_promote_bare(rows, blocks, hosts), blocks)

    if first_head is None:
        return anchor_floor(promote(kept), block_lines, hosts)
    if untimed is not None and not untimed:
        return anchor_floor(mark(kept), block_lines, hosts)
    # no head can reach across the file's first head; a date alone right above it is its own (``dated_heads``)
    its_date = (F.col("line") == first_head - 1) & F.col("layout").isNull() & F.col("value").rlike(DATE_ONLY)
    before_first = F.coalesce((F.col("line") < first_head) & ~its_date, F.lit(True))
    if untimed is not None:
        before_first = before_first & F.col("uri").isin(*untimed)
    return anchor_floor(
        mark(kept.where(~before_first)).unionByName(promote(kept.where(before_first), leading_block_lines)), block_lines, hosts
    )


def _promote_bare(kept: DataFrame, block_lines: int | None, hosts: bool) -> DataFrame:
    """``kept`` with the rows that open with ``BARE_HEAD`` and continue no head (``mark_heads``) made heads."""
    bare = F.col("layout").isNull() & F.col("head_line").isNull() & F.col("value").rlike(BARE_HEAD)
    marked = mark_heads(kept, block_lines, hosts)
    return marked.select(*[F.when(bare, F.lit("message_only")).otherwise(F.col(c)).alias(c) if c == "layout" else c for c in kept.columns])
