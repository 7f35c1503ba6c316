"""Rebalances: one row per group and generation, reconstructed from every member's lines.

A rebalance into generation N starts with the first sign of it on any member (a revocation, a
JoinGroup attempt, a rejoin request, a member leaving), the coordinator completes it when the
members log ``Successfully joined group with generation N``, and the group is processing again
once the last member has its assignment. The stop-the-world time is the span between.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .. import schema as s
from .members import EPOCH_STEP, GENERATION_NOW, JOINED, MEMBER, generation_mark
from .ownership import ASSIGNED

STARTS = (
    "consumer:group:revoked", "consumer:group:join_started", "consumer:group:join_requested",
    "consumer:group:leave", "consumer:group:poll_timeout", "consumer:group:session_timeout",
    "consumer:group:fenced", "consumer:group:lost", "consumer:group:heartbeat_failed",
    "consumer:group:generation_reset", "consumer:group:coordinator_unavailable",
)
"""Lines that show a member taking part in (or causing) the next rebalance."""

COOPERATIVE = "cooperative"
KIP848 = "consumer (KIP-848)"
EAGER = "eager"
EAGER_ASSIGNORS = ("range", "roundrobin", "sticky")

FIRST_GENERATION = "first generation in the logs (earlier history not logged)"
TRIGGERS = (
    ("consumer:group:poll_timeout", "member left: poll timeout (max.poll.interval.ms)"),
    ("consumer:group:session_timeout", "member left: session timeout (session.timeout.ms)"),
    ("consumer:group:fenced", "member fenced (static member replaced or zombie)"),
)


def _ms(end: Column, start: Column) -> Column:
    return ((F.unix_micros(end) - F.unix_micros(start)) / 1000).cast("long")


def generation_members(members: DataFrame) -> DataFrame:
    """Per group and generation: the members that reached it and when the protocol completed
    (the last member's ``Successfully joined`` line, or its first line at the new epoch)."""
    marked = members.withColumn("_mark", generation_mark()).where(F.col("_mark").isNotNull() & F.col(s.GROUP_ID).isNotNull())
    first_join = F.when(F.col(s.EVENT_TYPE) != JOINED[1], F.col(s.TS))
    per_member = marked.groupBy(s.GROUP_ID, "_mark", MEMBER).agg(
        F.min(first_join).alias("t"), F.first(s.MEMBER_ID, ignorenulls=True).alias(s.MEMBER_ID),
        F.first(s.INSTANCE_ID, ignorenulls=True).alias(s.INSTANCE_ID), F.first("protocol", ignorenulls=True).alias("protocol"),
        F.max(s.EVENT_TYPE).alias(s.EVENT_TYPE),
    )
    return per_member.groupBy(s.GROUP_ID, F.col("_mark").alias(s.GENERATION)).agg(
        F.sort_array(F.collect_set(MEMBER)).alias("members"),
        F.sort_array(F.collect_set(s.MEMBER_ID)).alias("member_ids"),
        F.sort_array(F.collect_set(s.INSTANCE_ID)).alias("instance_ids"),
        F.max("t").alias("joined_ts"),
        F.first("protocol", ignorenulls=True).alias("protocol"),
        F.max((F.col(s.EVENT_TYPE) == EPOCH_STEP).cast("int")).alias("_kip848"),
    )


def generation_starts(members: DataFrame, generations: DataFrame) -> DataFrame:
    """Per group and generation: the first sign of the rebalance into it, on any member.

    A signal (revocation, JoinGroup attempt, rejoin request, a member leaving or timing out)
    belongs to the first generation the group completed after it: a member that leaves takes
    part in the rebalance that follows even though it joins none.
    """
    signals = members.where(F.col(s.EVENT_TYPE).isin(*STARTS) & F.col(s.GROUP_ID).isNotNull())
    completed = generations.select(s.GROUP_ID, F.col(s.GENERATION).alias("_g"), F.col("joined_ts").alias("_joined"))
    candidates = signals.join(completed, s.GROUP_ID).where(F.col("_joined") >= F.col(s.TS))
    signal_id = [s.SOURCE_FILE, s.LINE]
    nearest = Window.partitionBy(*signal_id).orderBy("_joined")
    attributed = candidates.withColumn("_rank", F.row_number().over(nearest)).where(F.col("_rank") == 1)
    flags = [F.max((F.col(s.EVENT_TYPE) == event).cast("int")).alias(f"_{i}") for i, (event, _) in enumerate(TRIGGERS)]
    return attributed.groupBy(s.GROUP_ID, F.col("_g").alias(s.GENERATION)).agg(
        F.min(s.TS).alias("start_ts"),
        F.min_by(F.struct(s.SOURCE_FILE, s.LINE), s.TS).alias("start_evidence"),
        F.collect_set(F.when(F.col(s.EVENT_TYPE) == "consumer:group:join_requested", F.col("reason"))).alias("rejoin_reasons"),
        F.collect_set(F.when(F.col(s.EVENT_TYPE).isin("consumer:group:leave", *[e for e, _ in TRIGGERS]), F.col(MEMBER))).alias("leaving"),
        *flags,
    )


def generation_assignments(members: DataFrame) -> DataFrame:
    """Per group and generation: when the last member got its assignment, and the leader."""
    assigned = members.where(
        (F.col(s.EVENT_TYPE) == ASSIGNED) | (F.col(s.EVENT_TYPE) == "consumer:group:assignment_finished")
    )
    leader = F.when(F.col(s.EVENT_TYPE) == "consumer:group:assignment_finished", F.col(MEMBER))
    first_per_member = assigned.where(F.col(s.EVENT_TYPE) == ASSIGNED).groupBy(s.GROUP_ID, GENERATION_NOW, MEMBER).agg(F.min(s.TS).alias("t"))
    running = first_per_member.groupBy(s.GROUP_ID, F.col(GENERATION_NOW).alias(s.GENERATION)).agg(
        F.max("t").alias("end_ts"),
        F.sort_array(F.collect_list(F.struct(F.col(MEMBER).alias("member"), F.col("t").alias("assigned_ts")))).alias("assignments"),
    )
    leaders = assigned.groupBy(s.GROUP_ID, F.coalesce(F.col(s.GENERATION), F.col(GENERATION_NOW)).alias(s.GENERATION)).agg(
        F.first(leader, ignorenulls=True).alias("leader")
    )
    return running.join(leaders, [s.GROUP_ID, s.GENERATION], "full")


def moved_partitions(ownership: DataFrame) -> DataFrame:
    """Per group and generation: ``topic-N: from -> to`` for each partition whose owner changed."""
    owner = F.concat_ws("/", s.HOST, s.CLIENT_ID)
    ordered = Window.partitionBy(s.GROUP_ID, s.TOPIC, s.PARTITION).orderBy("from_ts", "from_line")
    with_previous = ownership.select("*", owner.alias("owner"), F.lag(owner).over(ordered).alias("previous"))
    moved = with_previous.where(F.col("previous").isNull() | (F.col("previous") != F.col("owner")))
    text = F.concat(F.col(s.TOPIC), F.lit("-"), F.col(s.PARTITION).cast("string"), F.lit(": "),
                    F.coalesce(F.col("previous"), F.lit("(none)")), F.lit(" -> "), F.col("owner"))
    return moved.groupBy(s.GROUP_ID, s.GENERATION).agg(F.sort_array(F.collect_list(text)).alias("moved"))


def _trigger(joined_members: Column, left_members: Column) -> Column:
    rule = F.when(F.col("_first"), F.lit(FIRST_GENERATION))
    for i, (_, text) in enumerate(TRIGGERS):
        rule = rule.when(F.col(f"_{i}") == 1, F.lit(text))
    reasons = F.lower(F.concat_ws(" ", F.col("rejoin_reasons")))
    return (
        rule.when(reasons.contains("revoke"), F.lit("cooperative follow-up round (partitions revoked in the previous one)"))
        .when(F.size(left_members) > 0, F.lit("member left (shutdown or crash)"))
        .when(F.size(joined_members) > 0, F.lit("member joined (scale-up or restart)"))
        .when(reasons.rlike("metadata|partition"), F.lit("partition count or subscription change"))
        .when(reasons.contains("coordinator"), F.lit("coordinator change"))
        .when(reasons != "", F.concat(F.lit("rejoin requested: "), reasons))
        .otherwise(F.lit("unknown"))
    )


def rebalances(members: DataFrame, ownership: DataFrame) -> DataFrame:
    """One row per group and generation (or KIP-848 member epoch).

    Columns: ``group_id``, ``generation``, ``start_ts`` (first sign of the rebalance on any
    member), ``joined_ts`` (last member told it joined), ``end_ts`` (last member assigned:
    processing again), ``duration_ms`` (stop-the-world, start to end), ``assignments``
    (when each member got its assignment), ``members``,
    ``members_joined``/``members_left`` (against the previous generation), ``leader``,
    ``protocol`` and ``protocol_type`` (eager or cooperative), ``moved`` partitions and the
    ``trigger``, with ``start_file``/``start_line`` as evidence.
    """
    generations = generation_members(members)
    table = (
        generations
        .join(generation_starts(members, generations), [s.GROUP_ID, s.GENERATION], "left")
        .join(generation_assignments(members), [s.GROUP_ID, s.GENERATION], "left")
        .join(moved_partitions(ownership), [s.GROUP_ID, s.GENERATION], "left")
    )
    by_generation = Window.partitionBy(s.GROUP_ID).orderBy(s.GENERATION)
    previous = F.lag("members").over(by_generation)
    earlier = F.array_distinct(F.flatten(F.collect_list("members").over(by_generation.rowsBetween(Window.unboundedPreceding, -1))))
    kip848 = F.col("_kip848") == 1
    # KIP-848 members step through epochs one by one: compare with every member seen before,
    # and count as leaving only those that said so; classic members all join each generation.
    baseline = F.when(kip848, earlier).otherwise(F.coalesce(previous, F.array().cast("array<string>")))
    with_previous = table.withColumn("_previous", baseline).withColumn("_first", previous.isNull())
    joined_members = F.when(previous.isNull(), F.array().cast("array<string>")).otherwise(F.array_except("members", "_previous"))
    no_one = F.array().cast("array<string>")
    left_members = F.array_union(
        F.when(kip848, no_one).otherwise(F.array_except("_previous", "members")), F.coalesce(F.col("leaving"), no_one)
    )
    protocol_type = (
        F.when(kip848, F.lit(KIP848))
        .when(F.lower("protocol").contains("cooperative"), F.lit(COOPERATIVE))
        .when(F.lower("protocol").isin(*EAGER_ASSIGNORS), F.lit(EAGER))
    )
    start = F.coalesce(F.col("start_ts"), F.col("joined_ts"))
    end = F.coalesce(F.col("end_ts"), F.col("joined_ts"))
    with_sets = with_previous.select("*", joined_members.alias("members_joined"), F.array_distinct(left_members).alias("members_left"))
    return with_sets.select(
        s.GROUP_ID, s.GENERATION,
        start.alias("start_ts"), "joined_ts", end.alias("end_ts"), _ms(end, start).alias("duration_ms"),
        "members", "member_ids", "instance_ids", "members_joined", "members_left", "leader",
        F.coalesce(F.col("assignments"), F.array()).alias("assignments"),
        "protocol", protocol_type.alias("protocol_type"),
        F.coalesce(F.col("moved"), F.array().cast("array<string>")).alias("moved"),
        _trigger(F.col("members_joined"), F.col("members_left")).alias("trigger"),
        F.col("start_evidence.source_file").alias("start_file"), F.col("start_evidence.line").alias("start_line"),
    )
