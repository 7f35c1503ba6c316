"""Offsets that skipped or repeated records: resets, backward commits, replays."""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .. import contract as c
from .. import schema as s
from ..model import Model
from ..model.members import MEMBER
from ..offsets.burrow import REWIND
from ..registry import earliest, latest
from ..sources import rows_from
from ._finding import findings, line, lines, one

PARTITION_KEY = (s.GROUP_ID, s.TOPIC, s.PARTITION)
EXACTLY_ONCE = r"^exactly_once"
"""``processing.guarantee`` values under which a record processed twice is a violation."""


def _tp() -> Column:
    return F.concat_ws("-", F.col(s.TOPIC), F.col(s.PARTITION).cast("string"))


def _member_history(commits: DataFrame) -> Window:
    return Window.partitionBy(*PARTITION_KEY, MEMBER).orderBy("sequence")


def _settings_by_group(model: Model, key: str) -> DataFrame:
    """Per group, the values of one setting in its clients' config blocks."""
    group = F.coalesce(F.col(s.GROUP_ID), F.col("application_id"))
    return model.settings.where(F.col("key") == key).groupBy(group.alias("_group")).agg(F.collect_set("value").alias("_values"))


def _log_start(offsets: DataFrame | None) -> DataFrame | None:
    """Per topic partition, the first offset ``kafka-dump-log`` shows (its log start)."""
    if offsets is None:
        return None
    batches = offsets.where((F.col(s.KIND) == s.DUMP_LOG_BATCH) & F.col(s.TOPIC).isNotNull())
    return batches.groupBy(F.col(s.TOPIC).alias("_topic"), F.col(s.PARTITION).alias("_partition")).agg(
        earliest(F.struct(F.col(s.BASE_OFFSET).alias("start"), line().alias("evidence")), s.BASE_OFFSET, line()).alias("_log_start")
    )


@rows_from("commits")
def reset_to_latest_gap(model: Model) -> DataFrame:
    """A partition with no committed offset was reset to its log end (``auto.offset.reset=latest``):
    every record before that offset was never consumed (seed 001: a partition added while the
    producers already wrote to it; also a first deployment, or commits expired after
    ``offsets.retention.minutes``).

    The range starts at the log start when a ``kafka-dump-log`` dump shows it (exact), else at
    offset 0 (``exact`` false: an upper bound, the start may have been deleted by retention).
    """
    commits = model.commits
    before = _member_history(commits)
    marked = commits.select(
        "*",
        F.lag("kind").over(before).alias("_previous_kind"),
        F.lag(line()).over(before).alias("_previous_line"),
    )
    resets = marked.where((F.col("kind") == c.RESET) & (F.col("_previous_kind") == c.NO_COMMITTED_OFFSET))
    latest_configured = _settings_by_group(model, "auto.offset.reset")
    resets = resets.join(latest_configured, F.col(s.GROUP_ID) == F.col("_group"), "left")
    latest = F.lower(F.col("strategy")) == "latest"
    by_config = F.col("strategy").isNull() & F.array_contains(F.coalesce(F.col("_values"), F.array()), "latest")
    resets = resets.where(latest | by_config)
    starts = _log_start(model.offsets)
    if starts is not None:
        resets = resets.join(starts, (F.col(s.TOPIC) == F.col("_topic")) & (F.col(s.PARTITION) == F.col("_partition")), "left")
    else:
        resets = resets.withColumn("_log_start", F.lit(None).cast(f"struct<start:bigint,evidence:{s.as_ddl(s.EVIDENCE_LINE)}>"))
    start = F.coalesce(F.col("_log_start.start"), F.lit(0))
    gaps = resets.withColumn("_from", start).where(F.col(s.OFFSET) > F.col("_from"))
    exact = F.col("_log_start.start").isNotNull()
    return findings(
        gaps, "reset_to_latest_gap",
        severity="critical", verdict="loss", group=F.col(s.GROUP_ID), topic=F.col(s.TOPIC), partition=F.col(s.PARTITION),
        offset_from=F.col("_from"), offset_to=F.col(s.OFFSET), records=F.col(s.OFFSET) - F.col("_from"), exact=exact,
        host=F.col(s.HOST), member=F.col(MEMBER), start=F.col(s.TS), end=F.col(s.TS),
        evidence=lines(one(F.col("_previous_line")), one(line(number="strategy_line")), one(line()), one(F.col("_log_start.evidence"))),
        explanation=F.format_string(
            "Group %s had no committed offset for %s, so %s started at the log end (auto.offset.reset=latest), offset %d: "
            "records [%d, %d) were never consumed%s.",
            F.col(s.GROUP_ID), _tp(), F.col(MEMBER), F.col(s.OFFSET), F.col("_from"), F.col(s.OFFSET),
            F.when(exact, F.lit("")).otherwise(F.lit(" (at most: the log start is not in the offset dumps; add a kafka-dump-log or kafka-get-offsets --time -2 dump)")),
        ),
        kafka_reference="auto.offset.reset=latest; partitions added while producers write to them",
        remedy="Use auto.offset.reset=earliest for groups that must see every record, or create new partitions before "
        "producers use them; re-consume the range by resetting the group's offset for this partition to its start.",
    )


