"""Spark jobs and py4j round trips of the toolkit's execution paths (issue 83, item 8).

    .venv/bin/python benchmarks/job_counts.py [--out FILE.json] [--only NAME,...]

The execution modes (docs/performance.md, "Why the Spark session is set as it is") exist to save
Spark jobs and py4j round trips; the tests assert that each mode gives the same result, this
script counts what each costs. Every check runs one path on small inputs in one warm ``local[2]``
session set as the suite's (``tests/conftest.py``), and compares the counts with what the design
expects. Counts move with Spark and py4j versions, so they are measured here and not in tests.

Printed: one line per check with its counts, its expectation and ok / DIFFERS. Written with
``--out``: the same as JSON, stamped with the commit, the machine and the versions. The exit
status is 1 when a count differs from its expectation.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SAMPLE_LOGS = ROOT / "sample_logs"
GAP = str(SAMPLE_LOGS / "reset_to_latest_gap")
EXPORTS = ROOT / "tests" / "data" / "exports"
SPLIT_BYTES = 256 * 1024
"""The suite's splits (``tests.conftest.TEST_SPLIT_BYTES``): inputs cut into several partitions."""

CHECKS: dict[str, Callable] = {}


def check(function: Callable) -> Callable:
    """Register ``function(spark)``: it returns ``(counts, ok, expected)``, its counts by name,
    whether they are what the design expects, and that expectation in words."""
    CHECKS[function.__name__] = function
    return function


def session():
    from forensics.spark import INTERPRETED, get_session

    return get_session(
        "local[2]",
        app_name="forensics-job-counts",
        conf={
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.sql.files.maxPartitionBytes": str(SPLIT_BYTES),
            "spark.sql.files.openCostInBytes": str(SPLIT_BYTES),
            **INTERPRETED,
        },
    )


def jobs_of(spark, call: Callable[[], object]) -> tuple[int, object]:
    """The Spark jobs ``call`` started, and what it returned."""
    from forensics.spark import counting_jobs

    with counting_jobs(spark) as jobs:
        value = call()
    return jobs(), value


@contextmanager
def round_trips():
    """Yields a function giving the py4j commands sent inside the block (not py4j's releases of objects)."""
    from py4j.clientserver import ClientServerConnection

    sent: list[str] = []
    original = ClientServerConnection.send_command
    ClientServerConnection.send_command = lambda self, command: sent.append(command) or original(self, command)
    try:
        yield lambda: len([c for c in sent if not c.startswith("m\nd\n")])
    finally:
        ClientServerConnection.send_command = original


@contextmanager
def patched(*changes: tuple[object, str, object]):
    """Module attributes set to other values inside the block: ``(module, name, value)``."""
    import pytest

    with pytest.MonkeyPatch.context() as patch:
        for target, name, value in changes:
            patch.setattr(target, name, value)
        yield


def modes():
    from forensics.spark import IN_THE_DRIVER, ONE_PARTITION

    return {"one partition": ONE_PARTITION, "in the driver": {**ONE_PARTITION, **IN_THE_DRIVER}, "spread": {}}


# --------------------------------------------------------------------------------- materialising


@check
def materialise_one_job_a_table(spark):
    """``materialise`` in one partition and in the driver: a job per table kept, none for a
    query over a table with no rows (an empty local relation)."""
    from pyspark.sql import functions as F

    from forensics.spark import materialise, sql_settings

    counts = {}
    events = spark.range(40).repartition(3).select(F.col("id"), (F.col("id") % 4).alias("member"))
    for mode in ("one partition", "in the driver"):
        with sql_settings(spark, modes()[mode]):
            counts[f"{mode}: two tables kept"], (kept, none) = jobs_of(
                spark, lambda: (materialise(events.where(F.col("id") < 10)), materialise(events.where(F.col("id") > 100)))
            )
            counts[f"{mode}: a join with the empty one"], _ = jobs_of(spark, lambda kept=kept, none=none: none.join(kept, "id").collect())
    return counts, all(v == (2 if k.endswith("kept") else 0) for k, v in counts.items()), "2 for two tables, 0 for the join"


