"""Clock offsets between hosts, estimated from the rebalance protocol itself.

The group coordinator answers every member's JoinGroup (and SyncGroup) of one generation at
the same moment, so each member's ``Successfully joined group with generation N`` line is
written within milliseconds of the others'. Per host, the median difference to a reference
host over the generations both saw estimates that host's clock offset; the spread of those
differences is its uncertainty. Offsets of at least ``CORRECTION_THRESHOLD_MS`` known to
better than that are corrected (``ts`` becomes the reference clock; the original is kept as
``ts_raw``); all estimates are reported, corrected or not.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from .. import schema as s
from .members import JOINED

CORRECTION_THRESHOLD_MS = 500
"""Smallest estimated offset that is corrected (protocol answers reach members within ms)."""
PROTOCOL_JITTER_MS = 20
"""Least uncertainty of an estimate: the coordinator's answers reach members within tens of ms."""
TS_RAW = "ts_raw"


def _millis(ts) -> F.Column:
    return F.unix_micros(ts) / 1000.0


def clock_skew(events: DataFrame) -> DataFrame:
    """One row per host with a Kafka event: ``host``, ``reference`` host, ``offset_ms`` (this
    host's clock minus the reference's; null when no generation was seen by both),
    ``uncertainty_ms`` (half the spread of the per-generation differences), ``samples``
    (generations compared) and ``corrected`` (whether ``correct_clocks`` shifts it).

    The reference is the host that saw the most generations (ties: first by name).
    """
    s.validate_columns(events, [s.EVENT_TYPE, s.HOST, s.GROUP_ID, s.GENERATION, s.TS], "clock_skew")
    marks = (
        events.where(F.col(s.EVENT_TYPE).isin(*JOINED) & F.col(s.GENERATION).isNotNull() & F.col(s.TS).isNotNull())
        .groupBy(s.GROUP_ID, s.GENERATION, s.EVENT_TYPE, s.HOST)
        .agg(F.min(s.TS).alias("mark"))
    )
    ranking = Window.orderBy(F.desc("n"), F.col(s.HOST))
    reference = marks.groupBy(s.HOST).agg(F.count(F.lit(1)).alias("n")).withColumn("rank", F.row_number().over(ranking))
    ref_host = reference.where(F.col("rank") == 1).select(F.col(s.HOST).alias("reference"))
    ref_marks = marks.join(ref_host, F.col(s.HOST) == F.col("reference")).select(
        s.GROUP_ID, s.GENERATION, s.EVENT_TYPE, "reference", F.col("mark").alias("ref_mark")
    )
    diffs = marks.join(ref_marks, [s.GROUP_ID, s.GENERATION, s.EVENT_TYPE]).withColumn(
        "diff_ms", _millis(F.col("mark")) - _millis(F.col("ref_mark"))
    )
    stats = diffs.where(F.col(s.HOST) != F.col("reference")).groupBy(s.HOST, "reference").agg(
        F.percentile_approx("diff_ms", 0.5).alias("offset_ms"),
        F.greatest((F.max("diff_ms") - F.min("diff_ms")) / 2, F.lit(PROTOCOL_JITTER_MS)).alias("uncertainty_ms"),
        F.countDistinct(s.GROUP_ID, s.GENERATION).alias("samples"),
    )
    hosts = events.select(s.HOST).where(F.col(s.HOST).isNotNull()).distinct().crossJoin(ref_host)
    joined = hosts.join(stats.drop("reference"), s.HOST, "left")
    precise = F.col("uncertainty_ms") < CORRECTION_THRESHOLD_MS
    corrected = F.coalesce((F.abs(F.col("offset_ms")) >= CORRECTION_THRESHOLD_MS) & precise, F.lit(False))
    is_reference = F.col(s.HOST) == F.col("reference")
    return joined.select(
        s.HOST,
        "reference",
        F.when(is_reference, F.lit(0)).otherwise(F.round("offset_ms")).cast("long").alias("offset_ms"),
        F.when(is_reference, F.lit(0)).otherwise(F.round("uncertainty_ms")).cast("long").alias("uncertainty_ms"),
        F.coalesce(F.col("samples"), F.lit(0)).alias("samples"),
        corrected.alias("corrected"),
    )


def correct_clocks(events: DataFrame, skew: DataFrame) -> DataFrame:
    """Events on the reference clock: ``ts`` minus the host's offset where it is corrected;
    the original stays in ``ts_raw``."""
    offsets = skew.where(F.col("corrected")).select(s.HOST, F.col("offset_ms").alias("_offset_ms"))
    shifted = events.join(F.broadcast(offsets), s.HOST, "left")
    micros = F.unix_micros(F.col(s.TS)) - F.coalesce(F.col("_offset_ms"), F.lit(0)) * 1000
    return shifted.withColumn(TS_RAW, F.col(s.TS)).withColumn(s.TS, F.timestamp_micros(micros)).drop("_offset_ms")
