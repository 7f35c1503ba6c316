"""Kafka Streams state restores gone wrong (seed 000, KAFKA-7672)."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from .. import schema as s
from ..model import Model
from ..registry import latest
from ..sources import rows_from
from ._finding import duration_ms, findings, line, lines, one

CHECKPOINT_RACE_MS = 2_000
"""A task reopened by another thread of the same instance within this time of being closed
raced the asynchronous checkpoint write of its previous thread (KAFKA-7672, second part)."""

KAFKA_7672 = "KAFKA-7672 (fixed in Kafka Streams 2.2.0)"


def changelog_end_offsets(offsets: DataFrame | None) -> DataFrame | None:
    """Per topic partition, the end offset the offset dumps show, with the line that shows it:
    GetOffsetShell and ``--describe`` log-end offsets, and the last batch of ``kafka-dump-log``."""
    if offsets is None:
        return None
    end = F.coalesce(F.col(s.LOG_END_OFFSET), F.when(F.col(s.KIND) == s.DUMP_LOG_BATCH, F.col(s.LAST_OFFSET) + 1))
    rows = offsets.where(F.col(s.TOPIC).isNotNull() & F.col(s.PARTITION).isNotNull() & end.isNotNull())
    return rows.groupBy(F.col(s.TOPIC).alias("_topic"), F.col(s.PARTITION).alias("_partition")).agg(
        latest(F.struct(end.alias("end"), line().alias("evidence")), end, line()).alias("_dump")
    )


def _with_dump_end(restores: DataFrame, offsets: DataFrame | None) -> DataFrame:
    ends = changelog_end_offsets(offsets)
    if ends is None:
        return restores.withColumn("_dump", F.lit(None).cast(f"struct<end:bigint,evidence:{s.as_ddl(s.EVIDENCE_LINE)}>"))
    on = (F.col(s.TOPIC) == F.col("_topic")) & (F.col(s.PARTITION) == F.col("_partition"))
    return restores.join(ends, on, "left").drop("_topic", "_partition")


def _changelog_text() -> Column:
    return F.concat_ws("-", F.col(s.TOPIC), F.col(s.PARTITION).cast("string"))


def _active() -> Column:
    """An episode of an active task: not one opened as a standby replica only (``restores.standby``)."""
    return ~F.coalesce(F.col("standby"), F.lit(False))


@rows_from("restores")
def skipped_restore(model: Model) -> DataFrame:
    """A task whose changelog was reset (no checkpoint under exactly-once, store wiped) went
    RUNNING without a completed restore: the state records up to the changelog's end offset
    are missing from its store (KAFKA-7672: ``completedRestorers`` was never cleared, so a
    task back on a thread that once restored it skipped the restore).

    The range is [reset offset, changelog end offset); the end comes from the episode's own
    restore lines, else from the offset dumps. Without either the records are unknown. A standby
    replica (``restores.standby``) without a checkpoint starts from the changelog's beginning and
    never restores: not a skipped restore.
    """
    reset = (F.col("checkpoint_found") == F.lit(False)) | F.col("reset_offset").isNotNull() | F.col("store_wiped")
    skipped = model.restores.where(reset & (F.col("restore_completed") == F.lit(False)) & F.col("changelog").isNotNull() & _active())
    with_end = _with_dump_end(skipped, model.offsets)
    start = F.coalesce(F.col("reset_offset"), F.col("restore_from"), F.lit(0))
    end = F.coalesce(F.col("restore_to"), F.col("_dump.end"))
    rows = with_end.withColumn("_from", start).withColumn("_to", end).where(F.col("_to").isNull() | (F.col("_to") > F.col("_from")))
    missing = F.when(
        F.col("_to").isNotNull(),
        F.format_string("state records [%d, %d) (%d records) are missing from its store", "_from", "_to", F.col("_to") - F.col("_from")),
    ).otherwise(
        F.lit("every record of the changelog is missing from its store (its end offset is in neither the logs nor the offset dumps)")
    )
    return findings(
        rows,
        "skipped_restore",
        severity="critical",
        verdict="loss",
        group=F.col(s.GROUP_ID),
        topic=F.col(s.TOPIC),
        partition=F.col(s.PARTITION),
        task=F.col(s.TASK),
        offset_from=F.col("_from"),
        offset_to=F.col("_to"),
        records=F.col("_to") - F.col("_from"),
        exact=F.col("_to").isNotNull(),
        host=F.col(s.HOST),
        member=F.col("thread"),
        start=F.col("opened_ts"),
        end=F.col("running_ts"),
        evidence=lines(F.col("evidence"), one(F.col("_dump.evidence"))),
        explanation=F.format_string(
            "Task %s on %s (%s) found no usable checkpoint for changelog %s, reset it to offset %d and went RUNNING without restoring it: %s.",
            F.col(s.TASK),
            F.col(s.HOST),
            F.col("thread"),
            _changelog_text(),
            F.col("_from"),
            missing,
        ),
        kafka_reference=KAFKA_7672,
        remedy="Upgrade Kafka Streams to 2.2.0 or later; then rebuild the task's store from its changelog "
        "(stop the instance, delete the task's state directory, restart) and re-derive the outputs it produced since.",
    )


@rows_from("restores")
def redundant_restore(model: Model) -> DataFrame:
    """A task closed by one thread and reopened by another thread of the same instance within
    ``CHECKPOINT_RACE_MS`` found no checkpoint and restored its changelog in full: the new
    thread read the checkpoint file before the old one finished writing it (KAFKA-7672,
    second part). Nothing is lost; the restore's time and records are wasted.
    """
    raced = model.restores.where(
        (F.col("checkpoint_found") == F.lit(False))
        & (F.col("restore_completed") == F.lit(True))
        & F.col("same_instance")
        & _active()
        & (F.col("previous_thread") != F.col("thread"))
        & (F.col("gap_ms") <= CHECKPOINT_RACE_MS)
        & F.col("changelog").isNotNull()
    )
    start = F.coalesce(F.col("restore_from"), F.col("reset_offset"), F.lit(0))
    records = F.coalesce(F.col("records_restored"), F.col("restore_to") - start)
    finished = F.coalesce(F.col("restore_finished_ts"), F.col("running_ts"))
    rows = raced.withColumn("_records", records).where(F.col("_records").isNull() | (F.col("_records") > 0))
    return findings(
        rows,
        "redundant_restore",
        severity="warning",
        verdict="delay",
        group=F.col(s.GROUP_ID),
        topic=F.col(s.TOPIC),
        partition=F.col(s.PARTITION),
        task=F.col(s.TASK),
        offset_from=start,
        offset_to=F.col("restore_to"),
        records=F.col("_records"),
        exact=F.col("restore_to").isNotNull(),
        host=F.col(s.HOST),
        member=F.col("thread"),
        start=F.col("opened_ts"),
        end=finished,
        evidence=lines(one(F.col("previous_evidence")), F.col("evidence")),
        explanation=F.format_string(
            "Task %s moved from %s to %s on the same instance %s; %d ms after the old thread closed it the new one found no "
            "checkpoint for %s and restored it from scratch (%s records, %s ms) although the state was on disk.",
            F.col(s.TASK),
            F.col("previous_thread"),
            F.col("thread"),
            F.col(s.HOST),
            F.col("gap_ms"),
            _changelog_text(),
            F.coalesce(F.col("_records").cast("string"), F.lit("unknown")),
            F.coalesce(duration_ms(finished, F.col("opened_ts")).cast("string"), F.lit("unknown")),
        ),
        kafka_reference=KAFKA_7672 + ": checkpoint file read before the previous thread wrote it",
        remedy="Upgrade Kafka Streams (2.2.0+; 2.6+ reworked task handover); num.standby.replicas >= 1 shortens full restores.",
    )
