"""Settings that make the incident classes possible, read from the clients' config blocks."""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from .. import schema as s
from ..model import Model
from ..registry import next_value
from ..sources import rows_from
from ._finding import all_of, findings, line, lines

KAFKA_7672_VERSIONS = r"^(1\.1|2\.0|2\.1)\."
"""Kafka Streams versions with KAFKA-7672 (1.1.0 up to 2.2.0, where it was fixed)."""
KAFKA_18641_VERSIONS = r"^(3\.7\.|3\.8\.|3\.9\.0$)"
"""Java client versions whose KIP-848 consumer (a preview before 4.0) has KAFKA-18641; later 3.9
releases may carry its fix and are left out."""
VERSION = r"[Vv]ersion\s*:\s*(\d+\.\d+\.\S+)"


def _blocks(model: Model) -> DataFrame:
    """One row per config block: its group (``group.id`` or ``application.id``), host, evidence
    line, and its settings as a map."""
    group = F.coalesce(F.col(s.GROUP_ID), F.col("application_id"))
    return (
        model.settings.groupBy(s.SOURCE_FILE, s.LINE, s.HOST, group.alias("_group"))
        .agg(F.map_from_entries(F.collect_list(F.struct("key", "value"))).alias("_settings"))
        .where(F.col("_group").isNotNull())
    )


def _risk(rows: DataFrame, setting: str, explanation, reference: str, remedy: str, topic=None) -> DataFrame:
    return findings(
        rows,
        "risky_config",
        severity="warning",
        verdict="expected",
        group=F.col("_group"),
        topic=topic,
        classification=setting,
        host=F.col("_host"),
        evidence=lines(F.col("_evidence")),
        explanation=explanation,
        kafka_reference=reference,
        remedy=remedy,
    )


@rows_from("consumer:offset:no_committed")
def latest_reset_risk(model: Model, blocks: DataFrame) -> DataFrame:
    """``auto.offset.reset=latest`` in a group that met partitions with no committed offset
    (new partitions, first start, expired commits): records written before the consumer
    arrived are skipped (seed 001)."""
    latest = blocks.where(F.col("_settings")["auto.offset.reset"] == "latest")
    no_commit = model.members.where(F.col(s.EVENT_TYPE) == "consumer:offset:no_committed").select(
        F.col(s.GROUP_ID).alias("_group"), s.TOPIC, line().alias("_seen")
    )
    risky = latest.join(no_commit, "_group")
    grouped = risky.groupBy("_group", s.TOPIC).agg(
        F.min(s.HOST).alias("_host"), F.array_union(F.collect_set(line()), F.array(F.min("_seen"))).alias("_evidence")
    )
    return _risk(
        grouped,
        "auto.offset.reset",
        F.format_string(
            "Group %s uses auto.offset.reset=latest and found partitions of %s with no committed offset: a partition added "
            "(or whose commits expired) while producers write to it starts at its log end, skipping what was written before.",
            F.col("_group"),
            F.col(s.TOPIC),
        ),
        "auto.offset.reset; partitions added with kafka-topics --alter",
        "Use auto.offset.reset=earliest for groups that must not skip records.",
        topic=F.col(s.TOPIC),
    )


@rows_from("settings")
def heartbeat_risk(model: Model, blocks: DataFrame) -> DataFrame:
    """``session.timeout.ms`` under three ``heartbeat.interval.ms``: one or two late heartbeats
    expire the session (Kafka's documentation asks for at most a third)."""
    settings = F.col("_settings")
    short = (
        blocks.where(settings["session.timeout.ms"].cast("long") < 3 * settings["heartbeat.interval.ms"].cast("long"))
        .withColumn("_session", settings["session.timeout.ms"])
        .withColumn("_heartbeat", settings["heartbeat.interval.ms"])
    )
    grouped = short.groupBy("_group").agg(
        F.min(s.HOST).alias("_host"),
        F.collect_list(line()).alias("_evidence"),
        F.min("_session").alias("_session"),
        F.max("_heartbeat").alias("_heartbeat"),
    )
    return _risk(
        grouped,
        "session.timeout.ms",
        F.format_string(
            "Group %s has session.timeout.ms=%s but heartbeat.interval.ms=%s: fewer than three heartbeats fit in a session, "
            "so a single delayed heartbeat can get a member removed and trigger a rebalance.",
            F.col("_group"),
            F.col("_session"),
            F.col("_heartbeat"),
        ),
        "session.timeout.ms, heartbeat.interval.ms (at most a third of the session timeout)",
        "Set heartbeat.interval.ms to at most a third of session.timeout.ms.",
    )


