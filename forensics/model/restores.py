"""Restore episodes of Kafka Streams tasks: per assignment of a task to a thread, what
happened to each of its changelog partitions before the task ran.

KAFKA-7672 (seed 000): under exactly-once a task that finds no checkpoint resets its changelog
to offset 0 and wipes its store; it must then restore the changelog completely before it runs.
An episode shows whether the checkpoint was found, where the changelog was reset to, the
restore's start and end offsets and records, whether it completed, and when the task (or its
thread) went RUNNING; plus the task's previous owner and the gap since it let the task go,
and the last checkpoint its host wrote for the changelog partition before the task opened there.
"""

from __future__ import annotations

from functools import reduce
from operator import and_

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .. import schema as s
from ..events.fields import partition_of, task_list, topic_of
from ..registry import earliest, first_stated, latest
from ..sources import rows_from
from .members import GENERATION_NOW
from .ownership import STREAMS_THREAD

TASK_OPENED = ("streams:task:created", "streams:task:initialized", "streams:checkpoint:missing", "streams:checkpoint:loaded")
TASK_DONE = ("streams:task:restored", "streams:task:running")
TASK_CLOSED = (
    "streams:task:closed_clean",
    "streams:task:closed_dirty",
    "streams:task:suspended",
    "streams:task:migrated",
    "streams:task:recycled",
)
RESTORE = ("streams:restore:start", "streams:restore:progress", "streams:restore:finished")
CHECKPOINT_WRITTEN = "streams:checkpoint:written"
CHECKPOINT_WRITES = (CHECKPOINT_WRITTEN, "streams:checkpoint:write_failed")
"""Checkpoint writes name a task but do not open it: a task that is closed writes one last
checkpoint, possibly after its thread joined the next generation."""
CHECKPOINT_ENTRY = r"([^\s{},=]+-\d+)=(-?\d+)"
"""One ``changelog-partition=offset`` entry of the map a ``Writing checkpoint: {...}`` line prints."""

EPISODE = ["host", "thread", GENERATION_NOW]


def _thread(events: DataFrame) -> Column:
    from_client = F.nullif(F.regexp_extract(F.regexp_replace(s.CLIENT_ID, "-restore-consumer$", "-consumer"), STREAMS_THREAD, 1), F.lit(""))
    return F.coalesce(F.col(s.THREAD), from_client)


def _changelog_of(events: DataFrame) -> Column:
    """The changelog partition an event names, as ``topic-N``."""
    tp = F.concat(F.col(s.TOPIC), F.lit("-"), F.col(s.PARTITION).cast("string"))
    return F.coalesce(F.when(F.col(s.TOPIC).isNotNull() & F.col(s.PARTITION).isNotNull(), tp), F.col("changelog"))


def task_episodes(members: DataFrame) -> DataFrame:
    """Per thread assignment (host, thread, generation) and task: when the task was opened
    (first line naming it; task lists such as "current active tasks: [0_1, 1_1]" name each),
    whether it ran, and when the thread let it go."""
    task_lines = members.where(
        F.col(s.TASK).isNotNull() & F.col(s.EVENT_TYPE).startswith("streams:") & ~F.col(s.EVENT_TYPE).isin(*CHECKPOINT_WRITES)
    )
    per_task = task_lines.withColumn("thread", _thread(task_lines)).withColumn(s.TASK, F.explode(task_list(F.col(s.TASK))))
    line = F.struct(F.col(s.SOURCE_FILE).alias("file"), F.col(s.LINE).alias("line"))
    closed = F.col(s.EVENT_TYPE).isin(*TASK_CLOSED)
    return per_task.groupBy(*EPISODE, s.TASK).agg(
        first_stated(s.GROUP_ID).alias(s.GROUP_ID),
        F.min(s.TS).alias("opened_ts"),
        F.collect_list(line).alias("_task_evidence"),
        latest(F.when(closed, line), F.when(closed, F.col(s.TS))).alias("closed_evidence"),
        F.min(F.when(F.col(s.EVENT_TYPE).isin(*TASK_DONE), F.col(s.TS))).alias("task_running_ts"),
        F.max(F.when(F.col(s.EVENT_TYPE).isin(*TASK_CLOSED), F.col(s.TS))).alias("task_closed_ts"),
        first_stated(s.SOURCE_FILE, s.LINE).alias(s.SOURCE_FILE),  # the file of opened_line
        F.min(s.LINE).alias("opened_line"),
        F.collect_set(
            F.when(F.col(s.EVENT_TYPE).isin(*TASK_OPENED) & (F.col(s.EVENT_TYPE) != "streams:task:created"), F.col("changelog"))
        ).alias("_changelogs"),
        *_by_role("_missing", F.col(s.EVENT_TYPE) == "streams:checkpoint:missing"),
        *_by_role("_loaded", F.col(s.EVENT_TYPE) == "streams:checkpoint:loaded"),
        *_by_role("_opened", F.col(s.EVENT_TYPE).isin(*TASK_OPENED)),
        F.max((F.col(s.EVENT_TYPE) == "streams:store:wiped").cast("int")).alias("_wiped"),
    )


