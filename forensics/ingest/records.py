"""Lines -> Kafka log records, with every line accounted for.

One pass over all lines recognises record heads by layout and folds everything that cannot
matter for Kafka (other applications' records, stack frames, binary junk) into counts per
file. What remains (heads that may be Kafka records, and lines that may continue them) is
small, and only there are continuation lines stitched to their record: a line continues the
nearest head above it when every line in between is also in that subset.
"""

from __future__ import annotations

from typing import Mapping, NamedTuple, Sequence

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .. import layouts
from .. import schema as s
from ..contract import DAY_FIRST_ORDER, MONTH_FIRST_ORDER
from ..layouts import anchor
from ..layouts._common import (
    BRACKETED_OPENINGS,
    EXCEPTION_LINE,
    FRANZ_GO_MESSAGE,
    KAFKAJS_MESSAGE,
    LEVEL_AND_FRANZ_GO,
    SEP,
    SLASHED_DATE,
    any_to_utc,
    contains_any,
    in_date_order,
    is_slashed,
    is_time_of_day,
)
from ..registry import literal_map
from ..spark import built_once
from . import wrappers
from .sampling import ALL, Recognisers

KAFKA_MARKERS = ("afka", "a.k", "clientId=", "stream-", "state-updater [", "[thrd:")
"""Cheap substring test: a line containing none of these, in a layout that names its logger,
cannot be a Kafka client record by itself (a Kafka logger, full or abbreviated as ``o.a.k.`` or
Quarkus's ``org.apa.kaf.``, a log-context prefix such as ``stream-thread [``, ``Kafka
version:`` and the like, librdkafka's ``[thrd:main]`` in an application's own layout). Each
needle is one more scan of every line, so they are few and short."""
CLIENT_WORDS = ("roup", "artition", "Heartbeat", "ommit", "oordinator", "poll timeout", "subscribed topics")
"""The words of kafka-python's and aiokafka's lines (``PYTHON_CLIENT_MESSAGE``) and franz-go's
(``; group: ``), and the ``"groupId"`` a KafkaJS JSON line names where a custom log creator left
out its ``logger``: their only mark where the layout names no logger. Scanned for only where the
samples of the inputs show such a layout (``sampling.Recognisers.loggerless``): each needle is a
scan of every line. On the 4M-line benchmark corpus, in Kafka's own layout, which names its
loggers, ``kafka_lines`` took 1.41x the JVM's CPU seconds with them (13.9 s against 9.8 s),
the whole ingest 1.19x (28.0 s against 23.5 s; ``benchmarks/compare_revisions.py``, medians of
3 rounds)."""
MULTI_LINE_MARKERS = ("Config values:",)
"""Heads of multi-line records whose logger comes only on their last line (log4j layout)."""
OPENING_MARKERS = (*BRACKETED_OPENINGS, "task [", "#consumer-", "#producer-")
"""A piece of each Kafka opening of a message (``KAFKA_PREFIX``) that ``KAFKA_MARKERS`` may miss:
an export's message column can hold the message alone, without the logger."""

