"""Lines hard-wrapped at a terminal's width by a paste: the width a file was wrapped at, and its
pieces joined again without a line break."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from ... import layouts
from .pieces import is_partial
from .recognition import CONTINUATION_TEXT
from .rewrite import Rewrite

WRAP_WIDTHS = (80, 100, 120, 132, 140, 150, 160, 180, 200)
"""Terminal widths at which a pasted line may have been hard-wrapped."""
WRAP_MIN_LINES = 5
"""A file is taken as hard-wrapped at a width when at least this many of its kept lines are
exactly that wide and none is wider (one line of 80 characters is a coincidence, a paste cut at
80 is not; a terminal leaves no line longer than its width)."""


def wrap_widths(split_rows, offsets) -> dict[str, int]:
    """File URI -> the width at which it was hard-wrapped, from ``split_facts`` rows."""
    counts: dict[tuple[str, int], int] = {}
    widest: dict[str, int] = {}
    for row in split_rows:
        uri = offsets[row["split"]][0]
        widest[uri] = max(widest.get(uri, 0), row["widest"] or 0)
        for w in WRAP_WIDTHS:
            counts[(uri, w)] = counts.get((uri, w), 0) + (row[f"width_{w}"] or 0)
    return {uri: w for (uri, w), n in counts.items() if w == widest[uri] and n >= WRAP_MIN_LINES}


def joined_text(message: Column, width: Column, wrap: Column, tail: Column) -> Column:
    """The message with its continuation lines (``tail``: sorted ``(line, value, wrapper)``
    structs), one per line, except that a line continues without a line break after a piece of
    a line (its wrapper is in ``wrappers.PIECES``; a head that is one is whole already:
    ``whole_head_lines``) and after a line hard-wrapped at a terminal's width (``wrap``: the
    width at which the file is wrapped, else null; every piece but the last of a wrapped line,
    the head's or a continuation line's, is that wide; ``width``: the head line's)."""

    def merge(acc: Column, piece: Column) -> Column:
        wrapped = (acc["width"] == wrap) & ~piece["value"].rlike(r"^(\t|  )")  # not an indented line
        text = F.concat(
            acc["text"], F.when(acc["partial"] | F.coalesce(wrapped, F.lit(False)), F.lit("")).otherwise(F.lit("\n")), piece["value"]
        )
        return F.struct(text.alias("text"), shown_width(piece).alias("width"), is_partial(piece["wrapper"]).alias("partial"))

    start = F.struct(message.alias("text"), width.alias("width"), F.lit(False).alias("partial"))
    return F.aggregate(tail, start, merge)["text"]


def shown_width(line: Column | None = None) -> Column:
    """The width at which a terminal showed a line (a ``tail`` piece, else the row's): its
    ``width`` (its wrapper's prefix in: the terminal wrapped the whole line), else its text's length."""
    if line is None:
        return F.coalesce(F.col("width"), F.length("value"))
    return F.coalesce(line["width"], F.length(line["value"]))


def whole_wrapped_heads(table: dict = layouts.LAYOUTS) -> Rewrite:
    """The rewrite of heads (with their ``tail``) of a file hard-wrapped at a terminal's width
    (``wrap_width``) whose line is that wide: the pieces that follow, while each one before is
    that wide and none is indented, are glued to its ``value`` with no line break and taken off
    its ``tail``, and its ``layout`` is the one the whole line is in (kept where it is in none).
    The head is then split whole: a wrap inside its logger or its Kafka prefix (``docker compose
    logs``' ``service  | `` in front) no longer cuts a field."""
    wrap = F.col("wrap_width")

    def glue(acc: Column, piece: Column) -> Column:
        takes = acc["open"] & ~piece["value"].rlike(r"^(\t|  )")
        return F.when(
            takes,
            F.struct(
                F.concat(acc["text"], piece["value"]).alias("text"),
                shown_width(piece).alias("width"),
                (shown_width(piece) == wrap).alias("open"),
                (acc["used"] + 1).alias("used"),
            ),
        ).otherwise(F.struct(acc["text"], acc["width"], F.lit(False).alias("open"), acc["used"]))

    start = F.struct(
        F.col("value").alias("text"), shown_width().alias("width"), (shown_width() == wrap).alias("open"), F.lit(0).alias("used")
    )
    whole = F.when(wrap.isNotNull() & F.col("tail").isNotNull() & (shown_width() == wrap), F.aggregate("tail", start, glue))
    used = F.coalesce(F.col("wrapped.used"), F.lit(0))
    line = F.when(used > 0, F.col("wrapped.text"))
    return (("wrapped", whole),), {
        "value": F.coalesce(line, F.col("value")),
        "width": F.when(used > 0, F.col("wrapped.width")).otherwise(F.col("width")),
        "layout": F.when(used > 0, F.coalesce(layouts.head_layout(line, table), F.col("layout"))).otherwise(F.col("layout")),
        "tail": F.when(used == 0, F.col("tail")).when(F.size("tail") > used, F.slice("tail", used + 1, F.size("tail"))),
    }


def wrapped_once() -> Column:
    """Whether a head (with its ``tail``) is one line hard-wrapped once at a terminal's width, too
    few lines for ``wrap_widths`` to tell the file wrapped: the head is exactly one of
    ``WRAP_WIDTHS`` wide and its one continuation line opens with no indentation and no
    stack-trace text (``CONTINUATION_TEXT``). Its message is then joined with no line break."""
    piece = F.col("tail")[0]["value"]
    return (
        F.col("wrap_width").isNull()
        & (F.size("tail") == 1)
        & shown_width().isin(*WRAP_WIDTHS)
        & ~piece.rlike(r"^(\t|  )")
        & ~piece.rlike(CONTINUATION_TEXT)
    )
