"""Per group and generation, what the members' own lines show: who reached it and when, the
first sign of the rebalance into it, when the last member got its assignment and who led it,
and which partitions moved; ``with_epoch_era`` places KIP-848 / KIP-1071 lines in their epoch."""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from .. import schema as s
from ..registry import earliest, first_stated
from ..sources import nothing_in
from .members import EPOCH_STEP, GENERATION_NOW, JOINED, MEMBER, epoch_fenced, generation_mark, member_unknown
from .ownership import ASSIGNED, STREAMS_THREAD
from .triggers import REJOIN_STATED, TRIGGERS

STARTS = (
    "consumer:group:revoked",
    "consumer:group:join_started",
    "consumer:group:join_requested",
    "consumer:group:leave",
    "consumer:group:poll_timeout",
    "consumer:group:session_timeout",
    "consumer:group:fenced",
    "consumer:group:lost",
    "consumer:group:heartbeat_failed",
    "consumer:group:generation_reset",
    "consumer:group:coordinator_unavailable",
)
"""Lines that show a member taking part in (or causing) the next rebalance."""

AFTER_BUMP = (
    "consumer:group:revoked",
    "consumer:group:lost",
    "consumer:group:heartbeat_failed",
    "consumer:group:fenced",
    "consumer:group:session_timeout",
)
"""KIP-848 / KIP-1071 lines that follow the group epoch bump they belong to: the coordinator
bumps the epoch (a member joined, left or was removed) and hands out targets, then members
revoke, and a removed member learns on its next heartbeat that it was fenced or expired."""


def generation_members(members: DataFrame) -> DataFrame:
    """Per group and generation: the members that reached it and when the protocol completed
    (the last member's ``Successfully joined`` line; for a KIP-848 / KIP-1071 epoch the first
    line of any member at it, when the coordinator bumped the group epoch: members that keep
    their assignment reach it without a line). ``_joiners``: the members that joined into it
    (their ``JOINING`` transition carries the epoch they were given)."""
    marked = members.withColumn("_mark", generation_mark()).where(F.col("_mark").isNotNull() & F.col(s.GROUP_ID).isNotNull())
    first_join = F.when(F.col(s.EVENT_TYPE) != JOINED[1], F.col(s.TS))
    per_member = marked.groupBy(s.GROUP_ID, "_mark", MEMBER).agg(
        F.min(first_join).alias("t"),
        first_stated(s.MEMBER_ID).alias(s.MEMBER_ID),
        first_stated(s.INSTANCE_ID).alias(s.INSTANCE_ID),
        first_stated("protocol").alias("protocol"),
        F.max(s.EVENT_TYPE).alias(s.EVENT_TYPE),
        F.max((F.col("state_from") == "JOINING").cast("int")).alias("_joining"),
        earliest(F.struct(s.SOURCE_FILE, s.LINE), first_join).alias("_first_line"),
        F.max(F.col(s.CLIENT_ID).rlike(STREAMS_THREAD).cast("int")).alias("_streams"),
    )
    epochs = F.max((F.col(s.EVENT_TYPE) == EPOCH_STEP).cast("int")) == 1
    return per_member.groupBy(s.GROUP_ID, F.col("_mark").alias(s.GENERATION)).agg(
        F.sort_array(F.collect_set(MEMBER)).alias("members"),
        F.sort_array(F.collect_set(s.MEMBER_ID)).alias("member_ids"),
        F.sort_array(F.collect_set(s.INSTANCE_ID)).alias("instance_ids"),
        F.when(epochs, F.min("t")).otherwise(F.max("t")).alias("joined_ts"),
        first_stated("protocol", "t", "_first_line", MEMBER).alias("protocol"),
        F.max((F.col(s.EVENT_TYPE) == EPOCH_STEP).cast("int")).alias("_kip848"),
        F.max(F.when(F.col(s.EVENT_TYPE) == EPOCH_STEP, F.col("_streams"))).alias("_kip1071"),
        F.sort_array(F.collect_set(F.when(F.col("_joining") == 1, F.col(MEMBER)))).alias("_joiners"),
        F.when(epochs, earliest("_first_line", "t", "_first_line")).alias("_bump_evidence"),
    )