KAFKA_LOGGER = (
    r"^((org\.apache\.kafka|o\.a\.k|org\.apa\.kaf|o\.a\.kafka|aiokafka|kafka\.consumer)\."
    r"|kafka\.coordinator(\.(base|consumer|heartbeat))?$|kafkajs$|(org\.springframework\.kafka\.listener|o\.s\.k\.l)\.KafkaMessageListenerContainer$)"
)
"""The Java client's loggers, and the other clients': kafka-python's group and consumer loggers
(``kafka.coordinator[.base|.consumer|.heartbeat]``, ``kafka.consumer.*``; not the broker's
``kafka.coordinator.group.*``), aiokafka's and KafkaJS's; Spring for Apache Kafka's listener
container, whose rebalance listener writes the Java client's callbacks (``partitions assigned``)."""
PYTHON_CLIENT_MESSAGE = (
    r"(?:\(Re-\)joining|Successfully (?:joined|synced)|Joined|Leaving consumer) group |Elected group leader -- |"
    r"Received successful JoinGroup response for group |LeaveGroup request succeeded|Group \S+ is rebalancing|"
    r"(?:Setting newly|Revoking previously) assigned partitions\b|"
    r"(?:Heartbeat|OffsetCommit|Auto offset commit|(?:Pre-rebalance o|O)ffset commit)(?: failed)?(?: for group |: )|"
    r"Heartbeat (?:session|poll) expired|Consumer poll timeout has expired|Discovered coordinator \S+ for group |"
    r"Marking the coordinator dead \(node |Skipping heartbeat: no active group: |Updating subscribed topics to: |"
    r"[^\n]*(?:TopicPartition\(topic='|OffsetAndMetadata\(offset=)"
)
"""kafka-python's and aiokafka's group and offset lines by their words alone (``catalogue``'s PY
entries), for a layout that writes no logger: Faust's ``[%(asctime)s] [%(process)s]
[%(levelname)s] %(message)s``, a team's ``logging.basicConfig(format=..)``."""
_KAFKA_OPENINGS = layouts._common.KAFKA_OPENINGS
_KAFKA_MESSAGE = (
    rf"{_KAFKA_OPENINGS}|task \[|org\.apache\.kafka\.[\w.$]+(Exception|Error)\b|{layouts.librdkafka.LOG_CALLBACK}|{KAFKAJS_MESSAGE}"
    rf"|{PYTHON_CLIENT_MESSAGE}|{FRANZ_GO_MESSAGE}"
)
KAFKA_PREFIX = rf"^({_KAFKA_MESSAGE}|(\[[^\]\x01]*\] ?){{1,3}}({_KAFKA_MESSAGE}))"
"""A Kafka record by its message, also behind a team's own bracketed fields (``[KafkaConsumer] [segment-7] ``)."""
BARE_HEAD = rf"^({_KAFKA_OPENINGS}|{EXCEPTION_LINE}|{layouts.message_only.LEVEL_AND_KAFKA_LOGGER}|{layouts.message_only.LEVEL_AND_KAFKAJS}|{LEVEL_AND_FRANZ_GO})"
"""A line of a paste without timestamps that opens a record by itself: Kafka's log-context
prefix, an exception class name (``CommitFailedException``, ``TaskMigratedException``), a
level and a Kafka logger (``message_only.LEVEL_AND_KAFKA_LOGGER``), or a level and a KafkaJS
namespace (``message_only.LEVEL_AND_KAFKAJS``), or franz-go's ``[INFO] joined; group: ..``
(``_common.LEVEL_AND_FRANZ_GO``)."""
STACK_FRAME = r"^\s+(at \S|\.\.\. \d+ )"
FRAME_PREFIX = 80
"""A stack frame is recognised by its first characters (regex on a prefix: no whole-line copy)."""
CONTROL_CHARS = r"[\x00-\x08\x0B\x0C\x0E-\x1F\x7F]"
LOGGER_IN_TEXT = r"(?s)^(.*?)[ \n]\(((?![\w$]+\.java:)[A-Za-z_$][\w.$]*)(?::\d+)?\)(?: \[([^\]\n]*)\]| - [\w.-]+=[^\n]*)?(\n|$)"
"""Kafka's log4j layout puts the logger at the end of the message, so in a record of several
lines (a message of several lines, a hard-wrapped line, then an exception) it closes the first
line that ends in `` (logger)``, or that is ``(logger)`` where a wrapper trimmed the space after
a message's final line break (logcli): group 2, removed by ``$1$4``. Strimzi's ``%d %p %m (%c) [%t]``
puts the thread after it, `` (logger) [thread]``: group 3; Confluent for Kubernetes' images a
context, `` (logger:line) - app=connect, clusterId=confluent``: removed with it."""
_CLOSING_FIELDS = (rf"{LOGGER_IN_TEXT}(.*)$", SEP.join(("$2", "$3", "$1$4$5")))
"""``LOGGER_IN_TEXT`` and the rest of the text, rewritten to logger, thread and text (``closing_fields``)."""
LOGGER_CLOSES = ("log4j", "generic")
"""Layouts in which a record's logger may close its message (``LOGGER_IN_TEXT``) where the head
gave none: Kafka's, whose multi-line messages carry it on their last line, and any layout of a
timestamp and a level, as Strimzi's."""
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
CONTINUATION_PREFIX = 256
"""``CONTINUATION_TEXT`` is looked for in an export's message by its first characters (a regex
on a prefix: the whole of a message that holds a stack trace is not scanned)."""
SAMPLE_CHARS = 500
SAMPLES_PER_REASON = 5

