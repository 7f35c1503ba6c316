"""Client settings from ``ConsumerConfig values:`` / ``StreamsConfig values:`` blocks.

Kafka logs every client's effective configuration when the client starts
(``AbstractConfig.logAll``): the settings that decide whether a rebalance can lose or
duplicate data (``auto.offset.reset``, ``enable.auto.commit``, ``isolation.level``,
``processing.guarantee``, ...) are read from there.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from .. import schema as s
from ..sources import rows_from

SETTING = r"^\s*([A-Za-z0-9_.\-]+) = (.*)$"

RELEVANT_SETTINGS = (
    "application.id",
    "group.id",
    "client.id",
    "group.instance.id",
    "group.protocol",
    "auto.offset.reset",
    "enable.auto.commit",
    "auto.commit.interval.ms",
    "isolation.level",
    "max.poll.interval.ms",
    "max.poll.records",
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "partition.assignment.strategy",
    "metadata.max.age.ms",
    "processing.guarantee",
    "num.stream.threads",
    "num.standby.replicas",
    "commit.interval.ms",
    "enable.idempotence",
    "transactional.id",
    "acks",
    "bootstrap.servers",
    "state.dir",
)
"""Settings reported per client in ``forensics analyze --json`` under ``config``; the recovery
plans take theirs from there (``recovery.FACT_SETTINGS``)."""


@rows_from("config:block")
def config_settings(events: DataFrame) -> DataFrame:
    """One row per setting of each config block.

    Columns: ``source_file``, ``host``, ``line`` (the block's first line), ``ts``,
    ``config_kind`` (Consumer, Producer, Streams, ...), ``client_id``, ``group_id`` and
    ``application_id`` (from the block's own settings), ``key``, ``value`` (``null``
    printed by Kafka stays the text ``null``).
    """
    s.validate_columns(events, [s.EVENT_TYPE, s.SOURCE_FILE, s.HOST, s.LINE, s.TS, "config_kind", s.MESSAGE], "config_settings")
    blocks = events.where(F.col(s.EVENT_TYPE) == "config:block")
    lines = blocks.select(s.SOURCE_FILE, s.HOST, s.LINE, s.TS, "config_kind", F.posexplode(F.split(s.MESSAGE, "\n")))
    settings = lines.where((F.col("pos") > 0) & F.col("col").rlike(SETTING)).select(
        s.SOURCE_FILE,
        s.HOST,
        s.LINE,
        s.TS,
        "config_kind",
        F.regexp_extract("col", SETTING, 1).alias("key"),
        F.trim(F.regexp_extract("col", SETTING, 2)).alias("value"),
    )
    block = Window.partitionBy(s.SOURCE_FILE, s.LINE)

    def setting(name: str):
        return F.max(F.when(F.col("key") == name, F.nullif(F.col("value"), F.lit("")))).over(block)

    return settings.select(
        s.SOURCE_FILE,
        s.HOST,
        s.LINE,
        s.TS,
        "config_kind",
        setting("client.id").alias(s.CLIENT_ID),
        setting("group.id").alias(s.GROUP_ID),
        setting("application.id").alias("application_id"),
        "key",
        "value",
    )


def config_table(settings: DataFrame, keys: tuple[str, ...] = RELEVANT_SETTINGS) -> DataFrame:
    """The JSON ``config`` table: one row per config block, in file and line order, with its
    settings among ``keys`` as a map (a key logged twice in one block keeps its greatest value).

    Columns: ``source_file``, ``line``, ``host``, ``kind``, ``client_id``, ``group_id``,
    ``application_id``, ``settings`` (in key order). Blocks are grouped in Spark, not in Python:
    a large incident holds many of them, read back a partition at a time."""
    block = [s.SOURCE_FILE, s.LINE, s.HOST, "config_kind", s.CLIENT_ID, s.GROUP_ID, "application_id"]
    values = settings.where(F.col("key").isin(*keys)).groupBy(*block, "key").agg(F.max("value").alias("value"))
    blocks = values.groupBy(*block).agg(F.map_from_entries(F.array_sort(F.collect_list(F.struct("key", "value")))).alias("settings"))
    return blocks.select(
        s.SOURCE_FILE, s.LINE, s.HOST, F.col("config_kind").alias("kind"), s.CLIENT_ID, s.GROUP_ID, "application_id", "settings"
    ).orderBy(s.SOURCE_FILE, s.LINE)