@check
def observed_aggregates_in_the_driver(spark):
    """``materialise_observed`` kept in the driver: the job that keeps the table computes the aggregates."""
    from pyspark.sql import functions as F

    from forensics.spark import materialise_observed, sql_settings

    numbers = spark.range(1000).repartition(3).select("id")
    with sql_settings(spark, modes()["in the driver"]):
        jobs, _ = jobs_of(
            spark, lambda: materialise_observed(numbers, [F.count_if(F.col("id") % 2 == 1).alias("odd"), F.max("id").alias("top")])
        )
    return {"in the driver": jobs}, jobs == 1, "1"


@check
def tables_materialised_together(spark):
    """``materialised_together`` (the model's later tables): one job for three tables in one partition
    and in the driver; spread, adaptive execution submits each query stage as a job."""
    from pyspark.sql import functions as F

    from forensics.spark import empty_of, materialised_together, sql_settings

    numbers = spark.range(30).repartition(3)
    frames = [
        numbers.groupBy((F.col("id") % 3).alias("member")).agg(F.collect_list("id").alias("ids")),
        numbers.select(F.col("id").cast("string").alias("member")),
        numbers.where(F.col("id") > 100),
        empty_of(spark, numbers.schema),
    ]
    counts = {}
    for mode, settings in modes().items():
        with sql_settings(spark, settings):
            counts[mode], _ = jobs_of(spark, lambda: materialised_together(frames))
    return counts, counts["one partition"] == counts["in the driver"] == 1, "1 in one partition and in the driver"


@check
def kept_with_rows_costs_a_collect(spark):
    """``kept_with_rows`` (the clock skew's row per host): no more jobs than one collect; none for
    a table known to be empty."""
    from pyspark.sql import functions as F

    from forensics.spark import empty_like, kept_with_rows, sql_settings

    hosts = (
        spark.range(40).repartition(3).select((F.col("id") % 4).alias("host"), F.col("id")).groupBy("host").agg(F.max("id").alias("last"))
    )
    counts, ok = {}, True
    for mode, settings in modes().items():
        with sql_settings(spark, settings):
            collect, _ = jobs_of(spark, hosts.collect)
            kept, _ = jobs_of(spark, lambda: kept_with_rows(hosts))
            empty, _ = jobs_of(spark, lambda: kept_with_rows(empty_like(hosts)))
        counts[mode] = {"collect": collect, "kept_with_rows": kept, "known empty": empty}
        ok = ok and 0 < kept <= collect and empty == 0
    return counts, ok, "0 < kept_with_rows <= collect; 0 when known empty"


@check
def concurrent_calls_are_counted(spark):
    """``concurrently``: the jobs of calls run in other threads count in the caller's job group."""
    from forensics.spark import concurrently

    jobs, _ = jobs_of(spark, lambda: concurrently(spark, *(lambda n=n: spark.range(n).collect() for n in (3, 5, 7))))
    return {"three calls of one job": jobs}, jobs == 3, "3"


# --------------------------------------------------------------------------------- reading results


@check
def table_reads_in_one_job(spark):
    """``TableReads`` in the driver: the first read reads every table registered in one job, later
    uses none; a table registered later is one job."""
    from pyspark.sql import functions as F

    from forensics.spark import TableReads, materialise, sql_settings

    with sql_settings(spark, modes()["in the driver"]):
        kept = materialise(spark.range(30).select(F.col("id"), (F.col("id") % 3).alias("g")).repartition(3))
        reads = TableReads(spark)
        readers = [
            reads.of(table)
            for table in (kept.orderBy(F.desc("id")), kept.where("g = 1").orderBy("id"), kept.where("id > 99").orderBy("id"))
        ]
        together, _ = jobs_of(spark, lambda: [list(read()) for read in readers] + [list(read()) for read in readers])
        late_reader = reads.of(kept.orderBy("id"))
        late, _ = jobs_of(spark, lambda: list(late_reader()))
    counts = {"three tables, read twice": together, "one registered later": late}
    return counts, counts == {"three tables, read twice": 1, "one registered later": 1}, "1 and 1"


