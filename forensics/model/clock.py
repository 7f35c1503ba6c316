"""Clock offsets between hosts, estimated from the rebalance protocol itself.

The group coordinator answers every member's JoinGroup (and SyncGroup) of one generation at
the same moment, so each member's ``Successfully joined group with generation N`` line is
written within milliseconds of the others'. Per host, the median difference to a reference
host over the generations both saw estimates that host's clock offset; the spread of those
differences is its uncertainty. Offsets of at least ``CORRECTION_THRESHOLD_MS`` known to
better than that are corrected (``ts`` becomes the reference clock; the original is kept as
``ts_raw``); all estimates are reported, corrected or not.

When the group coordinator's broker log is among the inputs, its host is the reference: its
``Stabilized group G generation N`` precedes every member's ``Successfully joined`` line of N
and its ``Assignment received ... for generation N`` every ``Successfully synced`` line of N
(the responses leave after the line), while every member's ``(Re-)joining group`` before its
joined line of N, and the leader's ``Finished assignment for group at generation N``, precede
them (the requests arrive first). Those orders bound each member's offset to
``[offset_min_ms, offset_max_ms]``; the estimate is kept inside that interval.
"""

from __future__ import annotations

from typing import Iterable

from pyspark.sql import Column, DataFrame, Row, Window
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, StringType, StructField, StructType

from .. import schema as s
from ..registry import literal_map, next_value
from ..sources import empty_without, rows_from
from ..spark import empty_of
from .members import JOINED, member_client

CORRECTION_THRESHOLD_MS = 500
"""Smallest estimated offset that is corrected (protocol answers reach members within ms)."""
PROTOCOL_JITTER_MS = 20
"""Least uncertainty of an estimate: the coordinator's answers reach members within tens of ms."""
TS_RAW = "ts_raw"
COORDINATOR_PREFIX = "coordinator:"
"""Event types of the group coordinator's own (broker) lines."""

ANSWERED = {"coordinator:group:stabilized": JOINED[0], "coordinator:group:assignment_received": JOINED[1]}
"""Coordinator line -> the member line that answers it (written just after it, same generation)."""
ASKED = {
    "consumer:group:join_started": "coordinator:group:stabilized",
    "consumer:group:assignment_finished": "coordinator:group:assignment_received",
}
"""Member line -> the coordinator line it precedes: a member's JoinGroup requests for generation N
reach the coordinator before it stabilizes N; the leader's assignment before it is received."""


def _millis(ts) -> F.Column:
    return F.unix_micros(ts) / 1000.0


def _marks(events: DataFrame) -> DataFrame:
    """Per group, generation, kind and host: the first line that marks the protocol's answer of
    that generation (members' joined/synced lines; the coordinator's lines as the answers they
    announce)."""
    kind = F.coalesce(literal_map(ANSWERED)[F.col(s.EVENT_TYPE)], F.when(F.col(s.EVENT_TYPE).isin(*JOINED), F.col(s.EVENT_TYPE)))
    return (
        events.where(kind.isNotNull() & F.col(s.GENERATION).isNotNull() & F.col(s.TS).isNotNull())
        .groupBy(s.GROUP_ID, s.GENERATION, kind.alias(s.EVENT_TYPE), s.HOST)
        .agg(F.min(s.TS).alias("mark"))
    )


def _reference(coordinator: DataFrame, marks: DataFrame) -> DataFrame:
    """The reference host: the group coordinator's when its log is in (``coordinator``: its
    lines), else the host that saw the most generations (ties: first by name)."""
    coordinators = coordinator.select(s.HOST).distinct().withColumn("coordinator", F.lit(1))
    ranking = Window.orderBy(F.desc("coordinator"), F.desc("n"), F.col(s.HOST))
    counted = marks.groupBy(s.HOST).agg(F.count(F.lit(1)).alias("n")).join(coordinators, s.HOST, "left").fillna(0, ["coordinator"])
    ranked = counted.withColumn("rank", F.row_number().over(ranking)).where(F.col("rank") == 1)
    return ranked.select(F.col(s.HOST).alias("reference"), (F.col("coordinator") == 1).alias("reference_is_coordinator"))


