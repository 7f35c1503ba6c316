"""Keeping tables computed once: checkpoints on the executors, local relations in the driver, and
their release when an analysis ends.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Callable, Iterator, Mapping, Sequence

from . import handles
from .settings import KEPT_IN, runs_locally


@contextmanager
def releasing_checkpoints(spark, keep: bool = False) -> Iterator[None]:
    """Release the RDDs persisted inside the block (the ``materialise`` checkpoints of one
    analysis) when it ends, or, with ``keep`` (a result that still reads them), when the next such
    block on the session starts. Otherwise Spark frees a checkpoint only once a JVM garbage
    collection finds it unreferenced (``ContextCleaner``), and its blocks hold storage memory until
    then. Other RDDs of the session are left alone. Not on Spark Connect, whose server owns them."""
    context = getattr(spark, "sparkContext", None) if not handles.is_connect(spark) else None
    if context is None:
        yield
        return
    handles.unpersist_rdds(context, _KEPT.pop(id(context), set()))
    before = handles.persisted_rdds(context)
    try:
        yield
    finally:
        made = handles.persisted_rdds(context) - before
        if keep:
            _KEPT.setdefault(id(context), set()).update(made)
        else:
            handles.unpersist_rdds(context, made)


_KEPT: dict[int, set[int]] = {}
"""Per SparkContext, the ids of RDDs an analysis kept for its result (``releasing_checkpoints``)."""


@contextmanager
def scratch_checkpoints(spark) -> Iterator[Callable]:
    """Release, when the block ends, the checkpoints that ``materialise`` made in this thread
    inside it, except those passed to the function the block is given (which returns its
    argument): ingest's and parse's tables on the way to the events would otherwise hold storage
    memory beside the model and the detectors. Other threads' checkpoints (``concurrently``) are
    theirs. Not on Spark Connect."""
    made: list[int] = []
    _SCRATCH.stack.append(made)
    kept: set[int] = set()

    def keep(frame):
        kept.add(handles.checkpoint_id(frame))
        return frame

    try:
        yield keep
    finally:
        _SCRATCH.stack.pop()
        context = None if handles.is_connect(spark) else spark.sparkContext
        if context is not None:
            handles.unpersist_rdds(context, set(made) - kept)


class _ScratchBlocks(threading.local):
    """Per thread, the checkpoints noted by each open ``scratch_checkpoints`` block, innermost last."""

    def __init__(self):
        self.stack: list[list[int]] = []


_SCRATCH = _ScratchBlocks()


def _in_scratch(frame):
    """``frame``, its checkpoint noted in this thread's innermost ``scratch_checkpoints``."""
    if _SCRATCH.stack:
        found = handles.checkpoint_id(frame)
        if found is not None:
            _SCRATCH.stack[-1].append(found)
    return frame


HEAP_PER_CONCURRENT_ROW = 2048
"""Bytes of a local driver's heap per row that one-partition tasks over a table share, at the
least, for them to run at once (``room_to_run_at_once``): below it, the model's sorts may find
no execution memory beside each other's (UNABLE_TO_ACQUIRE_MEMORY) and are built one after
another instead. Measurements: docs/performance.md, "Memory"."""


def room_to_run_at_once(spark, rows: int) -> bool:
    """Whether one-partition work over a table of ``rows`` rows may run at once (the stages of
    ``materialised_together``, the lists ``TableReads`` writes together): always, but in a local
    driver whose heap holds less than ``HEAP_PER_CONCURRENT_ROW`` bytes a row.
    (A cluster's executors, and a Spark Connect server, size their own memory.)"""
    if not runs_locally(spark):
        return True
    return handles.driver_heap(spark) >= rows * HEAP_PER_CONCURRENT_ROW


def kept_level():
    """The storage level of a ``materialise`` checkpoint spread over partitions: serialized in
    memory, spilled to disk when memory runs short (``MEMORY_AND_DISK``). ``localCheckpoint``'s own
    default keeps rows deserialized, sized by sampling estimates that let a large ingest run a
    small driver out of heap; serialized bytes are counted exactly. A table kept in one partition
    (``ONE_PARTITION``: the model's, read by many windows and joins) stays deserialized."""
    from pyspark import StorageLevel

    return StorageLevel.MEMORY_AND_DISK


def materialise(frame):
    """``frame`` computed once and kept, so that later plans start from it instead of deriving it
    again: on the executors (``localCheckpoint``; serialized where spread, ``kept_level``), or, in
    a small incident (``IN_THE_DRIVER``), in the driver as a local relation.

    In a session with one shuffle partition (``ONE_PARTITION``) it is kept as one partition,
    which later queries need no exchange to use, and counted by the same job that computes it.
    A table with no rows then becomes an empty local relation, from which Spark's optimiser
    (``PropagateEmptyRelation``) knows that every join, window and grouping over it is empty
    too: those plans are dropped instead of run. An incident without Kafka Streams has no
    restores, one without consumer lines no rebalances, ownership or commits."""
    spark = frame.sparkSession
    if spark.conf.get("spark.sql.shuffle.partitions") != "1":
        return _in_scratch(frame.localCheckpoint(storageLevel=kept_level()))
    if kept_in_the_driver(spark):
        return _driver_kept(frame, handles.jvm_rows(frame))
    kept = _in_scratch(frame.coalesce(1).localCheckpoint(eager=False))
    return kept if kept.count() else empty_like(frame)


