"""Record heads by layout and wrapper: each line's layout, its wrapper peeled, and the text that
continues a record even where a wrapper dates every line."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ... import layouts
from ...layouts import anchor
from ...layouts._common import EXCEPTION_LINE
from ...spark import built_once
from .. import wrappers
from ..sampling import ALL, Recognisers
from .kafka_filter import kafka_marked

TRIMMED_FRAME = r"at [\w$./<>-]+\("
"""A stack frame whose indentation a wrapper trimmed (logcli): ``at org.apache.kafka.X.y(X.java:1)``."""
TRIMMED_CONTINUATION = rf"{TRIMMED_FRAME}|[a-z][\w-]*(?:\.[\w-]+)+ = |\((?:[a-z][\w$]*\.)+[A-Z][\w$]*\)$"
"""Continuation lines whose indentation a wrapper trimmed (logcli): a stack frame, a config
block's ``key.name = value`` setting, and the ``(logger)`` that Kafka's layout puts on the line
after a message ending in a line break (a config block's last line)."""
SECOND_LINES = {name: layout.SECOND_LINE for name, layout in layouts.LAYOUTS.items() if hasattr(layout, "SECOND_LINE")}
"""Layout -> the second line of its records' heads, where it writes a head over two lines (``jul``,
``dotnet_console``); such heads are all kept by ``fold_lines``."""
CONTINUATION_TEXT = (
    rf"^(Caused by: |Suppressed: |\.\.\. \d+ more|{EXCEPTION_LINE}|{TRIMMED_CONTINUATION}|{'|'.join(SECOND_LINES.values())})"
)
"""Lines that continue a record even where a wrapper dates every line (``kubectl logs
--timestamps`` dates an exception's first line as it dates the record it belongs to): stack-trace
text, continuation lines a wrapper trimmed (``TRIMMED_CONTINUATION``), and the second line of a
head written over two (``SECOND_LINES``)."""


def recognise(lines: DataFrame, table: dict = layouts.LAYOUTS, tried: Recognisers = ALL) -> DataFrame:
    """``lines`` with the ``layout`` of each record head (null: not a head), its ``wrapper``
    (``wrappers.WRAPPERS``; null: none) and the wrapper's ``w_ts`` and ``w_host``; ``value``
    becomes the inner line where a wrapper was peeled.

    In order: the exact layouts on the line as it is; a wrapper, tried only on lines that start
    no record so and do not start with white space, whose inner line is a record head in any
    layout; the ``generic`` layout on the line as it is; last, a wrapper that dates an inner line
    in no layout (a ``message_only`` head) or wraps an indented one (a stack frame or a
    continuation). ``tried`` leaves the wrappers or the fallback out of the plan where samples
    of the input show no use for them (``sampling.needed_recognisers``). Where they show every
    line behind one prefix (``kubectl``'s or the CRI's) and none a record head as it is
    (``tried.prefixed``), a line that ``wrappers.prefixed_wrapper`` finds behind it skips the
    first two steps: it is found as ``wrapper_of`` would, without a regex over the whole line.
    """
    passed = [c for c in lines.columns if c != "value"]
    added, result = _recognition(tuple(table.items()), tried.wrappers, tried.fallback, tried.prefixed)
    for name, column in added:
        lines = lines.withColumn(name, column)
    return lines.select(*passed, *result)


@built_once
def _recognition(
    table_items: tuple, peel: bool, try_fallback: bool, prefixed: str | None
) -> tuple[tuple[tuple[str, Column], ...], tuple[Column, ...]]:
    """``recognise``'s columns for a layout table (its items) and what ``Recognisers`` tries
    (wrappers, the fallback, the prefix every line has): the columns added one after another,
    then those selected after the columns passed through. Built once
    (``spark.built_once``): the head regexes of every layout and wrapper take thousands of calls
    into the JVM to build."""
    table = dict(table_items)
    value = F.col("value")
    exact = {name: layout for name, layout in table.items() if name != layouts.FALLBACK}
    none = F.lit(None).cast("string")
    behind = wrappers.prefixed_wrapper(value, prefixed) if peel and prefixed else none
    added = [("prefixed", behind), ("layout", F.when(F.col("prefixed").isNull(), layouts.head_layout(value, exact)))]
    fallback = layouts.head_layout(value, table, layouts.FALLBACK) if try_fallback else F.lit(None).cast("string")
    marked = dated_kafka_line(value) if anchor.NAME in table else none
    if not peel:
        return tuple(added), (
            value,
            F.coalesce("layout", fallback, marked).alias("layout"),
            none.alias("wrapper"),
            none.alias("w_ts"),
            none.alias("w_host"),
            F.length(value).alias("width"),
        )
    first = F.substring(value, 1, 1)
    envelope = F.coalesce(F.col("wrapper").isin(*wrappers.ENVELOPES, *wrappers.PIECES), F.lit(False))
    may_wrap = (F.col("layout").isNull() | (F.col("layout") == "json_lines")) & (~first.isin("\t", "") | wrappers.kibana_row(value))
    indented_wrapper = F.col("clean").startswith(" ")  # a wrapper indented by a paste: tried without the indentation
    added += [
        ("clean", F.when(may_wrap, wrappers.strip_ansi(value))),
        ("unindented", F.when(indented_wrapper, F.ltrim(F.col("clean"))).otherwise(F.col("clean"))),
        (
            "wrapper",
            F.when(F.col("prefixed").isNotNull(), F.col("prefixed")).otherwise(
                F.coalesce(wrappers.wrapper_of(F.col("unindented")), F.when(~indented_wrapper & (F.col("clean") != value), F.lit("ansi")))
            ),
        ),
        ("w", F.when(F.col("wrapper").isNotNull(), wrappers.peel(F.col("unindented"), F.col("wrapper")))),
        ("wrapper", F.when(F.col("w")[3] == "P", F.concat("wrapper", F.lit("_partial"))).otherwise(F.col("wrapper"))),
        ("w_inner", wrappers.strip_ansi(F.col("w")[2])),
        ("w_time", F.nullif(F.col("w")[0], F.lit(""))),
        ("inner_layout", F.when(F.col("wrapper").isNotNull(), layouts.head_layout(F.col("w_inner"), table))),
        ("fallback", F.when(F.col("layout").isNull() & F.col("inner_layout").isNull() & ~envelope, fallback)),
        (
            "continuation",
            F.when(F.col("inner_layout").isNull(), F.col("w_inner").rlike(CONTINUATION_TEXT)),
        ),  # stack-trace text behind a wrapper
        (
            "inner_marked",
            F.when(F.col("fallback").isNull() & ~F.col("continuation"), dated_kafka_line(F.col("w_inner")))
            if anchor.NAME in table
            else F.lit(None).cast("string"),
        ),  # a Kafka line in no layout behind a wrapper: the anchor reads it, the wrapper names its host
    ]
    inner = F.col("w_inner")
    indented = F.substring(inner, 1, 1).isin(" ", "\t")
    continuation = F.coalesce(F.col("continuation"), F.lit(False))
    dated = F.col("w_time").isNotNull() & (inner != "") & ~indented & ~continuation & (F.col("wrapper") != "json_message")
    peeled = F.col("wrapper").isNotNull() & (
        F.col("inner_layout").isNotNull() | (F.col("fallback").isNull() & (indented | continuation | dated))
    )
    peeled = peeled & (
        F.col("layout").isNull() | F.col("inner_layout").isNotNull() | indented | continuation
    )  # a JSON record stays one unless it holds a line
    inner_marked = (F.col("layout").isNull() | (F.col("layout") == "json_lines")) & F.col("inner_marked").isNotNull() & ~dated & ~envelope
    peeled = peeled | envelope | inner_marked  # an envelope is never part of a record
    return tuple(added), (
        F.when(peeled, inner).otherwise(value).alias("value"),
        F.when(inner_marked, F.col("inner_marked"))
        .when(peeled & (F.col("layout") == "json_lines"), F.col("inner_layout"))
        .otherwise(F.coalesce("layout", "inner_layout", "fallback", F.when(peeled & dated, F.lit("message_only")), F.when(~peeled, marked)))
        .alias("layout"),
        F.when(peeled, F.col("wrapper")).alias("wrapper"),
        F.when(peeled, F.col("w_time")).alias("w_ts"),
        F.when(peeled, F.nullif(F.col("w")[1], F.lit(""))).alias("w_host"),
        F.length(F.coalesce(F.col("clean"), value)).alias("width"),
    )


def dated_kafka_line(value: Column) -> Column:
    """``anchor`` where a line in no layout and under no wrapper is no stack-trace text, opens
    with no white space, carries a Kafka mark (``kafka_marked``) and a date and time in its first
    characters (``anchor.DATED``): a Kafka record in a shape nobody named, which must not continue
    the record above it. Tried last, so only such lines pay for its scans."""
    return F.when(~F.substring(value, 1, 1).isin(" ", "\t") & kafka_marked(value) & value.rlike(anchor.DATED), F.lit(anchor.NAME))
