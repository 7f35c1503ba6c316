"""Commits that moved a group's position back (``backward_commit``): records replayed by
whoever owns the partition next."""

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
from ._commits import PARTITION_KEY, member_history, partition_name
from ._finding import OFFSETS_DUMP_COMMAND, findings, line, lines, missing, one, text

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
    commit and committed behind the last one), ``rewind`` (see ``_unseen_rewinds``), ``unseen``
    (positions fetched at assignment went back: ``_fetched_positions_back``). Dumped
    offsets (``__consumer_offsets`` and Burrow commits, ``--describe`` and lag-exporter
    snapshots) count only for partitions with no commit in the logs (the logs name the
    committer; the dump would repeat them), and a dumped step back only between two timed
    rows of different times, or two rows of one file (whose line order is their order).

    The range is what was processed twice (``_in_owner_interval``), not the step alone; a
    zombie's late commit above the owner's resume that is no step back is one too
    (``_ahead_of_owner``).
    """
    commits = model.commits
    history = member_history(commits).rowsBetween(Window.unboundedPreceding, -1)
    repositioned = F.last(F.when(F.col("kind").isin(c.RESET, c.SEEK), F.col("sequence")), ignorenulls=True).over(history)
    logged = F.sum((F.col("kind") == c.COMMIT).cast("int")).over(Window.partitionBy(*PARTITION_KEY))
    marked = _in_owner_interval(commits.withColumn("_repositioned", repositioned).withColumn("_logged", logged))
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
    zombie = kind == "zombie"
    start = F.when(kind != "reset", F.least(F.col(s.OFFSET), F.coalesce(F.col("_resumed.offset"), F.col(s.OFFSET)))).otherwise(
        F.col(s.OFFSET)
    )
    overtaken = zombie & (F.col("_overtaking.offset") >= F.col("_previous.offset"))
    stop = F.when(overtaken, F.greatest(start, F.col("_reach"))).otherwise(F.col("_previous.offset"))
    records = stop - start
    steps = findings(
        backward,
        "backward_commit",
        severity=F.when(records > 0, F.lit("warning")).otherwise(F.lit("info")),
        verdict="duplication",
        group=F.col(s.GROUP_ID),
        topic=F.col(s.TOPIC),
        partition=F.col(s.PARTITION),
        offset_from=start,
        offset_to=stop,
        records=records,
        exact=F.lit(True),
        classification=kind,
        host=F.col(s.HOST),
        member=F.col(MEMBER),
        start=F.col("_previous.ts"),
        end=F.col(s.TS),
        evidence=lines(
            one(F.col("_previous.evidence")),
            one(line()),
            one(F.when(overtaken, F.col("_overtaking.evidence"))),
            one(F.when(start < F.col(s.OFFSET), F.col("_resumed.evidence"))),
        ),
        explanation=F.concat(
            F.format_string(
                "%s committed offset %d for %s %s, after %s had committed %d: the committed offset went back %d records",
                F.coalesce(F.col(MEMBER), F.lit("an unknown member")),
                F.col(s.OFFSET),
                partition_name(),
                why,
                F.coalesce(F.col("_previous.member"), F.lit("the group")),
                F.col("_previous.offset"),
                F.col("_previous.offset") - F.col(s.OFFSET),
            ),
            F.when(
                overtaken,
                F.format_string(
                    ", but the owner's own commit of %d overtook it before any member resumed from it, so nobody processes them again.",
                    F.col("_overtaking.offset"),
                ),
            ).otherwise(F.lit(", which the partition's next owner will process again (external lag monitors show it stuck).")),
            F.when(
                zombie & (start < F.col(s.OFFSET)),
                F.format_string(
                    " The owner had resumed from %d, so [%d, %d) was processed both by %s after it lost the partition and by the owner.",
                    start,
                    start,
                    F.least(stop, F.col("_reach")),
                    F.coalesce(F.col(MEMBER), F.lit("the committer")),
                ),
            )
            .when(
                (kind == "replay") & (start < F.col(s.OFFSET)),
                F.format_string(" It had resumed from %d, so it processes [%d, %d) a second time.", start, start, stop),
            )
            .otherwise(F.lit("")),
        ),
        kafka_reference=BACKWARD_REFERENCE,
        remedy=BACKWARD_REMEDY,
    )
    ranges = backward.select(*PARTITION_KEY, start.alias("_from"), stop.alias("_to"))
    ahead = _ahead_of_owner(candidates.withColumn("_previous", previous), ranges)
    return steps.unionByName(ahead).unionByName(_unseen_rewinds(model, steps)).unionByName(_fetched_positions_back(model, steps))


def _ahead_of_owner(commits: DataFrame, ranges: DataFrame) -> DataFrame:
    """A zombie's late commit Y above the owner's resume point X that is no step back (the owner
    had not committed past it yet, seed 003's hosts): the zombie processed [X, Y) before it
    lost the partition, and the owner, resumed from X, processed it again, as its next own
    commit of Y or more in the interval shows. The consumer keeps its position in memory after
    the assignment, so the late commit moves only where a later owner resumes, over records the
    zombie processed: nothing is skipped. An owner's next commit below Y is a step back (a
    ``replay`` of [X, Y)); an owner that commits nothing more proves no reach, so nothing is
    claimed. Per zombie and owner interval its highest such commit; none overlapping a step's range.
    """
    ahead = commits.where(
        (F.col("kind") == c.COMMIT)
        & (F.col("in_own_interval") == F.lit(False))
        & (F.col(s.OFFSET) > F.col("_resumed.offset"))
        & (F.col("_previous").isNull() | (F.col(s.OFFSET) >= F.col("_previous.offset")))
        & (F.col("_overtaking.offset") >= F.col(s.OFFSET))
    )
    highest = Window.partitionBy(*PARTITION_KEY, "owner", "owner_generation", MEMBER).orderBy(F.desc(s.OFFSET), "sequence")
    ahead = ahead.withColumn("_rank", F.row_number().over(highest)).where(F.col("_rank") == 1)
    ranges = ranges.select(*[F.col(k).alias(f"_range_{k}") for k in PARTITION_KEY], "_from", "_to")
    overlapping = [F.col(k).eqNullSafe(F.col(f"_range_{k}")) for k in PARTITION_KEY] + [
        F.col("_from") < F.col(s.OFFSET),
        F.col("_to") > F.col("_resumed.offset"),
    ]
    ahead = ahead.join(ranges, reduce(Column.__and__, overlapping), "left_anti")
    start, stop = F.col("_resumed.offset"), F.col(s.OFFSET)
    return findings(
        ahead,
        "backward_commit",
        severity="warning",
        verdict="duplication",
        group=F.col(s.GROUP_ID),
        topic=F.col(s.TOPIC),
        partition=F.col(s.PARTITION),
        offset_from=start,
        offset_to=stop,
        records=stop - start,
        exact=F.lit(True),
        classification="zombie",
        host=F.col(s.HOST),
        member=F.col(MEMBER),
        start=F.col("_resumed.ts"),
        end=F.col(s.TS),
        evidence=lines(one(F.col("_resumed.evidence")), one(line()), one(F.col("_overtaking.evidence"))),
        explanation=F.format_string(
            "%s committed offset %d for %s after it had lost the partition in a rebalance. The owner %s had resumed "
            "from %d and committed %d after it, so [%d, %d) was processed both by %s before its late commit and by "
            "the owner. The commit is no step back (the owner had not committed past it), and it skips nothing: "
            "the owner's position is its own, and its next commit overwrote it.",
            F.coalesce(F.col(MEMBER), F.lit("an unknown member")),
            F.col(s.OFFSET),
            partition_name(),
            F.col("owner"),
            start,
            F.col("_overtaking.offset"),
            start,
            stop,
            F.coalesce(F.col(MEMBER), F.lit("the committer")),
        ),
        kafka_reference=BACKWARD_REFERENCE,
        remedy=BACKWARD_REMEDY,
    )


def _in_owner_interval(commits: DataFrame) -> DataFrame:
    """What a step back proves, read within the interval of the partition's owner at the commit.

    ``_resumed``: where the owner resumed (``Setting offset for partition P to the committed
    offset X``). An owner that resumed from X and steps back processes [X, previous) again; a
    zombie (a late commit of a partition its committer lost, seed 003) that commits Y above X
    proves [X, Y) processed by both. ``_reach``: the committer's highest late commit of the
    partition from there on. ``_overtaking``: the owner's next commit in that interval. Where it
    reaches the offset a zombie's step went back from, the owner overwrote the step before any
    reassignment, so no one resumes from it (lab D13: commitAsync of a worker thread landing
    after the revocation). The windows are the partition's and the member's, which the
    detector orders by already; a row found in another owner's interval counts as none.
    """
    ordered = Window.partitionBy(*PARTITION_KEY).orderBy("sequence")
    by_owner = F.col(MEMBER) == F.col("owner")
    found = F.struct(s.OFFSET, s.TS, line().alias("evidence"), "owner", "owner_generation")
    resume = F.when((F.col("kind") == c.POSITION_FROM_COMMIT) & by_owner, found)
    own_commit = F.when((F.col("kind") == c.COMMIT) & by_owner & F.col("in_own_interval"), found)
    late_commit = F.when((F.col("kind") == c.COMMIT) & ~F.col("in_own_interval"), F.col(s.OFFSET))
    marked = commits.select(
        "*",
        F.last(resume, ignorenulls=True).over(ordered.rowsBetween(Window.unboundedPreceding, -1)).alias("_last_resume"),
        F.first(own_commit, ignorenulls=True).over(ordered.rowsBetween(1, Window.unboundedFollowing)).alias("_next_own"),
        F.max(late_commit).over(member_history(commits).rowsBetween(0, Window.unboundedFollowing)).alias("_reach"),
    )

    def in_interval(name: str) -> Column:
        same = (F.col(f"{name}.owner") == F.col("owner")) & F.col(f"{name}.owner_generation").eqNullSafe(F.col("owner_generation"))
        fields = [F.col(f"{name}.{field}").alias(field) for field in (s.OFFSET, s.TS, "evidence")]
        return F.when(same, F.struct(*fields))

    return marked.withColumn("_resumed", in_interval("_last_resume")).withColumn("_overtaking", in_interval("_next_own"))


def _fetched_positions_back(model: Model, steps: DataFrame) -> DataFrame:
    """A partition whose positions fetched at assignment (``Setting offset for partition P to
    the committed offset N``, each owner's resume) went back (2, then 6, then 2): its committed
    offset went from 6 back to 2, so the owner after reprocesses [2, 6). Only for partitions
    whose commits are not in the logs (at INFO the Java client logs none) and with no other
    backward step found; the commit that went back is not in the logs (``classification``
    ``unseen``), so ``missing`` names the offsets dump that shows who made it."""
    commits = model.commits
    logged = F.sum((F.col("kind") == c.COMMIT).cast("int")).over(Window.partitionBy(*PARTITION_KEY))
    positions = commits.withColumn("_logged", logged).where(
        (F.col("kind") == c.POSITION_FROM_COMMIT) & F.col(s.OFFSET).isNotNull() & (F.col("_logged") == 0)
    )
    ordered = Window.partitionBy(*PARTITION_KEY).orderBy("sequence")
    previous = F.lag(F.struct(s.OFFSET, MEMBER, s.TS, s.SOURCE_FILE, line().alias("evidence"))).over(ordered)
    in_order = (F.col(s.TS) > F.col("_previous.ts")) | (
        F.col(s.SOURCE_FILE) == F.col("_previous.source_file")
    )  # undated files: no order between them
    back = (
        positions.withColumn("_previous", previous)
        .where((F.col(s.OFFSET) < F.col("_previous.offset")) & in_order)
        .join(steps.select(*PARTITION_KEY).distinct(), list(PARTITION_KEY), "left_anti")
    )
    records = F.col("_previous.offset") - F.col(s.OFFSET)
    return findings(
        back,
        "backward_commit",
        severity="warning",
        verdict="duplication",
        group=F.col(s.GROUP_ID),
        topic=F.col(s.TOPIC),
        partition=F.col(s.PARTITION),
        offset_from=F.col(s.OFFSET),
        offset_to=F.col("_previous.offset"),
        records=records,
        exact=F.lit(True),
        classification="unseen",
        host=F.col(s.HOST),
        member=F.col(MEMBER),
        start=F.col("_previous.ts"),
        end=F.col(s.TS),
        evidence=lines(one(F.col("_previous.evidence")), one(line())),
        explanation=F.format_string(
            "%s resumed %s from the committed offset %d, after %s had resumed it from %d: the group's committed offset "
            "went back %d records between the two assignments, and [%d, %d) is processed again. The commit that moved "
            "it back is not in the logs.",
            text(F.col(MEMBER), "A consumer"),
            partition_name(),
            F.col(s.OFFSET),
            text(F.col("_previous.member"), "another consumer"),
            F.col("_previous.offset"),
            records,
            F.col(s.OFFSET),
            F.col("_previous.offset"),
        ),
        kafka_reference=BACKWARD_REFERENCE,
        remedy=BACKWARD_REMEDY,
        missing=missing(
            F.format_string(
                "the commit of %s that went back from %d to %d, and its member",
                partition_name(),
                F.col("_previous.offset"),
                F.col(s.OFFSET),
            ),
            F.lit(OFFSETS_DUMP_COMMAND),
        ),
    )


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
        rewinds,
        "backward_commit",
        severity="warning",
        verdict="duplication",
        group=F.col(s.GROUP_ID),
        topic=F.col(s.TOPIC),
        partition=F.col(s.PARTITION),
        exact=F.lit(False),
        classification="rewind",
        host=F.col("_last.host"),
        member=F.col("_last.client_id"),
        start=F.col("_first.commit_ts"),
        end=F.col("_last.commit_ts"),
        evidence=lines(F.col("_evidence")),
        explanation=F.format_string(
            "Burrow rated %s of group %s REWIND: between %s and %s a commit went below an earlier one and the group has "
            "not come back to it, which the next owner will process again; the window's first and last commits (%d, "
            "then %d) do not show the step, so the range is unknown (Burrow's consumer detail, "
            "/v3/kafka/<cluster>/consumer/<group>, lists every commit of the window).",
            partition_name(),
            F.col(s.GROUP_ID),
            F.col("_first.commit_ts").cast("string"),
            F.col("_last.commit_ts").cast("string"),
            F.col("_first.current_offset"),
            F.col("_last.current_offset"),
        ),
        kafka_reference=BACKWARD_REFERENCE,
        remedy=BACKWARD_REMEDY,
    )
