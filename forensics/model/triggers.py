"""What started a rebalance: the trigger the members' lines show (a poll or session timeout, a
fencing, a member leaving or joining, a rejoin request's reason, a KIP-848 epoch bump), and the
one the group coordinator states (its ``Preparing to rebalance`` reason, the members it saw)."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

EPOCH_BUMP = "subscription, topology or topic metadata change (the coordinator bumped the group epoch)"
"""A KIP-848 / KIP-1071 epoch no member joined or left: the coordinator bumps the group epoch
only for membership, subscription/topology and topic metadata changes."""

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


def members_trigger(joined_members: Column, left_members: Column) -> Column:
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
