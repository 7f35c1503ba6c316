"""What the detectors of committed offsets share: the partition key, a member's commits in
order, and the values of a client setting per group."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .. import schema as s
from ..model import Model
from ..model.members import MEMBER

PARTITION_KEY = (s.GROUP_ID, s.TOPIC, s.PARTITION)


def partition_name() -> Column:
    return F.concat_ws("-", F.col(s.TOPIC), F.col(s.PARTITION).cast("string"))


def member_history(commits: DataFrame) -> Window:
    return Window.partitionBy(*PARTITION_KEY, MEMBER).orderBy("sequence")


def settings_by_group(model: Model, key: str) -> DataFrame:
    """Per group, the values of one setting in its clients' config blocks."""
    group = F.coalesce(F.col(s.GROUP_ID), F.col("application_id"))
    return model.settings.where(F.col("key") == key).groupBy(group.alias("_group")).agg(F.collect_set("value").alias("_values"))
