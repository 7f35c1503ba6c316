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
from ..registry import earliest, first_stated, literal_map
from ..sources import empty_without, nothing_in, rows_from
from .members import (
    EPOCH_STEP,
    GENERATION_NOW,
    JOINED,
    MEMBER,
    MEMBER_ID_OF_CLIENT,
    epoch_fenced,
    generation_mark,
    member_unknown,
)
from .ownership import ASSIGNED, STREAMS_THREAD

STARTS = (
    "consumer:group:revoked", "consumer:group:join_started", "consumer:group:join_requested",
    "consumer:group:leave", "consumer:group:poll_timeout", "consumer:group:session_timeout",
    "consumer:group:fenced", "consumer:group:lost", "consumer:group:heartbeat_failed",
    "consumer:group:generation_reset", "consumer:group:coordinator_unavailable",
)
"""Lines that show a member taking part in (or causing) the next rebalance."""

AFTER_BUMP = (
    "consumer:group:revoked", "consumer:group:lost", "consumer:group:heartbeat_failed", "consumer:group:fenced",
    "consumer:group:session_timeout",
)
"""KIP-848 / KIP-1071 lines that follow the group epoch bump they belong to: the coordinator
bumps the epoch (a member joined, left or was removed) and hands out targets, then members
revoke, and a removed member learns on its next heartbeat that it was fenced or expired."""

COOPERATIVE = "cooperative"
KIP848 = "consumer (KIP-848)"
KIP1071 = "streams (KIP-1071)"
EPOCH_BUMP = "subscription, topology or topic metadata change (the coordinator bumped the group epoch)"
"""A KIP-848 / KIP-1071 epoch no member joined or left: the coordinator bumps the group epoch
only for membership, subscription/topology and topic metadata changes."""
EAGER = "eager"
EAGER_ASSIGNORS = ("range", "roundrobin", "sticky")

FIRST_GENERATION = "first generation in the logs (earlier history not logged)"
TRIGGERS = (
    ("consumer:group:poll_timeout", "member left: poll timeout (max.poll.interval.ms)"),
    ("consumer:group:session_timeout", "member left: session timeout (session.timeout.ms)"),
    ("consumer:group:fenced", "member fenced (static member replaced or zombie)"),
)
MEMBER_LEFT = "member left (shutdown or crash)"
MEMBER_JOINED = "member joined (scale-up or restart)"
REJOIN_STATED = ("consumer:group:join_requested", "consumer:group:revoked")
"""Lines whose ``reason`` says why their member rejoins: a rejoin request, and a cooperative
revocation that a rejoin follows (librdkafka's ``incremental revoke ..: sync group revoke``,
franz-go's ``cooperative consumer calling onRevoke``)."""
SUBSCRIPTION_CHANGE = "partition count or subscription change"

