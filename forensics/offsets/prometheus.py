"""Prometheus text exposition of Kafka lag exporters: ``curl <exporter>/metrics``, one scrape or many.

Metrics read (all other samples, ``# HELP`` / ``# TYPE`` and ``# EOF`` lines are skipped):

* danielqsj/kafka_exporter (0.1-1.9, Go client: labels sorted, ``1.2345e+06`` above a million):
  ``kafka_consumergroup_current_offset`` and ``kafka_consumergroup_lag`` with labels
  ``consumergroup, topic, partition`` (``-1``: no committed offset), and
  ``kafka_topic_partition_current_offset{topic, partition}`` (the log end);
* kafka-lag-exporter (lightbend, then seglo; 0.3-0.8, Java client: ``label="v",}``, ``1.2345678E7``,
  ``NaN``): ``kafka_consumergroup_group_offset`` and ``kafka_consumergroup_group_lag`` with labels
  ``cluster_name, group, topic, partition, member_host, consumer_id, client_id``, and
  ``kafka_partition_latest_offset{cluster_name, topic, partition}``.

A group's offset sample gives a ``describe_offsets`` row (the same fact ``kafka-consumer-groups.sh
--describe`` prints) at its line, with the lag of the same scrape (a lag sample with no offset
sample gives its own row), ``log_end_offset`` = offset + lag, and ``host`` / ``consumer_id`` /
``client_id`` from the member labels; a topic's log-end sample gives a ``log_offsets`` row.
``snapshot_ts`` is the sample's own timestamp (federation output), else the stamp above it
(``date`` before each ``curl``), else null. Scrapes concatenated in one file form a time series:
the n-th sample of a series (metric, cluster, group, topic, partition) in a file belongs to the
n-th scrape. ``NaN``, ``±Inf``, negative and fractional values are null.
"""

from __future__ import annotations

import re

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from . import _common as c

KIND = "prometheus"
ROW_KINDS = (c.DESCRIBE_OFFSETS, c.LOG_OFFSETS)

SAMPLE = r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?[ \t]+(\S+)(?:[ \t]+(-?\d{1,19}))?[ \t]*$"
"""Groups: 1 metric name, 2 labels (``name="value",...``), 3 value, 4 timestamp (epoch ms)."""
COMMENT = r"^#[ \t]*(?:HELP|TYPE)[ \t]+[a-zA-Z_:][a-zA-Z0-9_:]*(?:[ \t].*)?$|^#[ \t]*EOF[ \t]*$"
GROUP_OFFSET = ("kafka_consumergroup_current_offset", "kafka_consumergroup_group_offset")
GROUP_LAG = ("kafka_consumergroup_lag", "kafka_consumergroup_group_lag")
LOG_END = ("kafka_topic_partition_current_offset", "kafka_partition_latest_offset")
MARKER = re.compile("|".join(re.escape(name) for name in (*GROUP_OFFSET, *GROUP_LAG, *LOG_END)).encode())
"""In every sample read: its metric's name (``kinds_present``)."""
KAFKA_METRIC = r"^kafka_(?:consumergroup|topic|partition)\w*[{ \t]"
MAX_EXACT = 2**53
"""Above this a sample's float value no longer holds every integer offset."""


def _label(labels: Column, name: str) -> Column:
    """The unescaped value of label ``name`` (``\\"``, ``\\\\``, ``\\n`` escapes), else null."""
    raw = F.regexp_extract(labels, r"(?:^|,)[ \t]*" + name + r'[ \t]*=[ \t]*"((?:[^"\\]|\\.)*)"', 1)
    found = labels.rlike(r"(?:^|,)[ \t]*" + name + r"[ \t]*=")
    unescaped = F.regexp_replace(F.regexp_replace(F.regexp_replace(raw, r"\\n", "\n"), r'\\"', '"'), r"\\\\", "\\\\")
    return F.when(found, unescaped)


def _group(labels: Column) -> Column:
    """The consumer group: kafka_exporter's ``consumergroup`` or kafka-lag-exporter's ``group``."""
    return F.coalesce(_label(labels, "consumergroup"), _label(labels, "group"))


def _offset_value(text: Column) -> Column:
    """A non-negative whole sample value as a long, null for ``-1`` (kafka_exporter's "none"),
    ``NaN``, infinities, fractions and values past ``MAX_EXACT``."""
    number = F.trim(text).try_cast("double")
    whole = number.isNotNull() & ~F.isnan(number) & (number >= 0) & (number < MAX_EXACT) & (number == F.floor(number))
    return F.when(whole, number.cast("long"))


