"""Ownership intervals: who owned each partition, from when to when, and how it ended.

Built from the members' own assignment lines: ``Setting newly assigned partitions`` (eager,
<= 2.3, the whole assignment) and ``Adding newly assigned partitions`` (2.4+, only what was
added) start an interval; ``Revoking``/``Revoke previously assigned partitions`` and ``Lost
previously assigned partitions`` end it; so does the member leaving the group (LeaveGroup,
poll or session timeout, fencing, its Streams thread shutting down). Under the Streams rebalance
protocol (KIP-1071) no line names partitions: its intervals are of tasks (``task``, with no
topic and partition), from ``Assigning active tasks {..}`` to ``Revoking previously assigned
active tasks ..``.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from .. import schema as s
from ..events.fields import partition_of, task_list, topic_of
from ..registry import literal_map
from ..sources import rows_from
from .members import GENERATION_NOW, MEMBER, epoch_fenced, member_order, member_unknown

ASSIGNED = "consumer:group:assigned"
RELEASES = {"consumer:group:revoked": "revoked", "consumer:group:lost": "lost"}
MEMBER_LEFT = ("consumer:group:leave", "consumer:group:poll_timeout", "consumer:group:session_timeout", "consumer:group:fenced")
THREAD_GONE = ("PENDING_SHUTDOWN", "DEAD")
END_OF_LOGS = "end of logs"
STREAMS_THREAD = r"^(.*-StreamThread-\d+)-consumer$"
"""A Kafka Streams thread's main consumer is named after the thread."""

OWNERSHIP_COLUMNS = (
    s.GROUP_ID,
    s.TOPIC,
    s.PARTITION,
    s.TASK,
    s.HOST,
    s.CLIENT_ID,
    s.THREAD,
    s.MEMBER_ID,
    s.INSTANCE_ID,
    s.GENERATION,
    "from_ts",
    "to_ts",
    "ended",
    s.SOURCE_FILE,
    "from_line",
    "to_line",
    MEMBER,
    s.MEMBER_BASIS,
)


def partition_changes(members: DataFrame) -> DataFrame:
    """One row per partition (or KIP-1071 task) a member's line acquires or releases: ``change``
    is ``acquired``, ``revoked`` or ``lost``; ``tp`` the ``topic-N`` text, else ``task``."""
    kinds = literal_map({ASSIGNED: "acquired", **RELEASES})
    lists = members.where(F.col(s.EVENT_TYPE).isin(ASSIGNED, *RELEASES) & (F.col(s.PARTITIONS).isNotNull() | F.col(s.TASK).isNotNull()))
    units = F.when(
        F.col(s.PARTITIONS).isNotNull(),
        F.transform(s.PARTITIONS, lambda tp: F.struct(tp.alias("tp"), F.lit(None).cast("string").alias("task"))),
    ).otherwise(F.transform(task_list(F.col(s.TASK)), lambda task: F.struct(F.lit(None).cast("string").alias("tp"), task.alias("task"))))
    return (
        lists.select(
            s.GROUP_ID,
            MEMBER,
            s.HOST,
            s.CLIENT_ID,
            F.coalesce(F.nullif(F.regexp_extract(s.CLIENT_ID, STREAMS_THREAD, 1), F.lit("")), F.col(s.THREAD)).alias(s.THREAD),
            s.MEMBER_ID,
            s.INSTANCE_ID,
            GENERATION_NOW,
            s.TS,
            s.SOURCE_FILE,
            s.LINE,
            s.MEMBER_BASIS,
            kinds[F.col(s.EVENT_TYPE)].alias("change"),
            F.explode(units).alias("_unit"),
        )
        .select("*", F.col("_unit.tp").alias("tp"), F.col("_unit.task").alias(s.TASK))
        .drop("_unit")
    )


def member_exits(members: DataFrame) -> DataFrame:
    """Lines after which a member owns nothing: it left, was fenced or timed out, its Streams
    thread shut down, it gave up all partitions without listing them, or (KIP-848 / KIP-1071)
    the coordinator fenced or removed it: its assignment is lost."""
    fenced = epoch_fenced() | member_unknown()
    gone = (
        F.col(s.EVENT_TYPE).isin(*MEMBER_LEFT)
        | fenced
        | ((F.col(s.EVENT_TYPE) == "streams:thread:state") & F.col("state_to").isin(*THREAD_GONE))
        | (F.col(s.EVENT_TYPE).isin(*RELEASES) & F.col(s.PARTITIONS).isNull() & F.col(s.TASK).isNull())
    )
    reason = F.coalesce(literal_map(RELEASES)[F.col(s.EVENT_TYPE)], F.when(fenced, F.lit("lost")), F.lit("member left"))
    return members.where(gone & F.col(MEMBER).isNotNull()).select(
        MEMBER, F.col(s.TS).alias("exit_ts"), F.col(s.LINE).alias("exit_line"), reason.alias("exit_reason")
    )