@check
def long_table_read_in_partitions(spark):
    """``TableReads`` of a long table: a job per partition of a few MB, more than ``toLocalIterator``'s."""
    from pyspark.sql import functions as F

    from forensics.spark import TableReads

    def table():
        return (
            spark.range(300_000)
            .select((F.col("id") * 7 % 300_000).alias("n"), F.sha2(F.col("id").cast("string"), 256).alias("h"))
            .orderBy("n")
        )

    plain, _ = jobs_of(spark, lambda: sum(1 for _ in table().toLocalIterator(True)))
    read, _ = jobs_of(spark, lambda: sum(1 for _ in TableReads(spark).of(table())()))
    return {"toLocalIterator": plain, "TableReads": read}, read > plain + 1, "TableReads > toLocalIterator + 1"


@check
def one_partition_rows_in_one_job(spark):
    """``one_partition_rows``: the rows of the tables of one partition counted by one job."""
    from pyspark.sql import functions as F

    from forensics.spark import materialise, one_partition_rows, sql_settings

    with sql_settings(spark, modes()["one partition"]):
        kept = materialise(spark.range(1_050).select((F.col("id") * 11 % 1_050).alias("n")))
    frames = [kept.orderBy(F.desc("n")), kept.where("n < 100").orderBy("n"), spark.range(0, 1_050, 1, 3)]
    jobs, _ = jobs_of(spark, lambda: one_partition_rows(frames))
    return {"three tables": jobs}, jobs == 1, "1"


@check
def json_texts_written_by_one_job(spark):
    """``analyze._json_rows``: the first read writes the JSON texts of every table registered by
    one job, later reads none; a table registered later is written at its first read."""
    from pyspark.sql import functions as F

    from forensics.analyze import _json_rows
    from forensics.spark import ONE_PARTITION, TableReads, empty_of, materialise, sql_settings

    with sql_settings(spark, ONE_PARTITION):
        kept = materialise(spark.range(60_000).select((F.col("id") * 7 % 60_000).alias("n")))
    reads = TableReads(spark, ONE_PARTITION)
    frames = (
        kept.orderBy(F.desc("n")),
        kept.where("n < 0").orderBy("n"),
        empty_of(spark, kept.schema).orderBy("n"),
        kept.where("n < 10").orderBy("n"),
    )
    tables = [_json_rows(reads, frame) for frame in frames]
    counts = {"first read": jobs_of(spark, lambda: list(tables[0].texts()))[0]}
    counts["every table again"] = jobs_of(spark, lambda: [list(rows) for rows in tables])[0]
    late = _json_rows(reads, spark.range(0, 3_000, 1, 3).select((2_999 - F.col("id")).alias("n")).orderBy("n"))
    counts["a table registered later"] = jobs_of(spark, lambda: list(late))[0]
    counts["all again"] = jobs_of(spark, lambda: [list(rows) for rows in (*tables, late)])[0]
    expected = {"first read": 1, "every table again": 0, "a table registered later": 1, "all again": 0}
    return counts, counts == expected, "1, 0, 1, 0"


# --------------------------------------------------------------------------------- ingest and analyses


@check
def small_incident_ingest(spark):
    """A small incident's logs (the fold, the split facts, the stitch, the records, the line counts)
    and its offset dumps (the lines and table together, then the accounting)."""
    from forensics.analyze import SMALL_INCIDENT
    from forensics.ingest import ingest_files, route_inputs
    from forensics.offsets import read_offsets_accounted, sniff_file
    from forensics.spark import sql_settings

    inputs = route_inputs([GAP], [], sniff_file)
    with sql_settings(spark, SMALL_INCIDENT):
        logs, _ = jobs_of(spark, lambda: ingest_files(spark, inputs.logs))
        dumps, _ = jobs_of(spark, lambda: read_offsets_accounted(spark, [d.path for d in inputs.dumps]))
    return {"logs": logs, "dumps": dumps}, (logs, dumps) == (5, 2), "5 and 2"


