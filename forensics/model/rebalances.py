"""Rebalances: one row per group and generation, reconstructed from every member's lines and,
when its broker log is in, the group coordinator's own statement.

A rebalance into generation N starts with the first sign of it on any witness (a revocation, a
JoinGroup attempt, a rejoin request, a member leaving; the coordinator's ``Preparing to
rebalance ... with old generation N-1`` or its removal of a failed member), the coordinator
completes it when it logs ``Stabilized group G generation N`` and the members log ``Successfully
joined group with generation N``, and the group is processing again once the last member has its
assignment. The stop-the-world time is the span between. Where the coordinator speaks, its
reason is the trigger and its member count and member ids tell which members have no log of
their own; a rebalance only the coordinator logged is still a row.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .. import schema as s
from ..sources import empty_without, rows_from
from .coordinator import COORDINATOR_LINES, coordinator_view, logged_member_ids, member_names, missing_members
from .generations import generation_assignments, generation_members, generation_starts, moved_partitions
from .members import EPOCH_STEP, JOINED
from .triggers import coordinator_trigger, members_trigger

COOPERATIVE = "cooperative"
KIP848 = "consumer (KIP-848)"
KIP1071 = "streams (KIP-1071)"
EAGER = "eager"
EAGER_ASSIGNORS = ("range", "roundrobin", "sticky")

LONG_SILENCE_S = 600
"""A stretch with no dated line of a group longer than this is a gap in the evidence (two
excerpts of one paste, a log rotated away): no duration is measured across it."""
EXCERPT_GAP_S = 60
"""A host's log ending in one file and going on in another after more than this, with no line of
the group between, is a gap too (two excerpts pasted as two files)."""


def _ms(end: Column, start: Column) -> Column:
    return ((F.unix_micros(end) - F.unix_micros(start)) / 1000).cast("long")


def evidence_gaps(members: DataFrame) -> DataFrame:
    """Per group, the stretches (``_gap_from``, ``_gap_to``) between two consecutive dated lines
    of the group with a gap in the evidence between them: longer than ``LONG_SILENCE_S``, or
    longer than ``EXCERPT_GAP_S`` where one file of a host ends and another of the same host
    starts. A rebalance spanning one has no duration (issue 85)."""
    dated = members.where(F.col(s.GROUP_ID).isNotNull() & F.col(s.TS).isNotNull()).select(s.GROUP_ID, s.TS, s.SOURCE_FILE, s.HOST)
    per_file = Window.partitionBy(s.SOURCE_FILE)
    dated = dated.withColumn("_file_first", F.min(s.TS).over(per_file)).withColumn("_file_last", F.max(s.TS).over(per_file))
    ordered = Window.partitionBy(s.GROUP_ID).orderBy(s.TS, s.SOURCE_FILE)
    previous = F.lag(F.struct(s.TS, s.SOURCE_FILE, s.HOST, "_file_last")).over(ordered)
    paired = dated.withColumn("_previous", previous).where(F.col("_previous").isNotNull())
    apart = F.unix_micros(F.col(s.TS)) - F.unix_micros(F.col("_previous.ts"))
    switched = (
        (F.col(s.SOURCE_FILE) != F.col("_previous.source_file"))
        & F.col(s.HOST).eqNullSafe(F.col("_previous.host"))
        & (F.col("_previous.ts") == F.col("_previous._file_last"))
        & (F.col(s.TS) == F.col("_file_first"))
    )
    gaps = paired.where((apart > LONG_SILENCE_S * 1_000_000) | (switched & (apart > EXCERPT_GAP_S * 1_000_000)))
    return gaps.select(F.col(s.GROUP_ID).alias("_gap_group"), F.col("_previous.ts").alias("_gap_from"), F.col(s.TS).alias("_gap_to"))


def without_durations_across_gaps(table: DataFrame, gaps: DataFrame) -> DataFrame:
    """``table`` (rebalances) with ``duration_ms`` null where a gap of ``evidence_gaps`` lies
    between its start and its end: the time across it is not a measured duration."""
    spans = table.where(F.col("duration_ms").isNotNull()).select(
        F.col(s.GROUP_ID).alias("_group"), F.col(s.GENERATION).alias("_generation"), "start_ts", "end_ts"
    )
    inside = (F.col("_gap_group") == F.col("_group")) & (F.col("_gap_from") >= F.col("start_ts")) & (F.col("_gap_to") <= F.col("end_ts"))
    crossed = spans.join(gaps, inside).select("_group", "_generation").distinct().withColumn("_crossed", F.lit(True))
    on = F.col(s.GROUP_ID).eqNullSafe(F.col("_group")) & F.col(s.GENERATION).eqNullSafe(F.col("_generation"))
    marked = table.join(crossed, on, "left")
    return marked.withColumn("duration_ms", F.when(F.col("_crossed").isNull(), F.col("duration_ms"))).select(*table.columns)


@rows_from(*JOINED, EPOCH_STEP, *COORDINATOR_LINES)
def rebalances(members: DataFrame, ownership: DataFrame, event_types: frozenset[str] | None = None) -> DataFrame:
    """One row per group and generation (or KIP-848 member epoch), from the members' lines and
    the group coordinator's (``coordinator_view``); a generation only the coordinator logged is
    a row with no ``members``.

    Columns: ``group_id``, ``generation``, ``start_ts`` (first sign of the rebalance on any
    witness), ``joined_ts`` (last member told it joined, else the coordinator's ``Stabilized``),
    ``end_ts`` (last member assigned: processing again; else the coordinator's ``Assignment
    received``), ``duration_ms`` (stop-the-world, start to end; null where the end, on another
    host's clock, comes before the start, or where a gap in the evidence lies between them:
    ``evidence_gaps``), ``assignments`` (when each
    member got its assignment), ``members`` (with logs), ``members_joined``/``members_left``
    (against the previous generation with logs), ``leader``, ``protocol`` and ``protocol_type``
    (eager or cooperative), ``moved`` partitions, the ``trigger`` (the coordinator's statement
    where it has one: ``trigger_source`` says whose), with ``start_file``/``start_line`` as
    evidence; the ``coordinator_*`` columns, ``missing_members`` (``member_id``, ``client_id``:
    held by the coordinator, no log of their own) and ``missing_member_count`` (members the
    coordinator counts beyond those with logs; null without the coordinator's log).

    ``event_types``: those the members hold, where counted. Without a coordinator line among them
    the coordinator's view is an empty relation, whose joins Spark's optimiser plans away.
    """
    generations = generation_members(members)
    view = empty_without(coordinator_view(members), coordinator_view.rows_from, event_types)
    keys = [s.GROUP_ID, s.GENERATION]
    leaders = member_names(members).select(s.GROUP_ID, F.col(s.MEMBER_ID).alias("coordinator_leader"), F.col("_name").alias("_leader_name"))
    table = (
        generations.join(view, keys, "full")
        .join(generation_starts(members, generations, event_types), keys, "left")
        .join(generation_assignments(members, generations, event_types), keys, "left")
        .join(moved_partitions(ownership), keys, "left")
        .join(logged_member_ids(members), s.GROUP_ID, "left")
        .join(leaders, [s.GROUP_ID, "coordinator_leader"], "left")
    )
    no_one = F.array().cast("array<string>")
    for column in ("members", "member_ids", "instance_ids"):
        table = table.withColumn(column, F.coalesce(F.col(column), no_one))
    logged = F.size("members") > 0
    by_generation = Window.partitionBy(s.GROUP_ID).orderBy(s.GENERATION)
    previous = F.last(F.when(logged, F.col("members")), ignorenulls=True).over(by_generation.rowsBetween(Window.unboundedPreceding, -1))
    kip848 = F.col("_kip848") == 1
    # Classic members all join each generation; KIP-848 / KIP-1071 members step through epochs
    # one by one: joined are those whose JOINING transition led into the epoch, left those that
    # said so.
    with_previous = table.withColumn("_previous", F.coalesce(previous, no_one)).withColumn("_first", previous.isNull())
    joined_members = (
        F.when(previous.isNull() | ~logged, no_one)
        .when(kip848, F.coalesce(F.col("_joiners"), no_one))
        .otherwise(F.array_except("members", "_previous"))
    )
    left_members = F.when(~logged, no_one).otherwise(
        F.array_union(F.when(kip848, no_one).otherwise(F.array_except("_previous", "members")), F.coalesce(F.col("leaving"), no_one))
    )
    protocol_type = (
        F.when(F.col("_kip1071") == 1, F.lit(KIP1071))
        .when(kip848, F.lit(KIP848))
        .when(F.lower("protocol").contains("cooperative"), F.lit(COOPERATIVE))
        .when(F.lower("protocol").isin(*EAGER_ASSIGNORS), F.lit(EAGER))
    )
    joined = F.coalesce(F.col("joined_ts"), F.col("coordinator_stabilized_ts"))
    start = F.least("start_ts", "coordinator_start_ts", joined)  # a KIP-848 epoch may be bumped before any member's sign
    end = F.coalesce(F.col("end_ts"), F.col("coordinator_assignment_ts"), joined)
    bumped_first = F.col("_bump_evidence").isNotNull() & F.coalesce(F.col("joined_ts") < F.col("start_ts"), F.col("start_ts").isNull())
    evidence = F.when(bumped_first, F.col("_bump_evidence")).otherwise(F.col("start_evidence"))
    coordinator_first = F.col("coordinator_file").isNotNull() & F.coalesce(
        F.col("coordinator_start_ts") < F.col("start_ts"), F.col("start_ts").isNull()
    )
    stated = coordinator_trigger()
    with_sets = with_previous.select("*", joined_members.alias("members_joined"), F.array_distinct(left_members).alias("members_left"))
    missing = missing_members()
    table = with_sets.select(
        *keys,
        start.alias("start_ts"),
        joined.alias("joined_ts"),
        end.alias("end_ts"),
        F.when(end >= start, _ms(end, start)).alias("duration_ms"),  # an end before the start: clocks of two hosts, no duration
        "members",
        "member_ids",
        "instance_ids",
        "members_joined",
        "members_left",
        F.coalesce("leader", "_leader_name", "coordinator_leader").alias("leader"),
        F.coalesce(F.col("assignments"), F.array()).alias("assignments"),
        "protocol",
        protocol_type.alias("protocol_type"),
        F.coalesce(F.col("moved"), no_one).alias("moved"),
        F.coalesce(stated, members_trigger(F.col("members_joined"), F.col("members_left"))).alias("trigger"),
        F.when(coordinator_first, F.col("coordinator_file")).otherwise(evidence.source_file).alias("start_file"),
        F.when(coordinator_first, F.col("coordinator_line")).otherwise(evidence.line).alias("start_line"),
        F.when(stated.isNotNull(), F.lit("coordinator")).otherwise(F.lit("members")).alias("trigger_source"),
        *[c for c in view.columns if c.startswith("coordinator_")],
        missing.alias("missing_members"),
        F.when(
            F.col("coordinator_host").isNotNull(),
            F.greatest(F.coalesce(F.col("coordinator_member_count") - F.size("members"), F.lit(0)), F.size(missing)),
        ).alias("missing_member_count"),
    )
    return without_durations_across_gaps(table, evidence_gaps(members))
