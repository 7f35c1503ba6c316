"""Records processed twice after a failed commit (``reprocessing``), measured where the logs
give both offsets and named where they do not."""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .. import contract as c
from .. import schema as s
from ..model import Model
from ..model.members import MEMBER
from ..sources import rows_from
from ._commits import PARTITION_KEY, member_history, partition_name, settings_by_group
from ._finding import OFFSETS_DUMP_COMMAND, at, describe_command, findings, line, lines, missing, one, place, text

EXACTLY_ONCE = r"^exactly_once"
"""``processing.guarantee`` values under which a record processed twice is a violation."""


@rows_from("commits", "consumer:offset:commit_failed")
def reprocessing(model: Model) -> DataFrame:
    """Records processed twice after a failed commit (``CommitFailedException``: the member was
    no longer in the generation, e.g. after a poll or session timeout, or the group had
    rebalanced): the old owner had processed up to the offset P it failed to commit, and the
    partition resumed from the older committed offset C, so [C, P) was processed twice. (A
    crash before a commit leaves no P in the logs and is not counted.)

    The resume paired with a failed commit is the partition's first "Setting offset ... to the
    committed offset" after the failing member's last successful commit or own resume (where
    its processing started; commits may be logged at DEBUG only), by another member or by the
    same member in another generation; the failure may come before it or after it (a stalled
    member commits late). A failing member with no commit or resume of its own (a standalone
    ``assign()`` committer of the group's id) is paired with the first resume after its failure. The verdict is ``expected`` under at-least-once and
    ``duplication`` when the group is configured for exactly-once (``processing.guarantee``).
    """
    commits = model.commits
    own = member_history(commits).rowsBetween(Window.unboundedPreceding, -1)
    own_commit = F.when(
        F.col("kind").isin(c.COMMIT, c.POSITION_FROM_COMMIT),
        F.struct(F.col("sequence").alias("sequence"), F.col(s.GENERATION).alias("generation")),
    )
    failed = (
        commits.withColumn("_epoch", F.last(own_commit, ignorenulls=True).over(own))
        .where((F.col("kind") == c.COMMIT_FAILED) & F.col(s.OFFSET).isNotNull())
        .select(
            *[F.col(key).alias(f"_f_{key}") for key in PARTITION_KEY],
            F.struct(
                F.col(s.OFFSET).alias("offset"),
                F.col(MEMBER).alias("member"),
                F.col("sequence").alias("sequence"),
                F.coalesce(F.col("_epoch.sequence"), F.col("sequence")).alias("after"),
                F.coalesce(F.col("_epoch.generation"), F.col(s.GENERATION)).alias("generation"),
                line().alias("evidence"),
            ).alias("_failure"),
        )
    )
    resumes = commits.where(F.col("kind") == c.POSITION_FROM_COMMIT)
    same = reduce(lambda a, b: a & b, [F.col(key) == F.col(f"_f_{key}") for key in PARTITION_KEY])
    itself = (F.col(MEMBER) == F.col("_failure.member")) & (F.col(s.GENERATION) == F.col("_failure.generation"))
    candidates = resumes.join(failed, same & (F.col("sequence") > F.col("_failure.after")) & ~F.coalesce(itself, F.lit(False)))
    first_resume = Window.partitionBy("_failure.sequence", *[f"_f_{key}" for key in PARTITION_KEY]).orderBy("sequence")
    paired = candidates.withColumn("_rank", F.row_number().over(first_resume)).where(F.col("_rank") == 1)
    per_resume = paired.groupBy(*resumes.columns).agg(F.max_by("_failure", "_failure.offset").alias("_failure"))
    twice = per_resume.where(F.col("_failure.offset") > F.col(s.OFFSET))
    guarantee = settings_by_group(model, "processing.guarantee")
    twice = twice.join(guarantee, F.col(s.GROUP_ID) == F.col("_group"), "left")
    exactly_once = F.exists(F.coalesce(F.col("_values"), F.array()), lambda value: value.rlike(EXACTLY_ONCE))
    records = F.col("_failure.offset") - F.col(s.OFFSET)
    return _measured_reprocessing(twice, exactly_once, records).unionByName(_unmeasured_reprocessing(model, guarantee))


