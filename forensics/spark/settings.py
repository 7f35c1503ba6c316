"""Spark SQL settings: the session's, and the runtime settings of each execution mode
(small incident, few events, general), applied to a block with ``sql_settings``.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Mapping

from . import handles

# Each input file split is its own partition, so a row's index within its partition is its
# index within that split (see ingest.read). 128 MiB splits, as Spark's default.
SPLIT_BYTES = 128 * 1024 * 1024
SESSION_CONF: Mapping[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.files.maxPartitionBytes": str(SPLIT_BYTES),
    "spark.sql.files.openCostInBytes": str(SPLIT_BYTES),
    # A truncated .gz keeps the lines read before the damage; ingest reports the damage.
    "spark.sql.files.ignoreCorruptFiles": "true",
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.adaptive.enabled": "true",
    # HotSpot does not compile a method of over 8,000 bytes of bytecode (HugeMethodLimit), and a
    # stage whose generated row loop is larger runs interpreted, several times slower. With the
    # limit that Spark advises on HotSpot, such a stage falls back to per-operator code, whose
    # expressions come in small methods (the records projection of ingest is one such stage).
    "spark.sql.codegen.hugeMethodLimit": "8000",
}
INTERPRETED: Mapping[str, str] = {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
"""Runtime settings under which queries run interpreted, with no generated code. Spark compiles
each stage's generated Java before it runs it; an analysis runs many jobs of several stages
each, and on a small incident compiling them costs more than running them
(docs/performance.md, "Execution modes")."""
SORTED_AGGREGATION: Mapping[str, str] = {"spark.sql.execution.useObjectHashAggregateExec": "false"}
"""Runtime settings under which ``collect_list`` / ``collect_set`` aggregate by sorting instead
of in an object hash map, which falls back to a sort past 128 keys and then asks for memory
the task may no longer have (UNABLE_TO_ACQUIRE_MEMORY on large ingests); sorting spills."""
STATIC_SHUFFLES = {"spark.sql.adaptive.enabled": "false"}
"""With ``in_step_with_cores``: shuffles planned once, into as many partitions as the local
driver has cores, not re-planned stage by stage by adaptive execution."""


def in_step_with_cores(spark, text_bytes: int | None) -> Mapping[str, str]:
    """Runtime settings under which ingest and parse of ``text_bytes`` of input (None: unknown) run
    in a local driver whose heap is at least that large: ``STATIC_SHUFFLES`` into one partition
    per core (at least two, so that ``materialise`` still keeps tables spread and serialized),
    instead of adaptive execution's job per query stage. None where the session already runs in
    one partition (``ONE_PARTITION``), where the input outgrows the heap (adaptive execution then
    keeps the detectors' aggregates within memory), nor for a cluster or Spark Connect."""
    if not runs_locally(spark) or spark.conf.get("spark.sql.shuffle.partitions") == "1":
        return {}
    if text_bytes is None or text_bytes > handles.driver_heap(spark):
        return {}
    return {**STATIC_SHUFFLES, "spark.sql.shuffle.partitions": str(max(2, spark.sparkContext.defaultParallelism))}


KEPT_IN = "forensics.materialise.keptIn"
IN_THE_DRIVER: Mapping[str, str] = {KEPT_IN: "driver", "spark.sql.leafNodeDefaultParallelism": "1"}
"""Runtime settings under which ``materialise``, in one partition (``ONE_PARTITION``), keeps a
table in the driver: its rows collected by one job into the driver JVM and planned from there as
a local relation, read in one partition. For a small incident only: every later plan carries the
rows. Spark's optimiser then computes projections and filters over them itself
(``ConvertToLocalRelation``) and knows their sizes, where a checkpoint is planned twice (to
keep, to count) and read back through the block manager."""
SMALL_RESULT_PARTITIONS: Mapping[str, str] = {
    "spark.sql.adaptive.coalescePartitions.initialPartitionNum": "256",
    "spark.sql.adaptive.advisoryPartitionSizeInBytes": "4m",
}
"""Runtime settings under which a sorted table read one partition at a time (``local_rows``)
comes in partitions of a few MB, however large it is: merged by adaptive execution up to
64 MB, a large table's partition came back as a task result too large for the block manager
("TaskResultLost"). No effect where adaptive execution is off (``ONE_PARTITION``) or where a
table read needs no exchange (``in_pieces``)."""
ONE_PARTITION: Mapping[str, str] = {
    "spark.sql.shuffle.partitions": "1",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    "spark.sql.defaultSizeInBytes": "1",
    "spark.sql.maxSinglePartitionBytes": str(2**63 - 1),
    "spark.sql.optimizer.disableHints": "true",
}
"""Runtime settings under which a small incident's queries run in one partition, with almost no
exchanges: ``materialise`` keeps every table as one partition, and an aggregate, a window or a
sort-merge join over single-partition inputs needs no shuffle. With no broadcast (hints
disabled) a join stays such a join instead of a job of its own; with leaves counted small
(``defaultSizeInBytes``), joins of joins stay under ``maxSinglePartitionBytes`` (SPARK-41986).
Adaptive execution then has nothing to re-plan (docs/performance.md, "Execution modes")."""
CLASSIC_CONF: Mapping[str, str] = {
    # Spark's production default, pinned: with SPARK_TESTING set, Spark 4 removes shuffle files
    # at the end of every query, and a later query reusing a DataFrame waits on a dropped
    # shuffle (SPARK-53898).
    "spark.sql.classic.shuffleDependency.fileCleanup.enabled": "false",
    # PySpark's DataFrame debugging records the Python call site of every Column function in
    # the JVM, several py4j calls each.
    "spark.python.sql.dataFrameDebugging.enabled": "false",
    # Spark keeps the last 100 generated classes; a large analysis generates more than a
    # thousand, and a second analysis in the session would compile them all again.
    "spark.sql.codegen.cache.maxEntries": "4096",
    # A task result over 1 MiB goes through the block manager, which may drop it under memory
    # pressure ("TaskResultLost"); tables are read in pieces of a few MB to a few tens of MB
    # (SMALL_RESULT_PARTITIONS, in_pieces), each sent directly (the RPC's limit is 128 MiB).
    "spark.task.maxDirectResultSize": str(64 * 1024 * 1024),
    # A collect's rows are served on a socket that the JVM closes when Python has not connected
    # within this time (Spark's default 15 s); on a loaded machine a paused Python process
    # missed it and the collect failed with "Connection refused" (CANNOT_OPEN_SOCKET).
    "spark.python.authenticate.socketTimeout": "600s",
}
"""Settings of classic (non-Connect) sessions only: a Connect server owns its own."""


@contextmanager
def sql_settings(spark, settings: Mapping[str, str]) -> Iterator[None]:
    """Runtime SQL ``settings`` for the queries run inside the block; the previous values are
    restored afterwards. The settings are the session's: a query another thread runs on the
    same session meanwhile sees them too."""
    previous = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


CHILD_BY_CHILD: Mapping[str, str] = {"spark.sql.unionOutputPartitioning": "false"}
"""Runtime settings under which a union's partitions are its children's, one after another.
With Spark 4.1's default (SPARK-52921), children of the same partitioning (one partition each,
as an incident's tables of few events) are read side by side: their union is one partition."""


def runs_locally(spark) -> bool:
    """Whether ``spark`` is a classic session on a local master: its executors run in the
    driver's JVM (or beside it, ``local-cluster``), on this machine, so the driver's heap is
    theirs and the files their tasks write are where this process reads them. Not a cluster's
    executors, nor a Spark Connect server, which size their own memory and keep their own disks."""
    return not handles.is_connect(spark) and spark.conf.get("spark.master", "").startswith("local")
