"""Per group and generation, what the group coordinator's log states (broker log;
``forensics/catalogue/broker.yaml``): its first sign of the rebalance, when it stabilized the
generation and received the assignment, its reason, member count, leader and the member ids it
holds, and which of those have no log of their own among the inputs."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .. import schema as s
from ..registry import earliest, first_stated, literal_map
from ..sources import rows_from
from .members import MEMBER, MEMBER_ID_OF_CLIENT

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
        "*",
        kind.alias("_kind"),
        F.when(kind.isNotNull(), F.col(s.MEMBER_ID)).alias("_member_id"),
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
    spans = (
        signals.where(F.col("_member_id").isNotNull())
        .groupBy(s.GROUP_ID, "_member_id")
        .agg(
            F.min(F.when(F.col("_kind") == "joined", F.col("_g"))).alias("joined"),
            F.min(F.when(F.col("_kind") != "joined", F.col("_g"))).alias("left"),
        )
    )
    return spans.groupBy(s.GROUP_ID).agg(F.collect_list(F.struct(F.col("_member_id").alias("id"), "joined", "left")).alias("_spans"))


def held_member_ids() -> Column:
    """The member ids the coordinator holds in the row's ``generation`` (needs ``_spans`` and
    ``coordinator_leader``): each member from the generation its join leads to (joined before
    the logs: while it has not left) up to, not including, the one its leaving leads to; and the
    generation's leader."""
    generation = F.col(s.GENERATION)
    held = F.filter(
        F.col("_spans"),
        lambda span: (
            F.coalesce(span["joined"] <= generation, span["left"].isNotNull()) & F.coalesce(generation < span["left"], F.lit(True))
        ),
    )
    ids = F.coalesce(F.transform(held, lambda span: span["id"]), F.array().cast("array<string>"))
    leader = F.when(F.col("coordinator_leader").isNotNull(), F.array("coordinator_leader")).otherwise(F.array().cast("array<string>"))
    return F.array_sort(F.array_union(ids, leader))


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
        first_stated(s.HOST).alias("_host"),
        first_stated("coordinator").alias("_partition"),
    )


def _coordinator_outcomes(members: DataFrame) -> DataFrame:
    """Per group and generation: when the coordinator stabilized it and received the leader's
    assignment (KIP-848: computed the target assignment), its member count and leader."""
    facts = members.where(
        F.col(s.EVENT_TYPE).isin(STABILIZED, ASSIGNMENT_RECEIVED, EMPTY, TARGET_ASSIGNMENT) & F.col(s.GROUP_ID).isNotNull()
    )
    emptied = F.when(F.max((F.col(s.EVENT_TYPE) == EMPTY).cast("int")) == 1, F.lit(0))
    return facts.groupBy(s.GROUP_ID, coordinator_generation().alias(s.GENERATION)).agg(
        _earliest(s.TS, STABILIZED).alias("coordinator_stabilized_ts"),
        _earliest(s.TS, ASSIGNMENT_RECEIVED, TARGET_ASSIGNMENT).alias("coordinator_assignment_ts"),
        F.coalesce(_earliest("member_count", STABILIZED), _earliest("member_count", ASSIGNMENT_RECEIVED), emptied).alias(
            "coordinator_member_count"
        ),
        _earliest("leader_id", ASSIGNMENT_RECEIVED).alias("coordinator_leader"),
        first_stated(s.HOST).alias("_stated_host"),
        first_stated("coordinator").alias("_stated_partition"),
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
        s.GROUP_ID,
        s.GENERATION,
        F.coalesce("_host", "_stated_host").alias("coordinator_host"),
        F.coalesce("_partition", "_stated_partition").alias("coordinator_partition"),
        "coordinator_start_ts",
        "coordinator_stabilized_ts",
        "coordinator_assignment_ts",
        "coordinator_reason",
        "coordinator_member_count",
        "coordinator_leader",
        held_member_ids().alias("coordinator_member_ids"),
        *[F.coalesce(name, none).alias(name) for name in ("coordinator_joined", "coordinator_left", "_kinds")],
        F.col("_evidence.source_file").alias("coordinator_file"),
        F.col("_evidence.line").alias("coordinator_line"),
    )


def member_names(members: DataFrame) -> DataFrame:
    """Member id -> the member (``host/client``) whose own lines carry it, per group."""
    return (
        members.where(F.col(MEMBER).isNotNull() & F.col(s.MEMBER_ID).isNotNull())
        .groupBy(s.GROUP_ID, s.MEMBER_ID)
        .agg(first_stated(MEMBER).alias("_name"))
    )


def logged_member_ids(members: DataFrame) -> DataFrame:
    """Per group: every member id some member's own lines carry (``_logged_ids``)."""
    return (
        members.where(F.col(MEMBER).isNotNull() & F.col(s.MEMBER_ID).isNotNull())
        .groupBy(s.GROUP_ID)
        .agg(F.collect_set(s.MEMBER_ID).alias("_logged_ids"))
    )


def missing_members() -> Column:
    """The members the coordinator holds in a generation whose member id no member's own log
    carries (their logs are not among the inputs): ``member_id`` and the ``client_id`` inside it
    (needs ``coordinator_member_ids`` and ``_logged_ids``)."""
    logged = F.coalesce(F.col("_logged_ids"), F.array().cast("array<string>"))
    missing = F.filter(F.coalesce(F.col("coordinator_member_ids"), F.array().cast("array<string>")), lambda m: ~F.array_contains(logged, m))
    return F.transform(
        missing,
        lambda m: F.struct(m.alias("member_id"), F.nullif(F.regexp_extract(m, MEMBER_ID_OF_CLIENT, 1), F.lit("")).alias("client_id")),
    )