# The group coordinator's lines (broker log; forensics/catalogue/broker.yaml).
COORDINATOR_LINES = s.event_types_of("coordinator:group:")
"""The event types of the group coordinator's lines about its groups."""
PREPARING = "coordinator:group:preparing_rebalance"
STABILIZED = "coordinator:group:stabilized"
ASSIGNMENT_RECEIVED = "coordinator:group:assignment_received"
EMPTY = "coordinator:group:empty"
EPOCH_BUMPED = "coordinator:group:epoch_bumped"
TARGET_ASSIGNMENT = "coordinator:group:target_assignment"
COMPLETIONS = (STABILIZED, EMPTY, EPOCH_BUMPED)
"""Coordinator lines that complete a rebalance into their generation (KIP-848: group epoch)."""
REACHED = (*COMPLETIONS, TARGET_ASSIGNMENT)
"""Coordinator lines showing the group reached their generation: the completions, and a target
assignment computed for a group epoch. A KIP-1071 streams group that fences a member on session
expiry logs no epoch bump, only the target assignment of the next epoch."""
MEMBERSHIP = {
    "coordinator:group:member_joined": "joined",
    "coordinator:group:member_failed": "failed",
    "coordinator:group:member_left": "left",
    "coordinator:group:member_fenced": "fenced",
    "coordinator:group:static_member_replaced": "fenced",
}
"""Coordinator lines naming a member that joins or leaves, and how."""
COORDINATOR_REASONS = (
    (r"heartbeat expiration|session expired", TRIGGERS[1][1]),
    (r"leavegroup.*poll timeout", TRIGGERS[0][1]),
    (r"leavegroup", MEMBER_LEFT),
    (r"^adding new member", MEMBER_JOINED),
    (r"client reason: .*(metadata|partition)", SUBSCRIPTION_CHANGE),
    (r"selectedprotocol will change|^updating metadata for static member", "static member rejoined with new metadata"),
    (r"^(leader \S+ re-joining|updating metadata for member|member \S+ (is )?joining group)", "member rejoined (its own request)"),
    (r"over capacity", "group over capacity (group.max.size)"),
    (r"storing group assignment", "coordinator could not store the assignment"),
    (r"pending sync request expiration", "member sent no SyncGroup in time"),
    (r"^downgrade group", "group converted from the consumer to the classic protocol"),
)
"""Regex on the coordinator's lower-cased rebalance reason -> trigger (first match wins)."""
COORDINATOR_KINDS = (("failed", TRIGGERS[1][1]), ("fenced", TRIGGERS[2][1]), ("left", MEMBER_LEFT), ("joined", MEMBER_JOINED))
"""Trigger from the members the coordinator saw come and go, where it states no reason
(brokers before 2.1, KIP-848 group epochs, a member failing while the group rebalances)."""


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
    starts. A rebalance spanning one has no duration (issue 85: one measured across two
    excerpts an hour apart)."""
    dated = members.where(F.col(s.GROUP_ID).isNotNull() & F.col(s.TS).isNotNull()).select(s.GROUP_ID, s.TS, s.SOURCE_FILE, s.HOST)
    per_file = Window.partitionBy(s.SOURCE_FILE)
    dated = dated.withColumn("_file_first", F.min(s.TS).over(per_file)).withColumn("_file_last", F.max(s.TS).over(per_file))
    ordered = Window.partitionBy(s.GROUP_ID).orderBy(s.TS, s.SOURCE_FILE)
    previous = F.lag(F.struct(s.TS, s.SOURCE_FILE, s.HOST, "_file_last")).over(ordered)
    paired = dated.withColumn("_previous", previous).where(F.col("_previous").isNotNull())
    apart = F.unix_micros(F.col(s.TS)) - F.unix_micros(F.col("_previous.ts"))
    switched = (
        (F.col(s.SOURCE_FILE) != F.col("_previous.source_file")) & F.col(s.HOST).eqNullSafe(F.col("_previous.host"))
        & (F.col("_previous.ts") == F.col("_previous._file_last")) & (F.col(s.TS) == F.col("_file_first"))
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


def generation_members(members: DataFrame) -> DataFrame:
    """Per group and generation: the members that reached it and when the protocol completed
    (the last member's ``Successfully joined`` line; for a KIP-848 / KIP-1071 epoch the first
    line of any member at it, when the coordinator bumped the group epoch: members that keep
    their assignment reach it without a line). ``_joiners``: the members that joined into it
    (their ``JOINING`` transition carries the epoch they were given)."""
    marked = members.withColumn("_mark", generation_mark()).where(F.col("_mark").isNotNull() & F.col(s.GROUP_ID).isNotNull())
    first_join = F.when(F.col(s.EVENT_TYPE) != JOINED[1], F.col(s.TS))
    per_member = marked.groupBy(s.GROUP_ID, "_mark", MEMBER).agg(
        F.min(first_join).alias("t"), first_stated(s.MEMBER_ID).alias(s.MEMBER_ID),
        first_stated(s.INSTANCE_ID).alias(s.INSTANCE_ID), first_stated("protocol").alias("protocol"),
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
    first_per_member = assigned.where(F.col(s.EVENT_TYPE) == ASSIGNED).groupBy(s.GROUP_ID, GENERATION_NOW, MEMBER).agg(
        F.when(last_of_epoch, F.max(s.TS)).otherwise(F.min(s.TS)).alias("t")
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


def _trigger(joined_members: Column, left_members: Column) -> Column:
    rule = F.when(F.col("_first"), F.lit(FIRST_GENERATION))
    for i, (_, text) in enumerate(TRIGGERS):
        rule = rule.when(F.col(f"_{i}") == 1, F.lit(text))
    reasons = F.lower(F.concat_ws(" ", F.col("rejoin_reasons")))
    return (
        rule.when(reasons.contains("revoke"), F.lit("cooperative follow-up round (partitions revoked in the previous one)"))
        .when(F.size(left_members) > 0, F.lit("member left (shutdown or crash)"))
        .when(F.size(joined_members) > 0, F.lit("member joined (scale-up or restart)"))
        .when(F.col("_kip848") == 1, F.lit(EPOCH_BUMP))
        .when(reasons.rlike("metadata|partition"), F.lit("partition count or subscription change"))
        .when(reasons.contains("coordinator"), F.lit("coordinator change"))
        .when(reasons != "", F.concat(F.lit("rejoin requested: "), reasons))
        .otherwise(F.lit("unknown"))
    )


def coordinator_generation() -> Column:
    """The generation a coordinator line is about: the new one for ``Preparing to rebalance ...
    with old generation N`` (N+1), the one it names for the others, the group epoch (KIP-848)."""
    return (
        F.when(F.col(s.EVENT_TYPE) == PREPARING, F.col(s.GENERATION) + 1)
        .when(F.col(s.EVENT_TYPE).isin(EPOCH_BUMPED, TARGET_ASSIGNMENT), F.col("epoch"))
        .otherwise(F.col(s.GENERATION))
    )


def _reason_kind() -> Column:
    """How the member a coordinator's reason names takes part: joined, failed (its session
    expired), left."""
    reason = F.lower(F.coalesce(F.col("reason"), F.lit("")))
    return (
        F.when(reason.startswith("adding new member"), F.lit("joined"))
        .when(reason.contains("heartbeat expiration") | reason.contains("session expired"), F.lit("failed"))
        .when(reason.contains("leavegroup"), F.lit("left"))
    )


def coordinator_signals(members: DataFrame) -> DataFrame:
    """The coordinator's lines that begin or shape a rebalance (``Preparing to rebalance``, KIP-848
    epoch bumps, members joining, failing, leaving, fenced), each with the generation it leads to
    (``_g``: the first one the coordinator reached at or after it, on its own clock: ``REACHED``) and, where
    it names one, the member (``_member_id``) and how it takes part (``_kind``)."""
    coordinator = members.where(F.col(s.EVENT_TYPE).startswith("coordinator:group:") & F.col(s.GROUP_ID).isNotNull())
    kind = F.coalesce(_reason_kind(), literal_map(MEMBERSHIP)[F.col(s.EVENT_TYPE)])
    lines = coordinator.where(F.col(s.EVENT_TYPE).isin(PREPARING, EPOCH_BUMPED, *MEMBERSHIP)).select(
        "*", kind.alias("_kind"), F.when(kind.isNotNull(), F.col(s.MEMBER_ID)).alias("_member_id"),
        F.when(F.col(s.EVENT_TYPE).isin(PREPARING, EPOCH_BUMPED), coordinator_generation()).alias("_known"),
    )
    done = coordinator.where(F.col(s.EVENT_TYPE).isin(*REACHED)).select(
        s.GROUP_ID, coordinator_generation().alias("_done"), F.col(s.TS).alias("_done_ts")
    )
    line_id = [s.SOURCE_FILE, s.LINE]
    later = lines.select(*line_id, s.GROUP_ID, s.TS).join(done, s.GROUP_ID).where(F.col("_done_ts") >= F.col(s.TS))
    nearest = later.withColumn("_rank", F.row_number().over(Window.partitionBy(*line_id).orderBy("_done_ts", "_done")))
    attributed = lines.join(nearest.where(F.col("_rank") == 1).select(*line_id, "_done"), line_id, "left")
    return attributed.withColumn("_g", F.coalesce(F.col("_known"), F.col("_done"))).where(F.col("_g").isNotNull())


def coordinator_spans(signals: DataFrame) -> DataFrame:
    """Per group (``_spans``): each member id the coordinator names, with the generation its join
    leads to (``joined``) and the one its leaving leads to (``left``), null where not logged."""
    spans = signals.where(F.col("_member_id").isNotNull()).groupBy(s.GROUP_ID, "_member_id").agg(
        F.min(F.when(F.col("_kind") == "joined", F.col("_g"))).alias("joined"),
        F.min(F.when(F.col("_kind") != "joined", F.col("_g"))).alias("left"),
    )
    return spans.groupBy(s.GROUP_ID).agg(F.collect_list(F.struct(F.col("_member_id").alias("id"), "joined", "left")).alias("_spans"))


def held_member_ids() -> Column:
    """The member ids the coordinator holds in the row's ``generation`` (needs ``_spans`` and
    ``coordinator_leader``): each member from the generation its join leads to (joined before
    the logs: while it has not left) up to, not including, the one its leaving leads to; and the
    generation's leader."""
    generation = F.col(s.GENERATION)
    held = F.filter(F.col("_spans"), lambda span: F.coalesce(span["joined"] <= generation, span["left"].isNotNull())
                    & F.coalesce(generation < span["left"], F.lit(True)))
    ids = F.coalesce(F.transform(held, lambda span: span["id"]), F.array().cast("array<string>"))
    leader = F.when(F.col("coordinator_leader").isNotNull(), F.array("coordinator_leader")).otherwise(F.array().cast("array<string>"))
    return F.array_sort(F.array_union(ids, leader))