def with_epoch_era(rows: DataFrame, members: DataFrame, generations: DataFrame, event_types: frozenset[str] | None = None) -> DataFrame:
    """``rows`` (one per log line) with ``_era``: for a line of a KIP-848 / KIP-1071 member, the
    group epoch in effect when it was written (the latest epoch a member of its group had been
    given by then); null for classic members. A member's own epoch lags: it revokes at its old
    epoch and is raised only once it has acknowledged, without a line.

    Null throughout, with no join, when no member state transition is among ``event_types``
    (those the members hold, where counted): every member is a classic one."""
    if nothing_in((EPOCH_STEP,), event_types, {}):
        return rows.withColumn("_era", F.lit(None).cast(generations.schema[s.GENERATION].dataType))
    epoch_members = members.where(F.col(s.EVENT_TYPE) == EPOCH_STEP).select(F.col(MEMBER).alias("_m")).distinct()
    bumps = generations.where(F.col("_kip848") == 1).select(
        F.col(s.GROUP_ID).alias("_g"), F.col(s.GENERATION).alias("_era"), F.col("joined_ts").alias("_bump")
    )
    flagged = rows.join(epoch_members, F.col(MEMBER) == F.col("_m"), "left")
    in_effect = F.col("_m").isNotNull() & (F.col(s.GROUP_ID) == F.col("_g")) & (F.col("_bump") <= F.col(s.TS))
    latest = Window.partitionBy(s.SOURCE_FILE, s.LINE).orderBy(F.col("_bump").desc_nulls_last())
    candidates = flagged.join(bumps, in_effect, "left").withColumn("_rank", F.row_number().over(latest))
    return candidates.where(F.col("_rank") == 1).drop("_m", "_g", "_bump", "_rank")


def generation_starts(members: DataFrame, generations: DataFrame, event_types: frozenset[str] | None = None) -> DataFrame:
    """Per group and generation: the first sign of the rebalance into it, on any member.

    A signal (revocation, JoinGroup attempt, rejoin request, a member leaving or timing out)
    belongs to the first generation the group completed after it: a member that leaves takes
    part in the rebalance that follows even though it joins none; so does a KIP-848 / KIP-1071
    member's request to join (its transition to ``JOINING``). A KIP-848 / KIP-1071 member's
    revocations and fencing (``AFTER_BUMP``; a heartbeat answered "member is unknown" counts as
    a session timeout, a transition to ``FENCED`` as a fencing) belong to the epoch in effect.
    """
    as_classic = F.when(member_unknown(), F.lit("consumer:group:session_timeout")).when(epoch_fenced(), F.lit("consumer:group:fenced"))
    joining = (F.col(s.EVENT_TYPE) == EPOCH_STEP) & (F.col("state_to") == "JOINING")
    signals = members.where((F.col(s.EVENT_TYPE).isin(*STARTS) | epoch_fenced() | joining) & F.col(s.GROUP_ID).isNotNull()).withColumn(
        s.EVENT_TYPE, F.coalesce(as_classic, F.col(s.EVENT_TYPE))
    )
    signals = with_epoch_era(signals, members, generations, event_types)
    after_bump = F.col("_era").isNotNull() & F.col(s.EVENT_TYPE).isin(*AFTER_BUMP)
    completed = generations.select(s.GROUP_ID, F.col(s.GENERATION).alias("_g"), F.col("joined_ts").alias("_joined"))
    candidates = signals.join(completed, s.GROUP_ID).where(
        F.when(after_bump, F.col("_g") == F.col("_era")).otherwise(F.col("_joined") >= F.col(s.TS))
    )
    signal_id = [s.SOURCE_FILE, s.LINE]
    nearest = Window.partitionBy(*signal_id).orderBy("_joined")
    attributed = candidates.withColumn("_rank", F.row_number().over(nearest)).where(F.col("_rank") == 1)
    flags = [F.max((F.col(s.EVENT_TYPE) == event).cast("int")).alias(f"_{i}") for i, (event, _) in enumerate(TRIGGERS)]
    return attributed.groupBy(s.GROUP_ID, F.col("_g").alias(s.GENERATION)).agg(
        F.min(s.TS).alias("start_ts"),
        earliest(F.struct(s.SOURCE_FILE, s.LINE), s.TS).alias("start_evidence"),
        F.collect_set(F.when(F.col(s.EVENT_TYPE).isin(*REJOIN_STATED), F.col("reason"))).alias("rejoin_reasons"),
        F.collect_set(F.when(F.col(s.EVENT_TYPE).isin("consumer:group:leave", *[e for e, _ in TRIGGERS]), F.col(MEMBER))).alias("leaving"),
        *flags,
    )


