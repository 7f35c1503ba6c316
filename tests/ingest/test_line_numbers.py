"""Line numbers stay exact when Spark cuts a large plain file into several partitions."""

from __future__ import annotations

import gzip
import os

from pyspark.sql import functions as F

from forensics.ingest import kafka_lines, resolve_inputs
from forensics.ingest import read as read_module
from forensics.ingest.read import read_lines, split_bytes
from forensics.ingest.records import may_be_kafka_line
from forensics.spark import scan_splits
from tests.conftest import TEST_SPLIT_BYTES
from tests.helpers import ingest_paths, records_by_line

NOISE = "[2024-03-11 14:02:17,418] INFO request {n} served in 12 ms by worker pool (com.example.web.Server)"
KAFKA = (
    "[2024-03-11 14:02:18,000] INFO [Consumer clientId=consumer-orders-app-1, groupId=orders-app] "
    "Committed offset {n} for partition orders-0 (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)"
)


def write_big_file(path, lines: int) -> None:
    with open(path, "w") as out:
        for n in range(1, lines + 1):
            out.write((KAFKA if n % 97 == 0 else NOISE).format(n=n) + "\n")


def test_fixture_file_is_really_split(spark, tmp_path):
    path = tmp_path / "big.log"
    write_big_file(path, 20000)
    assert path.stat().st_size > 4 * TEST_SPLIT_BYTES == 4 * split_bytes(spark)
    blocks = spark.read.text(str(path)).select("_metadata.file_block_start").distinct().count()
    assert blocks >= 5


def test_every_line_number_matches_the_text_written_on_it(spark, tmp_path):
    path = tmp_path / "big.log"
    write_big_file(path, 20000)
    lines = read_lines(spark, [str(path)], {str(path): path.stat().st_size})
    number_in_text = F.regexp_extract("value", r"(request|offset) (\d+)", 2).cast("long")
    stats = lines.agg(F.count("*").alias("n"), F.sum((F.col("line") != number_in_text).cast("int")).alias("wrong")).first()
    assert (stats["n"], stats["wrong"]) == (20000, 0)


def test_records_from_a_split_file_carry_their_true_line(spark, tmp_path):
    path = tmp_path / "big.log"
    write_big_file(path, 20000)
    result = ingest_paths(spark, path)
    records = records_by_line(result)
    assert sorted(records) == [n for n in range(1, 20001) if n % 97 == 0]
    assert all(f"Committed offset {n} " in r["message"] for n, r in records.items())
    assert result.inputs[0]["irrelevant"] == 20000 - len(records)


def test_line_level_kafka_lines_of_a_split_file_carry_their_true_line(spark, tmp_path):
    path = tmp_path / "big.log"
    write_big_file(path, 20000)
    rows = kafka_lines(spark, resolve_inputs([str(path)])).collect()
    assert sorted(r["line"] for r in rows) == [n for n in range(1, 20001) if n % 97 == 0]
    assert all(f"Committed offset {r['line']} " in r["message"] and r["source_file"] == str(path) for r in rows)


def test_the_plan_places_each_split_where_spark_metadata_places_it(spark, tmp_path):
    """``scan_splits`` reads each partition's file and start from the plan; ``_metadata``, the
    per-row way, must agree, for a split file, odd file names and a gzip file."""
    write_big_file(tmp_path / "big.log", 20000)
    for name in ("a b.log", "c+d.log", "e%20f.log", "g#h.log", "ü.log"):
        (tmp_path / name).write_text(NOISE.format(n=1) + "\n")
    with gzip.open(tmp_path / "z.log.gz", "wt") as out:
        out.write(KAFKA.format(n=1) + "\n")
    read = spark.read.text(sorted(str(p) for p in tmp_path.iterdir()))
    by_metadata = read.select(F.spark_partition_id().alias("split"), F.col("_metadata.file_path"), F.col("_metadata.file_block_start"))
    placed = sorted({tuple(r) for r in by_metadata.collect()})
    assert scan_splits(read) == [(uri, start) for _, uri, start in placed]
    assert len(placed) >= 12


def test_lines_read_without_the_plan_are_the_same_rows(spark, tmp_path, monkeypatch):
    """Where the plan is not at hand (Spark Connect), each row carries its file from ``_metadata``."""
    path = tmp_path / "big.log"
    write_big_file(path, 20000)
    (tmp_path / "bom.log").write_bytes("\ufeff".encode() + (KAFKA.format(n=1) + "\n").encode())
    paths = [str(path), str(tmp_path / "bom.log")]
    sizes = {p: os.path.getsize(p) for p in paths}

    def rows():
        return sorted(tuple(r) for r in read_lines(spark, paths, sizes, where=may_be_kafka_line(F.col("value"))).collect())

    planned = rows()
    monkeypatch.setattr(read_module, "scan_splits", lambda frame: None)
    assert rows() == planned
    assert len(planned) == 20000 // 97 + 1
    assert [(line, value) for uri, line, value in planned if uri.endswith("/bom.log")] == [(1, KAFKA.format(n=1))]  # the mark taken off
