"""Lines a container runtime cut into pieces (``wrappers.PIECES``): kept whole, joined without a line break."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ... import layouts
from .. import wrappers
from .rewrite import Rewrite


def may_continue_partial() -> Column:
    """Whether a record head may be a piece of a line (``wrappers.PIECES``) or the piece after
    one (a line its envelope alone dates): kept whole, for ``continue_partials``."""
    wrapper = F.col("wrapper")
    return wrapper.isin(*wrappers.PIECES) | (wrapper.isin(*wrappers.ENVELOPES) & (F.col("layout") == "message_only"))


def continue_partials(kept: DataFrame) -> DataFrame:
    """``kept`` (lines numbered in their file) with no record head after a piece of a line
    (``wrappers.PIECES``): its text goes on in the next line, which ``stitch`` then joins to it
    as a continuation (``joined_text`` without a line break). Pieces are rare, so the join is
    small."""
    after = kept.where(is_partial(F.col("wrapper"))).select("uri", (F.col("line") + 1).alias("line"), F.lit(True).alias("after_partial"))
    layout = F.when(F.col("after_partial").isNull(), F.col("layout")).alias("layout")
    return kept.join(after, ["uri", "line"], "left").select(*[layout if c == "layout" else c for c in kept.columns])


def whole_head_lines(table: dict = layouts.LAYOUTS) -> Rewrite:
    """The rewrite of heads (with their ``tail``) where a head is a piece of a line
    (``wrappers.PIECES``): its ``value`` the whole line, its pieces glued with no line break and
    taken off its ``tail``, and its ``layout`` the one the whole line is in (kept where it is in
    none). A JSON record cut by the runtime is no JSON until it is whole: its first piece is
    dated by the envelope alone (``message_only``), and its fields are spread over the whole line."""

    def glue(acc: Column, piece: Column) -> Column:
        return F.when(
            acc["open"],
            F.struct(
                F.concat(acc["text"], piece["value"]).alias("text"),
                is_partial(piece["wrapper"]).alias("open"),
                (acc["used"] + 1).alias("used"),
            ),
        ).otherwise(acc)

    start = F.struct(F.col("value").alias("text"), is_partial(F.col("wrapper")).alias("open"), F.lit(0).alias("used"))
    whole = F.when(is_partial(F.col("wrapper")), F.aggregate("tail", start, glue))  # null without a tail: kept as it is
    line = F.coalesce(F.col("whole.text"), F.col("value"))
    rest = F.when(F.col("whole").isNull(), F.col("tail")).otherwise(F.filter("tail", lambda _, i: i >= F.col("whole.used")))
    return (("whole", whole),), {
        "value": line,
        "layout": F.when(F.col("whole").isNotNull(), F.coalesce(layouts.head_layout(line, table), F.col("layout"))).otherwise(
            F.col("layout")
        ),
        "tail": F.when(F.size(rest) > 0, rest),
    }


def is_partial(wrapper: Column) -> Column:
    """Whether a line is a piece of a line (``wrappers.PIECES``), continued by the next
    without a line break."""
    return F.coalesce(wrapper.isin(*wrappers.PIECES), F.lit(False))
