"""The Kafka 4.x incident classes read from ``kafka-consumer-groups`` and ``kafka-dump-log``
dumps (issue 85): ``describe_mid_rebalance`` (KAFKA-21648) and ``phantom_lag`` (a committed
offset below the log start). The classes read from client logs are in ``kafka4``."""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from .. import schema as s
from ..model import Model
from ..registry import earliest
from ..sources import rows_from
from ..spark import empty_of
from ._commits import partition_name
from ._finding import describe_command, findings, line, lines, missing, one

REBALANCING_STATES = ("PreparingRebalance", "CompletingRebalance", "AwaitingSync")
"""Classic group states of a rebalance in progress, as ``kafka-consumer-groups --describe --state``
prints them (``AwaitingSync`` before 2.0)."""


def _none(model: Model) -> DataFrame:
    return empty_of(model.events.sparkSession, s.FINDINGS_SCHEMA)


def _dumps(model: Model, *kinds: str) -> DataFrame | None:
    if model.offsets is None:
        return None
    return model.offsets.where(F.col(s.KIND).isin(*kinds))


@rows_from("offsets")
def describe_mid_rebalance(model: Model) -> DataFrame:
    """A ``kafka-consumer-groups --describe`` dump taken while its classic group was rebalancing
    (``--state`` shows ``PreparingRebalance`` or ``CompletingRebalance``): the members and
    assignments it lists are the previous generation's (KAFKA-21648), not who owns what now.
    The finding says not to read ownership from it. A member or offsets row belongs to the state
    table above it in the same dump (file and time stamp), up to the group's next state table."""
    states = _dumps(model, s.DESCRIBE_STATE)
    if states is None:
        return _none(model)
    dump = Window.partitionBy(s.SOURCE_FILE, s.GROUP_ID, s.SNAPSHOT_TS).orderBy(s.LINE)
    bounded = states.withColumn("_until", F.lead(s.LINE).over(dump))
    rebalancing = bounded.where(F.col(s.STATE).isin(*REBALANCING_STATES)).select(
        F.col(s.SOURCE_FILE).alias("_file"),
        F.col(s.GROUP_ID).alias("_group"),
        F.col(s.STATE).alias("_state"),
        F.col(s.LINE).alias("_line"),
        F.col("_until"),
        F.col(s.SNAPSHOT_TS).alias("_ts"),
    )
    listed = _dumps(model, s.DESCRIBE_MEMBERS, s.DESCRIBE_OFFSETS).where(F.col(s.CONSUMER_ID).isNotNull())
    on = (
        (F.col(s.SOURCE_FILE) == F.col("_file"))
        & (F.col(s.GROUP_ID) == F.col("_group"))
        & F.col(s.SNAPSHOT_TS).eqNullSafe(F.col("_ts"))
        & (F.col(s.LINE) > F.col("_line"))
        & (F.col("_until").isNull() | (F.col(s.LINE) < F.col("_until")))
    )
    rows = (
        rebalancing.join(listed, on, "inner")
        .groupBy("_file", "_group", "_state", "_line")
        .agg(F.min("_ts").alias("_ts"), F.collect_list(line()).alias("_evidence"), F.size(F.collect_set(s.CONSUMER_ID)).alias("_members"))
    )
    state_line = F.struct(F.col("_file").alias("file"), F.col("_line").cast("long").alias("line"))
    return findings(
        rows,
        "describe_mid_rebalance",
        severity="info",
        verdict="expected",
        classification=F.col("_state"),
        group=F.col("_group"),
        exact=F.lit(False),
        start=F.col("_ts"),
        end=F.col("_ts"),
        evidence=lines(one(state_line), F.col("_evidence")),
        explanation=F.format_string(
            "The dump %s was taken while group %s was rebalancing (state %s): the partitions it lists against its %d "
            "members are the previous generation's assignment (KAFKA-21648), not the ownership at that time; read "
            "ownership from the clients' logs, not from this dump.",
            F.col("_file"),
            F.col("_group"),
            F.col("_state"),
            F.col("_members"),
        ),
        kafka_reference="KAFKA-21648 (DescribeGroups during a classic rebalance returned the previous generation's "
        "assignment; fixed in 4.3.3, 4.4.1, 4.5.0)",
        remedy="Describe the group again once --state shows Stable, and attribute offsets to owners from the clients' assignment lines.",
        missing=missing(F.format_string("a dump of group %s taken while it is Stable", F.col("_group")), describe_command(F.col("_group"))),
    )


