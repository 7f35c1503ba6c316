"""``kafka-console-consumer.sh --topic __consumer_offsets --formatter ...OffsetsMessageFormatter``.

Versions (reference CLI15-CLI18):

* 0.10.2-2.0 (Scala): ``[g,t,p]::[OffsetMetadata[1500,NO_METADATA],CommitTime <ms>,ExpirationTime <ms>]``
  (``NO_METADATA`` is the empty metadata: stored as ``""``);
* 2.1-3.9 (Scala): ``[g,t,p]::OffsetAndMetadata(offset=1500, leaderEpoch=Optional[4]|Optional.empty,
  metadata=, commitTimestamp=<ms>, expireTimestamp=Some(<ms>)|None)``;
* 3.9 (Java, KAFKA-16666): ``{"key":{"version":1,"data":{"group":..,"topic":..,"partition":0}},
  "value":{"version":3,"data":{"offset":..,"leaderEpoch":..,"metadata":..,"commitTimestamp":..}}}``;
* 4.0+: the same JSON with ``"type"`` instead of the key's ``"version"`` (and ``topicId`` in later 4.x).

Tombstones (``[g,t,p]::NULL``, ``"value":null``) are rows with a null ``current_offset``: the
commit was deleted or expired. The Java formatters write no newline after a record, so JSON
records that run together on one line are split at ``}{"key"``: such a line gives several rows.
Skipped: group-metadata records (``g::GroupMetadata(...)``, ``g::NULL``, JSON keys of type 2 and
up) and the console consumer's ``Processed a total of N messages``.
"""

from __future__ import annotations

import re

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from . import _common as c

KIND = "consumer_offsets_topic"
ROW_KINDS = (c.CONSUMER_OFFSETS_COMMIT,)

SCALA_KEY = r"^\[(.*),([A-Za-z0-9._-]+),(\d+)\]::(.*?)\s*$"
"""Groups: 1 group (may hold commas), 2 topic, 3 partition, 4 the value rendering."""
SCALA_LINE = r"^\[.*,[A-Za-z0-9._-]+,\d+\]::(?:\[OffsetMetadata\[|OffsetAndMetadata\(|NULL\s*$)"
"""A Scala formatter offsets line (for ``sniff``)."""
OLD_VALUE = r"^\[OffsetMetadata\[(-?\d+),(.*)\],CommitTime (-?\d+),ExpirationTime (-?\d+)\]$"
"""<= 2.0. Groups: 1 offset, 2 metadata, 3 commit ms, 4 expiration ms."""
NEW_VALUE = (
    r"^OffsetAndMetadata\(offset=(-?\d+), leaderEpoch=(?:Optional\[(-?\d+)\]|Optional\.empty), "
    r"metadata=(.*), commitTimestamp=(-?\d+), expireTimestamp=(?:Some\((-?\d+)\)|None)\)$"
)
"""2.1-3.9. Groups: 1 offset, 2 leader epoch, 3 metadata, 4 commit ms, 5 expire ms."""
JSON = r"^\s*\{\"key\":"
MARKER = re.compile(rb'\]::|\{"key":')
"""In every row's line: the end of a Scala key (``SCALA_KEY``) or the start of a JSON record
(``JSON``; ``kinds_present``)."""
JSON_NOT_OFFSETS = r"^\s*\{\"key\":\{\"(?:version|type)\":\"?(?:[2-9]|\d\d+)\"?[,}]"
OTHER = r"^(?:[^\[].*::(?:GroupMetadata\(.*|NULL)|Processed a total of \d+ messages)\s*$"

_I, _L, _S = IntegerType(), LongType(), StringType()
JSON_SCHEMA = StructType(
    [
        StructField(
            "key",
            StructType(
                [
                    StructField("version", _I),
                    StructField("type", _I),
                    StructField("data", StructType([StructField("group", _S), StructField("topic", _S), StructField("partition", _I)])),
                ]
            ),
        ),
        StructField(
            "value",
            StructType(
                [
                    StructField("version", _I),
                    StructField(
                        "data",
                        StructType(
                            [
                                StructField("offset", _L),
                                StructField("leaderEpoch", _I),
                                StructField("metadata", _S),
                                StructField("commitTimestamp", _L),
                                StructField("expireTimestamp", _L),
                            ]
                        ),
                    ),
                ]
            ),
        ),
    ]
)