REPROCESSING_REFERENCE = "CommitFailedException; at-least-once delivery; max.poll.interval.ms / max.poll.records"
REPROCESSING_REMEDY = (
    "Commit synchronously in onPartitionsRevoked, keep each poll loop well inside max.poll.interval.ms "
    "(lower max.poll.records), and make processing idempotent or transactional (exactly-once)."
)


def _measured_reprocessing(twice: DataFrame, exactly_once: Column, records: Column) -> DataFrame:
    return findings(
        twice,
        "reprocessing",
        severity=F.when(exactly_once, F.lit("warning")).otherwise(F.lit("info")),
        verdict=F.when(exactly_once, F.lit("duplication")).otherwise(F.lit("expected")),
        group=F.col(s.GROUP_ID),
        topic=F.col(s.TOPIC),
        partition=F.col(s.PARTITION),
        offset_from=F.col(s.OFFSET),
        offset_to=F.col("_failure.offset"),
        records=records,
        exact=F.lit(True),
        host=F.col(s.HOST),
        member=F.col(MEMBER),
        start=F.col(s.TS),
        end=F.col(s.TS),
        evidence=lines(one(F.col("_failure.evidence")), one(line())),
        explanation=F.format_string(
            "%s failed to commit offset %d for %s, and %s resumed the partition from the committed offset %d: records "
            "[%d, %d) (%d) were processed twice%s.",
            F.col("_failure.member"),
            F.col("_failure.offset"),
            partition_name(),
            F.col(MEMBER),
            F.col(s.OFFSET),
            F.col(s.OFFSET),
            F.col("_failure.offset"),
            records,
            F.when(exactly_once, F.lit(" although the group is configured for exactly-once")).otherwise(
                F.lit(" (allowed under at-least-once)")
            ),
        ),
        kafka_reference=REPROCESSING_REFERENCE,
        remedy=REPROCESSING_REMEDY,
    )


SAME_COMMIT_S = 1.0
SAME_COMMIT_LINES = 3
"""How close (seconds, or lines of one undated file) a failure line without offsets stands to
its member's failure lines with offsets for both to be one commit's."""