def _asked(events: DataFrame) -> DataFrame:
    """Member lines that precede a coordinator line of a known generation: each ``(Re-)joining
    group`` with the generation the member next joined, and the leader's finished assignment."""
    member = [s.HOST, member_client(events)]
    next_joined = next_value(F.when(F.col(s.EVENT_TYPE) == JOINED[0], F.col(s.GENERATION)), member, [s.TS, s.SOURCE_FILE, s.LINE])
    generation = F.when(F.col(s.EVENT_TYPE) == "consumer:group:join_started", next_joined).otherwise(F.col(s.GENERATION))
    asked = literal_map(ASKED)[F.col(s.EVENT_TYPE)]
    return (
        events.where(F.col(s.EVENT_TYPE).isin(*ASKED, JOINED[0]) & F.col(s.TS).isNotNull())
        .select(s.HOST, s.GROUP_ID, generation.alias(s.GENERATION), asked.alias("_answer"), s.TS)
        .where(F.col("_answer").isNotNull() & F.col(s.GENERATION).isNotNull())
    )


ORDER_COLUMNS = (s.CLIENT_ID, s.THREAD, s.SOURCE_FILE, s.LINE)
"""What a member's own order of lines needs beyond the marks (absent: no lower bounds)."""


LOWER_BOUNDS = StructType([StructField(s.HOST, StringType()), StructField("offset_min_ms", DoubleType())])


def _lower_bounds(events: DataFrame, coordinator: DataFrame, reference: DataFrame) -> DataFrame:
    """Per host: the largest (member line - coordinator line) over the pairs where the member's
    line came first; the host's offset is at least that (``coordinator``: its lines)."""
    if not set(ORDER_COLUMNS) <= set(events.columns):
        return empty_of(events.sparkSession, LOWER_BOUNDS)
    answers = coordinator.join(reference.where("reference_is_coordinator"), F.col(s.HOST) == F.col("reference")).select(
        s.GROUP_ID, s.GENERATION, F.col(s.EVENT_TYPE).alias("_answer"), F.col(s.TS).alias("_answer_ts")
    )
    pairs = _asked(events).join(answers, [s.GROUP_ID, s.GENERATION, "_answer"])
    return pairs.groupBy(s.HOST).agg(F.max(_millis(F.col(s.TS)) - _millis(F.col("_answer_ts"))).alias("offset_min_ms"))


def _estimate(median: Column, spread: Column, low: Column, high: Column) -> tuple[Column, Column]:
    """Offset and uncertainty: the median kept inside ``[low, high]`` (when that interval is
    consistent); the interval's middle when it is narrower than the median's uncertainty."""
    uncertainty = F.greatest(spread / 2, F.lit(PROTOCOL_JITTER_MS))
    bounded = low.isNotNull() & high.isNotNull() & (low <= high)
    half = (high - low) / 2
    narrow = bounded & (half < uncertainty)
    clamped = F.when(bounded, F.least(F.greatest(median, low), high)).otherwise(median)
    return F.when(narrow, low + half).otherwise(clamped), F.when(narrow, half).otherwise(uncertainty)