@rows_from("offsets")
def phantom_lag(model: Model) -> DataFrame:
    """A group's committed offset below its partition's log start (the first offset a
    ``kafka-dump-log`` dump shows): retention deleted the records in between before the group
    read them, and the lag tools report counts records that no longer exist ("phantom lag"); the
    group's next fetch there is out of range and ``auto.offset.reset`` decides where it resumes."""
    batches = _dumps(model, s.DUMP_LOG_BATCH)
    if batches is None:
        return _none(model)
    starts = (
        batches.where(F.col(s.TOPIC).isNotNull())
        .groupBy(F.col(s.TOPIC).alias("_topic"), F.col(s.PARTITION).alias("_partition"))
        .agg(earliest(F.struct(F.col(s.BASE_OFFSET).alias("start"), line().alias("evidence")), s.BASE_OFFSET, line()).alias("_start"))
    )
    committed = _dumps(model, s.DESCRIBE_OFFSETS).where(F.col(s.CURRENT_OFFSET).isNotNull() & F.col(s.GROUP_ID).isNotNull())
    on = (F.col(s.TOPIC) == F.col("_topic")) & (F.col(s.PARTITION) == F.col("_partition"))
    below = committed.join(starts, on).where(F.col(s.CURRENT_OFFSET) < F.col("_start.start"))
    rows = below.groupBy(s.GROUP_ID, s.TOPIC, s.PARTITION, s.CURRENT_OFFSET).agg(
        F.first("_start").alias("_start"),
        F.min(s.SNAPSHOT_TS).alias("_ts"),
        F.max(s.LAG).alias("_lag"),
        F.collect_list(line()).alias("_evidence"),
    )
    phantom = F.col("_start.start") - F.col(s.CURRENT_OFFSET)
    shown = F.when(F.col("_lag").isNotNull(), F.format_string("the lag shown, %d, counts %d of them", F.col("_lag"), phantom)).otherwise(
        F.format_string("any lag computed from it counts %d of them", phantom)
    )
    return findings(
        rows,
        "phantom_lag",
        severity="warning",
        verdict="loss",
        classification=F.lit("committed below log start"),
        group=F.col(s.GROUP_ID),
        topic=F.col(s.TOPIC),
        partition=F.col(s.PARTITION),
        offset_from=F.col(s.CURRENT_OFFSET),
        offset_to=F.col("_start.start"),
        records=phantom,
        exact=F.lit(True),
        start=F.col("_ts"),
        end=F.col("_ts"),
        evidence=lines(F.col("_evidence"), one(F.col("_start.evidence"))),
        explanation=F.format_string(
            "Group %s's committed offset %d for %s is below the partition's log start %d: retention deleted records [%d, %d) "
            "before the group read them, and %s although they can no longer be read (phantom lag).",
            F.col(s.GROUP_ID),
            F.col(s.CURRENT_OFFSET),
            partition_name(),
            F.col("_start.start"),
            F.col(s.CURRENT_OFFSET),
            F.col("_start.start"),
            shown,
        ),
        kafka_reference="Phantom lag: a committed offset below the log start after retention (lag = log end - committed, "
        "not clamped to the log start; redpanda#30624)",
        remedy="Decide whether the deleted range mattered (it cannot be re-read), then move the group to the log start "
        "(kafka-consumer-groups --reset-offsets --to-earliest for this partition); alert on lag clamped to the log start "
        "and keep retention above the longest consumer pause.",
    )