def coordinator_trigger() -> Column:
    """The trigger the coordinator states: from its ``Preparing to rebalance`` reason, else from
    the members it saw join or leave (``_kinds``)."""
    reason = F.lower(F.coalesce(F.col("coordinator_reason"), F.lit("")))
    from_reason = F.when(reason == "", F.lit(None).cast("string"))
    for pattern, text in COORDINATOR_REASONS:
        from_reason = from_reason.when(reason.rlike(pattern), F.lit(text))
    from_kinds = F.when(F.lit(False), F.lit(None).cast("string"))
    for kind, text in COORDINATOR_KINDS:
        from_kinds = from_kinds.when(F.array_contains(F.col("_kinds"), kind), F.lit(text))
    return F.coalesce(from_reason.otherwise(F.concat(F.lit("coordinator: "), F.col("coordinator_reason"))), from_kinds)


def _earliest(column: str, *events: str) -> Column:
    """Aggregate: ``column`` of the earliest line of one of ``events``."""
    return earliest(F.col(column), F.when(F.col(s.EVENT_TYPE).isin(*events), F.col(s.TS)))


def _coordinator_starts(signals: DataFrame) -> DataFrame:
    """Per group and generation: the coordinator's first sign of the rebalance (time, line), its
    reason, the member ids that joined and left, and how they did (``_kinds``)."""
    return signals.groupBy(s.GROUP_ID, F.col("_g").alias(s.GENERATION)).agg(
        F.min(s.TS).alias("coordinator_start_ts"),
        earliest(F.struct(s.SOURCE_FILE, s.LINE), s.TS).alias("_evidence"),
        _earliest("reason", PREPARING).alias("coordinator_reason"),
        F.sort_array(F.collect_set(F.when(F.col("_kind") == "joined", F.col("_member_id")))).alias("coordinator_joined"),
        F.sort_array(F.collect_set(F.when(F.col("_kind") != "joined", F.col("_member_id")))).alias("coordinator_left"),
        F.collect_set("_kind").alias("_kinds"),
        first_stated(s.HOST).alias("_host"), first_stated("coordinator").alias("_partition"),
    )