@rows_from("commits")
def out_of_range_reset(model: Model) -> DataFrame:
    """A fetch position was out of range (retention deleted it, or the log was truncated after
    an unclean leader election) and was reset per ``auto.offset.reset``: a reset forward
    skipped [position, new offset), a reset backward replays [new offset, position)."""
    commits = model.commits
    after = _member_history(commits)
    marked = commits.select(
        "*",
        F.lead(F.struct("kind", s.OFFSET, s.TS, "strategy", line().alias("evidence"),
                        line(number="strategy_line").alias("strategy_evidence"))).over(after).alias("_next"),
    )
    resets = marked.where(
        (F.col("kind") == c.OUT_OF_RANGE) & (F.col("_next.kind") == c.RESET) & (F.col("_next.offset") != F.col(s.OFFSET))
    )
    forward = F.col("_next.offset") > F.col(s.OFFSET)
    low = F.least(F.col(s.OFFSET), F.col("_next.offset"))
    high = F.greatest(F.col(s.OFFSET), F.col("_next.offset"))
    return findings(
        resets, "out_of_range_reset",
        severity=F.when(forward, F.lit("critical")).otherwise(F.lit("warning")),
        verdict=F.when(forward, F.lit("loss")).otherwise(F.lit("duplication")),
        group=F.col(s.GROUP_ID), topic=F.col(s.TOPIC), partition=F.col(s.PARTITION),
        offset_from=low, offset_to=high, records=high - low, exact=F.lit(True),
        host=F.col(s.HOST), member=F.col(MEMBER), start=F.col(s.TS), end=F.col("_next.ts"),
        evidence=lines(one(line()), one(F.col("_next.strategy_evidence")), one(F.col("_next.evidence"))),
        explanation=F.format_string(
            "%s's fetch position %d on %s was out of range and was reset to %s offset %d: %s.",
            F.col(MEMBER), F.col(s.OFFSET), _tp(), F.coalesce(F.col("_next.strategy"), F.lit("the")), F.col("_next.offset"),
            F.when(forward, F.format_string("records [%d, %d) were skipped, never consumed", low, high))
            .otherwise(F.format_string("records [%d, %d) are consumed a second time", low, high)),
        ),
        kafka_reference="OffsetOutOfRangeException; auto.offset.reset; retention.ms / retention.bytes; unclean.leader.election.enable",
        remedy="Keep consumer lag well inside the topic's retention (or raise retention.ms); with auto.offset.reset=none the "
        "consumer fails instead of skipping, so the skip can be handled deliberately.",
    )


BACKWARD_REFERENCE = "alpakka-kafka #1121/#1123; Burrow REWIND; brokers accept commits for partitions a member does not own"
BACKWARD_REMEDY = (
    "Commit only partitions the consumer still owns: drop pending commits in onPartitionsRevoked/onPartitionsLost "
    "(alpakka-kafka 2.0.4+ does), and never commit an offset below the last one committed."
)