def with_first_exit(acquired: DataFrame, exits: DataFrame) -> DataFrame:
    """``acquired`` with ``exit``: the member's first exit after each acquisition (or null).

    One window over the member's acquisitions and exits, latest first, so each row sees the
    nearest later exit as the last one before it: linear in the member's lines, where a join
    of acquisitions to exits grows with their product (a member restarting all day).
    """
    exit_rows = exits.select(
        MEMBER,
        F.col("exit_ts").alias(s.TS),
        F.col("exit_line").alias(s.LINE),
        F.struct("exit_ts", "exit_line", "exit_reason").alias("_exit"),
    )
    both = acquired.withColumn("_acquired", F.lit(True)).unionByName(exit_rows, allowMissingColumns=True)
    latest_first = Window.partitionBy(MEMBER).orderBy(F.col(s.TS).desc(), F.col(s.LINE).desc())
    later = latest_first.rowsBetween(Window.unboundedPreceding, -1)
    nearest = both.withColumn("exit", F.last("_exit", ignorenulls=True).over(later))
    return nearest.where(F.col("_acquired")).drop("_acquired", "_exit")


def without_held_tasks(changes: DataFrame, exits: DataFrame) -> DataFrame:
    """``changes`` without the acquisitions of a task its member already holds: KIP-1071's
    ``Assigning active tasks {..}`` lists the member's whole active set, the tasks it keeps too.
    A task is held from its acquisition to its release or the member's next exit."""
    of_tasks = changes.where(F.col(s.TASK).isNotNull())
    tasks = of_tasks.select(s.GROUP_ID, MEMBER, s.TASK).distinct()
    exit_rows = exits.join(tasks, MEMBER).select(
        s.GROUP_ID, MEMBER, s.TASK, F.col("exit_ts").alias(s.TS), F.col("exit_line").alias(s.LINE), F.lit("exit").alias("change")
    )
    per_task = Window.partitionBy(s.GROUP_ID, MEMBER, s.TASK).orderBy(*member_order())
    both = of_tasks.unionByName(exit_rows, allowMissingColumns=True)
    held = (F.col("change") == "acquired") & (F.lag("change").over(per_task) == "acquired")
    marked = both.withColumn("_held", F.coalesce(held, F.lit(False)))
    kept = marked.where(~F.col("_held") & (F.col("change") != "exit")).drop("_held")
    return changes.where(F.col(s.TASK).isNull()).unionByName(kept)


def without_repeats(changes: DataFrame) -> DataFrame:
    """``changes`` without a member's acquisition of a partition it acquired last in the same
    generation, with no release between: one rebalance callback written twice, by the Java
    client (``Adding newly assigned partitions``) and by the application's listener (Spring's
    ``partitions assigned``)."""
    per_partition = Window.partitionBy(s.GROUP_ID, MEMBER, "tp", s.TASK).orderBy(*member_order())
    again = (
        (F.col("change") == "acquired")
        & (F.lag("change").over(per_partition) == "acquired")
        & F.lag(GENERATION_NOW).over(per_partition).eqNullSafe(F.col(GENERATION_NOW))
    )
    return changes.withColumn("_again", F.coalesce(again, F.lit(False))).where(~F.col("_again")).drop("_again")


@rows_from(ASSIGNED)
def ownership_intervals(members: DataFrame) -> DataFrame:
    """One row per partition (or KIP-1071 task) per owner interval (``OWNERSHIP_COLUMNS``).

    ``from_ts``/``to_ts`` are the owner's acquire and release lines (``to_ts`` null while it
    still owned the partition when its logs end), ``ended`` is ``revoked``, ``lost``,
    ``member left``, ``reassigned`` (acquired again with no release logged) or ``end of logs``.
    ``source_file`` with ``from_line``/``to_line`` are the evidence; ``member`` and
    ``member_basis`` as ``members.with_members`` named the owner.
    """
    exits = member_exits(members)
    changes = without_repeats(without_held_tasks(partition_changes(members), exits))
    per_partition = Window.partitionBy(s.GROUP_ID, MEMBER, "tp", s.TASK).orderBy(*member_order())
    nxt = changes.select(
        "*",
        F.lead("change").over(per_partition).alias("next_change"),
        F.lead(s.TS).over(per_partition).alias("next_ts"),
        F.lead(s.LINE).over(per_partition).alias("next_line"),
    )
    acquired = nxt.where(F.col("change") == "acquired")
    first_exit = with_first_exit(acquired, exits)
    release_first = F.col("next_ts").isNotNull() & (F.col("exit.exit_ts").isNull() | (F.col("next_ts") <= F.col("exit.exit_ts")))
    ended = (
        F.when(release_first, F.when(F.col("next_change") == "acquired", F.lit("reassigned")).otherwise(F.col("next_change")))
        .when(F.col("exit.exit_ts").isNotNull(), F.col("exit.exit_reason"))
        .otherwise(F.lit(END_OF_LOGS))
    )
    return first_exit.select(
        s.GROUP_ID,
        topic_of(F.col("tp")).alias(s.TOPIC),
        partition_of(F.col("tp")).alias(s.PARTITION),
        s.TASK,
        s.HOST,
        s.CLIENT_ID,
        s.THREAD,
        s.MEMBER_ID,
        s.INSTANCE_ID,
        F.col(GENERATION_NOW).alias(s.GENERATION),
        F.col(s.TS).alias("from_ts"),
        F.when(release_first, F.col("next_ts")).otherwise(F.col("exit.exit_ts")).alias("to_ts"),
        ended.alias("ended"),
        s.SOURCE_FILE,
        F.col(s.LINE).alias("from_line"),
        F.when(release_first, F.col("next_line")).otherwise(F.col("exit.exit_line")).alias("to_line"),
        MEMBER,
        s.MEMBER_BASIS,
    )
