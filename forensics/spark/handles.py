"""Every use of Spark's private handles (``_jdf``, ``_jsc``, ``_jvm``, ``_jsparkSession``), in
one place: what the toolkit asks of Spark's JVM side that PySpark's public API does not offer.
``tests/test_spark_handles.py`` checks each against the installed Spark.
"""

from __future__ import annotations

import re


def is_connect(spark) -> bool:
    """Whether ``spark`` is a Spark Connect session (which has no JVM handles here)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def persisted_rdds(context) -> set[int]:
    """The ids of the RDDs persisted in ``context`` (a ``SparkContext``)."""
    return set(context._jsc.getPersistentRDDs().keySet())


def unpersist_rdds(context, ids: set[int]) -> None:
    """Unpersist, without waiting, those of the RDDs ``ids`` that ``context`` still persists."""
    persisted = context._jsc.getPersistentRDDs()
    for rdd_id in ids:
        rdd = persisted.get(rdd_id)
        if rdd is not None:
            rdd.unpersist(False)


def checkpoint_id(frame) -> int | None:
    """The id of the RDD a ``materialise`` checkpoint reads (None: kept in the driver, or
    on Spark Connect)."""
    if is_connect(frame.sparkSession):
        return None
    plan = frame._jdf.queryExecution().analyzed()
    return plan.rdd().id() if plan.nodeName() == "LogicalRDD" else None


def jvm_view(spark):
    """The classic session's py4j view of the driver JVM (``jvm.<class>``)."""
    return spark.sparkContext._jvm


def driver_heap(spark) -> int:
    """The bytes of heap a local driver's JVM may use."""
    return spark._jvm.java.lang.Runtime.getRuntime().maxMemory()


_SPLIT_TEXT = re.compile(r"^path: (?P<uri>.*), range: (?P<start>\d+)-\d+, partition values: [^,]*$")


def scan_splits(frame) -> list[tuple[str, int]] | None:
    """The file URI and start byte of the split each partition of ``frame`` reads, in partition
    order, from Spark's own plan (no job runs); ``frame`` is a read of files (``spark.read.text``).
    The URIs are written as ``_metadata.file_path`` writes them, which costs a copy of every row
    instead. None on Spark Connect, or where a partition reads other than one split."""
    if is_connect(frame.sparkSession):
        return None
    leaves = frame._jdf.queryExecution().sparkPlan().collectLeaves()
    if leaves.size() != 1 or leaves.apply(0).getClass().getSimpleName() != "FileSourceScanExec":
        return None
    splits = []
    for partition in leaves.apply(0).inputRDD().partitions():
        files = partition.files()
        found = _SPLIT_TEXT.match(files[0].toString()) if len(files) == 1 else None  # "path: URI, range: a-b, ..."
        if found is None:
            return None
        splits.append((re.sub(r"^file:///", "file:/", found["uri"]), int(found["start"])))
    return splits


def known_empty(frame) -> bool:
    """Whether Spark knows that ``frame`` has no rows without running anything: it is an empty
    local relation (``empty_of``; what ``materialise`` keeps of a table with no rows in one
    partition). ``None``, no table, has none either. False where only a job could tell."""
    if frame is None:
        return True
    if is_connect(frame.sparkSession):
        return False
    plan = frame._jdf.queryExecution().analyzed()
    return plan.getClass().getSimpleName() == "LocalRelation" and plan.data().isEmpty()


def local_relation(spark, schema, rows):
    """A local relation of the JVM ``rows`` (a ``java.util.List`` of ``Row``) of ``schema``,
    built in the JVM: the rows never pass through Python."""
    from pyspark.sql.classic.dataframe import DataFrame

    jschema = spark._jsparkSession.parseDataType(schema.json())
    return DataFrame(spark._jsparkSession.createDataFrame(rows, jschema), spark)


def jvm_rows(frame):
    """The rows of ``frame`` collected into the driver's JVM (a ``java.util.List`` of ``Row``),
    never converted to Python: what ``local_relation`` builds a table from."""
    return frame._jdf.collectAsList()


def empty_jvm_rows(spark):
    """An empty ``java.util.List`` in ``spark``'s JVM: the rows of an empty local relation."""
    return spark._jvm.java.util.ArrayList()


def started_session():
    """The classic session this process started and has not stopped, or None. Spark's active
    session is per JVM thread: another thread of the process has none of its own."""
    from pyspark.sql import SparkSession

    started = SparkSession._instantiatedSession
    return started if started is not None and started._sc._jsc is not None else None


def active_context():
    """The SparkContext this process runs, or None."""
    from pyspark import SparkContext

    return SparkContext._active_spark_context


def driver_jvm_started() -> bool:
    """Whether this process has started a driver JVM (pyspark's py4j gateway), stopped or not."""
    from pyspark import SparkContext

    return SparkContext._gateway is not None


def driver_jvm_process():
    """The ``subprocess.Popen`` of the driver JVM this process started (its stdin closed, the
    gateway exits)."""
    from pyspark import SparkContext

    return SparkContext._gateway.proc