def _with_banner(model: Model, chosen: DataFrame) -> DataFrame:
    """Config blocks ``chosen`` with ``_banner`` (``version``, ``evidence``): the first ``Kafka
    version`` banner (AppInfoParser) after the block in the same file, as its clients log them
    when they start, else the last one before it. (Joining on the host would pair every block
    with every banner it ever logged.)"""
    blocks = chosen.select(
        s.SOURCE_FILE,
        s.LINE,
        s.HOST,
        "_group",
        F.lit(None).cast(f"struct<version:string,evidence:{s.as_ddl(s.EVIDENCE_LINE)}>").alias("_banner"),
    )
    banners = model.events.where(F.col(s.EVENT_TYPE) == "consumer:version").select(
        s.SOURCE_FILE,
        s.LINE,
        F.lit(None).cast("string").alias(s.HOST),
        F.lit(None).cast("string").alias("_group"),
        F.struct(F.regexp_extract(s.MESSAGE, VERSION, 1).alias("version"), line().alias("evidence")).alias("_banner"),
    )
    in_file = Window.partitionBy(s.SOURCE_FILE).orderBy(s.LINE)
    before = F.last("_banner", ignorenulls=True).over(in_file.rowsBetween(Window.unboundedPreceding, -1))
    after = next_value(F.col("_banner"), [s.SOURCE_FILE], [s.LINE], after_current=True)
    with_banner = blocks.unionByName(banners).withColumn("_banner", F.coalesce(after, before))
    return with_banner.where(F.col("_group").isNotNull())


def _affected(with_banner: DataFrame, versions: str) -> DataFrame:
    """Per group, the blocks whose client version matches ``versions``: host, version, evidence."""
    affected = with_banner.where(F.col("_banner.version").rlike(versions))
    return affected.groupBy("_group").agg(
        F.min(s.HOST).alias("_host"),
        F.min("_banner.version").alias("_version"),
        F.array_union(F.collect_set(line()), F.collect_set("_banner.evidence")).alias("_evidence"),
    )


@rows_from("consumer:version")
def eos_restore_risk(model: Model, blocks: DataFrame) -> DataFrame:
    """Kafka Streams with ``processing.guarantee=exactly_once`` on a version with KAFKA-7672:
    a task that finds no checkpoint may go RUNNING without restoring its state (the version:
    ``_with_banner``)."""
    eos = blocks.where(F.col("_settings")["processing.guarantee"] == "exactly_once")
    grouped = _affected(_with_banner(model, eos), KAFKA_7672_VERSIONS)
    return _risk(
        grouped,
        "processing.guarantee",
        F.format_string(
            "Application %s runs Kafka Streams %s with processing.guarantee=exactly_once: in this version a task that finds "
            "no checkpoint can go RUNNING without restoring its state store (KAFKA-7672).",
            F.col("_group"),
            F.col("_version"),
        ),
        "KAFKA-7672 (Kafka Streams 1.1.0-2.1.x with exactly_once)",
        "Upgrade Kafka Streams to 2.2.0 or later.",
    )


@rows_from("consumer:version")
def auto_commit_loss_risk(model: Model, blocks: DataFrame) -> DataFrame:
    """The KIP-848 consumer (``group.protocol=consumer``) with ``enable.auto.commit=true`` on a
    client version with KAFKA-18641: the auto-commit before a revocation could commit positions
    of records fetched but never returned to the application, so the next owner of the partition
    skips them. The logs name no offsets of it: a risk, not a measured loss."""
    settings = F.col("_settings")
    kip848 = blocks.where((F.lower(settings["group.protocol"]) == "consumer") & (F.lower(settings["enable.auto.commit"]) == "true"))
    grouped = _affected(_with_banner(model, kip848), KAFKA_18641_VERSIONS)
    return _risk(
        grouped,
        "enable.auto.commit",
        F.format_string(
            "Group %s runs the new consumer (group.protocol=consumer) of Kafka %s with enable.auto.commit=true: in this "
            "version the auto-commit before a revocation can commit the positions of records fetched but not yet returned "
            "to the application, so the partition's next owner starts after records nobody processed (KAFKA-18641).",
            F.col("_group"),
            F.col("_version"),
        ),
        "KAFKA-18641 (AsyncKafkaConsumer could lose records with auto offset commit; the group.protocol=consumer preview of 3.7-3.9)",
        "Upgrade the consumer to a version with the fix of KAFKA-18641, or set enable.auto.commit=false and commit the "
        "offsets of processed records, or use group.protocol=classic until then.",
    )


RISKS = (latest_reset_risk, heartbeat_risk, eos_restore_risk, auto_commit_loss_risk)
"""Each risk's findings need a config block (``settings``) and the rows of its own sources: a
partition that had no committed offset, a ``Kafka version`` banner."""


@rows_from("settings")
def risky_config(model: Model) -> DataFrame:
    """Settings that make the other detectors' incidents possible, one finding per group and
    setting: ``auto.offset.reset=latest`` with partitions lacking commits, a heartbeat interval
    above a third of the session timeout, exactly-once on a Streams version with KAFKA-7672,
    auto-commit in the KIP-848 consumer on a version with KAFKA-18641."""
    blocks = _blocks(model)
    risks = [risk(model, blocks) for risk in RISKS if not model.nothing_in(risk.rows_from)]
    return all_of(model.events.sparkSession, risks)
