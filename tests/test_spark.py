"""The session factory (master resolution, the Java check) and how analyses run on the session."""

from __future__ import annotations

from pathlib import Path

import pytest

from forensics.errors import ForensicsError
from forensics.spark import LOG4J2_CONFIG, MASTER_ENV, THROUGHPUT_GC, java_major_version, local_collector, resolve_master

SAMPLE_LOGS = Path(__file__).resolve().parent.parent / "sample_logs"


def test_default_master_is_local_star(monkeypatch):
    monkeypatch.delenv(MASTER_ENV, raising=False)
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    assert resolve_master() == "local[*]"


@pytest.mark.parametrize("url", ["local[2]", "spark://10.1.2.3:7077", "yarn", "k8s://https://api:6443", "sc://127.0.0.1:15002"])
def test_any_master_is_accepted_from_the_environment(monkeypatch, url):
    monkeypatch.setenv(MASTER_ENV, url)
    assert resolve_master() == url


def test_explicit_master_wins_over_the_environment(monkeypatch):
    monkeypatch.setenv(MASTER_ENV, "yarn")
    assert resolve_master("local[1]") == "local[1]"


def test_spark_remote_is_honoured(monkeypatch):
    monkeypatch.delenv(MASTER_ENV, raising=False)
    monkeypatch.setenv("SPARK_REMOTE", "sc://localhost")
    assert resolve_master() == "sc://localhost"


def test_unknown_master_is_a_clear_error():
    with pytest.raises(ForensicsError, match="Unknown Spark master"):
        resolve_master("mainframe")


def test_the_drivers_log4j_configuration_ships_beside_the_session_code():
    """A missing file makes log4j2 print "Reconfiguration failed" on every driver's stderr."""
    assert Path(LOG4J2_CONFIG).is_file()


def test_java_version_of_the_machine_is_read():
    assert java_major_version() >= 17


def test_no_java_reads_as_none(tmp_path):
    assert java_major_version(str(tmp_path / "java")) is None


def test_a_java_that_does_not_start_is_named_with_the_jvms_own_error(monkeypatch):
    """Not "no Java was found": the Java is there, an option it rejects stops it."""
    from forensics.spark import require_java

    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-XX:+NoSuchForensicsOption")
    assert java_major_version() is None
    with pytest.raises(ForensicsError) as raised:
        require_java()
    message = str(raised.value)
    assert "-version failed" in message and "NoSuchForensicsOption" in message and "no Java was found" not in message


def test_a_local_driver_runs_the_throughput_collector(spark):
    """The shared session is a local driver started by ``get_session``: its JVM's collectors are
    the throughput collector's (``PS Scavenge``, ``PS MarkSweep``), not G1's."""
    beans = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()
    assert {bean.getName() for bean in beans} == {"PS Scavenge", "PS MarkSweep"}