FOLD_IRRELEVANT, FOLD_FRAME, FOLD_BINARY, FOLD_UNDECODABLE = -1, -50, -60, -61
FOLDS: dict[int, tuple[str, str | None]] = {
    FOLD_IRRELEVANT: (s.IRRELEVANT, None),
    FOLD_FRAME: (s.CONTINUATIONS, None),
    FOLD_BINARY: (s.UNPARSED, s.BINARY),
    FOLD_UNDECODABLE: (s.UNPARSED, s.UNDECODABLE),
}
"""Negative fold keys -> (bucket, reason) of the lines folded under them; the layout of folded
record heads is a column of the fold."""


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
    may_wrap = (F.col("layout").isNull() | (F.col("layout") == "json_lines")) & ~first.isin("\t", "")
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


BLOCK_LINES = 1 << 18
"""Lines of a file stitched by one window task: a file longer than this is stitched block by
block, so that no task sorts and holds a whole file (a 2M-line file ran the task out of
execution memory in a default 1 GiB driver)."""


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


def entry_continues() -> Column:
    """Whether an export's entry continues the entry before it: its message opens indented (a
    stack frame, a config block's setting) or with stack-trace text (``CONTINUATION_TEXT``), as
    where a log platform stored each physical line of a container's output as an entry."""
    message = F.coalesce(F.col("message"), F.lit(""))
    return F.substring(message, 1, 1).isin(" ", "\t") | F.substring(message, 1, CONTINUATION_PREFIX).rlike(CONTINUATION_TEXT)


def with_continuing_entries(entries: DataFrame, tz: Column, newest_first: Column, files: Sequence[str]) -> DataFrame:
    """Exports' ``entries`` (``exports.read_exports``' rows) with each entry of one of ``files``
    that continues (``entry_continues``) the nearest entry before it in time, of the same export,
    host and source, that does not: its message joined to that entry's, a line each in the
    order written, and the entry marked ``joined``. Entries of one time are in file order,
    reversed where the export runs ``newest_first``; ``tz``: the zone of the export's times.
    Each entry of ``files`` has lines of its own (not a JSON array's elements, which may share one)."""
    in_file_order = F.when(newest_first, -F.col("line")).otherwise(F.col("line"))
    order = Window.partitionBy("uri", "host", "source").orderBy(any_to_utc(F.col("time"), tz), in_file_order)
    continues = entry_continues() & F.col("uri").isin(*files)
    placed = entries.select(
        "*",
        continues.alias("continues"),
        F.row_number().over(order).alias("position"),
        F.last(F.when(~continues, F.col("line")), True).over(order.rowsBetween(Window.unboundedPreceding, Window.currentRow)).alias("head"),
    )
    joined = placed.where(F.col("continues") & F.col("head").isNotNull())
    texts = joined.groupBy("uri", F.col("head").alias("line")).agg(
        F.array_join(F.transform(F.array_sort(F.collect_list(F.struct("position", "message"))), lambda e: e["message"]), "\n").alias("more")
    )
    message = F.when(F.col("more").isNull(), F.col("message")).otherwise(F.concat_ws("\n", F.col("message"), F.col("more")))
    return placed.join(texts, ["uri", "line"], "left").select(
        *[message.alias(c) if c == "message" else c for c in entries.columns],
        (F.col("continues") & F.col("head").isNotNull()).alias("joined"),
    )


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
        return _mark_heads(rows, blocks, hosts)

    def promote(rows: DataFrame, blocks: int | None = block_lines) -> DataFrame:
        return mark(_promote_bare(rows, blocks, hosts), blocks)

    if first_head is None:
        return anchor_floor(promote(kept), block_lines, hosts)
    if untimed is not None and not untimed:
        return anchor_floor(mark(kept), block_lines, hosts)
    before_first = F.coalesce(F.col("line") < first_head, F.lit(True))  # no head can reach across the file's first head
    if untimed is not None:
        before_first = before_first & F.col("uri").isin(*untimed)
    return anchor_floor(
        mark(kept.where(~before_first)).unionByName(promote(kept.where(before_first), leading_block_lines)), block_lines, hosts
    )