@rows_from("commits", "offsets")
def backward_commit(model: Model) -> DataFrame:
    """A committed offset lower than the partition's previous commit (seed 003, alpakka-kafka
    #1121/#1123, Burrow's REWIND): the group's position went back, and whoever owns the
    partition next reprocesses [new commit, previous commit).

    ``classification``: ``zombie`` (the committer no longer owned the partition: brokers accept
    commits from any member of the current generation), ``reset`` (the committer reset or
    seeked its position since the previous commit), ``replay`` (an owner resumed from an older
    commit and committed behind the last one), ``rewind`` (see ``_unseen_rewinds``). Dumped
    offsets (``__consumer_offsets`` and Burrow commits, ``--describe`` and lag-exporter
    snapshots) count only for partitions with no commit in the logs (the logs name the
    committer; the dump would repeat them), and a dumped step back only between two timed
    rows of different times, or two rows of one file (whose line order is their order).
    """
    commits = model.commits
    history = _member_history(commits).rowsBetween(Window.unboundedPreceding, -1)
    repositioned = F.last(F.when(F.col("kind").isin(c.RESET, c.SEEK), F.col("sequence")), ignorenulls=True).over(history)
    logged = F.sum((F.col("kind") == c.COMMIT).cast("int")).over(Window.partitionBy(*PARTITION_KEY))
    marked = commits.withColumn("_repositioned", repositioned).withColumn("_logged", logged)
    candidates = marked.where((F.col("kind") == c.COMMIT) | (F.col("kind").isin(*c.DUMPED_KINDS) & (F.col("_logged") == 0)))
    ordered = Window.partitionBy(*PARTITION_KEY).orderBy("sequence")
    previous = F.lag(F.struct(s.OFFSET, "sequence", MEMBER, s.TS, s.SOURCE_FILE, line().alias("evidence"))).over(ordered)
    in_order = (F.col(s.TS) > F.col("_previous.ts")) | (F.col(s.SOURCE_FILE) == F.col("_previous.source_file"))
    backward = candidates.withColumn("_previous", previous).where(
        (F.col(s.OFFSET) < F.col("_previous.offset")) & ((F.col("kind") == c.COMMIT) | in_order)
    )
    kind = (
        F.when(F.col("in_own_interval") == F.lit(False), F.lit("zombie"))
        .when(F.col("_repositioned") > F.col("_previous.sequence"), F.lit("reset"))
        .otherwise(F.lit("replay"))
    )
    why = (
        F.when(kind == "zombie", F.lit("after it had lost the partition in a rebalance"))
        .when(kind == "reset", F.lit("after its position was reset"))
        .otherwise(F.lit("resuming from an older commit"))
    )
    records = F.col("_previous.offset") - F.col(s.OFFSET)
    steps = findings(
        backward, "backward_commit",
        severity="warning", verdict="duplication", group=F.col(s.GROUP_ID), topic=F.col(s.TOPIC), partition=F.col(s.PARTITION),
        offset_from=F.col(s.OFFSET), offset_to=F.col("_previous.offset"), records=records, exact=F.lit(True), classification=kind,
        host=F.col(s.HOST), member=F.col(MEMBER), start=F.col("_previous.ts"), end=F.col(s.TS),
        evidence=lines(one(F.col("_previous.evidence")), one(line())),
        explanation=F.format_string(
            "%s committed offset %d for %s %s, after %s had committed %d: the committed offset went back %d records, which "
            "the partition's next owner will process again (external lag monitors show it stuck).",
            F.coalesce(F.col(MEMBER), F.lit("an unknown member")), F.col(s.OFFSET), _tp(), why,
            F.coalesce(F.col("_previous.member"), F.lit("the group")), F.col("_previous.offset"), records,
        ),
        kafka_reference=BACKWARD_REFERENCE, remedy=BACKWARD_REMEDY,
    )
    return steps.unionByName(_unseen_rewinds(model, steps))


def _unseen_rewinds(model: Model, steps: DataFrame) -> DataFrame:
    """Partitions Burrow rated ``REWIND`` (a commit of its window went below an earlier one and
    the group has not come back to it) whose dumped start and end commits show no step back:
    the step lies inside the window, so the range is unknown (``offset_from``/``offset_to``
    null, ``exact`` false). Not for partitions with commits in the logs, like dumped steps."""
    if model.offsets is None:
        return steps.limit(0)
    rated = model.offsets.where((F.col(s.KIND) == s.CONSUMER_OFFSETS_COMMIT) & (F.col(s.STATE) == REWIND))
    logged = model.commits.where(F.col("kind") == c.COMMIT).select(*PARTITION_KEY).distinct()
    rewinds = (
        rated.join(steps.select(*PARTITION_KEY).distinct(), list(PARTITION_KEY), "left_anti")
        .join(logged, list(PARTITION_KEY), "left_anti")
        .groupBy(*PARTITION_KEY)
        .agg(
            earliest(F.struct(s.CURRENT_OFFSET, s.COMMIT_TS, s.HOST, s.CLIENT_ID), s.COMMIT_TS, line()).alias("_first"),
            latest(F.struct(s.CURRENT_OFFSET, s.COMMIT_TS, s.HOST, s.CLIENT_ID), s.COMMIT_TS, line()).alias("_last"),
            F.collect_list(line()).alias("_evidence"),
        )
    )
    return findings(
        rewinds, "backward_commit",
        severity="warning", verdict="duplication", group=F.col(s.GROUP_ID), topic=F.col(s.TOPIC), partition=F.col(s.PARTITION),
        exact=F.lit(False), classification="rewind", host=F.col("_last.host"), member=F.col("_last.client_id"),
        start=F.col("_first.commit_ts"), end=F.col("_last.commit_ts"), evidence=lines(F.col("_evidence")),
        explanation=F.format_string(
            "Burrow rated %s of group %s REWIND: between %s and %s a commit went below an earlier one and the group has "
            "not come back to it, which the next owner will process again; the window's first and last commits (%d, "
            "then %d) do not show the step, so the range is unknown (Burrow's consumer detail, "
            "/v3/kafka/<cluster>/consumer/<group>, lists every commit of the window).",
            _tp(), F.col(s.GROUP_ID), F.col("_first.commit_ts").cast("string"), F.col("_last.commit_ts").cast("string"),
            F.col("_first.current_offset"), F.col("_last.current_offset"),
        ),
        kafka_reference=BACKWARD_REFERENCE, remedy=BACKWARD_REMEDY,
    )


