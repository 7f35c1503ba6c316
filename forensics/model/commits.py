"""Commit lineage: every committed offset and offset reset of each partition, in order,
attributed to the member that made it and to the ownership interval it fell in.

Kafka brokers accept a commit from any member of the current generation, owner or not
(seed 003, alpakka-kafka #1121/#1123): a member that lost a partition in a rebalance can
still commit it late, after the new owner committed further. Such a commit falls in no
interval of its committer (``in_own_interval`` false) and is the evidence of a zombie commit.
Commits read from offset dumps have no committer; they are attributed to whoever owned the
partition at the commit (or snapshot) time.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from .. import contract as c
from .. import schema as s
from ..events.fields import go_positions
from ..sources import rows_from
from .members import MEMBER, member_order

LOG_KINDS = {
    "consumer:offset:committed": c.COMMIT,
    "consumer:offset:commit_failed": c.COMMIT_FAILED,
    "consumer:offset:reset": c.RESET,
    "consumer:offset:out_of_range": c.OUT_OF_RANGE,
    "consumer:offset:no_committed": c.NO_COMMITTED_OFFSET,
    "consumer:offset:set_committed": c.POSITION_FROM_COMMIT,
    "consumer:offset:seek": c.SEEK,
}
DUMP_KINDS = {s.CONSUMER_OFFSETS_COMMIT: c.DUMP_COMMIT, s.DESCRIBE_OFFSETS: c.DUMP_SNAPSHOT}

HISTORY_COLUMNS = (
    s.GROUP_ID,
    s.TOPIC,
    s.PARTITION,
    s.TS,
    "kind",
    s.OFFSET,
    "strategy",
    MEMBER,
    s.HOST,
    s.CLIENT_ID,
    s.GENERATION,
    "source",
    s.SOURCE_FILE,
    s.LINE,
    "strategy_line",
    s.TEMPLATE_ID,
)

OFFSET_MAP_ENTRY = r"(?:TopicPartition\(topic=u?')?([^\s{},=']+)(?:-|', partition=)(\d+)(?:=|\): )OffsetAndMetadata[{(]offset=(\d+)"
"""One entry of the offsets map a commit prints: Java's ``{topic-N=OffsetAndMetadata{offset=O, ...}, ...}``,
kafka-python's and aiokafka's ``{TopicPartition(topic='t', partition=N): OffsetAndMetadata(offset=O, ...), ...}``."""
COMMIT_FAILED, COMMIT_REQUESTED = "consumer:offset:commit_failed", "consumer:offset:commit_requested"
SET_COMMITTED, NO_COMMITTED, COMMITTED = "consumer:offset:set_committed", "consumer:offset:no_committed", "consumer:offset:committed"


def per_partition_failures(members: DataFrame) -> DataFrame:
    """Failed commits that name no partition, one row per partition of the offsets map they
    failed to commit: the map the failure prints ("Offset commit with offsets {...} failed",
    "Asynchronous auto-commit of offsets {...} failed"), else that of the member's last commit
    request before it (kafka-python and aiokafka log "Sending offset-commit request with {...}",
    then a failure without offsets)."""
    lines = members.where(F.col(s.EVENT_TYPE).isin(COMMIT_FAILED, COMMIT_REQUESTED))
    earlier = Window.partitionBy(MEMBER).orderBy(*member_order()).rowsBetween(Window.unboundedPreceding, -1)
    last_request = F.last(F.when(F.col(s.EVENT_TYPE) == COMMIT_REQUESTED, F.col(s.MESSAGE)), ignorenulls=True).over(earlier)
    printed = F.col(s.MESSAGE).contains("OffsetAndMetadata")
    offsets = F.when(printed, F.col(s.MESSAGE)).when(F.col(MEMBER).isNotNull(), last_request)
    maps = lines.withColumn("_offsets", offsets).where(
        (F.col(s.EVENT_TYPE) == COMMIT_FAILED) & F.col(s.TOPIC).isNull() & F.col("_offsets").isNotNull()
    )
    entries = F.arrays_zip(*[F.regexp_extract_all("_offsets", F.lit(OFFSET_MAP_ENTRY), F.lit(i)).alias(f"_{i}") for i in (1, 2, 3)])
    exploded = maps.withColumn("_entry", F.explode(entries))
    return exploded.withColumns(
        {s.TOPIC: F.col("_entry._1"), s.PARTITION: F.col("_entry._2").cast("int"), s.OFFSET: F.col("_entry._3").cast("long")}
    ).drop("_entry", "_offsets")


def per_partition_positions(members: DataFrame) -> DataFrame:
    """One row per partition of a franz-go line that lists them all with their offsets: where
    each resumes, ``assigning partitions; why: newly fetched offsets for group ..`` (a partition
    that resumes from the group's commit, or, at -2 (start) or -1 (end), one with no committed
    offset: it starts where ``ConsumeResetOffset`` says), and what a commit committed, ``updated
    committed; group: g, to: t[2{8100=>8200}, ..]`` (DEBUG)."""
    listed = members.where(F.col(s.EVENT_TYPE).isin(SET_COMMITTED, COMMITTED) & F.col(s.TOPIC).isNull() & F.col(s.PARTITIONS).isNotNull())
    exploded = listed.withColumn("_position", F.explode(go_positions(F.regexp_extract(s.MESSAGE, r"(?:input|to): (.*)$", 1))))
    offset = F.col("_position.offset")
    return exploded.withColumns(
        {
            s.EVENT_TYPE: F.when((F.col(s.EVENT_TYPE) == COMMITTED) | (offset >= 0), F.col(s.EVENT_TYPE)).otherwise(F.lit(NO_COMMITTED)),
            s.TOPIC: F.col("_position.topic"),
            s.PARTITION: F.col("_position.partition"),
            s.OFFSET: F.when(offset >= 0, offset),
        }
    ).drop("_position")


def log_offsets(members: DataFrame) -> DataFrame:
    """Commits, failed commits, resets, seeks and position events of group consumers (not
    Streams restore consumers).

    A reset's strategy comes from the member's ``Seeking to <strategy> offset`` line just
    before it (2.3+), where there is one (``strategy_line``); an out-of-range position keeps the
    target its own line names (librdkafka's ``offset reset (at offset X) to END``).
    """
    kinds = F.create_map(*[F.lit(x) for kv in LOG_KINDS.items() for x in kv])
    members = members.unionByName(per_partition_failures(members)).unionByName(per_partition_positions(members))
    relevant = members.where(
        F.col(s.EVENT_TYPE).isin(*LOG_KINDS, "consumer:offset:seek_strategy")
        & F.col(s.TOPIC).isNotNull()
        & ~F.coalesce(F.col(s.CLIENT_ID), F.lit("")).rlike("-restore-consumer$")
    )
    per_partition = Window.partitionBy(MEMBER, s.TOPIC, s.PARTITION).orderBy(s.TS, s.SOURCE_FILE, s.LINE)
    is_seek = F.col(s.EVENT_TYPE) == "consumer:offset:seek_strategy"
    before = per_partition.rowsBetween(Window.unboundedPreceding, -1)
    seek = F.when(is_seek, F.struct(F.col("strategy").alias("strategy"), F.col(s.LINE).alias("line")))
    with_strategy = (
        relevant.withColumn("_seek", F.last(seek, ignorenulls=True).over(before))
        .withColumn("_own_strategy", F.col("strategy"))
        .withColumn("strategy", F.coalesce(F.col("strategy"), F.col("_seek.strategy")))
    )
    return with_strategy.where(F.col(s.EVENT_TYPE) != "consumer:offset:seek_strategy").select(
        s.GROUP_ID,
        s.TOPIC,
        s.PARTITION,
        s.TS,
        kinds[F.col(s.EVENT_TYPE)].alias("kind"),
        s.OFFSET,
        F.when(F.col(s.EVENT_TYPE) == "consumer:offset:reset", F.col("strategy"))
        .when(F.col(s.EVENT_TYPE) == "consumer:offset:out_of_range", F.col("_own_strategy"))
        .alias("strategy"),
        MEMBER,
        s.HOST,
        s.CLIENT_ID,
        F.col("generation_now").alias(s.GENERATION),
        F.lit("log").alias("source"),
        s.SOURCE_FILE,
        s.LINE,
        F.when(F.col(s.EVENT_TYPE) == "consumer:offset:reset", F.col("_seek.line")).alias("strategy_line"),
        s.TEMPLATE_ID,
        s.MEMBER_BASIS,
    )


def dump_offsets(offsets: DataFrame) -> DataFrame:
    """Committed offsets from offset dumps: ``__consumer_offsets`` commits at their commit time
    and ``kafka-consumer-groups.sh --describe`` current offsets at their snapshot time."""
    kinds = F.create_map(*[F.lit(x) for kv in DUMP_KINDS.items() for x in kv])
    rows = offsets.where(F.col(s.KIND).isin(*DUMP_KINDS) & F.col(s.CURRENT_OFFSET).isNotNull())
    null_text = F.lit(None).cast("string")
    return rows.select(
        s.GROUP_ID,
        s.TOPIC,
        s.PARTITION,
        F.coalesce(F.col(s.COMMIT_TS), F.col(s.SNAPSHOT_TS)).alias(s.TS),
        kinds[F.col(s.KIND)].alias("kind"),
        F.col(s.CURRENT_OFFSET).alias(s.OFFSET),
        null_text.alias("strategy"),
        null_text.alias(MEMBER),
        null_text.alias(s.HOST),
        null_text.alias(s.CLIENT_ID),
        F.lit(None).cast("int").alias(s.GENERATION),
        F.lit("dump").alias("source"),
        s.SOURCE_FILE,
        s.LINE,
        F.lit(None).cast("long").alias("strategy_line"),
        null_text.alias(s.TEMPLATE_ID),
        null_text.alias(s.MEMBER_BASIS),
    )


@rows_from(*LOG_KINDS, "offsets")
def commit_lineage(members: DataFrame, ownership: DataFrame, offsets: DataFrame | None = None) -> DataFrame:
    """One row per committed offset, reset or position event of a partition (``HISTORY_COLUMNS``),
    with ``previous_offset`` (the partition's last commit before it) and its attribution:

    ``owner`` (host/client owning the partition at that time, latest interval first),
    ``owner_generation``, ``in_own_interval`` (log rows: the committer owned the partition in
    the generation it committed with, as the broker's generation check sees it; a commit in
    the member's own revocation callback counts as owned; where either generation is not in
    the logs, a commit inside the committer's own interval counts as owned; false is a commit
    from a member that did not own the partition then), and ``sequence`` (order within the
    partition).
    """
    history = log_offsets(members)
    if offsets is not None:
        history = history.unionByName(dump_offsets(offsets))
    owner = F.coalesce(F.col(MEMBER), F.concat_ws("/", s.HOST, s.CLIENT_ID))
    intervals = ownership.select(
        F.col(s.GROUP_ID).alias("_g"),
        F.col(s.TOPIC).alias("_t"),
        F.col(s.PARTITION).alias("_p"),
        owner.alias("owner"),
        F.col(s.GENERATION).alias("owner_generation"),
        "from_ts",
        "to_ts",
    )
    same_partition = (F.col(s.GROUP_ID) == F.col("_g")) & (F.col(s.TOPIC) == F.col("_t")) & (F.col(s.PARTITION) == F.col("_p"))
    inside = same_partition & (F.col("from_ts") <= F.col(s.TS)) & (F.col("to_ts").isNull() | (F.col(s.TS) <= F.col("to_ts")))
    latest_first = Window.partitionBy(s.SOURCE_FILE, s.LINE, "kind", s.TOPIC, s.PARTITION).orderBy(
        F.col("from_ts").desc_nulls_last()
    )  # one line may name several partitions
    at_time = (
        history.join(intervals, inside, "left")
        .withColumn("_rank", F.row_number().over(latest_first))
        .where(F.col("_rank") == 1)
        .drop("_g", "_t", "_p", "from_ts", "to_ts", "_rank")
    )
    own = intervals.select(
        "_g",
        "_t",
        "_p",
        F.col("owner").alias("_member"),
        F.col("owner_generation").alias("_generation"),
        F.col("from_ts").alias("_from"),
        F.col("to_ts").alias("_to"),
        F.lit(True).alias("_own"),
    )
    # a generation not logged (no join line in the logs) is unknown, not another generation: the
    # owner's own commit inside its interval is its own
    unknown_generation = F.col(s.GENERATION).isNull() | F.col("_generation").isNull()
    inside_own = (F.col("_from") <= F.col(s.TS)) & (F.col("_to").isNull() | (F.col(s.TS) <= F.col("_to")))
    owned_then = (
        (F.col(s.GROUP_ID) == F.col("_g"))
        & (F.col(s.TOPIC) == F.col("_t"))
        & (F.col(s.PARTITION) == F.col("_p"))
        & (F.col(MEMBER) == F.col("_member"))
        & ((F.col(s.GENERATION) == F.col("_generation")) | (unknown_generation & inside_own))
    )
    one_row = Window.partitionBy(s.SOURCE_FILE, s.LINE, "kind", s.TOPIC, s.PARTITION).orderBy(F.col("_own").desc_nulls_last())
    attributed = at_time.join(own, owned_then, "left").withColumn("_rank", F.row_number().over(one_row)).where(F.col("_rank") == 1)
    ordered = Window.partitionBy(s.GROUP_ID, s.TOPIC, s.PARTITION).orderBy(s.TS, s.SOURCE_FILE, s.LINE)
    commit = F.col("kind").isin(*c.COMMITTED_KINDS)
    return attributed.select(
        *HISTORY_COLUMNS,
        F.row_number().over(ordered).alias("sequence"),
        F.last(F.when(commit, F.col(s.OFFSET)), ignorenulls=True)
        .over(ordered.rowsBetween(Window.unboundedPreceding, -1))
        .alias("previous_offset"),
        "owner",
        "owner_generation",
        F.when(F.col("source") == "log", F.coalesce(F.col("_own"), F.lit(False))).alias("in_own_interval"),
        s.MEMBER_BASIS,
    )
