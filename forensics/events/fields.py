"""Column helpers turning captured text into typed event fields."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

TOPIC_PARTITION = r"^(.+)-(\d+)$"


def partition_list(text: Column) -> Column:
    """``[a-0, b-1]``, ``a-0, b-1``, ``[]`` or empty -> ``["a-0", "b-1"]`` (null stays null)."""
    inner = F.regexp_replace(F.trim(text), r"^\[|\]$", "")
    items = F.transform(F.split(inner, ","), lambda item: F.trim(item))
    return F.when(text.isNotNull(), F.filter(items, lambda item: item != ""))


def topic_of(topic_partition: Column) -> Column:
    """``orders-3`` -> ``orders`` (topic names may themselves contain ``-``)."""
    return F.nullif(F.regexp_extract(topic_partition, TOPIC_PARTITION, 1), F.lit(""))


def partition_of(topic_partition: Column) -> Column:
    """``orders-3`` -> 3."""
    return F.nullif(F.regexp_extract(topic_partition, TOPIC_PARTITION, 2), F.lit("")).try_cast("int")


def reset_strategy(text: Column) -> Column:
    """``LATEST`` (2.3-3.2), ``latest`` (3.3-3.9), ``AutoOffsetResetStrategy{type=latest}`` (4.0+)
    -> ``latest``; a user's ``seekToBeginning``/``seekToEnd`` reads as ``earliest``/``latest``."""
    found = F.regexp_extract(F.lower(text), r"(earliest|latest|none|by_duration|beginning|end)", 1)
    return F.nullif(F.replace(F.replace(found, F.lit("beginning"), F.lit("earliest")), F.lit("end"), F.lit("latest")), F.lit(""))


def null_group(group_id: Column) -> Column:
    """Kafka prints a missing group as ``groupId=`` (<=2.1) or ``groupId=null`` (2.2+)."""
    return F.when(~group_id.isin("", "null"), group_id)