def _standby_line() -> Column:
    """A line of a standby task (its ``standby-task [0_1]`` prefix: the event's ``task_role``)."""
    return F.coalesce(F.col("task_role") == "standby", F.lit(False))


def _by_role(name: str, condition: Column) -> tuple[Column, Column]:
    """``name`` (1 where a line of an active task, or of no stated role, meets ``condition``)
    and ``name_standby`` (1 where a standby task's line does): a standby replica and the active
    task it becomes log the same lines under the same task id."""
    standby = _standby_line()
    return (F.max((condition & ~standby).cast("int")).alias(name), F.max((condition & standby).cast("int")).alias(f"{name}_standby"))


def opened_as_standby() -> Column:
    """An episode whose task was opened only as a standby replica (num.standby.replicas): it
    applies its changelog continuously and never restores, so "did not find checkpoint offset"
    there is a standby starting from the changelog's beginning, not a skipped restore."""
    return (F.col("_opened_standby") == 1) & F.coalesce(F.col("_opened") == 0, F.lit(True))


def changelog_activity(members: DataFrame) -> DataFrame:
    """Per thread assignment and changelog partition: resets of the restore consumer and the
    restore's start offset, end offset, records and completion."""
    lines = members.where(
        F.col(s.EVENT_TYPE).isin(*RESTORE)
        | ((F.col(s.EVENT_TYPE) == "consumer:offset:reset") & F.col(s.CLIENT_ID).rlike("-restore-consumer$"))
    )
    lines = lines.withColumn("thread", _thread(lines)).withColumn("changelog_tp", _changelog_of(lines))
    return lines.groupBy(*EPISODE, "changelog_tp").agg(
        earliest(s.OFFSET, F.when(F.col(s.EVENT_TYPE) == "consumer:offset:reset", F.col(s.TS))).alias("reset_offset"),
        F.min(F.when(F.col(s.EVENT_TYPE) == "streams:restore:start", F.col(s.OFFSET))).alias("restore_from"),
        F.max(F.when(F.col(s.EVENT_TYPE) == "streams:restore:start", F.col("end_offset"))).alias("restore_to"),
        F.sum(F.when(F.col(s.EVENT_TYPE) == "streams:restore:finished", F.col("records"))).alias("records_restored"),
        F.max(F.when(F.col(s.EVENT_TYPE) == "streams:restore:finished", F.col(s.TS))).alias("restore_finished_ts"),
        F.collect_list(F.struct(F.col(s.SOURCE_FILE).alias("file"), F.col(s.LINE).alias("line"))).alias("_changelog_evidence"),
    )


