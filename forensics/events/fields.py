"""Column helpers turning captured text into typed event fields."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

TOPIC_PARTITION = r"^(.+)-(\d+)$"


PYTHON_TOPIC_PARTITION = r"TopicPartition\(topic=u?'([^']*)', partition=(\d+)\)"
"""kafka-python's and aiokafka's ``TopicPartition`` named tuple as ``repr`` prints it (``topic=u'..'``
under Python 2)."""
LIBRDKAFKA_TOPIC_PARTITION = r"^(\S+) \[(\d+)\]$"
"""librdkafka's ``topic [N]``."""
FAUST_TABLE_ROW = r"[|│] *([^\s|│]+) *[|│] *\{([\d, -]*)\} *[|│]"
"""A row of the ``Topic Partition Set`` table a Faust worker logs for aiokafka's set of partitions
(faust/worker.py, 1.10+): the topic and its partitions in ranges, ``| orders | {0-2, 5} |``
(``│`` where the table was drawn for a terminal)."""
GO_TOPIC_PARTITIONS = r"([\w.-]+)[:/]?(?:map)?\[((?:[\d :,]|\{[^{}\]]*\})*)\]"
"""A topic and its partitions as franz-go prints them: ``orders[0 1 2]`` (its ``mtps``), or in a
Go map, ``orders:[0 1 2]`` of ``map[orders:[0 1 2] payments:[3]]``, or as kafka-go's leader
writes a member's plan, ``orders/[0 1 2]``; each partition may carry its
offset (``orders[2{8100 e0 ce0}]``, ``orders:map[2:{8100.0~0}]``, ``orders[2{8100=>8200}, 3{..}]``:
``GO_POSITION``)."""
GO_PARTITIONS = rf"^(?:map\[\]|(?:map\[)?{GO_TOPIC_PARTITIONS})"
RUBY_TOPIC_PARTITIONS = r"^`([^`]+)`: ([\d, ]*)$"
"""A topic and its partitions as ruby-kafka logs an assignment: the topic in backquotes, a colon,
the partitions separated by commas (``Partitions assigned for `orders`: 0, 5, 3``)."""
GO_POSITION = r"(\d+):?\{(?:-?\d+=>)?(-?\d+)"
"""A partition and its offset: the one franz-go's ``Offset`` prints first, ``2{8100 e0 ce0}``
(v1.5+), ``2{8100.0 0}`` (v1.2.4-v1.4), ``2:{8100.0~0}`` (a Go map, v1.2.3), ``{-2+5 e-1 ce-1}``
relative to the start; or the one a commit moved to, ``2{8100=>8200}``."""
_PYTHON_COLLECTION = r"^(?:frozenset\(|set\()?[\[{]?|[\]}]?\)?$"
"""The brackets around a list: Java's ``[..]``, Python's ``{..}``, ``set()``, ``frozenset({..})``."""


def partition_list(text: Column) -> Column:
    """``[a-0, b-1]``, ``a-0, b-1``, ``[]`` or empty -> ``["a-0", "b-1"]`` (null stays null).

    Also the other clients' notations: kafka-python / aiokafka sets of ``TopicPartition(topic='a',
    partition=0)`` (``set()`` when empty), librdkafka's ``a [0]``, KafkaJS's assignment map
    ``{"a":[0,1]}``, a Faust worker's table of ranges (``FAUST_TABLE_ROW``) and franz-go's
    ``a[0 1], b[2]`` or ``map[a:[0 1] b:[2]]`` (``GO_PARTITIONS``), ruby-kafka's backquoted topic and partitions (``RUBY_TOPIC_PARTITIONS``)."""
    tuples = F.regexp_replace(F.trim(text), PYTHON_TOPIC_PARTITION, "$1-$2")
    inner = F.regexp_replace(F.regexp_replace(tuples, LIBRDKAFKA_TOPIC_PARTITION, "$1-$2"), _PYTHON_COLLECTION, "")
    items = F.transform(F.split(inner, ","), lambda item: F.trim(item))
    listed = F.filter(items, lambda item: item != "")
    return F.when(
        text.isNotNull(),
        F.when(F.trim(text).startswith('{"'), assignment_map(text))
        .when(text.contains("Topic Partition Set"), partition_table(text))
        .when(F.trim(text).rlike(GO_PARTITIONS), go_partitions(text))
        .when(F.trim(text).rlike(RUBY_TOPIC_PARTITIONS), go_partitions(F.regexp_replace(F.trim(text), RUBY_TOPIC_PARTITIONS, "$1[$2]")))
        .otherwise(listed),
    )


def go_partitions(text: Column) -> Column:
    """franz-go's ``a[0 1], b[2]`` or ``map[a:[0 1] b:[2]]`` -> ``["a-0", "a-1", "b-2"]`` (offsets
    after the partitions left out)."""
    topics = F.regexp_extract_all(text, F.lit(GO_TOPIC_PARTITIONS), F.lit(1))
    numbers = F.regexp_extract_all(text, F.lit(GO_TOPIC_PARTITIONS), F.lit(2))
    return F.flatten(
        F.zip_with(
            topics,
            numbers,
            lambda topic, listed: F.transform(
                F.filter(F.split(F.regexp_replace(listed, r":?\{[^}]*\}", ""), "[ ,]+"), lambda number: number != ""),
                lambda number: F.concat(topic, F.lit("-"), number),
            ),
        )
    )