@pytest.mark.parametrize("name", ["JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"])
def test_a_collector_named_elsewhere_is_not_doubled(monkeypatch, name):
    """Two collectors stop the JVM; one the caller or the environment names wins."""
    for variable in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"):
        monkeypatch.delenv(variable, raising=False)
    assert local_collector("local[*]") == THROUGHPUT_GC
    assert local_collector("local[*]", ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")) == ()
    assert local_collector("spark://master:7077") == ()  # executors are JVMs of their own
    monkeypatch.setenv(name, "-Xmx2g -XX:+UseZGC")
    assert local_collector("local[2]") == ()
    monkeypatch.setenv(name, "-XX:+UseStringDeduplication")  # not a collector
    assert local_collector("local[2]") == THROUGHPUT_GC


@pytest.mark.parametrize(
    "url, endpoints",
    [
        ("spark://10.0.0.5:7077", [("10.0.0.5", 7077)]),
        ("spark://m1:7077,m2:7078", [("m1", 7077), ("m2", 7078)]),
        ("spark://master", [("master", 7077)]),
        ("sc://connect.example", [("connect.example", 15002)]),
        ("sc://localhost:15010/;token=abc", [("localhost", 15010)]),
        ("local[2]", []),
        ("yarn", []),
    ],
)
def test_master_endpoints(url, endpoints):
    from forensics.spark import master_endpoints

    assert master_endpoints(url) == endpoints


def test_counting_jobs_counts_the_jobs_of_its_block_and_restores_the_callers_group(spark):
    """``counting_jobs`` (the result's ``spark.jobs``, ``--debug``): the jobs started inside its
    block, none before it and none after it."""
    from forensics.spark import counting_jobs

    context = spark.sparkContext
    context.setJobGroup("the-callers-group", "outside")
    with counting_jobs(spark) as jobs:
        assert jobs() == 0
        context.parallelize(range(10)).count()
        one = jobs()
        context.parallelize(range(10)).sum()
    counted = jobs()
    assert 0 < one < counted
    assert context.getLocalProperty("spark.jobGroup.id") == "the-callers-group"
    context.parallelize(range(10)).count()  # outside the block: not counted
    assert jobs() == counted
    context.setLocalProperty("spark.jobGroup.id", None)
    context.setLocalProperty("spark.job.description", None)
    context.setLocalProperty("spark.job.interruptOnCancel", None)


def test_a_session_asked_for_from_another_thread_is_the_running_one_unchanged(spark):
    """Spark's active session is per thread: from a thread of its own, ``get_session`` still
    returns the running session and leaves the settings its owner chose (the suite's 256 KiB
    splits) as they were, where the builder would have written its own over them."""
    import threading

    from forensics.spark import get_session

    before = spark.conf.get("spark.sql.files.maxPartitionBytes")
    found = []
    other = threading.Thread(target=lambda: found.append(get_session("local[2]")))
    other.start()
    other.join()
    assert found == [spark]
    assert spark.conf.get("spark.sql.files.maxPartitionBytes") == before


def test_sql_settings_apply_inside_the_block_only(spark):
    from forensics.spark import INTERPRETED, sql_settings
    from tests.helpers import GENERATED

    for settings in (INTERPRETED, GENERATED):  # one of them is the suite session's own (conftest)
        before = {key: spark.conf.get(key, None) for key in settings}
        with sql_settings(spark, settings):
            assert {key: spark.conf.get(key) for key in settings} == dict(settings)
            assert spark.range(5).selectExpr("sum(id * 2)").collect()[0][0] == 20
        assert {key: spark.conf.get(key, None) for key in settings} == before


def test_a_small_incident_is_one_of_known_small_local_files(tmp_path):
    from forensics.analyze import SMALL_INCIDENT_BYTES, is_small_incident
    from forensics.ingest.paths import InputFile, text_bytes

    small = InputFile(str(tmp_path / "a.log"), "a", size=1000)
    assert is_small_incident([small])
    assert not is_small_incident([small, InputFile("s3a://bucket/b.log", "b")])  # size unknown
    assert not is_small_incident([InputFile(str(tmp_path / "b.log.gz"), "b", size=SMALL_INCIDENT_BYTES // 2)])  # 10x as text
    assert is_small_incident([small, InputFile(str(tmp_path / "c.log"), "c", size=10**12, problem="unreadable")])
    assert text_bytes([small, InputFile(str(tmp_path / "b.log.gz"), "b", size=100)]) == 2000


def test_materialise_keeps_one_partition_when_the_session_runs_one(spark):
    from forensics.spark import ONE_PARTITION, materialise, sql_settings

    spread = spark.range(40).repartition(4)
    assert materialise(spread).rdd.getNumPartitions() == 4
    with sql_settings(spark, ONE_PARTITION):
        kept = materialise(spread)
        assert kept.rdd.getNumPartitions() == 1 and kept.count() == 40


def test_materialise_keeps_a_spread_table_serialized_in_memory_or_on_disk(spark):
    """Kept serialized (``spark.kept_level``), a checkpoint's memory is its bytes, counted
    exactly, not estimated from deserialized rows; a table kept in one partition (the model's,
    read again and again) stays deserialized."""
    from forensics.spark import ONE_PARTITION, materialise, releasing_checkpoints, sql_settings

    def levels_of_new_checkpoints(kept_by) -> set[str]:
        context = spark.sparkContext
        before = set(context._jsc.getPersistentRDDs().keySet())
        with releasing_checkpoints(spark):
            kept_by()
            persisted = context._jsc.getPersistentRDDs()
            return {persisted.get(rdd_id).getStorageLevel().description() for rdd_id in set(persisted.keySet()) - before}

    spread = spark.range(40).repartition(4)
    assert levels_of_new_checkpoints(lambda: materialise(spread).count()) == {"Disk Memory Serialized 1x Replicated"}
    with sql_settings(spark, ONE_PARTITION):
        assert levels_of_new_checkpoints(lambda: materialise(spread)) == {"Disk Memory Deserialized 1x Replicated"}


def test_scratch_checkpoints_are_released_but_those_kept_and_other_threads(spark):
    """``scratch_checkpoints`` unpersists, as its block ends, what ``materialise`` kept inside it
    in this thread, in either mode, but a kept table (still readable) and another thread's."""
    import threading

    from forensics.spark import ONE_PARTITION, materialise, scratch_checkpoints, sql_settings
    from forensics.spark.handles import checkpoint_id

    persisted = lambda: set(spark.sparkContext._jsc.getPersistentRDDs().keySet())  # noqa: E731
    table = spark.range(40).repartition(4)
    before = persisted()
    elsewhere = []
    with scratch_checkpoints(spark) as keep:
        scratch = materialise(table.where("id < 30"))
        with sql_settings(spark, ONE_PARTITION):
            one = materialise(scratch.where("id > 5"))
        kept = keep(materialise(one.where("id % 2 = 0")))
        other = threading.Thread(target=lambda: elsewhere.append(materialise(table.where("id > 30"))))
        other.start()
        other.join()
        during = persisted() - before
    assert len(during) == 4
    assert persisted() - before == during - {checkpoint_id(scratch), checkpoint_id(one)}
    assert kept.count() == 12 and elsewhere[0].count() == 9
    for rdd_id in persisted() - before:
        spark.sparkContext._jsc.getPersistentRDDs().get(rdd_id).unpersist(False)


def test_the_model_runs_beside_the_events_alone_not_the_tables_that_led_to_them(spark, monkeypatch):
    """Of the tables ingest and parse keep on the way, only the events are still persisted when
    the model starts (``scratch_checkpoints``); records no template matched were sampled before."""
    import importlib

    from forensics.spark.handles import checkpoint_id

    analysis = importlib.import_module("forensics.analyze")
    monkeypatch.setattr(analysis, "SMALL_INCIDENT_BYTES", 0)
    build_model = analysis.build_model
    seen = {}

    def recording(events, offsets, *args, **kwargs):
        seen["persisted"] = set(spark.sparkContext._jsc.getPersistentRDDs().keySet()) - seen["before"]
        seen["inputs"] = {checkpoint_id(events), checkpoint_id(offsets)}
        return build_model(events, offsets, *args, **kwargs)

    monkeypatch.setattr(analysis, "build_model", recording)
    seen["before"] = set(spark.sparkContext._jsc.getPersistentRDDs().keySet())
    result = analysis.analyze(spark, [str(SAMPLE_LOGS / "reset_to_latest_gap")])
    assert result["findings"] and seen["persisted"] == seen["inputs"]


def test_joins_of_joins_over_materialised_tables_need_no_exchange_in_one_partition(spark):
    """Spark estimates a join's size as the product of its sides' sizes: without
    ``defaultSizeInBytes`` and ``maxSinglePartitionBytes`` of ``ONE_PARTITION`` the estimates
    pass ``maxSinglePartitionBytes`` after a few joins, and Spark shuffles the single partitions."""
    from pyspark.sql import functions as F

    from forensics.spark import ONE_PARTITION, materialise, sql_settings

    def exchanges(frame) -> int:
        return frame._jdf.queryExecution().executedPlan().toString().count("Exchange")

    with sql_settings(spark, ONE_PARTITION):
        table = materialise(spark.createDataFrame([(i % 3, i) for i in range(30)], "k int, v int").repartition(3))
        per_key = table.groupBy("k").agg(F.sum("v").alias("total"))
        joined = table.join(per_key, "k").join(table.withColumnRenamed("v", "w"), "k")
        deeper = materialise(joined).join(materialise(joined).withColumnRenamed("v", "x").select("k", "x"), "k")
        assert exchanges(deeper.groupBy("k").count()) == 0
        assert deeper.count() == 30 * 10 * 10 * 10


def test_a_join_asked_to_broadcast_is_no_job_of_its_own_in_one_partition(spark):
    """A broadcast join (``F.broadcast``) runs a job to collect its small side; in one partition
    the hint is ignored and the join is a sort-merge join of two single partitions."""
    from pyspark.sql import functions as F

    from forensics.spark import ONE_PARTITION, materialise, sql_settings

    table = spark.createDataFrame([(i % 3, i) for i in range(30)], "k int, v int")
    names = spark.createDataFrame([(0, "a"), (1, "b")], "k int, name string")
    joined = table.join(F.broadcast(names), "k")
    assert "BroadcastExchange" in joined._jdf.queryExecution().executedPlan().toString()
    with sql_settings(spark, ONE_PARTITION):
        joined = materialise(table).join(F.broadcast(materialise(names)), "k")
        plan = joined._jdf.queryExecution().executedPlan().toString()
        assert "BroadcastExchange" not in plan and "Exchange" not in plan
        assert joined.count() == 20


def test_a_table_with_no_rows_is_kept_as_an_empty_local_relation_in_one_partition(spark):
    """In one partition ``materialise`` counts a table as it keeps it; one with no rows becomes an
    empty local relation with the same schema, and Spark drops the plans over it (a join with
    it is empty before anything runs). A table with rows stays a checkpoint of its one partition.
    (Its Spark jobs are counted by ``benchmarks/job_counts.py``.)"""
    from pyspark.sql import functions as F

    from forensics.spark import ONE_PARTITION, materialise, sql_settings

    events = spark.range(40).select(F.col("id"), (F.col("id") % 4).alias("member"), F.lit("joined").alias("kind"))
    with sql_settings(spark, ONE_PARTITION):
        none = materialise(events.where(F.col("id") > 100))
        kept = materialise(events.where(F.col("id") < 10))
        assert none.schema == events.schema  # nullability included: id stays non-nullable
        assert "LocalRelation <empty>" in none._jdf.queryExecution().optimizedPlan().toString()
        assert kept.rdd.getNumPartitions() == 1 and kept.count() == 10
        joined = kept.join(none.select("id"), "id").groupBy("member").count()
        assert joined._jdf.queryExecution().optimizedPlan().toString().startswith("LocalRelation <empty>")
        assert joined.collect() == [] and none.collect() == []


def test_a_small_incidents_tables_are_kept_in_the_driver_as_one_partition(spark):
    """With ``IN_THE_DRIVER`` a table is collected by one job into a local relation read in one
    partition: nothing is persisted on the executors, Spark's optimiser computes projections and
    filters over it itself, and a join or grouping over such tables needs no exchange."""
    from pyspark.sql import functions as F

    from forensics.spark import IN_THE_DRIVER, ONE_PARTITION, materialise, sql_settings

    persisted = lambda: set(spark.sparkContext._jsc.getPersistentRDDs().keySet())  # noqa: E731
    events = spark.range(40).repartition(3).select(F.col("id"), (F.col("id") % 4).alias("member"))
    before = persisted()
    with sql_settings(spark, {**ONE_PARTITION, **IN_THE_DRIVER}):
        kept = materialise(events.where(F.col("id") < 10))
        none = materialise(events.where(F.col("id") > 100))
        assert persisted() == before
        assert "LocalRelation" in kept._jdf.queryExecution().optimizedPlan().toString()
        assert kept.schema == events.schema and none.schema == events.schema
        assert kept.rdd.getNumPartitions() == 1
        per_member = kept.groupBy("member").count().join(kept, "member")
        assert "Exchange" not in per_member._jdf.queryExecution().executedPlan().toString()
        assert sorted(per_member.select("id").collect()) == [(i,) for i in range(10)]
        assert none.join(kept, "id").collect() == []


@pytest.mark.parametrize("mode", ["one partition", "in the driver", "spread"])
def test_aggregates_observed_as_a_table_is_kept_in_the_driver_come_with_it(spark, mode):
    """``materialise_observed`` (the events per type): kept in the driver, the job that keeps
    the table computes the aggregates too; elsewhere the values are None and the caller computes
    them. The events' counts per type come out the same either way (``analyze._events_counted``)."""
    import importlib

    from pyspark.sql import functions as F

    from forensics import schema as s
    from forensics.spark import IN_THE_DRIVER, ONE_PARTITION, STATIC_SHUFFLES, materialise_observed, sql_settings
    from tests.helpers import ingest_paths

    analysis = importlib.import_module("forensics.analyze")
    settings = {"one partition": ONE_PARTITION, "in the driver": {**ONE_PARTITION, **IN_THE_DRIVER}, "spread": STATIC_SHUFFLES}[mode]
    numbers = spark.range(1000).repartition(3).select("id")
    with sql_settings(spark, settings):
        kept, observed = materialise_observed(numbers, [F.count_if(F.col("id") % 2 == 1).alias("odd"), F.max("id").alias("top")])
        assert kept.count() == 1000
        assert observed == (None if mode != "in the driver" else {"odd": 500, "top": 999})
        records = ingest_paths(spark, SAMPLE_LOGS / "rebalance_storm").records
        events, by_type = analysis._events_counted(records)
    expected = {row[s.EVENT_TYPE]: row["count"] for row in events.groupBy(s.EVENT_TYPE).count().collect()}
    assert by_type == expected and sum(by_type.values()) > 100


@pytest.mark.parametrize("mode", ["one partition", "in the driver", "spread"])
def test_tables_materialised_together_are_kept_and_read_apart(spark, mode):
    """``materialised_together`` (the model's four later tables): tables of different schemas,
    one column name of different types among them, kept together and each read back with its
    rows; in one partition under ``ONE_PARTITION``, where one with no rows becomes known to be
    empty; one known to be empty already is returned as it is."""
    from pyspark.sql import functions as F

    from forensics.spark import IN_THE_DRIVER, ONE_PARTITION, empty_of, known_empty, materialised_together, sql_settings

    settings = {"one partition": ONE_PARTITION, "in the driver": {**ONE_PARTITION, **IN_THE_DRIVER}, "spread": {}}[mode]
    numbers = spark.range(30).repartition(3)
    by_member = numbers.groupBy((F.col("id") % 3).alias("member")).agg(F.collect_list("id").alias("ids"))
    named = numbers.select(
        F.col("id").cast("string").alias("member"), F.struct(F.col("id").alias("n"), F.lit(None).cast("string").alias("note")).alias("at")
    )
    none = numbers.where(F.col("id") > 100)
    known = empty_of(spark, numbers.schema)
    with sql_settings(spark, settings):
        kept = materialised_together([by_member, named, none, known])
        assert kept[3] is known
        for frame, original in zip(kept, [by_member, named, none, known]):
            assert [field.name for field in frame.schema] == original.columns
            assert [field.dataType for field in frame.schema] == [field.dataType for field in original.schema]
            assert sorted(map(str, frame.collect())) == sorted(map(str, original.collect()))
        if mode != "spread":
            assert all(frame.rdd.getNumPartitions() == 1 for frame in kept[:2]) and known_empty(kept[2])
        if mode == "in the driver":
            assert [frame.schema for frame in kept] == [by_member.schema, named.schema, none.schema, known.schema]


@pytest.mark.parametrize("mode", ["one partition", "in the driver", "spread"])
def test_a_small_table_kept_with_its_rows_is_one_partition_and_the_rows_of_a_collect(spark, mode):
    """``kept_with_rows`` (the clock skew's row per host, which the model reads in the driver):
    the table, computed once, is kept in one partition, in every mode, and its rows come with
    it; a table known to be empty stays known to be empty, with no rows."""
    from pyspark.sql import functions as F

    from forensics.spark import IN_THE_DRIVER, ONE_PARTITION, empty_like, kept_with_rows, known_empty, sql_settings

    settings = {"one partition": ONE_PARTITION, "in the driver": {**ONE_PARTITION, **IN_THE_DRIVER}, "spread": {}}[mode]
    hosts = (
        spark.range(40).repartition(3).select((F.col("id") % 4).alias("host"), F.col("id")).groupBy("host").agg(F.max("id").alias("last"))
    )
    with sql_settings(spark, settings):
        kept, rows = kept_with_rows(hosts)
        assert sorted(rows) == sorted(hosts.collect()) == [(0, 36), (1, 37), (2, 38), (3, 39)]
        none, no_rows = kept_with_rows(empty_like(hosts))
        assert known_empty(none) and no_rows == [] and none.schema == hosts.schema
        assert kept.rdd.getNumPartitions() == 1 and sorted(kept.collect()) == sorted(rows)
        assert "Exchange" not in kept.groupBy("host").count()._jdf.queryExecution().executedPlan().toString()


def test_a_small_incidents_result_tables_are_read_together_each_in_its_order(spark):
    """``TableReads`` kept in the driver: the first read reads every table registered and not
    read yet together, each table's rows in its own order (struct and null values included),
    and every later use gives the same rows; apart, each table is read on its own, with the same rows."""
    from pyspark.sql import functions as F

    from forensics.spark import IN_THE_DRIVER, ONE_PARTITION, TableReads, materialise, sql_settings

    rows = spark.range(30).select(
        F.col("id"),
        (F.col("id") % 3).alias("g"),
        F.struct(F.col("id").alias("line")).alias("evidence"),
        F.when(F.col("id") % 2 == 0, F.lit("even")).alias("label"),
    )
    with sql_settings(spark, {**ONE_PARTITION, **IN_THE_DRIVER}):
        kept = materialise(rows.repartition(3))
        tables = [
            kept.orderBy(F.desc("id")),
            kept.where("g = 1").orderBy("label", "id").select("label", "id"),
            kept.groupBy("g").agg(F.max("id").alias("top")).orderBy("g"),
            kept.where("id > 99").orderBy("id"),
        ]
        reads = TableReads(spark)
        readers = [reads.of(table) for table in tables]
        together = [list(read()) for read in readers]
        again = [list(read()) for read in readers]
        late = reads.of(kept.orderBy("id"))
        assert [row["id"] for row in late()] == list(range(30))
    apart = [table.collect() for table in tables]
    assert together == again == apart
    assert [row["id"] for row in together[0]] == list(range(29, -1, -1)) and together[0][0]["evidence"]["line"] == 29
    assert [(row["label"], row["id"]) for row in together[1]] == [(None, i) for i in range(1, 30, 6)] + [
        ("even", i) for i in range(4, 30, 6)
    ]
    assert together[3] == []
    apart_reads = TableReads(spark)
    assert [list(apart_reads.of(table)()) for table in tables] == apart


def test_calls_run_concurrently_carry_the_callers_job_group(spark):
    """``concurrently`` gives the results in the order of the calls; the calls run in other
    threads carry the caller's job group, so ``counting_jobs`` counts their jobs as the
    analysis's (``benchmarks/job_counts.py`` counts them)."""
    import threading

    from forensics.spark import concurrently, counting_jobs

    threads, groups = set(), set()
    all_started = threading.Barrier(3, timeout=120)  # passed only by three calls running at once

    def count(n: int):
        def run():
            threads.add(threading.get_ident())
            groups.add(spark.sparkContext.getLocalProperty("spark.jobGroup.id"))
            all_started.wait()
            return len(spark.range(n).collect())

        return run

    with counting_jobs(spark) as jobs:
        callers = spark.sparkContext.getLocalProperty("spark.jobGroup.id")
        assert concurrently(spark, count(3), count(5), count(7)) == [3, 5, 7]
        assert jobs() > 0
    assert callers and groups == {callers} and len(threads) == 3
    assert concurrently(spark, lambda: len(spark.range(2).collect())) == [2] and concurrently(spark) == []


def test_only_an_empty_local_relation_is_known_to_be_empty(spark):
    """``known_empty`` answers from the plan alone: an empty local relation (what one partition
    keeps of a table with no rows) or no table at all; a checkpoint, even of no rows, could only
    be known by a job."""
    from pyspark.sql import functions as F

    from forensics.spark import ONE_PARTITION, empty_of, known_empty, materialise, sql_settings

    none = spark.range(10).where(F.col("id") > 100)
    assert known_empty(None) and known_empty(empty_of(spark, none.schema))
    assert not known_empty(materialise(none))  # checkpointed by the general path
    assert not known_empty(spark.createDataFrame([(1,)], "id long")) and not known_empty(none)
    with sql_settings(spark, ONE_PARTITION):
        assert known_empty(materialise(none)) and not known_empty(materialise(spark.range(3)))


def test_a_small_incident_runs_to_the_same_analysis_as_larger_ones(spark, monkeypatch, gap_as_larger_incident):
    """One analysis, run as a small incident (``SMALL_INCIDENT``), as a larger one with few
    events (its model and detectors in one partition: ``FEW_EVENTS``) and as any other: the same
    JSON (each plan's Spark jobs are counted by ``benchmarks/job_counts.py``)."""
    import copy
    import importlib

    analysis = importlib.import_module("forensics.analyze")
    paths = [str(SAMPLE_LOGS / "reset_to_latest_gap")]
    small = analysis.analyze(spark, paths)
    few = copy.deepcopy(gap_as_larger_incident.result)
    monkeypatch.setattr(analysis, "SMALL_INCIDENT_BYTES", 0)
    monkeypatch.setattr(analysis, "FEW_EVENTS", 0)
    general = analysis.analyze(spark, paths)
    assert small["findings"] and small["offsets"]["rows"]
    for result in (small, few, general):
        result["spark"].pop("jobs")
    assert small == few == general


def test_the_time_zone_of_the_python_process_changes_no_time_of_the_result(spark, monkeypatch):
    """PySpark hands timestamps to Python as naive times in the process's own zone; an analyst's
    kernel in New York (UTC-5 in March) must still write the times of the incident in UTC:
    rebalances, findings, each file's first and last record."""
    import importlib
    import io
    import json
    import time

    analysis = importlib.import_module("forensics.analyze")
    paths = [str(SAMPLE_LOGS / "reset_to_latest_gap")]

    def result_in(zone: str) -> dict:
        monkeypatch.setenv("TZ", zone)
        time.tzset()
        out = io.StringIO()
        try:
            analysis.analyze(spark, paths, json_to=out)
        finally:
            monkeypatch.undo()
            time.tzset()
        result = json.loads(out.getvalue())
        result["spark"].pop("jobs")
        return result

    in_utc, in_new_york = result_in("UTC"), result_in("America/New_York")
    consumer = next(entry for entry in in_new_york["inputs"] if entry["host"] == "demo-consumer-1")
    assert consumer["first_ts"] == consumer["first_record"]["ts"] == "2021-02-10 15:40:00"  # its first line, in UTC
    assert in_new_york["rebalances"][0]["start"] == "2021-02-10T15:40:02.403Z" and in_new_york["findings"]
    assert in_new_york == in_utc


def test_the_column_of_a_name_or_a_plain_value_is_the_one_the_jvm_gave_before(spark):
    """``SameAnswer``: ``F.col`` and ``F.lit`` of a str, int or bool answer with the Java Column
    they had; ``lit(1)`` and ``lit(True)`` stay apart, and a value of another type (a float) is
    asked each time. The kept Columns serve any number of queries. (The py4j round trips this
    saves are counted by ``benchmarks/job_counts.py``.)"""
    from pyspark.sql import functions as F

    F.col("kept"), F.lit("kept"), F.lit(7), F.lit(True)
    assert F.col("kept")._jc is F.col("kept")._jc and F.lit(7)._jc is F.lit(7)._jc and F.lit("kept")._jc is F.lit("kept")._jc
    assert F.lit(True)._jc is F.lit(True)._jc
    assert F.lit(0.5)._jc is not F.lit(0.5)._jc
    assert F.lit(1)._jc is not F.lit(True)._jc and F.lit(0)._jc is not F.lit(False)._jc
    frame = spark.createDataFrame([("a",), ("b",)], "kept string")
    for _ in range(2):
        rows = frame.select((F.col("kept") == F.lit("b")).alias("b"), F.lit(1).alias("one"), F.lit(True).alias("yes")).collect()
        assert [(row.b, row.one, row.yes) for row in rows] == [(False, 1, True), (True, 1, True)]
        assert type(rows[0].one) is int and type(rows[0].yes) is bool


def test_a_python_list_reaches_the_jvm_whole_and_in_order(spark):
    """``ListInOneCall``: a list of up to ten elements is one ``List.of`` call, a longer one is
    filled ten at a time, a list with a None goes py4j's own way; each arrives whole, in order.
    (Its py4j round trips are counted by ``benchmarks/job_counts.py``.)"""
    seq = spark._jvm.org.apache.spark.api.python.PythonUtils.toSeq
    many = [str(n) for n in range(23)]
    assert seq(["a", "b", "c", "d", "e"]).mkString("|") == "a|b|c|d|e"
    assert seq([]).mkString("|") == ""
    assert seq(many).mkString("|") == "|".join(many)
    assert seq(("t", 1, True)).mkString("|") == "t|1|true"
    assert seq(["a", None, "c"]).mkString("|") == "a|null|c"


def test_columns_built_once_are_the_same_columns_and_serve_every_query(spark, monkeypatch):
    """``built_once``: one build per Spark context and arguments, kept up to ``KEPT_BUILDS``
    (the oldest dropped); the Columns kept answer each later query over its own rows."""
    from pyspark.sql import functions as F

    from forensics import spark as sessions

    builds = []

    @sessions.built_once
    def marked(word: str):
        builds.append(word)
        return F.when(F.col("value").contains(word), F.lit(word)).alias("mark")

    assert marked("ommit") is marked("ommit") and marked("roup") is not marked("ommit")
    assert builds == ["ommit", "roup"]
    first = spark.createDataFrame([("Commit failed",), ("rebalance",)], "value string")
    second = spark.createDataFrame([("Offset commit",)], "value string")
    assert [row.mark for row in first.select(marked("ommit")).collect()] == ["ommit", None]
    assert [row.mark for row in second.select(marked("ommit")).collect()] == ["ommit"]
    monkeypatch.setattr("forensics.spark.jobs.KEPT_BUILDS", 2)
    marked("artition")  # a third: the oldest build goes
    assert marked("roup") is not None and builds == ["ommit", "roup", "artition"]
    marked("ommit")
    assert builds[-1] == "ommit"


def test_remembered_lookups_keep_classes_and_methods_not_field_values(spark):
    """``remember_jvm_lookups`` (installed by the session; a second installation changes nothing)
    keeps the classes, packages and static methods the session's view looked up, never a field's
    value, and leaves py4j's own classes as they are."""
    from py4j.java_gateway import JavaClass, JVMView

    from forensics.spark import remember_jvm_lookups

    jvm = spark.sparkContext._jvm
    remember_jvm_lookups(jvm)
    functions = getattr(jvm, "org.apache.spark.sql.functions")
    assert getattr(jvm, "org.apache.spark.sql.functions") is functions
    assert functions.col is functions.col
    integer = jvm.java.lang.Integer
    assert jvm.java.lang is jvm.java.lang and jvm.java.lang.Integer is integer
    assert integer.MAX_VALUE == 2**31 - 1 and integer.parseInt("7") == 7
    assert "MAX_VALUE" not in vars(integer) and "parseInt" in vars(integer)
    plain = JavaClass("java.lang.Integer", jvm._gateway_client)
    assert plain.parseInt is not plain.parseInt and "parseInt" not in vars(plain)
    assert "remembers" not in vars(JVMView.__getattr__) and JVMView.__getattr__.__module__ == "py4j.java_gateway"


def test_a_warm_session_does_not_compile_a_query_again_after_many_others(spark):
    """``CLASSIC_CONF`` keeps 4,096 generated classes: an analysis of the 4M corpus generates
    some 1,100, and with Spark's default of 100 a second analysis compiled them all again."""
    from pyspark.sql import functions as F

    from forensics.spark import sql_settings
    from tests.helpers import GENERATED

    compilations = spark.sparkContext._jvm.org.apache.spark.metrics.source.CodegenMetrics.METRIC_COMPILATION_TIME()

    def planned(factor: int) -> None:
        """The query's physical plan made, its whole-stage code compiled in the driver, no job run."""
        with sql_settings(spark, GENERATED):
            spark.range(3).select((F.col("id") * factor + 1).alias("x"))._jdf.queryExecution().toRdd()

    planned(-1)
    for factor in range(120):  # each literal makes a class of its own, more than the default keeps
        planned(factor)
    before = compilations.getCount()
    planned(-1)
    assert compilations.getCount() == before
    planned(1000)
    assert compilations.getCount() == before + 1  # a query not seen before is compiled


def test_a_local_driver_gets_a_share_of_the_machines_memory_unless_the_user_named_it(spark, monkeypatch, tmp_path):
    """``local_driver_memory``: within ``DRIVER_MEMORY_GIB`` on a local master, nothing for a
    cluster's or where Spark's own settings name the driver's memory; the suite's driver runs
    with it."""
    from forensics.spark import DRIVER_MEMORY_GIB, local_driver_memory

    for name in ("SPARK_DRIVER_MEMORY", "PYSPARK_SUBMIT_ARGS", "SPARK_CONF_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    given = local_driver_memory("local[2]")["spark.driver.memory"]
    assert DRIVER_MEMORY_GIB[0] <= int(given.rstrip("g")) <= DRIVER_MEMORY_GIB[1]
    assert local_driver_memory("spark://master:7077") == {} and local_driver_memory("sc://host:15002") == {}
    heap_gib = spark._jvm.java.lang.Runtime.getRuntime().maxMemory() / 2**30
    assert int(given.rstrip("g")) * 0.85 <= heap_gib <= int(given.rstrip("g"))
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "spark-defaults.conf").write_text("# mine\nspark.driver.memory   12g\n")
    assert local_driver_memory("local[2]") == {}
    monkeypatch.delenv("SPARK_HOME")
    monkeypatch.chdir(tmp_path)  # a conf/ in the working directory is not Spark's
    assert local_driver_memory("local[2]") == {"spark.driver.memory": given}
    monkeypatch.setenv("SPARK_HOME", "/nonexistent")
    monkeypatch.setenv("SPARK_DRIVER_MEMORY", "3g")
    assert local_driver_memory("local[*]") == {}
    monkeypatch.delenv("SPARK_DRIVER_MEMORY")
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--driver-memory 6g pyspark-shell")
    assert local_driver_memory("local") == {}
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--conf spark.driver.memory=6g pyspark-shell")
    assert local_driver_memory("local") == {}


def test_a_small_incidents_logs_and_dumps_are_read_with_their_first_records_and_accounting(spark):
    """Ingest of a small incident's logs gives each file's first record with its line counts;
    its offset dumps their accounting, rows per kind and snapshot times, counted from the table
    kept (the Spark jobs of both are counted by ``benchmarks/job_counts.py``)."""
    from forensics.analyze import SMALL_INCIDENT
    from forensics.ingest import ingest_files, route_inputs
    from forensics.offsets import read_offsets_accounted, sniff_file
    from forensics.spark import sql_settings

    inputs = route_inputs([str(SAMPLE_LOGS / "reset_to_latest_gap")], [], sniff_file)
    assert inputs.logs and inputs.dumps
    with sql_settings(spark, SMALL_INCIDENT):
        ingested = ingest_files(spark, inputs.logs)
        dumps = read_offsets_accounted(spark, [d.path for d in inputs.dumps])
    assert all(entry["first_record"] for entry in ingested.inputs if entry["records"])
    assert dumps.accounting["records"] == sum(dumps.by_kind.values()) == dumps.table.count() > 0
    assert dumps.snapshots == []  # its dump has no time stamp lines


def test_a_model_too_large_for_a_small_local_heap_builds_its_tables_one_after_another(spark, monkeypatch, gap_as_larger_incident):
    """``room_to_run_at_once``: the model's four later tables are kept by one job, and the
    result's lists written to files by one job, unless a local driver's heap holds less than
    ``HEAP_PER_CONCURRENT_ROW`` bytes an event (the 16M-line corpus in 1 GiB); one after
    another, a job per table and per list, the analysis is the same (the jobs are counted by
    ``benchmarks/job_counts.py``)."""
    import importlib

    spark_module = importlib.import_module("forensics.spark.materialise")
    model_module = importlib.import_module("forensics.model")
    analysis = importlib.import_module("forensics.analyze")
    heap = spark._jvm.java.lang.Runtime.getRuntime().maxMemory()
    assert spark_module.room_to_run_at_once(spark, heap // spark_module.HEAP_PER_CONCURRENT_ROW)
    assert not spark_module.room_to_run_at_once(spark, heap // spark_module.HEAP_PER_CONCURRENT_ROW + 1)

    built_at_once = []
    real = model_module.materialised_together
    monkeypatch.setattr(model_module, "materialised_together", lambda frames: built_at_once.append(len(frames)) or real(frames))
    monkeypatch.setattr(analysis, "SMALL_INCIDENT_BYTES", 0)
    monkeypatch.setattr(spark_module, "HEAP_PER_CONCURRENT_ROW", heap)  # a byte an event leaves no room
    tight = analysis.analyze(spark, [str(SAMPLE_LOGS / "reset_to_latest_gap")])
    assert built_at_once == [] and gap_as_larger_incident.built_at_once == [3]  # no restores without Kafka Streams
    roomy = gap_as_larger_incident.result
    assert roomy["findings"] and {**roomy, "spark": None} == {**tight, "spark": None}


def test_ingest_shuffles_in_step_with_the_cores_and_leaves_the_session_as_it_was(spark, monkeypatch):
    """Outside a small incident's one partition, a local driver whose heap is at least the
    input's size plans ingest's shuffles once (``in_step_with_cores``), not per query stage as
    adaptive execution does, to the same accounting; the session's own settings are restored
    afterwards. Input larger than the heap, or of unknown size, keeps adaptive execution. (The
    jobs each saves are counted by ``benchmarks/job_counts.py``.)"""
    from forensics.ingest import ingest
    from forensics.spark import ONE_PARTITION, STATIC_SHUFFLES, in_step_with_cores, sql_settings
    from forensics.spark.handles import driver_heap

    cores = str(max(2, spark.sparkContext.defaultParallelism))
    heap = driver_heap(spark)
    assert in_step_with_cores(spark, heap) == {**STATIC_SHUFFLES, "spark.sql.shuffle.partitions": cores}
    assert in_step_with_cores(spark, heap + 1) == {} and in_step_with_cores(spark, None) == {}
    with sql_settings(spark, ONE_PARTITION):
        assert in_step_with_cores(spark, 0) == {}
    before = {key: spark.conf.get(key, None) for key in ("spark.sql.adaptive.enabled", "spark.sql.shuffle.partitions")}
    paths = [str(SAMPLE_LOGS / "reset_to_latest_gap")]
    ingested = ingest(spark, paths)
    assert ingested.accounting["records"] > 0
    assert {key: spark.conf.get(key, None) for key in before} == before
    monkeypatch.setattr("forensics.spark.handles.driver_heap", lambda session: 1)  # the input is larger than the heap
    adaptive = ingest(spark, paths)
    assert adaptive.accounting == ingested.accounting


def test_an_analysis_with_static_shuffles_equals_the_adaptive_one(spark, monkeypatch, gap_as_larger_incident):
    """The same analysis (spread: no small incident) with ingest's and parse's shuffles planned
    in step with the cores and with the session's adaptive execution: the same JSON (the static
    plan's fewer jobs are counted by ``benchmarks/job_counts.py``)."""
    import copy
    import importlib

    analysis = importlib.import_module("forensics.analyze")
    ingest_package = importlib.import_module("forensics.ingest")
    monkeypatch.setattr(analysis, "SMALL_INCIDENT_BYTES", 0)
    paths = [str(SAMPLE_LOGS / "reset_to_latest_gap")]
    static = copy.deepcopy(gap_as_larger_incident.result)
    for module in (analysis, ingest_package):
        monkeypatch.setattr(module, "in_step_with_cores", lambda session, text_bytes: {})
    adaptive = analysis.analyze(spark, paths)
    static["spark"].pop("jobs"), adaptive["spark"].pop("jobs")
    assert static == adaptive


def test_a_collect_waits_for_a_python_paused_by_load(spark):
    """``CLASSIC_CONF``: the JVM keeps a collect's result socket open for 600 s, not Spark's 15 s,
    which a loaded machine's paused Python process missed ("Connection refused" in CI)."""
    served = spark.sparkContext.getConf().get("spark.python.authenticate.socketTimeout")
    assert served == "600s"
    assert spark.range(3).collect()[-1].id == 2