def checkpoints_written(members: DataFrame) -> DataFrame:
    """One row per changelog partition of each ``Writing checkpoint: {...}`` line: ``host``,
    ``thread``, ``ts``, ``changelog`` (``topic-N``), ``offset`` and the line (``evidence``).
    Entries with an unknown offset (-4, 2.6+) are left out."""
    lines = members.where(F.col(s.EVENT_TYPE) == CHECKPOINT_WRITTEN)
    entry = F.lit(CHECKPOINT_ENTRY)
    entries = F.arrays_zip(
        F.regexp_extract_all("changelog", entry, F.lit(1)).alias("_tp"), F.regexp_extract_all("changelog", entry, F.lit(2)).alias("_offset")
    )
    exploded = lines.select("host", _thread(lines).alias("thread"), s.TS, s.SOURCE_FILE, s.LINE, F.explode(entries).alias("_entry"))
    return exploded.select(
        "host",
        "thread",
        s.TS,
        F.col("_entry._tp").alias("changelog"),
        F.col("_entry._offset").cast("long").alias(s.OFFSET),
        F.struct(F.col(s.SOURCE_FILE).alias("file"), F.col(s.LINE).alias("line")).alias("evidence"),
    ).where(F.col(s.OFFSET) >= 0)


def last_checkpoints(episodes: DataFrame, checkpoints: DataFrame) -> DataFrame:
    """Per episode row (``EPISODE``, task, changelog): the last checkpoint written for its
    changelog partition on the same host (the state directory the task opens from) at or before
    the task was opened there, by any thread: ``last_checkpoint`` (ts, offset, thread, evidence),
    keyed by ``_lc_<key>`` columns."""
    keys = [*EPISODE, s.TASK, "changelog"]
    written = checkpoints.select(
        F.col("host").alias("_cp_host"),
        F.col("changelog").alias("_cp_changelog"),
        F.col(s.TS).alias("_cp_ts"),
        F.struct(
            F.col(s.TS).alias("ts"), F.col(s.OFFSET).alias("offset"), F.col("thread").alias("thread"), F.col("evidence").alias("evidence")
        ).alias("_cp"),
    )
    before_opening = (
        (F.col("host") == F.col("_cp_host")) & (F.col("changelog") == F.col("_cp_changelog")) & (F.col("_cp_ts") <= F.col("opened_ts"))
    )
    latest = F.struct(F.col("_cp.ts"), F.col("_cp.evidence.file"), F.col("_cp.evidence.line"))
    return (
        episodes.select(*keys, "opened_ts")
        .join(written, before_opening)
        .groupBy(*keys)
        .agg(F.max_by("_cp", latest).alias("last_checkpoint"))
        .select(*[F.col(k).alias(f"_lc_{k}") for k in keys], "last_checkpoint")
    )


def thread_generations(members: DataFrame) -> DataFrame:
    """Per thread assignment: when the thread went RUNNING (``State transition ... to RUNNING``)
    and its last line in that generation (when it let its tasks go, at the latest)."""
    lines = members.withColumn("thread", _thread(members)).where(F.col("thread").isNotNull())
    running = (F.col(s.EVENT_TYPE) == "streams:thread:state") & (F.col("state_to") == "RUNNING")
    line = F.struct(F.col(s.SOURCE_FILE).alias("file"), F.col(s.LINE).alias("line"))
    return lines.groupBy(*EPISODE).agg(
        F.max(F.when(running, F.col(s.TS))).alias("thread_running_ts"),
        latest(F.when(running, line), F.when(running, F.col(s.TS))).alias("running_evidence"),
        F.max(s.TS).alias("thread_last_ts"),
    )