@rows_from(*JOINED, *ANSWERED)
def clock_skew(events: DataFrame, event_types: frozenset[str] | None = None) -> DataFrame:
    """One row per host with a Kafka event: ``host``, ``reference`` host, ``offset_ms`` (this
    host's clock minus the reference's; null when no generation was seen by both),
    ``uncertainty_ms``, ``samples`` (generations compared), ``corrected`` (whether
    ``correct_clocks`` shifts it) and, against a group coordinator's log, ``offset_min_ms`` /
    ``offset_max_ms``: the interval the protocol's order allows (null otherwise).

    The reference is the group coordinator's host when its log is in, else the host that saw
    the most generations (ties: first by name). ``event_types``: those the events hold, where
    counted; without a coordinator line among them its lines are an empty relation, whose joins
    Spark's optimiser plans away instead of computing bounds that cannot exist.
    """
    s.validate_columns(events, [s.EVENT_TYPE, s.HOST, s.GROUP_ID, s.GENERATION, s.TS], "clock_skew")
    coordinator = empty_without(
        events.where(F.col(s.EVENT_TYPE).startswith(COORDINATOR_PREFIX)), s.event_types_of(COORDINATOR_PREFIX), event_types
    )
    marks = _marks(events)
    reference = _reference(coordinator, marks)
    ref_marks = marks.join(reference, F.col(s.HOST) == F.col("reference")).select(
        s.GROUP_ID, s.GENERATION, s.EVENT_TYPE, "reference", "reference_is_coordinator", F.col("mark").alias("ref_mark")
    )
    diffs = marks.join(ref_marks, [s.GROUP_ID, s.GENERATION, s.EVENT_TYPE]).withColumn(
        "diff_ms", _millis(F.col("mark")) - _millis(F.col("ref_mark"))
    )
    stats = (
        diffs.where(F.col(s.HOST) != F.col("reference"))
        .groupBy(s.HOST)
        .agg(
            F.percentile_approx("diff_ms", 0.5).alias("median_ms"),
            (F.max("diff_ms") - F.min("diff_ms")).alias("spread_ms"),
            # against the coordinator every member line answers its line: the offset is at most the least difference
            F.when(F.max("reference_is_coordinator"), F.min("diff_ms")).alias("offset_max_ms"),
            F.countDistinct(s.GROUP_ID, s.GENERATION).alias("samples"),
        )
    )
    hosts = events.select(s.HOST).where(F.col(s.HOST).isNotNull()).distinct().crossJoin(reference)
    joined = hosts.join(stats, s.HOST, "left").join(_lower_bounds(events, coordinator, reference), s.HOST, "left")
    low = F.when(F.col("reference_is_coordinator"), F.col("offset_min_ms"))
    offset, uncertainty = _estimate(F.col("median_ms"), F.col("spread_ms"), low, F.col("offset_max_ms"))
    precise = uncertainty < CORRECTION_THRESHOLD_MS
    corrected = F.coalesce((F.abs(offset) >= CORRECTION_THRESHOLD_MS) & precise, F.lit(False))
    is_reference = F.col(s.HOST) == F.col("reference")

    def rounded(value: Column) -> Column:
        return F.when(is_reference, F.lit(0)).otherwise(F.round(value)).cast("long")

    return joined.select(
        s.HOST,
        "reference",
        rounded(offset).alias("offset_ms"),
        rounded(uncertainty).alias("uncertainty_ms"),
        F.coalesce(F.col("samples"), F.lit(0)).alias("samples"),
        (corrected & ~is_reference).alias("corrected"),
        F.when(~is_reference, F.floor(low)).cast("long").alias("offset_min_ms"),
        F.when(~is_reference, F.ceil("offset_max_ms")).cast("long").alias("offset_max_ms"),
    )


def correct_clocks(events: DataFrame, skew: Iterable[Row]) -> DataFrame:
    """Events on the reference clock: ``ts`` minus the host's offset where it is corrected;
    the original stays in ``ts_raw``. The offsets (one per host at most) are read from the rows
    of ``clock_skew`` and shift ``ts`` as a literal map: a join would sort every event by its host."""
    offsets = {row[s.HOST]: row["offset_ms"] for row in skew if row["corrected"]}
    shifted = events.withColumn(TS_RAW, F.col(s.TS))
    if not offsets:
        return shifted
    micros = F.unix_micros(F.col(s.TS)) - F.coalesce(literal_map(offsets, "long")[F.col(s.HOST)], F.lit(0)) * 1000
    return shifted.withColumn(s.TS, F.timestamp_micros(micros))