def _coordinator_outcomes(members: DataFrame) -> DataFrame:
    """Per group and generation: when the coordinator stabilized it and received the leader's
    assignment (KIP-848: computed the target assignment), its member count and leader."""
    facts = members.where(F.col(s.EVENT_TYPE).isin(STABILIZED, ASSIGNMENT_RECEIVED, EMPTY, TARGET_ASSIGNMENT) & F.col(s.GROUP_ID).isNotNull())
    emptied = F.when(F.max((F.col(s.EVENT_TYPE) == EMPTY).cast("int")) == 1, F.lit(0))
    return facts.groupBy(s.GROUP_ID, coordinator_generation().alias(s.GENERATION)).agg(
        _earliest(s.TS, STABILIZED).alias("coordinator_stabilized_ts"),
        _earliest(s.TS, ASSIGNMENT_RECEIVED, TARGET_ASSIGNMENT).alias("coordinator_assignment_ts"),
        F.coalesce(_earliest("member_count", STABILIZED), _earliest("member_count", ASSIGNMENT_RECEIVED), emptied).alias("coordinator_member_count"),
        _earliest("leader_id", ASSIGNMENT_RECEIVED).alias("coordinator_leader"),
        first_stated(s.HOST).alias("_stated_host"), first_stated("coordinator").alias("_stated_partition"),
    )


@rows_from(*COORDINATOR_LINES)
def coordinator_view(members: DataFrame) -> DataFrame:
    """Per group and generation, what the group coordinator's log states (``coordinator_*``): its
    host and ``__consumer_offsets`` partition, its first sign of the rebalance
    (``coordinator_start_ts``, ``coordinator_file``/``coordinator_line``), when it stabilized the
    generation and received the leader's assignment, its reason, member count and leader, the
    member ids it holds and those that joined or left. Empty without a coordinator log."""
    signals = coordinator_signals(members)
    view = _coordinator_starts(signals).join(_coordinator_outcomes(members), [s.GROUP_ID, s.GENERATION], "full")
    none = F.array().cast("array<string>")
    return view.join(coordinator_spans(signals), s.GROUP_ID, "left").select(
        s.GROUP_ID, s.GENERATION,
        F.coalesce("_host", "_stated_host").alias("coordinator_host"),
        F.coalesce("_partition", "_stated_partition").alias("coordinator_partition"),
        "coordinator_start_ts", "coordinator_stabilized_ts", "coordinator_assignment_ts", "coordinator_reason",
        "coordinator_member_count", "coordinator_leader", held_member_ids().alias("coordinator_member_ids"),
        *[F.coalesce(name, none).alias(name) for name in ("coordinator_joined", "coordinator_left", "_kinds")],
        F.col("_evidence.source_file").alias("coordinator_file"), F.col("_evidence.line").alias("coordinator_line"),
    )