def _unmeasured_reprocessing(model: Model, guarantee: DataFrame) -> DataFrame:
    """A commit that failed without naming its offsets (``Failing OffsetCommit request since the
    consumer is not part of an active group``, ``CommitFailedException``, librdkafka's
    ``OffsetCommit .. returned: Broker: Unknown member``), of a member whose partitions another
    owner (or itself, after rejoining) then resumed from the group's older committed offset:
    what it had processed since its last successful commit is processed again, but the logs do
    not say how much. One finding per partition the member held at the failure (or released
    just before it), ``offset_from`` the resumed offset where the new owner logged it,
    ``offset_to`` null, ``exact`` false, ``missing`` the offsets that measure it. None under
    exactly-once: the failing member's transaction is aborted."""
    commits = model.commits
    counted = commits.where(F.col("kind") == c.COMMIT_FAILED)
    failures = (
        model.members.where((F.col(s.EVENT_TYPE) == "consumer:offset:commit_failed") & F.col(s.TOPIC).isNull() & F.col(MEMBER).isNotNull())
        .join(counted.select(s.SOURCE_FILE, s.LINE).distinct(), [s.SOURCE_FILE, s.LINE], "left_anti")
        .select(
            F.col(MEMBER).alias("_f_member"),
            F.col(s.GROUP_ID).alias("_f_group"),
            F.col(s.TS).alias("_f_ts"),
            F.col(s.SOURCE_FILE).alias("_f_file"),
            F.col(s.LINE).alias("_f_line"),
            F.col(s.HOST).alias("_f_host"),
            F.col(s.MEMBER_BASIS).alias("_f_basis"),
        )
    )
    # a failure line that sums up a commit whose partitions its member's other lines name with
    # their offsets (librdkafka: "OffsetCommit failed for orders [1] at offset 4200", then
    # "OffsetCommit for 1 partition(s) ..: returned: Broker: Unknown member") is that commit
    named = commits.where((F.col("kind") == c.COMMIT_FAILED) & F.col(s.OFFSET).isNotNull()).select(
        F.col(MEMBER).alias("_s_member"), F.col(s.TS).alias("_s_ts"), F.col(s.SOURCE_FILE).alias("_s_file"), F.col(s.LINE).alias("_s_line")
    )
    same_commit = (F.col("_s_member") == F.col("_f_member")) & F.coalesce(
        F.abs(F.col("_s_ts").cast("double") - F.col("_f_ts").cast("double")) <= SAME_COMMIT_S,
        (F.col("_s_file") == F.col("_f_file")) & (F.abs(F.col("_s_line") - F.col("_f_line")) <= SAME_COMMIT_LINES),
    )
    failures = failures.join(named, same_commit, "left_anti")
    intervals = model.ownership.where(F.col(s.TOPIC).isNotNull())
    before_failure = F.coalesce(
        F.col("from_ts") <= F.col("_f_ts"), (F.col(s.SOURCE_FILE) == F.col("_f_file")) & (F.col("from_line") <= F.col("_f_line"))
    )
    held = intervals.join(
        failures, (F.col(MEMBER) == F.col("_f_member")) & F.col(s.GROUP_ID).eqNullSafe(F.col("_f_group")) & before_failure
    )
    failure_key = ["_f_file", "_f_line"]
    latest_per_partition = Window.partitionBy(*failure_key, s.TOPIC, s.PARTITION).orderBy(
        F.col("from_ts").desc_nulls_last(), F.col("from_line").desc()
    )
    held = held.withColumn("_rank", F.row_number().over(latest_per_partition)).where(F.col("_rank") == 1)
    # what it held at the failure; if nothing, what it released last before it (it had left)
    active = F.coalesce(F.col("to_ts").isNull() | (F.col("to_ts") >= F.col("_f_ts")), F.lit(True))
    per_failure = Window.partitionBy(*failure_key)
    held = held.withColumn("_active", active).withColumn("_any_active", F.max(F.col("_active").cast("int")).over(per_failure) == 1)
    held = held.withColumn("_last_release", F.max(F.when(~F.col("_active"), F.col("to_ts"))).over(per_failure)).where(
        F.col("_active") | (~F.col("_any_active") & (F.col("to_ts") == F.col("_last_release")))
    )
    measured_failures = commits.where((F.col("kind") == c.COMMIT_FAILED) & F.col(s.OFFSET).isNotNull()).select(
        F.col(MEMBER).alias("_m_member"),
        F.col(s.TOPIC).alias("_m_topic"),
        F.col(s.PARTITION).alias("_m_partition"),
        F.col(s.TS).alias("_m_ts"),
    )
    held = held.join(
        measured_failures,
        (F.col("_m_member") == F.col(MEMBER))
        & (F.col("_m_topic") == F.col(s.TOPIC))
        & (F.col("_m_partition") == F.col(s.PARTITION))
        & (F.col("_m_ts") >= F.col("from_ts")),
        "left_anti",
    )
    later = intervals.select(
        F.col(s.GROUP_ID).alias("_n_group"),
        F.col(s.TOPIC).alias("_n_topic"),
        F.col(s.PARTITION).alias("_n_partition"),
        F.col(MEMBER).alias("_n_member"),
        F.col("from_ts").alias("_n_from"),
        F.col(s.SOURCE_FILE).alias("_n_file"),
        F.col("from_line").alias("_n_line"),
        F.col(s.GENERATION).alias("_n_generation"),
    )
    next_owner = (
        F.col("_n_group").eqNullSafe(F.col(s.GROUP_ID))
        & (F.col("_n_topic") == F.col(s.TOPIC))
        & (F.col("_n_partition") == F.col(s.PARTITION))
        & (F.col("_n_from") > F.col("from_ts"))
        & ((F.col("_n_member") != F.col(MEMBER)) | (F.col("_n_from") > F.col("_f_ts")))
    )
    first_next = Window.partitionBy(*failure_key, s.TOPIC, s.PARTITION).orderBy("_n_from", "_n_file", "_n_line")
    resumed = held.join(later, next_owner).withColumn("_rank", F.row_number().over(first_next)).where(F.col("_rank") == 1)
    positions = commits.where((F.col("kind") == c.POSITION_FROM_COMMIT) & F.col(s.OFFSET).isNotNull()).select(
        F.col(MEMBER).alias("_p_member"),
        F.col(s.TOPIC).alias("_p_topic"),
        F.col(s.PARTITION).alias("_p_partition"),
        F.col(s.TS).alias("_p_ts"),
        F.col(s.OFFSET).alias("_p_offset"),
        line().alias("_p_evidence"),
    )
    resume_of_next = (
        (F.col("_p_member") == F.col("_n_member"))
        & (F.col("_p_topic") == F.col(s.TOPIC))
        & (F.col("_p_partition") == F.col(s.PARTITION))
        & (F.col("_p_ts") >= F.col("_n_from"))
    )
    first_position = Window.partitionBy(*failure_key, s.TOPIC, s.PARTITION).orderBy(F.col("_p_ts").asc_nulls_last())
    with_resume = (
        resumed.join(positions, resume_of_next, "left")
        .withColumn("_rank", F.row_number().over(first_position))
        .where(F.col("_rank") == 1)
        .join(guarantee, F.col(s.GROUP_ID) == F.col("_group"), "left")
    )
    # under exactly-once the failing member's transaction is aborted: its uncommitted work is not
    # output twice (the fenced detector tells it)
    exactly_once = F.exists(F.coalesce(F.col("_values"), F.array()), lambda value: value.rlike(EXACTLY_ONCE))
    with_resume = with_resume.where(~exactly_once)
    failure_line = F.struct(F.col("_f_file").alias("file"), F.col("_f_line").cast("long").alias("line"))
    next_line = F.struct(F.col("_n_file").alias("file"), F.col("_n_line").cast("long").alias("line"))
    resumed_from = F.when(F.col("_p_offset").isNotNull(), F.format_string(" from the committed offset %d", F.col("_p_offset"))).otherwise(
        F.lit(" from the group's last committed offset")
    )
    return findings(
        with_resume,
        "reprocessing",
        severity="info",
        verdict="expected",
        group=F.col(s.GROUP_ID),
        topic=F.col(s.TOPIC),
        partition=F.col(s.PARTITION),
        offset_from=F.col("_p_offset"),
        exact=F.lit(False),
        host=F.col("_f_host"),
        member=F.col("_f_member"),
        member_basis=F.col("_f_basis"),
        start=F.col("_f_ts"),
        end=F.coalesce(F.col("_p_ts"), F.col("_n_from")),
        evidence=lines(one(failure_line), one(next_line), one(F.col("_p_evidence"))),
        explanation=F.format_string(
            "%s's commit failed %s while it held %s, and %s resumed the partition%s: what %s had processed since its last "
            "successful commit was processed twice%s, but the logs name neither that position nor the commit, so the range "
            "is unmeasured.",
            F.col("_f_member"),
            at(F.col("_f_ts"), place(failure_line)),
            partition_name(),
            F.when(F.col("_n_member") == F.col("_f_member"), F.lit("it, after rejoining,")).otherwise(
                text(F.col("_n_member"), "the next owner")
            ),
            resumed_from,
            F.col("_f_member"),
            F.lit(" (allowed under at-least-once)"),
        ),
        kafka_reference=REPROCESSING_REFERENCE,
        remedy=REPROCESSING_REMEDY,
        missing=missing(
            F.format_string(
                "the offset %s had processed %s up to when its commit failed (the offsets it tried to commit: the Java client "
                "logs them at DEBUG, 'Sending OffsetCommit request with {..}'), and the group's committed offset of it before "
                "and after the rebalance",
                F.col("_f_member"),
                partition_name(),
            ),
            F.lit(OFFSETS_DUMP_COMMAND),
            describe_command(F.col(s.GROUP_ID)),
        ),
    )
