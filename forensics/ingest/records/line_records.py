"""Line-level Kafka records: a quick first look, each head parsed on its own line."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ... import layouts
from ... import schema as s
from ...layouts import anchor
from ..sampling import ALL, Recognisers
from .assembly import record_ts
from .kafka_filter import is_kafka
from .recognition import recognise


def kafka_lines(
    marked: DataFrame, host_of: Column, tz_of: Column, source_of: Column, table: dict = layouts.LAYOUTS, tried: Recognisers = ALL
) -> DataFrame:
    """Line-level Kafka records: each Kafka record head parsed on its own line, with file and
    line number, no stitching and no accounting (a quick first look; ``ingest`` does the rest).

    ``marked`` holds the lines that pass ``may_be_kafka_line``, so most lines never reach a regex.
    """
    value = F.col("value")
    heads = recognise(marked, table, tried).where(F.col("layout").isNotNull())
    split = layouts.split_fields(F.col("layout"), value, table)
    if anchor.NAME in table:
        heads = anchor.with_fields(heads, value, F.col("layout") == anchor.NAME, "anchor_parts", anchor.weak_marks()[1])
        split = F.coalesce(F.col("anchor_parts"), split)
    parts = F.col("parts")
    parsed = heads.withColumn("parts", split).select(
        source_of.alias(s.SOURCE_FILE),
        F.coalesce("w_host", host_of).alias(s.HOST),
        F.col("line").alias(s.LINE),
        F.col("layout").alias(s.LAYOUT),
        record_ts(F.col("layout"), F.nullif(parts[0], F.lit("")), F.col("w_ts"), tz_of, table).alias(s.TS),
        layouts._common.normalise_level(parts[1]).alias(s.LEVEL),
        F.nullif(parts[2], F.lit("")).alias(s.LOGGER),
        F.nullif(parts[3], F.lit("")).alias(s.THREAD),
        F.nullif(parts[4], F.lit("")).alias(s.CLIENT),
        parts[5].alias(s.MESSAGE),
    )
    return parsed.where(is_kafka(F.col(s.LAYOUT), F.col(s.LOGGER), F.col(s.MESSAGE)))