def member_names(members: DataFrame) -> DataFrame:
    """Member id -> the member (``host/client``) whose own lines carry it, per group."""
    return members.where(F.col(MEMBER).isNotNull() & F.col(s.MEMBER_ID).isNotNull()).groupBy(s.GROUP_ID, s.MEMBER_ID).agg(
        first_stated(MEMBER).alias("_name")
    )


def logged_member_ids(members: DataFrame) -> DataFrame:
    """Per group: every member id some member's own lines carry (``_logged_ids``)."""
    return members.where(F.col(MEMBER).isNotNull() & F.col(s.MEMBER_ID).isNotNull()).groupBy(s.GROUP_ID).agg(
        F.collect_set(s.MEMBER_ID).alias("_logged_ids")
    )


def missing_members() -> Column:
    """The members the coordinator holds in a generation whose member id no member's own log
    carries (their logs are not among the inputs): ``member_id`` and the ``client_id`` inside it
    (needs ``coordinator_member_ids`` and ``_logged_ids``)."""
    logged = F.coalesce(F.col("_logged_ids"), F.array().cast("array<string>"))
    missing = F.filter(F.coalesce(F.col("coordinator_member_ids"), F.array().cast("array<string>")), lambda m: ~F.array_contains(logged, m))
    return F.transform(missing, lambda m: F.struct(
        m.alias("member_id"), F.nullif(F.regexp_extract(m, MEMBER_ID_OF_CLIENT, 1), F.lit("")).alias("client_id")
    ))


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
    the coordinator's view is an empty relation, whose joins Spark's optimiser plans away: over the
    4M-line benchmark corpus, which has none, the view alone took 0.8-0.9 s to compute no row.
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
        F.when(previous.isNull() | ~logged, no_one).when(kip848, F.coalesce(F.col("_joiners"), no_one))
        .otherwise(F.array_except("members", "_previous"))
    )
    left_members = F.when(~logged, no_one).otherwise(F.array_union(
        F.when(kip848, no_one).otherwise(F.array_except("_previous", "members")), F.coalesce(F.col("leaving"), no_one)
    ))
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
    coordinator_first = F.col("coordinator_file").isNotNull() & F.coalesce(F.col("coordinator_start_ts") < F.col("start_ts"), F.col("start_ts").isNull())
    stated = coordinator_trigger()
    with_sets = with_previous.select("*", joined_members.alias("members_joined"), F.array_distinct(left_members).alias("members_left"))
    missing = missing_members()
    table = with_sets.select(
        *keys,
        start.alias("start_ts"), joined.alias("joined_ts"), end.alias("end_ts"),
        F.when(end >= start, _ms(end, start)).alias("duration_ms"),  # an end before the start: clocks of two hosts, no duration
        "members", "member_ids", "instance_ids", "members_joined", "members_left",
        F.coalesce("leader", "_leader_name", "coordinator_leader").alias("leader"),
        F.coalesce(F.col("assignments"), F.array()).alias("assignments"),
        "protocol", protocol_type.alias("protocol_type"),
        F.coalesce(F.col("moved"), no_one).alias("moved"),
        F.coalesce(stated, _trigger(F.col("members_joined"), F.col("members_left"))).alias("trigger"),
        F.when(coordinator_first, F.col("coordinator_file")).otherwise(evidence.source_file).alias("start_file"),
        F.when(coordinator_first, F.col("coordinator_line")).otherwise(evidence.line).alias("start_line"),
        F.when(stated.isNotNull(), F.lit("coordinator")).otherwise(F.lit("members")).alias("trigger_source"),
        *[c for c in view.columns if c.startswith("coordinator_")],
        missing.alias("missing_members"),
        F.when(F.col("coordinator_host").isNotNull(), F.greatest(
            F.coalesce(F.col("coordinator_member_count") - F.size("members"), F.lit(0)), F.size(missing)
        )).alias("missing_member_count"),
    )
    return without_durations_across_gaps(table, evidence_gaps(members))
