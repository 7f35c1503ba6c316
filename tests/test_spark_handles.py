"""``forensics.spark.handles``: each use of Spark's private handles, checked against the installed
Spark. These are what a new pyspark may break; ``make test-latest`` runs them on the newest."""

from __future__ import annotations

from pyspark.sql import functions as F

from forensics.spark import handles


def test_a_classic_session_is_not_connect(spark):
    assert handles.is_connect(spark) is False


def test_persisted_rdds_are_listed_and_unpersisted(spark):
    rdd = spark.sparkContext.parallelize(range(10)).cache()
    rdd.count()
    assert rdd.id() in handles.persisted_rdds(spark.sparkContext)
    handles.unpersist_rdds(spark.sparkContext, {rdd.id(), -1})  # an id not persisted is ignored
    assert rdd.id() not in handles.persisted_rdds(spark.sparkContext)


def test_a_checkpoint_names_its_rdd_and_a_plain_frame_none(spark):
    kept = spark.range(5).localCheckpoint()
    found = handles.checkpoint_id(kept)
    assert isinstance(found, int) and found in handles.persisted_rdds(spark.sparkContext)
    assert handles.checkpoint_id(spark.range(5)) is None
    handles.unpersist_rdds(spark.sparkContext, {found})


def test_the_driver_heap_is_the_jvms_maximum(spark):
    assert handles.driver_heap(spark) >= 256 * 1024 * 1024


def test_scan_splits_names_each_partitions_file_and_start(spark, tmp_path):
    for name in ("a.log", "b.log"):
        (tmp_path / name).write_text("one line\n")
    read = spark.read.text(str(tmp_path))
    assert sorted(handles.scan_splits(read)) == [(f"file:{tmp_path}/a.log", 0), (f"file:{tmp_path}/b.log", 0)]
    assert handles.scan_splits(spark.range(3)) is None  # not a read of files


def test_rows_kept_in_the_jvm_become_a_local_relation_spark_knows_the_size_of(spark):
    frame = spark.range(3).select(F.col("id"), (F.col("id") * 2).alias("twice"))
    rows = handles.jvm_rows(frame)
    assert rows.size() == 3
    relation = handles.local_relation(spark, frame.schema, rows)
    assert [tuple(r) for r in relation.orderBy("id").collect()] == [(0, 0), (1, 2), (2, 4)]
    assert handles.known_empty(relation) is False
    empty = handles.local_relation(spark, frame.schema, handles.empty_jvm_rows(spark))
    assert handles.known_empty(empty) is True and empty.count() == 0
    assert handles.known_empty(None) is True and handles.known_empty(spark.range(0)) is False  # only a job could tell


def test_the_running_session_context_and_driver_jvm_are_found(spark):
    assert handles.started_session() is spark
    assert handles.active_context() is spark.sparkContext
    assert handles.driver_jvm_started() is True
    assert handles.driver_jvm_process().poll() is None