def kafka_marked(value: Column) -> Column:
    """Whether a line carries a Kafka mark (``anchor.MARK``) and is no stack-trace text: a line
    that must be read, or reported as not read (issue 86). Substring scans guard the regex."""
    return contains_any(value, KAFKA_MARKERS + MULTI_LINE_MARKERS) & value.rlike(anchor.MARK) & ~value.rlike(anchor.STACK_TEXT)


BARE_EXCEPTION = r"^\W{0,3}(?:CommitFailed|RebalanceInProgress|IllegalGeneration|UnknownMemberId|FencedInstanceId|TaskMigrated|ProducerFenced)(?:Exception|Error): "
"""A pasted Kafka exception by its simple name, ``CommitFailedException: Commit cannot be completed ..``
(a qualified one is stack-trace text, ``anchor.STACK_TEXT``, and opens a record only where
nothing stands above it: ``BARE_HEAD``)."""


def anchor_floor(marked: DataFrame, block_lines: int | None, hosts: bool) -> DataFrame:
    """``marked`` (stitched rows) where a row that is no head and continues none (it would be
    counted unparsed) becomes an ``anchor`` head (``layouts.anchor``) when it carries a Kafka mark
    (``kafka_marked``), a template's fixed text (``anchor.weak_marks``) or opens with a Kafka
    exception's simple name (``BARE_EXCEPTION``); the rows after it continue it (not a row dated
    in its first characters: ``_mark_heads``). A row
    that is only a timestamp (``STAMP_ONLY``) above a Kafka line is the head of that line, broken
    after its time (``split_anchor_heads``).
    Only those rows are marked again: a row that continued no head is followed by rows that
    continue none either, up to the next head."""
    failed = F.col("layout").isNull() & F.col("head_line").isNull()
    value = F.col("value")
    needles, _ = anchor.weak_marks()
    weak = contains_any(value, anchor.weak_gate()) & F.exists(
        F.array(*[F.lit(needle) for needle in needles]), lambda needle: value.contains(needle)
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
    return marked.where(~failed).unionByName(_mark_heads(retried, block_lines, hosts).select(*marked.columns))


def _promote_bare(kept: DataFrame, block_lines: int | None, hosts: bool) -> DataFrame:
    """``kept`` with the rows that open with ``BARE_HEAD`` and continue no head (``_mark_heads``) made heads."""
    bare = F.col("layout").isNull() & F.col("head_line").isNull() & F.col("value").rlike(BARE_HEAD)
    marked = _mark_heads(kept, block_lines, hosts)
    return marked.select(*[F.when(bare, F.lit("message_only")).otherwise(F.col(c)).alias(c) if c == "layout" else c for c in kept.columns])


def _mark_heads(kept: DataFrame, block_lines: int | None = None, hosts: bool = False) -> DataFrame:
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
    that head is of their host.
    """
    block = F.lit(0) if block_lines is None else F.floor((F.col("line") - 1) / block_lines)
    by_block = Window.partitionBy("uri", "block").orderBy("line")
    upto = by_block.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    is_head = F.col("layout").isNotNull()
    host = F.col("w_host") if hosts else F.lit(None).cast("string")
    head = F.struct(F.col("line").alias("line"), F.col("rn").alias("rn"), F.col("layout").alias("layout"), host.alias("host"))
    numbered = kept.withColumn("block", block).withColumn("rn", F.row_number().over(by_block))
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


def is_kafka(layout: Column, logger: Column, message: Column) -> Column:
    """A record of a Kafka client: a librdkafka line, a Kafka logger, a Kafka log-context
    prefix (``[Consumer clientId=..]``, ``stream-thread [..]``) opening the message, or
    librdkafka's thread in its first characters (``librdkafka.DECORATED``)."""
    decorated = message.contains("[thrd:") & message.rlike(f"^{layouts.librdkafka.DECORATED}")
    return (
        layout.isin("librdkafka", anchor.NAME) | F.coalesce(logger, F.lit("")).rlike(KAFKA_LOGGER) | message.rlike(KAFKA_PREFIX) | decorated
    )


def may_be_kafka_entry(layout: Column, message: Column, logger: Column) -> Column:
    """Whether an export's entry may be a Kafka record, by substring scans only: its whole
    message (a log4j logger may close its last line) and its logger column. An entry that fails
    is one ``is_kafka`` calls irrelevant: it is only counted, as ``fold_lines`` folds such lines."""
    by_logger = contains_any(F.coalesce(logger, F.lit("")), KAFKA_MARKERS)
    return layout.eqNullSafe("librdkafka") | may_be_kafka_line(message) | contains_any(message, OPENING_MARKERS) | by_logger


def kafka_markers(loggerless: bool = True) -> tuple[str, ...]:
    """``KAFKA_MARKERS``, with ``CLIENT_WORDS`` where a layout may name no logger."""
    return KAFKA_MARKERS + CLIENT_WORDS if loggerless else KAFKA_MARKERS


def may_be_kafka_line(value: Column, loggerless: bool = True) -> Column:
    """The cheap test ``kafka_lines`` wants its lines to pass: a few substring scans, no regex;
    on a line as read (a byte-order mark may open it); ``loggerless``: see ``kafka_markers``."""
    return contains_any(value, kafka_markers(loggerless) + MULTI_LINE_MARKERS) | value.startswith("%") | value.startswith("\ufeff%")


def kafka_lines(
    marked: DataFrame, host_of: Column, tz_of: Column, source_of: Column, table: dict = layouts.LAYOUTS, tried: Recognisers = ALL
) -> DataFrame:
    """Line-level Kafka records: each Kafka record head parsed on its own line, with file and
    line number, no stitching and no accounting (a quick first look; ``ingest`` does the rest).

    ``marked`` holds the lines that pass ``may_be_kafka_line``, so most lines never reach a regex.
    """
    value = F.col("value")
    heads = recognise(marked, table, tried).where(F.col("layout").isNotNull())
    split = layouts.split_fields(F.col("layout"), value, table)
    if anchor.NAME in table:
        heads = anchor.with_fields(heads, value, F.col("layout") == anchor.NAME, "anchor_parts", anchor.weak_marks()[1])
        split = F.coalesce(F.col("anchor_parts"), split)
    parts = F.col("parts")
    parsed = heads.withColumn("parts", split).select(
        source_of.alias(s.SOURCE_FILE),
        F.coalesce("w_host", host_of).alias(s.HOST),
        F.col("line").alias(s.LINE),
        F.col("layout").alias(s.LAYOUT),
        record_ts(F.col("layout"), F.nullif(parts[0], F.lit("")), F.col("w_ts"), tz_of, table).alias(s.TS),
        layouts._common.normalise_level(parts[1]).alias(s.LEVEL),
        F.nullif(parts[2], F.lit("")).alias(s.LOGGER),
        F.nullif(parts[3], F.lit("")).alias(s.THREAD),
        F.nullif(parts[4], F.lit("")).alias(s.CLIENT),
        parts[5].alias(s.MESSAGE),
    )
    return parsed.where(is_kafka(F.col(s.LAYOUT), F.col(s.LOGGER), F.col(s.MESSAGE)))


Rewrite = tuple[tuple[tuple[str, Column], ...], Mapping[str, Column]]
"""Columns added to a frame one after another, then columns that replace its own (``rewritten``)."""
WRAPPER_FIELDS = ("w_level", "w_logger", "w_thread")
"""Record fields a wrapper may give (an export's level, logger and thread columns)."""
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


SPLIT_AFTER_HEAD = r"^[-:|] +(?=\S)"
"""The separator that opens a record's message where a paste broke its head's line after the
logger (``.. SubscriptionState`` then ``- [Consumer clientId=..] Resetting ..``): the message is
the next line's, without it."""
STAMP_ONLY = rf"^\s*(?:{anchor.STAMP}|\d{{4}}-\d\d-\d\d)\s*$"
"""A line holding only a timestamp (or a date): the head of a record whose line a paste broke
after it (``anchor_floor`` joins the line below to it, ``split_anchor_heads``)."""


def leaves_bracket_open(text: Column) -> Column:
    """Whether ``text`` opens more ``[`` than it closes (a log-context prefix a paste broke after
    its ``clientId=..,``), colour codes that lost their ESC byte (``[32mINFO[0m``) not counted."""
    plain = F.regexp_replace(text, anchor.LOST_ESC, "")
    return F.size(F.split(plain, r"\[")) > F.size(F.split(plain, r"\]"))


def split_anchor_heads() -> Rewrite:
    """The rewrite of ``anchor`` heads (with their ``tail``) whose line a paste broke: a head that
    is only a timestamp, or whose text leaves a ``[`` open (a log-context prefix broken after its
    ``clientId=..,``), takes the next lines into its ``value``, joined by a space, while that holds;
    they are taken off the ``tail``. The head is then split as one line. A line as wide as its
    file's wrap (``wrap_width``) or a terminal's (``WRAP_WIDTHS``) was cut by a hard wrap, not
    broken at a space: the next line is glued to it as it is."""

    def open_(text: Column) -> Column:
        return text.rlike(STAMP_ONLY) | leaves_bracket_open(text)

    def join(acc: Column, piece: Column) -> Column:
        wrapped = (acc["width"] == F.coalesce(F.col("wrap_width"), F.lit(-1))) | acc["width"].isin(*WRAP_WIDTHS)
        text = F.concat(
            acc["text"], F.when(wrapped, F.lit("")).otherwise(F.lit(" ")), F.when(wrapped, piece["value"]).otherwise(F.trim(piece["value"]))
        )
        taken = F.struct(text.alias("text"), open_(text).alias("open"), (acc["used"] + 1).alias("used"), shown_width(piece).alias("width"))
        return F.when(acc["open"], taken).otherwise(acc)

    start = F.struct(
        F.col("value").alias("text"), open_(F.col("value")).alias("open"), F.lit(0).alias("used"), shown_width().alias("width")
    )
    joined = F.when((F.col("layout") == anchor.NAME) & F.col("tail").isNotNull(), F.aggregate("tail", start, join))
    used = F.coalesce(F.col("anchor_joined.used"), F.lit(0))
    return (("anchor_joined", joined),), {
        "value": F.coalesce(F.col("anchor_joined.text"), F.col("value")),
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


def rewritten(frame: DataFrame, rewrite: Rewrite) -> DataFrame:
    """``frame`` with a rewrite's helper columns added, then its columns as they were, each one
    the rewrite replaces in its place."""
    added, replaced = rewrite
    columns = frame.columns
    for name, column in added:
        frame = frame.withColumn(name, column)
    return frame.select(*[replaced[c].alias(c) if c in replaced else c for c in columns])


def is_partial(wrapper: Column) -> Column:
    """Whether a line is a piece of a line (``wrappers.PIECES``), continued by the next
    without a line break."""
    return F.coalesce(wrapper.isin(*wrappers.PIECES), F.lit(False))


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
    (``LOGGER_IN_TEXT``), else ``[text]``: one pass of one regex."""
    return F.split(F.regexp_replace(text, *_CLOSING_FIELDS), SEP, 3)


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
        + (split_anchor_heads(),)
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