@check
def ingest_in_step_with_cores(spark):
    """Ingest with shuffles planned in step with the cores (``in_step_with_cores``) against
    adaptive execution (the input taken to be larger than the heap)."""
    from forensics.ingest import ingest

    static, _ = jobs_of(spark, lambda: ingest(spark, [GAP]))
    with patched((importlib.import_module("forensics.spark.handles"), "driver_heap", lambda session: 1)):
        adaptive, _ = jobs_of(spark, lambda: ingest(spark, [GAP]))
    return {"static": static, "adaptive": adaptive}, static <= 7 and static < adaptive, "static <= 7 < adaptive"


def _analysed(spark, *changes) -> int:
    """The Spark jobs of ``analyze`` of the reset_to_latest_gap sample with ``changes`` (``patched``)."""
    with patched(*changes):
        return importlib.import_module("forensics.analyze").analyze(spark, [GAP])["spark"]["jobs"]


@check
def analyses_by_plan(spark):
    """One analysis run as a small incident, as a larger one with few events (``FEW_EVENTS``), as
    any other, with adaptive instead of static shuffles, and with too small a heap to build the
    model's tables and write the result's lists at once (``room_to_run_at_once``)."""
    from forensics.spark import sql_settings
    from tests.helpers import GENERATED

    analysis = importlib.import_module("forensics.analyze")
    ingest_package = importlib.import_module("forensics.ingest")
    materialising = importlib.import_module("forensics.spark.materialise")
    larger = (analysis, "SMALL_INCIDENT_BYTES", 0)
    counts = {"small incident": _analysed(spark)}
    with sql_settings(spark, GENERATED):
        counts["few events"] = _analysed(spark, larger)
    counts["general"] = _analysed(spark, larger, (analysis, "FEW_EVENTS", 0))
    no_static = lambda session, text_bytes: {}  # noqa: E731
    counts["few events, adaptive"] = _analysed(
        spark, larger, (analysis, "in_step_with_cores", no_static), (ingest_package, "in_step_with_cores", no_static)
    )
    heap = spark._jvm.java.lang.Runtime.getRuntime().maxMemory()
    counts["few events, tight heap"] = _analysed(spark, larger, (materialising, "HEAP_PER_CONCURRENT_ROW", heap))
    ok = (
        counts["small incident"] < counts["few events"]
        and counts["few events"] * 2 < counts["general"]
        and counts["few events"] < counts["few events, adaptive"]
        and counts["few events, tight heap"] == counts["few events"] + 2 + 6
    )
    return (
        counts,
        ok,
        "small < few events, few events * 2 < general, few events < adaptive, tight heap = few events + 8 (3 tables, 7 lists)",
    )


@check
def exports_read_together(spark):
    """The ten csv, tsv, ndjson and JSON exports of tests/data/exports read together cost no more jobs than one csv alone."""
    from forensics.ingest import ingest

    files = sorted(str(path) for path in EXPORTS.glob("*.*") if path.suffix != ".md")
    together, _ = jobs_of(spark, lambda: ingest(spark, files))
    alone, _ = jobs_of(spark, lambda: ingest(spark, [str(EXPORTS / "kibana_discover.csv")]))
    return {"ten exports": together, "one csv": alone}, together <= alone, "ten exports <= one csv"


# --------------------------------------------------------------------------------- py4j round trips