@rows_from("commits")
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
    member commits late). The verdict is ``expected`` under at-least-once and
    ``duplication`` when the group is configured for exactly-once (``processing.guarantee``).
    """
    commits = model.commits
    own = _member_history(commits).rowsBetween(Window.unboundedPreceding, -1)
    own_commit = F.when(
        F.col("kind").isin(c.COMMIT, c.POSITION_FROM_COMMIT), F.struct(F.col("sequence").alias("sequence"), F.col(s.GENERATION).alias("generation"))
    )
    failed = commits.withColumn("_epoch", F.last(own_commit, ignorenulls=True).over(own)).where(
        (F.col("kind") == c.COMMIT_FAILED) & F.col(s.OFFSET).isNotNull()
    ).select(
        *[F.col(key).alias(f"_f_{key}") for key in PARTITION_KEY],
        F.struct(
            F.col(s.OFFSET).alias("offset"), F.col(MEMBER).alias("member"), F.col("sequence").alias("sequence"),
            F.coalesce(F.col("_epoch.sequence"), F.lit(0)).alias("after"),
            F.coalesce(F.col("_epoch.generation"), F.col(s.GENERATION)).alias("generation"),
            line().alias("evidence"),
        ).alias("_failure"),
    )
    resumes = commits.where(F.col("kind") == c.POSITION_FROM_COMMIT)
    same = reduce(lambda a, b: a & b, [F.col(key) == F.col(f"_f_{key}") for key in PARTITION_KEY])
    itself = (F.col(MEMBER) == F.col("_failure.member")) & (F.col(s.GENERATION) == F.col("_failure.generation"))
    candidates = resumes.join(failed, same & (F.col("sequence") > F.col("_failure.after")) & ~F.coalesce(itself, F.lit(False)))
    first_resume = Window.partitionBy("_failure.sequence", *[f"_f_{key}" for key in PARTITION_KEY]).orderBy("sequence")
    paired = candidates.withColumn("_rank", F.row_number().over(first_resume)).where(F.col("_rank") == 1)
    per_resume = paired.groupBy(*resumes.columns).agg(F.max_by("_failure", "_failure.offset").alias("_failure"))
    twice = per_resume.where(F.col("_failure.offset") > F.col(s.OFFSET))
    guarantee = _settings_by_group(model, "processing.guarantee")
    twice = twice.join(guarantee, F.col(s.GROUP_ID) == F.col("_group"), "left")
    exactly_once = F.exists(F.coalesce(F.col("_values"), F.array()), lambda value: value.rlike(EXACTLY_ONCE))
    records = F.col("_failure.offset") - F.col(s.OFFSET)
    return findings(
        twice, "reprocessing",
        severity=F.when(exactly_once, F.lit("warning")).otherwise(F.lit("info")),
        verdict=F.when(exactly_once, F.lit("duplication")).otherwise(F.lit("expected")),
        group=F.col(s.GROUP_ID), topic=F.col(s.TOPIC), partition=F.col(s.PARTITION),
        offset_from=F.col(s.OFFSET), offset_to=F.col("_failure.offset"), records=records, exact=F.lit(True),
        host=F.col(s.HOST), member=F.col(MEMBER), start=F.col(s.TS), end=F.col(s.TS),
        evidence=lines(one(F.col("_failure.evidence")), one(line())),
        explanation=F.format_string(
            "%s failed to commit offset %d for %s, and %s resumed the partition from the committed offset %d: records "
            "[%d, %d) (%d) were processed twice%s.",
            F.col("_failure.member"), F.col("_failure.offset"), _tp(), F.col(MEMBER), F.col(s.OFFSET), F.col(s.OFFSET),
            F.col("_failure.offset"), records,
            F.when(exactly_once, F.lit(" although the group is configured for exactly-once")).otherwise(F.lit(" (allowed under at-least-once)")),
        ),
        kafka_reference="CommitFailedException; at-least-once delivery; max.poll.interval.ms / max.poll.records",
        remedy="Commit synchronously in onPartitionsRevoked, keep each poll loop well inside max.poll.interval.ms "
        "(lower max.poll.records), and make processing idempotent or transactional (exactly-once).",
    )