@rows_from(*s.event_types_of("streams:"))
def restore_episodes(members: DataFrame) -> DataFrame:
    """One row per task assignment and changelog partition (a task with no changelog line
    gets one row with a null changelog).

    Columns: ``host``, ``thread``, ``generation``, ``task``, ``changelog`` (``topic-N``),
    ``checkpoint_found`` (false: "No checkpoint found" / "did not find checkpoint offset";
    true: "initialized from checkpoint"; null: not logged), ``store_wiped``,
    ``reset_offset`` (the restore consumer's reset), ``restore_from``/``restore_to``,
    ``records_restored``, ``restore_completed`` (true: restore finished or the task logged
    "Restored and ready to run"; false: the task's thread went RUNNING with neither; null for a
    standby), ``standby`` (the task was opened as a standby replica only: ``opened_as_standby``),
    ``last_checkpoint_offset``/``_ts``/``_thread``/``_evidence`` (the last ``Writing checkpoint``
    line of this host for the changelog partition at or before the task opened here, by any
    thread: the offset a restore from the local state could start from; ``checkpoint_found``
    false next to it means the task did not use that checkpoint),
    ``opened_ts``, ``running_ts`` (the task's
    own RUNNING line, else its thread's), ``previous_host``/``previous_thread``,
    ``previous_released_ts``, ``same_instance`` and ``gap_ms`` (from the previous owner's
    last line for the task to this opening), with ``source_file``/``opened_line``.
    """
    tasks = task_episodes(members).join(thread_generations(members), EPISODE, "left")
    previous = Window.partitionBy(s.GROUP_ID, s.TASK).orderBy("opened_ts", "host", "thread")
    released = F.coalesce(F.col("task_closed_ts"), F.col("thread_last_ts"))
    with_previous = tasks.select(
        "*",
        F.lag("host").over(previous).alias("previous_host"),
        F.lag("thread").over(previous).alias("previous_thread"),
        F.lag(released).over(previous).alias("previous_released_ts"),
        F.lag("closed_evidence").over(previous).alias("previous_closed_evidence"),
    )
    per_changelog = with_previous.select("*", F.explode_outer(F.when(F.size("_changelogs") > 0, F.col("_changelogs"))).alias("changelog"))
    activity = changelog_activity(members).withColumnRenamed("changelog_tp", "changelog")
    with_activity = per_changelog.join(activity, [*EPISODE, "changelog"], "left")
    checkpoints = last_checkpoints(per_changelog, checkpoints_written(members))
    same_row = [F.col(k).eqNullSafe(F.col(f"_lc_{k}")) for k in [*EPISODE, s.TASK, "changelog"]]
    with_previous = with_activity.join(checkpoints, reduce(and_, same_row), "left")
    running = F.coalesce(F.col("task_running_ts"), F.when(F.col("thread_running_ts") >= F.col("opened_ts"), F.col("thread_running_ts")))
    completed = F.when(F.col("restore_finished_ts").isNotNull() | F.col("task_running_ts").isNotNull(), F.lit(True)).when(
        running.isNotNull(), F.lit(False)
    )
    evidence = F.array_sort(
        F.array_distinct(
            F.filter(
                F.flatten(
                    F.array(
                        F.col("_task_evidence"),
                        F.coalesce(F.col("_changelog_evidence"), F.array()),
                        F.array(F.when(running.isNotNull(), F.col("running_evidence"))),
                    )
                ),
                lambda e: e.isNotNull(),
            )
        )
    )
    standby = opened_as_standby()
    missing = F.when(standby, F.col("_missing_standby")).otherwise(F.col("_missing"))
    loaded = F.when(standby, F.col("_loaded_standby")).otherwise(F.col("_loaded"))
    return with_previous.select(
        s.GROUP_ID,
        "host",
        "thread",
        F.col(GENERATION_NOW).alias(s.GENERATION),
        s.TASK,
        "changelog",
        topic_of(F.col("changelog")).alias(s.TOPIC),
        partition_of(F.col("changelog")).alias(s.PARTITION),
        F.when(missing == 1, F.lit(False)).when(loaded == 1, F.lit(True)).alias("checkpoint_found"),
        (F.col("_wiped") == 1).alias("store_wiped"),
        "reset_offset",
        "restore_from",
        "restore_to",
        "records_restored",
        F.when(~standby, completed).alias("restore_completed"),
        "restore_finished_ts",
        F.col("last_checkpoint.offset").alias("last_checkpoint_offset"),
        F.col("last_checkpoint.ts").alias("last_checkpoint_ts"),
        F.col("last_checkpoint.thread").alias("last_checkpoint_thread"),
        F.col("last_checkpoint.evidence").alias("last_checkpoint_evidence"),
        "opened_ts",
        running.alias("running_ts"),
        "previous_host",
        "previous_thread",
        "previous_released_ts",
        (F.col("previous_host") == F.col("host")).alias("same_instance"),
        ((F.unix_micros("opened_ts") - F.unix_micros("previous_released_ts")) / 1000).cast("long").alias("gap_ms"),
        s.SOURCE_FILE,
        "opened_line",
        evidence.alias("evidence"),
        F.col("previous_closed_evidence").alias("previous_evidence"),
        standby.alias("standby"),
    )