@check
def spark_functions_in_one_round_trip(spark):
    """``remember_jvm_lookups``: ``F.col`` and ``F.lit`` of values not asked before are one call
    each; ``SameAnswer``: of a name or value asked before, none; of a float, one each time."""
    from pyspark.sql import functions as F

    F.col("any"), F.lit(1), F.col("kept"), F.lit("kept"), F.lit(7), F.lit(True)
    counts = {}
    with round_trips() as sent:
        F.col(f"a new name {time.time_ns()}"), F.lit(f"a new value {time.time_ns()}")
        counts["col and lit of new values"] = sent()
    with round_trips() as sent:
        F.col("kept"), F.lit("kept"), F.lit(7), F.lit(True)
        counts["col and lit asked before"] = sent()
    with round_trips() as sent:
        F.lit(0.5), F.lit(0.5)
        counts["lit of a float, twice"] = sent()
    expected = {"col and lit of new values": 2, "col and lit asked before": 0, "lit of a float, twice": 2}
    return counts, counts == expected, "2, 0, 2"


@check
def python_lists_in_few_round_trips(spark):
    """``ListInOneCall``: up to ten elements one ``List.of`` call, longer lists ten at a time, a list
    with a None py4j's own way (an ``ArrayList`` and an ``add`` per element); ``toSeq`` one more."""
    seq = spark._jvm.org.apache.spark.api.python.PythonUtils.toSeq
    seq(["warm"])
    counts = {}
    for name, value in (
        ("five", list("abcde")),
        ("empty", []),
        ("23", [str(n) for n in range(23)]),
        ("mixed tuple", ("t", 1, True)),
        ("with a None", ["a", None, "c"]),
    ):
        with round_trips() as sent:
            seq(value)
            counts[name] = sent()
    expected = {"five": 2, "empty": 2, "23": 8, "mixed tuple": 2, "with a None": 5}
    return counts, counts == expected, "5 elements 2, empty 2, 23 elements 8, a tuple 2, with a None 5"


@check
def analysis_lookups_kept(spark):
    """``remember_jvm_lookups``: the round trips of a second analysis of ``sample_logs/`` in one
    session, with the session's view keeping what it looked up (``KeptView``), and with py4j's
    plain view; the kept one sends fewer."""
    from py4j.java_gateway import JVMView

    from forensics.analyze import analyze
    from forensics.spark.lookups import KeptView

    jvm = spark.sparkContext._jvm
    own = {"_gateway_client", "_jvm_name", "_id", "_jvm_object", "_dir_sequence_and_cache"}

    def sent_by_analysis() -> int:
        with round_trips() as sent:
            analyze(spark, [str(SAMPLE_LOGS)])
            return sent()

    analyze(spark, [str(SAMPLE_LOGS)])
    kept = sent_by_analysis()
    jvm.__class__ = JVMView
    for name in set(vars(jvm)) - own:
        del vars(jvm)[name]
    try:
        plain = sent_by_analysis()
    finally:
        jvm.__class__ = KeptView
    counts = {"kept view": kept, "plain view": plain}
    return counts, kept < plain, "kept view < plain view"


# ---------------------------------------------------------------------------------


def stamp() -> dict:
    """The commit, the machine and the versions the counts were measured on."""
    import py4j
    import pyspark

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return done.stdout.strip()

    return {
        "commit": git("rev-parse", "HEAD"),
        "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        "machine": {"node": platform.node(), "system": platform.platform(), "cpus": os.cpu_count()},
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "py4j": py4j.__version__,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="write the counts as JSON to this file")
    parser.add_argument("--only", help="comma-separated names of checks to run")
    args = parser.parse_args(argv)
    names = args.only.split(",") if args.only else list(CHECKS)
    spark = session()
    results, failed = {}, 0
    for name in names:
        counts, ok, expected = CHECKS[name](spark)
        results[name] = {"counts": counts, "expected": expected, "ok": ok}
        failed += not ok
        print(f"{'ok' if ok else 'DIFFERS':8} {name}: {json.dumps(counts)}  (expected {expected})", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({**stamp(), "checks": results}, indent=2) + "\n", encoding="utf-8")
    print(f"\n{len(names) - failed} of {len(names)} checks as expected")
    spark.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