def skip(value: Column) -> Column:
    """True for group-metadata records and the console consumer's closing count."""
    return value.rlike(OTHER) | value.rlike(JSON_NOT_OFFSETS)


def sniff(lines: list[str]) -> bool:
    """True when at least 30 % of the non-blank sample lines are formatter output."""
    return c.share_match([SCALA_LINE, JSON, OTHER], lines)


def _scala(lines: DataFrame) -> DataFrame:
    """Rows of the two Scala renderings and their ``::NULL`` tombstones."""
    value = F.col(c.VALUE)
    rest = F.regexp_extract(value, SCALA_KEY, 4)
    old, new = rest.rlike(OLD_VALUE), rest.rlike(NEW_VALUE)
    rows = lines.where(value.rlike(SCALA_KEY)).where(old | new | (rest == "NULL"))
    pick = lambda old_group, new_group: F.when(old, F.regexp_extract(rest, OLD_VALUE, old_group)).when(  # noqa: E731
        new, F.regexp_extract(rest, NEW_VALUE, new_group)
    )
    old_metadata = F.regexp_extract(rest, OLD_VALUE, 2)
    metadata = F.when(old, F.when(old_metadata != "NO_METADATA", old_metadata).otherwise(F.lit(""))).when(
        new, F.regexp_extract(rest, NEW_VALUE, 3)
    )
    return c.to_offsets(
        rows,
        c.CONSUMER_OFFSETS_COMMIT,
        group_id=F.regexp_extract(value, SCALA_KEY, 1),
        topic=F.regexp_extract(value, SCALA_KEY, 2),
        partition=c.as_int(F.regexp_extract(value, SCALA_KEY, 3)),
        current_offset=c.as_long(pick(1, 1)),
        leader_epoch=F.when(new, c.as_int(F.regexp_extract(rest, NEW_VALUE, 2))),
        metadata=metadata,
        commit_ts=c.millis_ts(c.as_long(pick(3, 4))),
        expire_ts=c.millis_ts(c.as_long(pick(4, 5))),
    )


def _json(lines: DataFrame) -> DataFrame:
    """Rows of the 3.9+ JSON renderings; records run together on one line are split first."""
    records = F.split(F.trim(F.col(c.VALUE)), r"(?<=\})(?=\{\"key\":)")
    parsed = (
        lines.where(F.col(c.VALUE).rlike(JSON))
        .withColumn("_record", F.explode(records))
        .withColumn("_json", F.from_json(F.col("_record"), JSON_SCHEMA, {"mode": "PERMISSIVE"}))
    )
    key, data = F.col("_json.key"), F.col("_json.value.data")
    key_type = F.coalesce(key["type"], key["version"])
    rows = parsed.where(key_type.isin(0, 1) & key["data"]["group"].isNotNull() & key["data"]["topic"].isNotNull())
    return c.to_offsets(
        rows,
        c.CONSUMER_OFFSETS_COMMIT,
        group_id=key["data"]["group"],
        topic=key["data"]["topic"],
        partition=key["data"]["partition"],
        current_offset=data["offset"],
        leader_epoch=data["leaderEpoch"],
        metadata=data["metadata"],
        commit_ts=c.millis_ts(data["commitTimestamp"]),
        expire_ts=c.millis_ts(data["expireTimestamp"]),
    )


def parse(lines: DataFrame) -> DataFrame:
    """``consumer_offsets_commit`` rows from every OffsetsMessageFormatter rendering (0.10.2-4.x).

    Parameters
    ----------
    lines : DataFrame
        Prepared lines (``source_file, line, value, snapshot_ts``).
    """
    return _scala(lines).unionByName(_json(lines))
