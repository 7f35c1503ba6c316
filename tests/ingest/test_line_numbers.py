"""Line numbers stay exact when Spark cuts a large plain file into several partitions."""

from __future__ import annotations

from pyspark.sql import functions as F

from forensics.ingest import kafka_lines, resolve_inputs
from forensics.ingest.read import read_lines, split_bytes
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
