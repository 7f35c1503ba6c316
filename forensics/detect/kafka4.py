"""Incident classes of Kafka 4.x (issue 85): each a detector with its Kafka issue and remedy.

``double_ownership`` (KAFKA-16147), ``epochless_offset_reset`` (KAFKA-19902, KAFKA-20507),
``stale_epoch_commit`` (KIP-1251, KAFKA-20066), ``stuck_revocation`` (KAFKA-20870),
``describe_mid_rebalance`` (KAFKA-21648) and ``phantom_lag`` (a committed offset below the log
start), the last two read from offset dumps (``kafka4_dumps``). ``CLASSES`` names the
hand-written fixture of each under ``tests/data/kafka4_classes/``.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from .. import schema as s
from ..model import Model
from ..model.members import EPOCH_STEP, MEMBER, epoch_fenced, member_order
from ..registry import latest
from ..sources import rows_from
from ._commits import partition_name
from ._finding import OFFSETS_DUMP_COMMAND, at, describe_command, end_offsets_command, findings, line, lines, missing, one, place, text
from .kafka4_dumps import describe_mid_rebalance, phantom_lag

OVERLAP_TOLERANCE_MS = 2000
"""How long two members' ownership of one partition must overlap, past each one's own lines,
before it is ``double_ownership``: more than what the correction of clocks between hosts leaves."""
STUCK_AFTER_S = 60
"""How long a KIP-1071 group's logs must go on after a task's revocation, with no member assigned
the task, before it is ``stuck_revocation`` (the streams group's initial rebalance delay is 3 s)."""
__all__ = ["CLASSES", "describe_mid_rebalance", "double_ownership", "epochless_offset_reset", "phantom_lag", "stale_epoch_commit"]
__all__ += ["stuck_revocation"]

EPOCHLESS = r"offsetEpoch=Optional\.empty"
"""A Java client's ``FetchPosition`` that carries no leader epoch (``offsetEpoch=Optional.empty``)."""


@rows_from(EPOCH_STEP)
def double_ownership(model: Model) -> DataFrame:
    """A partition owned by two members of a KIP-848 group (``group.protocol=consumer``) at once:
    the second was assigned it while the first still held it and revoked it only later (a member
    that finds it lost its partitions had been removed first). KAFKA-16147: the coordinator lost a
    partition's epoch when a partition pending revocation was given back to its member."""
    kip848 = model.members.where(F.col(s.EVENT_TYPE) == EPOCH_STEP).select(F.col(s.GROUP_ID).alias("_g")).distinct()
    owned = model.ownership.where(F.col(s.TOPIC).isNotNull() & F.col("from_ts").isNotNull())
    owned = owned.join(kip848, F.col(s.GROUP_ID) == F.col("_g"), "left_semi")
    first = owned.select(*[F.col(name).alias(f"a_{name}") for name in owned.columns])
    second = owned.select(*[F.col(name).alias(f"b_{name}") for name in owned.columns])
    pairs = first.join(
        second,
        (F.col("a_group_id") == F.col("b_group_id"))
        & (F.col("a_topic") == F.col("b_topic"))
        & (F.col("a_partition") == F.col("b_partition"))
        & (F.col("a_member") != F.col("b_member"))
        & (F.col("a_from_ts") <= F.col("b_from_ts"))
        & (F.col("a_ended") == "revoked")
        & (F.unix_micros("a_to_ts") - F.unix_micros("b_from_ts") > OVERLAP_TOLERANCE_MS * 1000),
    )
    end = F.least(F.col("a_to_ts"), F.coalesce(F.col("b_to_ts"), F.col("a_to_ts")))
    return findings(
        pairs,
        "double_ownership",
        severity="critical",
        verdict="duplication",
        group=F.col("a_group_id"),
        topic=F.col("a_topic"),
        partition=F.col("a_partition"),
        exact=F.lit(False),
        host=F.col("b_host"),
        member=F.col("b_member"),
        start=F.col("b_from_ts"),
        end=end,
        evidence=lines(
            one(line("a_source_file", "a_from_line")), one(line("a_source_file", "a_to_line")), one(line("b_source_file", "b_from_line"))
        ),
        explanation=F.format_string(
            "%s-%d of group %s was owned by %s (epoch %s) and by %s (epoch %s) at once: %s was assigned it %s, and %s "
            "released it only %s. Both consumed it meanwhile, so the records they fetched in that time were processed twice "
            "(range unmeasured).",
            F.col("a_topic"),
            F.col("a_partition"),
            F.col("a_group_id"),
            F.col("a_member"),
            text(F.col("a_generation"), "unknown"),
            F.col("b_member"),
            text(F.col("b_generation"), "unknown"),
            F.col("b_member"),
            at(F.col("b_from_ts")),
            F.col("a_member"),
            at(F.col("a_to_ts")),
        ),
        kafka_reference="KAFKA-16147 (KIP-848 group coordinator: a partition assigned to two members at the same time; "
        "fixed by apache/kafka#15212, January 2024, before KIP-848 became generally available in 4.0)",
        remedy="Run brokers that carry the fix (any 4.x broker); compare the two members' commits of the partition for the "
        "overlap and make the processing idempotent for the duplicated records.",
        missing=missing(
            F.format_string(
                "the offsets each member processed of %s-%d between the two assignment lines", F.col("a_topic"), F.col("a_partition")
            ),
            F.lit(OFFSETS_DUMP_COMMAND),
        ),
    )


def _positions(model: Model) -> DataFrame:
    """Each member's position lines of a partition in order: set from a commit, out of range,
    reset, and the strategy its reset followed (``Seeking to EARLIEST offset``)."""
    kinds = ("consumer:offset:set_committed", "consumer:offset:out_of_range", "consumer:offset:reset", "consumer:offset:seek_strategy")
    rows = model.members.where(F.col(s.EVENT_TYPE).isin(*kinds) & F.col(MEMBER).isNotNull() & F.col(s.TOPIC).isNotNull())
    return rows.select(
        s.GROUP_ID,
        s.TOPIC,
        s.PARTITION,
        MEMBER,
        s.HOST,
        s.TS,
        s.SOURCE_FILE,
        s.LINE,
        s.EVENT_TYPE,
        s.OFFSET,
        "strategy",
        F.coalesce(F.col(s.MESSAGE), F.lit("")).rlike(EPOCHLESS).alias("_epochless"),
    )


def _policies(model: Model) -> DataFrame:
    group = F.coalesce(F.col(s.GROUP_ID), F.col("application_id"))
    return model.settings.where(F.col("key") == "auto.offset.reset").groupBy(group.alias("_pg")).agg(F.max("value").alias("_policy"))


@rows_from("consumer:offset:out_of_range")
def epochless_offset_reset(model: Model) -> DataFrame:
    """A position resumed from a commit without a leader epoch went out of range and was reset
    below it: the log had been truncated under it (a leader change), and with no epoch the
    client could not detect it (KIP-320). ``latest`` then skips what was written after the
    truncation, ``earliest`` replays the log (KAFKA-19902, KAFKA-20507)."""
    rows = _positions(model)
    order = Window.partitionBy(s.GROUP_ID, s.TOPIC, s.PARTITION, MEMBER).orderBy(*member_order())
    marked = rows.select(
        "*",
        F.lag(F.struct(s.EVENT_TYPE, s.OFFSET, "_epochless", line().alias("evidence"))).over(order).alias("_prev"),
        F.lead(F.struct(s.EVENT_TYPE, s.OFFSET, "strategy", line().alias("evidence"))).over(order).alias("_next"),
        F.lead(F.struct(s.EVENT_TYPE, s.OFFSET, line().alias("evidence")), 2).over(order).alias("_after"),
    )
    strategy_next = F.col("_next.event_type") == "consumer:offset:seek_strategy"
    reset = F.when(strategy_next, F.col("_after")).otherwise(
        F.struct(
            F.col("_next.event_type").alias(s.EVENT_TYPE), F.col("_next.offset").alias(s.OFFSET), F.col("_next.evidence").alias("evidence")
        )
    )
    found = (
        marked.where(
            (F.col(s.EVENT_TYPE) == "consumer:offset:out_of_range")
            & F.col("_epochless")
            & (F.col("_prev.event_type") == "consumer:offset:set_committed")
            & F.col("_prev._epochless")
            & (F.col("_prev.offset") == F.col(s.OFFSET))
        )
        .withColumn("_reset", reset)
        .where((F.col("_reset.event_type") == "consumer:offset:reset") & (F.col("_reset.offset") < F.col(s.OFFSET)))
        .withColumn("_stated", F.when(strategy_next, F.lower(F.col("_next.strategy"))))
    )
    found = found.join(_policies(model), F.col(s.GROUP_ID) == F.col("_pg"), "left")
    policy = F.lower(F.coalesce(F.col("_stated"), F.col("_policy")))
    latest = policy.isin("latest", "end")
    earliest_ = policy.isin("earliest", "beginning")
    effect = (
        F.when(
            latest,
            F.format_string(
                "auto.offset.reset=latest moved it to the new log end %d: whatever was written after the truncation and before "
                "offset %d was never consumed",
                F.col("_reset.offset"),
                F.col("_reset.offset"),
            ),
        )
        .when(
            earliest_,
            F.format_string(
                "auto.offset.reset=earliest moved it back to %d: records [%d, %d) are consumed again, up to the truncation point "
                "those already processed",
                F.col("_reset.offset"),
                F.col("_reset.offset"),
                F.col(s.OFFSET),
            ),
        )
        .otherwise(
            F.format_string(
                "the reset policy (not in the logs) moved it to %d: with latest, records written after the truncation were "
                "skipped; with earliest, the log is replayed",
                F.col("_reset.offset"),
            )
        )
    )
    return findings(
        found,
        "epochless_offset_reset",
        severity="critical",
        verdict=F.when(earliest_, F.lit("duplication")).otherwise(F.lit("loss")),
        classification=F.coalesce(policy, F.lit("policy unknown")),
        group=F.col(s.GROUP_ID),
        topic=F.col(s.TOPIC),
        partition=F.col(s.PARTITION),
        offset_from=F.when(earliest_, F.col("_reset.offset")),
        offset_to=F.when(earliest_, F.col(s.OFFSET)).otherwise(F.col("_reset.offset")),
        records=F.when(earliest_, F.col(s.OFFSET) - F.col("_reset.offset")),
        exact=F.lit(False),
        host=F.col(s.HOST),
        member=F.col(MEMBER),
        start=F.col(s.TS),
        end=F.col(s.TS),
        evidence=lines(
            one(F.col("_prev.evidence")), one(line()), one(F.when(strategy_next, F.col("_next.evidence"))), one(F.col("_reset.evidence"))
        ),
        explanation=F.format_string(
            "%s resumed %s from committed offset %d with no leader epoch, so it could not detect that the log was truncated "
            "below it (a leader change); its fetch was out of range %s and %s.",
            F.col(MEMBER),
            partition_name(),
            F.col(s.OFFSET),
            at(F.col(s.TS), place(line())),
            effect,
        ),
        kafka_reference="KAFKA-19902, KAFKA-20507 (offsets committed without a leader epoch; KIP-320 truncation detection)",
        remedy="Commit with the leader epoch of the last record processed (new OffsetAndMetadata(offset, leaderEpoch, "
        "metadata), or commitSync() without arguments); keep unclean.leader.election.enable=false; measure what the reset "
        "skipped or replayed from the new leader's log before resetting the group again.",
        missing=missing(
            F.format_string(
                "the offset at which %s was truncated: the first batch of the new leader epoch in a kafka-dump-log dump of the partition",
                partition_name(),
            ),
            describe_command(F.col(s.GROUP_ID)),
            end_offsets_command(F.col(s.TOPIC), F.col(s.PARTITION)),
        ),
    )


STALE_EPOCH_COMMIT = r"with stale member epoch error\. Last epoch sent: (-?\d+)"
"""``CommitRequestManager``'s OffsetCommit answered STALE_MEMBER_EPOCH (3.9+), with the epoch sent."""


@rows_from("consumer:offset:commit_failed")
def stale_epoch_commit(model: Model) -> DataFrame:
    """A KIP-848 member's commit rejected with STALE_MEMBER_EPOCH although it still owned its
    partitions: the coordinator had just raised the member's epoch (a new assignment) and the
    commit carried the previous one; the member's next state line is at a higher epoch, never
    fenced. Before KIP-1251 (KAFKA-20066) the broker required the exact epoch; the positions
    of that commit stay uncommitted until a later one succeeds."""
    members = model.members.where(F.col(MEMBER).isNotNull())
    failures = members.where(
        (F.col(s.EVENT_TYPE) == "consumer:offset:commit_failed") & F.col(s.MESSAGE).rlike(STALE_EPOCH_COMMIT)
    ).withColumn("_sent", F.regexp_extract(s.MESSAGE, STALE_EPOCH_COMMIT, 1).cast("int"))
    states = members.where((F.col(s.EVENT_TYPE) == EPOCH_STEP) | epoch_fenced()).select(
        F.col(MEMBER).alias("_m"),
        F.col(s.TS).alias("_ts"),
        F.col(s.SOURCE_FILE).alias("_file"),
        F.col(s.LINE).alias("_line"),
        F.col("epoch").alias("_epoch"),
        epoch_fenced().alias("_fenced"),
        F.col("state_from").alias("_from"),
    )
    after = F.coalesce(F.col("_ts") > F.col(s.TS), (F.col("_file") == F.col(s.SOURCE_FILE)) & (F.col("_line") > F.col(s.LINE)))
    following = failures.join(states, (F.col("_m") == F.col(MEMBER)) & after, "left")
    first = Window.partitionBy(s.SOURCE_FILE, s.LINE).orderBy(F.col("_ts").asc_nulls_last(), "_file", "_line")
    nxt = following.withColumn("_rank", F.row_number().over(first)).where(F.col("_rank") == 1)
    legitimate = nxt.where(~F.col("_fenced") & (F.col("_epoch") > F.col("_sent")) & (F.coalesce(F.col("_from"), F.lit("")) != "FENCED"))
    state_line = F.struct(F.col("_file").alias("file"), F.col("_line").cast("long").alias("line"))
    return findings(
        legitimate,
        "stale_epoch_commit",
        severity="warning",
        verdict="delay",
        group=F.col(s.GROUP_ID),
        host=F.col(s.HOST),
        member=F.col(MEMBER),
        start=F.col(s.TS),
        end=F.col(s.TS),
        evidence=lines(one(line()), one(state_line)),
        explanation=F.format_string(
            "%s's offset commit %s was rejected with STALE_MEMBER_EPOCH (epoch %d sent) although it was not fenced: its next "
            "state line is at epoch %d, a new assignment the coordinator had made meanwhile. The positions it tried to commit "
            "stay uncommitted until a later commit succeeds; if its partitions moved first, the next owner processes them again.",
            F.col(MEMBER),
            at(F.col(s.TS), place(line())),
            F.col("_sent"),
            F.col("_epoch"),
        ),
        kafka_reference="KIP-1251 / KAFKA-20066 (assignment epochs: commits of a member whose epoch was just raised were fenced)",
        remedy="Upgrade brokers to a release with KIP-1251 (assignment epochs); meanwhile retry a commit that failed with "
        "StaleMemberEpochException after the next poll(), and compare the group's committed offsets with what was processed.",
        missing=missing(
            F.format_string("the offsets %s's rejected commit carried, and the group's committed offsets after it", F.col(MEMBER)),
            describe_command(F.col(s.GROUP_ID)),
            F.lit(OFFSETS_DUMP_COMMAND),
        ),
    )


@rows_from(EPOCH_STEP)
def stuck_revocation(model: Model) -> DataFrame:
    """A task of a KIP-1071 streams group revoked by its member, then assigned to no member while
    the group's logs go on for ``STUCK_AFTER_S`` s: the coordinator never took the revocation as
    acknowledged (KAFKA-20870: a heartbeat without all three owned-task lists) and the group stayed
    rebalancing. A group reporting missing topics after it is left out (its tasks wait for them)."""
    kip1071 = model.members.where(F.col(s.EVENT_TYPE) == EPOCH_STEP).select(F.col(s.GROUP_ID).alias("_g")).distinct()
    tasks = model.ownership.where(F.col(s.TASK).isNotNull() & F.col("from_ts").isNotNull()).join(
        kip1071, F.col(s.GROUP_ID) == F.col("_g"), "left_semi"
    )
    revoked = tasks.where((F.col("ended") == "revoked") & F.col("to_ts").isNotNull())
    later = tasks.select(F.col(s.GROUP_ID).alias("_lg"), F.col(s.TASK).alias("_lt"), F.col("from_ts").alias("_lfrom"))
    reassigned = (
        (F.col(s.GROUP_ID) == F.col("_lg"))
        & (F.col(s.TASK) == F.col("_lt"))
        & (F.unix_micros("_lfrom") >= F.unix_micros("to_ts") - OVERLAP_TOLERANCE_MS * 1000)
    )
    orphaned = revoked.join(later, reassigned, "left_anti")
    hosts = tasks.select(F.col(s.GROUP_ID).alias("_hg"), F.col(s.HOST).alias("_host")).distinct()
    seen = (
        model.events.where(F.col(s.TS).isNotNull())
        .groupBy(F.col(s.HOST).alias("_host"))
        .agg(
            latest(F.struct(F.col(s.TS).alias("ts"), line().alias("evidence")), s.TS, line()).alias("_last"),
            F.max(F.when(F.col(s.EVENT_TYPE) == "streams:group:status", F.col(s.TS))).alias("_status"),
        )
    )
    group_seen = (
        hosts.join(seen, "_host").groupBy("_hg").agg(F.max_by("_last", "_last.ts").alias("_last"), F.max("_status").alias("_status"))
    )
    stuck = orphaned.join(group_seen, F.col(s.GROUP_ID) == F.col("_hg")).where(
        (F.unix_seconds("_last.ts") - F.unix_seconds("to_ts") >= STUCK_AFTER_S)
        & (F.col("_status").isNull() | (F.col("_status") < F.col("to_ts")))
    )
    waited = (F.unix_seconds("_last.ts") - F.unix_seconds("to_ts")).cast("long")
    return findings(
        stuck,
        "stuck_revocation",
        severity="warning",
        verdict="delay",
        group=F.col(s.GROUP_ID),
        task=F.col(s.TASK),
        host=F.col(s.HOST),
        member=F.col(MEMBER),
        start=F.col("to_ts"),
        end=F.col("_last.ts"),
        evidence=lines(one(line(s.SOURCE_FILE, "to_line")), one(F.col("_last.evidence"))),
        explanation=F.format_string(
            "Task %s of streams group %s was revoked by %s %s, and no member was assigned it in the %d s of logs that "
            "follow (until %s): the coordinator did not take the revocation as acknowledged, so the group stayed "
            "rebalancing and the task's input partitions were not processed.",
            F.col(s.TASK),
            F.col(s.GROUP_ID),
            F.col(MEMBER),
            at(F.col("to_ts")),
            waited,
            place(F.col("_last.evidence")),
        ),
        kafka_reference="KAFKA-20870 (KIP-1071: a StreamsGroupHeartbeat without all three owned-task lists leaves a "
        "revocation unacknowledged and the group rebalancing)",
        remedy="Check the group with kafka-streams-groups --describe (members' assignment and epochs); restart the member "
        "that revoked the task so it rejoins, and run clients whose heartbeat sends every owned-task list.",
    )


CLASSES = {
    "double_ownership": "kip848_double_ownership",
    "epochless_offset_reset": "epochless_commit_truncation",
    "stale_epoch_commit": "stale_member_epoch_commit",
    "stuck_revocation": "kip1071_stuck_revocation",
    "describe_mid_rebalance": "describe_mid_rebalance",
    "phantom_lag": "phantom_lag",
}
"""Detector name -> its fixture's directory under ``tests/data/kafka4_classes/``."""
