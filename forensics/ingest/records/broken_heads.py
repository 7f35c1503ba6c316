"""Heads a paste or a layout broke over two lines: made one line again before they are split."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from ... import layouts
from ...layouts import anchor
from ...layouts._common import CLIENT_KINDS, WORKER_KIND
from .hard_wraps import WRAP_WIDTHS, shown_width
from .recognition import SECOND_LINES
from .rewrite import Rewrite

SPLIT_AFTER_HEAD = r"^[-:|] +(?=\S)"
"""The separator that opens a record's message where a paste broke its head's line after the
logger (``.. SubscriptionState`` then ``- [Consumer clientId=..] Resetting ..``): the message is
the next line's, without it."""
STAMP_ONLY = rf"^\s*(?:{anchor.STAMP}|\d{{4}}-\d\d-\d\d)\s*$"
"""A line holding only a timestamp (or a date): the head of a record whose line a paste broke
after it (``anchor_floor`` joins the line below to it, ``split_heads``)."""


def leaves_bracket_open(text: Column) -> Column:
    """Whether ``text`` opens more ``[`` than it closes (a log-context prefix a paste broke after
    its ``clientId=..,``), colour codes that lost their ESC byte (``[32mINFO[0m``) not counted."""
    plain = F.regexp_replace(text, anchor.LOST_ESC, "")
    return F.size(F.split(plain, r"\[")) > F.size(F.split(plain, r"\]"))


CONTEXT_LEFT_OPEN = (
    rf"(?:\[(?:{'|'.join((*CLIENT_KINDS, WORKER_KIND))}) (?:instanceId=[^,\]]*, )?clientId=|(?:global-)?stream-(?:thread|client) \[)[^\]]*$"
)
"""A Kafka log-context prefix that a line leaves open (``[Consumer clientId=c-1,`` then, on the next
line, ``groupId=g] Seeking ..``): a paste broke the line inside it, whatever the layout."""
DATE_ONLY = r"^\s*\d{4}-\d\d-\d\d\s*$"
"""A line holding only a date: a paste broke a head after its date (``2021-05-17`` above
``08:12:40.313 INFO ..``), which the head below completes (``dated_heads``)."""
TIME_FIRST = r"^\s*\d\d:\d\d:\d\d"
"""A head that opens with a time of day and no date (``HH:mm:ss.SSS``), which a date alone on the
line above may complete."""


def split_heads(table: dict = layouts.LAYOUTS) -> Rewrite:
    """The rewrite of heads (with their ``tail``) whose line a paste broke: a head that is only a
    timestamp or a date, or whose text leaves a ``[`` open (an ``anchor`` head: any ``[``; any
    other, a Kafka log-context prefix, ``CONTEXT_LEFT_OPEN``), takes the next lines into its
    ``value``, joined by a space, while that holds; they are taken off the ``tail``. The head is
    then split as one line, in the layout the whole line is in (kept where it is in none). A line
    as wide as its file's wrap (``wrap_width``) or a terminal's (``WRAP_WIDTHS``) was cut by a
    hard wrap, not broken at a space: the next line is glued to it as it is."""
    anchored = F.col("layout") == anchor.NAME

    def open_(text: Column) -> Column:
        return text.rlike(STAMP_ONLY) | F.when(anchored, leaves_bracket_open(text)).otherwise(text.rlike(CONTEXT_LEFT_OPEN))

    def join(acc: Column, piece: Column) -> Column:
        wrapped = (acc["width"] == F.coalesce(F.col("wrap_width"), F.lit(-1))) | acc["width"].isin(*WRAP_WIDTHS)
        text = F.concat(
            acc["text"], F.when(wrapped, F.lit("")).otherwise(F.lit(" ")), F.when(wrapped, piece["value"]).otherwise(F.trim(piece["value"]))
        )
        taken = F.struct(text.alias("text"), open_(text).alias("open"), (acc["used"] + 1).alias("used"), shown_width(piece).alias("width"))
        return F.when(acc["open"], taken).otherwise(acc)

    start = F.struct(F.col("value").alias("text"), F.lit(True).alias("open"), F.lit(0).alias("used"), shown_width().alias("width"))
    joined = F.when(F.col("tail").isNotNull() & open_(F.col("value")), F.aggregate("tail", start, join))
    used = F.coalesce(F.col("head_joined.used"), F.lit(0))
    relaid = F.when(~anchored & (used > 0), layouts.head_layout(F.col("head_joined.text"), table))
    return (("head_joined", joined),), {
        "value": F.coalesce(F.col("head_joined.text"), F.col("value")),
        "layout": F.coalesce(relaid, F.col("layout")),
        "tail": F.when(used == 0, F.col("tail")).when(F.size("tail") > used, F.slice("tail", used + 1, F.size("tail"))),
    }


def second_head_lines() -> Rewrite | None:
    """The rewrite of heads (with their ``tail``) where a head's layout writes it over two lines
    (``SECOND_LINES``: java.util.logging's date and caller, then ``LEVEL: message``) and the
    next line of its file is that second line: ``value`` both lines, joined by a line break, and
    the second taken off the ``tail``. The head is then split as one. None: no layout does."""
    following = F.get(F.col("tail"), 0)  # null where no line continues the head
    second = None
    for name, regex in SECOND_LINES.items():
        second = (F.when if second is None else second.when)(F.col("layout") == name, following["value"].rlike(f"^{regex}"))
    if second is None:
        return None
    takes = F.coalesce(second & (following["line"] == F.col("line") + 1), F.lit(False))
    rest = F.when(F.size("tail") > 1, F.slice("tail", 2, F.size("tail") - 1))
    return (), {
        "value": F.when(takes, F.concat_ws("\n", "value", following["value"])).otherwise(F.col("value")),
        "tail": F.when(takes, rest).otherwise(F.col("tail")),
    }