def materialised_together(frames: Sequence) -> list:
    """``materialise`` of each of ``frames`` by one Spark job instead of a job each: the frames
    become struct columns of one union (as in ``rows_together``), kept once, and each is read
    back from it by its tag. The union's children are independent stages, which Spark runs at
    once. A frame known to be empty is returned as it is; on Spark Connect each is materialised
    apart.

    Kept in the driver (``IN_THE_DRIVER``), each frame is again a local relation of its own
    schema, split from the union's rows with no job. Kept on the executors, each is read from
    the union's checkpoint (its columns nullable), in one partition under ``ONE_PARTITION``, and
    one with no rows is an empty local relation as ``materialise`` makes it."""
    from pyspark.sql import functions as F

    spark = frames[0].sparkSession if frames else None
    todo = [i for i, frame in enumerate(frames) if not handles.known_empty(frame)]
    if spark is None or handles.is_connect(spark) or len(todo) < 2:
        return [frame if handles.known_empty(frame) else materialise(frame) for frame in frames]
    union = _tagged_union({i: frames[i] for i in todo})
    kept = list(frames)
    if spark.conf.get("spark.sql.shuffle.partitions") != "1":
        together = _in_scratch(union.localCheckpoint(storageLevel=kept_level()))
        for i in todo:
            kept[i] = together.where(F.col("_table") == i).select(f"_table_{i}.*")
        return kept
    if kept_in_the_driver(spark):
        together = handles.local_relation(spark, union.schema, handles.jvm_rows(union))
        for i in todo:
            rows = handles.jvm_rows(together.where(F.col("_table") == i).select(f"_table_{i}.*"))  # a local relation's: no job
            kept[i] = _driver_kept(frames[i], rows)
        return kept
    together = _in_scratch(union.localCheckpoint(eager=False))
    counts = dict(together.groupBy("_table").count().collect())
    for i in todo:
        read = together.where(F.col("_table") == i).select(f"_table_{i}.*").coalesce(1)
        kept[i] = read if counts.get(i) else empty_like(frames[i])
    return kept


def kept_with_rows(frame) -> tuple[object, list]:
    """A small table (a row per host, say) computed by one job: kept as ``materialise`` keeps
    it, in the driver as a local relation in one partition, and its rows, which the driver reads
    from that relation with no job (``materialise`` and then ``collect`` would be two)."""
    spark = frame.sparkSession
    if handles.known_empty(frame):
        return frame, []
    if handles.is_connect(spark):
        kept = materialise(frame)
        return kept, kept.collect()
    rows = handles.jvm_rows(frame)
    return _driver_kept(frame, rows), handles.local_relation(spark, frame.schema, rows).collect()  # a local relation's: no job


def _driver_kept(frame, rows):
    """``frame`` kept in the driver as its JVM ``rows`` (a ``java.util.List``): a local relation
    read in one partition, or, with no rows, an empty one, which Spark's optimiser knows is empty."""
    return handles.local_relation(frame.sparkSession, frame.schema, rows).coalesce(1) if rows.size() else empty_like(frame)


def materialise_observed(frame, aggregates: Sequence) -> tuple[object, dict | None]:
    """``frame`` materialised and, where it is kept in the driver (``IN_THE_DRIVER``: a small
    incident), the ``aggregates`` of its rows (aliased aggregate Columns), computed by the job
    that collects it (Spark's ``Observation``). Elsewhere the values are None, for the caller to
    compute: a lazily planned checkpoint is counted by a later job that an observation does not
    see, and over a spread checkpoint many observed counts cost more than a job of their own."""
    from pyspark.sql import Observation

    spark = frame.sparkSession
    if handles.is_connect(spark) or not kept_in_the_driver(spark):
        return materialise(frame), None
    observation = Observation()
    kept = materialise(frame.observe(observation, *aggregates))
    return kept, observation.get


def kept_in_the_driver(spark) -> bool:
    """Whether tables are kept in the driver (``IN_THE_DRIVER``, on a classic session)."""
    return spark.conf.get(KEPT_IN, None) == "driver" and not handles.is_connect(spark)


def empty_like(frame):
    """An empty local relation with ``frame``'s schema, nullability included."""
    return empty_of(frame.sparkSession, frame.schema)


def empty_of(spark, schema):
    """An empty local relation of ``schema`` (a ``StructType``). (PySpark's ``createDataFrame``
    of an empty list makes an RDD of a classic session's, which the optimiser cannot see is
    empty.)"""
    if handles.is_connect(spark):
        return spark.createDataFrame([], schema)
    return handles.local_relation(spark, schema, handles.empty_jvm_rows(spark))


def rows_together(frames: Sequence) -> list[list]:
    """The rows of ``frames`` (small), each frame's in its order where it is one ordered
    partition, read by one query (one Spark job where none needs an exchange, as in a small
    incident): each frame becomes a struct column of one union, whose partitions come back frame
    after frame. Small results collected apart cost a job each."""
    rows: list[list] = [[] for _ in frames]
    for row in _tagged_union(dict(enumerate(frames))).collect():
        rows[row["_table"]].append(row[f"_table_{row['_table']}"])
    return rows


def _tagged_union(frames: Mapping[int, object]):
    """One union of ``frames`` (tag: frame), each frame's row as a struct column
    ``_table_<tag>`` beside its ``_table`` tag (null in the other frames' rows): frames of any
    schemas, in one query."""
    from pyspark.sql import functions as F

    parts = [frame.select(F.lit(i).alias("_table"), F.struct(F.col("*")).alias(f"_table_{i}")) for i, frame in frames.items()]
    union = parts[0]
    for part in parts[1:]:
        union = union.unionByName(part, allowMissingColumns=True)
    return union