def generation_assignments(members: DataFrame, generations: DataFrame, event_types: frozenset[str] | None = None) -> DataFrame:
    """Per group and generation: when the last member got its assignment, and the leader. A
    KIP-848 / KIP-1071 member's assignments count for the epoch in effect (``with_epoch_era``),
    its last one there (it may reconcile twice: first what is free, then what others released).
    The leader is the member that finished the assignment, or whose own JoinGroup response named
    it the leader (librdkafka's ``LeaderId X (me), my MemberId X``, franz-go's ``joined, balancing
    group``): the leader plans every generation's assignment."""
    leads = (F.col(s.EVENT_TYPE) == "consumer:group:assignment_finished") | (
        (F.col(s.EVENT_TYPE) == JOINED[0]) & (F.col("leader_id") == F.col(s.MEMBER_ID))
    )
    assigned = with_epoch_era(members.where((F.col(s.EVENT_TYPE) == ASSIGNED) | leads), members, generations, event_types).withColumn(
        GENERATION_NOW, F.coalesce(F.col("_era"), F.col(GENERATION_NOW))
    )
    leader = F.when(leads, F.col(MEMBER))
    last_of_epoch = F.max(F.col("_era").isNotNull().cast("int")) == 1
    first_per_member = (
        assigned.where(F.col(s.EVENT_TYPE) == ASSIGNED)
        .groupBy(s.GROUP_ID, GENERATION_NOW, MEMBER)
        .agg(F.when(last_of_epoch, F.max(s.TS)).otherwise(F.min(s.TS)).alias("t"))
    )
    running = first_per_member.groupBy(s.GROUP_ID, F.col(GENERATION_NOW).alias(s.GENERATION)).agg(
        F.max("t").alias("end_ts"),
        F.sort_array(F.collect_list(F.struct(F.col(MEMBER).alias("member"), F.col("t").alias("assigned_ts")))).alias("assignments"),
    )
    leaders = assigned.groupBy(s.GROUP_ID, F.coalesce(F.col(s.GENERATION), F.col(GENERATION_NOW)).alias(s.GENERATION)).agg(
        first_stated(leader).alias("leader")
    )
    return running.join(leaders, [s.GROUP_ID, s.GENERATION], "full")


def moved_partitions(ownership: DataFrame) -> DataFrame:
    """Per group and generation: ``topic-N: from -> to`` for each partition whose owner changed
    (``task 0_3: from -> to`` for a Streams task under KIP-1071)."""
    owner = F.concat_ws("/", s.HOST, s.CLIENT_ID)
    ordered = Window.partitionBy(s.GROUP_ID, s.TOPIC, s.PARTITION, s.TASK).orderBy("from_ts", "from_line")
    with_previous = ownership.select("*", owner.alias("owner"), F.lag(owner).over(ordered).alias("previous"))
    moved = with_previous.where(F.col("previous").isNull() | (F.col("previous") != F.col("owner")))
    unit = F.coalesce(F.concat(F.col(s.TOPIC), F.lit("-"), F.col(s.PARTITION).cast("string")), F.concat(F.lit("task "), F.col(s.TASK)))
    text = F.concat(unit, F.lit(": "), F.coalesce(F.col("previous"), F.lit("(none)")), F.lit(" -> "), F.col("owner"))
    return moved.groupBy(s.GROUP_ID, s.GENERATION).agg(F.sort_array(F.collect_list(text)).alias("moved"))