def go_positions(text: Column) -> Column:
    """franz-go's partitions with their offsets, ``a[1{4100 e3 ce3} 2{-2 e-1 ce-1}]`` (or its Go
    map, or slog's JSON of it, ``{"a":{"1":{"At":4100,..}}}``) -> ``[{topic: a, partition: 1,
    offset: 4100}, {a, 2, -2}]``."""
    topics = F.regexp_extract_all(text, F.lit(GO_TOPIC_PARTITIONS), F.lit(1))
    listed = F.regexp_extract_all(text, F.lit(GO_TOPIC_PARTITIONS), F.lit(2))
    written = F.flatten(
        F.zip_with(
            topics,
            listed,
            lambda topic, entries: F.zip_with(
                F.regexp_extract_all(entries, F.lit(GO_POSITION), F.lit(1)),
                F.regexp_extract_all(entries, F.lit(GO_POSITION), F.lit(2)),
                lambda partition, offset: _position(topic, partition, offset),
            ),
        )
    )
    as_json = F.flatten(
        F.transform(
            F.map_entries(F.from_json(text, "map<string,map<string,struct<At:long>>>")),
            lambda topic: F.transform(
                F.map_entries(topic["value"]), lambda entry: _position(topic["key"], entry["key"], entry["value"]["At"])
            ),
        )
    )
    return F.when(F.trim(text).startswith('{"'), as_json).otherwise(written)


def _position(topic: Column, partition: Column, offset: Column) -> Column:
    return F.struct(topic.alias("topic"), partition.cast("int").alias("partition"), offset.cast("long").alias("offset"))


def partition_table(text: Column) -> Column:
    """A Faust worker's ``Topic Partition Set`` table -> ``["orders-0", "orders-1", "orders-2",
    "orders-5"]``, each row's ranges (``{0-2, 5}``) counted out. Null where they would count
    more than ``MAX_TABLE_PARTITIONS``: the line is log text, and ``{0-999999999}`` is not a table
    Faust wrote."""
    topics = F.regexp_extract_all(text, F.lit(FAUST_TABLE_ROW), F.lit(1))
    ranges = F.regexp_extract_all(text, F.lit(FAUST_TABLE_ROW), F.lit(2))
    spans = F.flatten(
        F.zip_with(
            topics,
            ranges,
            lambda topic, listed: F.transform(
                F.filter(F.split(listed, r",\s*"), lambda span: span.rlike(_SPAN)),
                lambda span: F.struct(
                    topic.alias("topic"), _bound(span, 1).alias("low"), F.coalesce(_bound(span, 2), _bound(span, 1)).alias("high")
                ),
            ),
        )
    )
    count = F.aggregate(spans, F.lit(0).cast("long"), lambda total, span: total + F.abs(span["high"] - span["low"]) + 1)
    counted_out = F.flatten(
        F.transform(
            spans,
            lambda span: F.transform(
                F.sequence(F.least(span["low"], span["high"]), F.greatest(span["low"], span["high"])),
                lambda partition: F.concat(span["topic"], F.lit("-"), partition.cast("string")),
            ),
        )
    )
    return F.when(count <= MAX_TABLE_PARTITIONS, counted_out)


_SPAN = r"^(\d{1,9})(?:-(\d{1,9}))?$"
"""A partition or a range of them in a Faust table's cell: ``5``, ``0-11``."""
MAX_TABLE_PARTITIONS = 100_000


def _bound(span: Column, group: int) -> Column:
    return F.nullif(F.regexp_extract(span, _SPAN, group), F.lit("")).cast("int")


def assignment_map(text: Column) -> Column:
    """KafkaJS's ``memberAssignment`` ``{"a":[0,1],"b":[2]}`` -> ``["a-0", "a-1", "b-2"]``; also
    a map of partitions to offsets, ``{"a":{"1":{..}}}`` (slog's JSON of franz-go's ``go_positions``)."""
    listed = F.map_entries(F.from_json(text, "map<string,array<int>>"))
    keyed = F.map_entries(F.from_json(text, "map<string,map<string,string>>"))
    per_topic = F.coalesce(
        F.transform(listed, lambda e: F.transform(e["value"], lambda p: F.concat(e["key"], F.lit("-"), p.cast("string")))),
        F.transform(keyed, lambda e: F.transform(F.map_keys(e["value"]), lambda p: F.concat(e["key"], F.lit("-"), p))),
    )
    return F.flatten(per_topic)


def task_list(text: Column) -> Column:
    """The Streams task ids a task list names: ``[0_1, 1_1]``, ``0_1, 1_1`` or ``{0_1}`` ->
    ``["0_1", "1_1"]`` (subtopology ``_`` partition; KIP-1071 prints them the same way)."""
    return F.filter(F.split(text, r"[\[\]{},\s]+"), lambda task: task.rlike(r"^\d+_\d+$"))


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


_LINE_END = r"(?:\n\r|[\n\r\u0085\u2028\u2029])?"
"""A line terminator, reversed, that Java's ``$`` may stand before at the end of a text."""


def class_name(logger: Column) -> Column:
    """The last run of ``[\\w$]`` of a logger's name: ``o.a.k.c.c.i.ConsumerCoordinator`` ->
    ``ConsumerCoordinator`` (``""`` where it ends in another character); ``regexp_extract(logger,
    "([\\w$]+)$", 1)``, found from the end: that unanchored search tries each start in turn and
    rescans each dotted segment, on every record parse reads."""
    return F.reverse(F.regexp_extract(F.reverse(logger), f"^{_LINE_END}([\\w$]+)", 1))


def null_group(group_id: Column) -> Column:
    """Kafka prints a missing group as ``groupId=`` (<=2.1) or ``groupId=null`` (2.2+)."""
    return F.when(~group_id.isin("", "null"), group_id)