def _samples(lines: DataFrame) -> DataFrame:
    """Samples of the metrics read, with their series labels (``_name`` .. ``_client``), value
    and ``snapshot_ts`` (the sample's timestamp, else the stamp above it)."""
    value = F.col(c.VALUE)
    name = F.regexp_extract(value, SAMPLE, 1)
    labels = F.regexp_extract(value, SAMPLE, 2)
    stamp = F.regexp_extract(value, SAMPLE, 4)
    read = lines.where(value.rlike(SAMPLE) & name.isin(*GROUP_OFFSET, *GROUP_LAG, *LOG_END))
    samples = c.computed_once(
        read,
        _name=name,
        _group=_group(labels),
        _topic=_label(labels, "topic"),
        _partition=c.as_int(_label(labels, "partition")),
        _cluster=F.coalesce(_label(labels, "cluster_name"), F.lit("")),
        _host=c.dash_null(_label(labels, "member_host")),
        _consumer=c.dash_null(_label(labels, "consumer_id")),
        _client=c.dash_null(_label(labels, "client_id")),
        _value=_offset_value(F.regexp_extract(value, SAMPLE, 3)),
        _ts=F.when(stamp != "", c.millis_ts(c.as_long(stamp))),
    )
    whole = F.col("_topic").isNotNull() & F.col("_partition").isNotNull()
    wanted = whole & (F.col("_name").isin(*LOG_END) | F.col("_group").isNotNull())
    return samples.where(wanted).withColumn(c.SNAPSHOT_TS, F.coalesce(F.col("_ts"), F.col(c.SNAPSHOT_TS)))


SERIES = (c.SOURCE_FILE, "_cluster", "_group", "_topic", "_partition")


def _group_rows(samples: DataFrame) -> DataFrame:
    """``describe_offsets`` rows: a group's offset and lag samples of one scrape (the n-th of
    their series in the file, at one time) in one row, at the offset sample's line."""
    is_offset = F.col("_name").isin(*GROUP_OFFSET)
    upto = Window.partitionBy(*SERIES).orderBy(c.LINE).rowsBetween(Window.unboundedPreceding, 0)
    scrape = F.when(is_offset, F.count(F.when(is_offset, 1)).over(upto)).otherwise(F.count(F.when(~is_offset, 1)).over(upto))
    sample = F.struct(F.col(c.LINE).alias("line"), F.col("_value").alias("value"), "_host", "_consumer", "_client")
    rows = samples.where(F.col("_name").isin(*GROUP_OFFSET, *GROUP_LAG)).withColumn("_scrape", scrape)
    paired = rows.groupBy(*SERIES, "_scrape", c.SNAPSHOT_TS).agg(
        F.min_by(sample, F.when(is_offset, F.col(c.LINE))).alias("_offset"),  # the first of the scrape's samples
        F.min_by(sample, F.when(~is_offset, F.col(c.LINE))).alias("_lag"),
    )
    member = lambda k: F.coalesce(F.col(f"_offset.{k}"), F.col(f"_lag.{k}"))  # noqa: E731
    current, lag = F.col("_offset.value"), F.col("_lag.value")
    return c.to_offsets(
        paired.withColumn(c.LINE, member("line")),
        c.DESCRIBE_OFFSETS,
        group_id=F.col("_group"),
        topic=F.col("_topic"),
        partition=F.col("_partition"),
        current_offset=current,
        log_end_offset=current + lag,
        lag=lag,
        host=member("_host"),
        consumer_id=member("_consumer"),
        client_id=member("_client"),
    )


def skip(value: Column) -> Column:
    """``# HELP``, ``# TYPE`` and ``# EOF`` lines, samples of metrics that hold no offsets row, and
    lag samples of a whole series (merged into their offset sample's row, else a row themselves)."""
    name = F.regexp_extract(value, SAMPLE, 1)
    labels = F.regexp_extract(value, SAMPLE, 2)
    whole = _group(labels).isNotNull() & _label(labels, "topic").isNotNull() & c.as_int(_label(labels, "partition")).isNotNull()
    lag = name.isin(*GROUP_LAG) & whole
    return value.rlike(COMMENT) | (value.rlike(SAMPLE) & (~name.isin(*GROUP_OFFSET, *GROUP_LAG, *LOG_END) | lag))


def sniff(lines: list[str]) -> bool:
    """True when at least 30 % of the sample is exposition lines, with a Kafka exporter metric or a
    ``# TYPE`` line among them."""
    kafka = re.compile(KAFKA_METRIC + "|" + r"^#[ \t]*TYPE[ \t]")
    return c.share_match([SAMPLE, COMMENT], lines) and any(kafka.search(line) for line in lines)


def parse(lines: DataFrame) -> DataFrame:
    """Offsets rows of Kafka lag exporters' samples (see the module docstring).

    Parameters
    ----------
    lines : DataFrame
        Prepared lines (``source_file, line, value, snapshot_ts``).
    """
    samples = _samples(lines)
    log_ends = c.to_offsets(
        samples.where(F.col("_name").isin(*LOG_END)),
        c.LOG_OFFSETS,
        topic=F.col("_topic"),
        partition=F.col("_partition"),
        log_end_offset=F.col("_value"),
    )
    return _group_rows(samples).unionByName(log_ends)
