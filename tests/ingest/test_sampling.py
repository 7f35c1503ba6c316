"""The plan fitted to the input: recognisers chosen from samples, layouts from the fold's facts,
hard wrapping told from widths, and times read in one conversion."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import functions as F

from forensics import layouts
from forensics.ingest import ingest_files, resolve_inputs
from forensics.ingest.read import read_splits
from forensics.ingest.records import recognise
from forensics.ingest.sampling import ALL, needed_recognisers, sample_lines

from ..helpers import ingest_paths, records_by_line

SHAPES = Path(__file__).parents[1] / "data" / "shapes"


def files(shape: str) -> list[str]:
    return sorted(str(p) for p in (SHAPES / shape).iterdir())


def test_samples_name_what_the_lines_need():
    plain = needed_recognisers(files("plain_log4j"))
    assert (plain.wrappers, plain.fallback, plain.seen) == (False, False, frozenset({"log4j"}))
    assert needed_recognisers(files("kubectl_timestamps")).wrappers
    assert needed_recognisers(files("docker_json_file")).wrappers
    dropwizard = needed_recognisers(files("dropwizard"))
    assert dropwizard.fallback and not dropwizard.wrappers
    assert needed_recognisers(["/no/such/file.log"]) == ALL


def test_large_file_is_sampled_at_its_head_and_spread_to_its_end(tmp_path):
    path = tmp_path / "big.log"
    lines = [f"[2024-03-11 14:02:17,418] INFO line {i} (x.Y)" for i in range(120_000)]
    lines[-1] = "2024-03-11T14:02:17.418Z " + lines[-1]  # a kubectl-wrapped last line
    path.write_text("\n".join(lines) + "\n")
    sampled = sample_lines(str(path))
    assert sampled[0] == lines[0] and sampled[-1] == lines[-1] and len(sampled) < len(lines) / 3
    assert needed_recognisers([str(path)]).wrappers


def test_narrow_plan_recognises_what_the_full_plan_does(spark):
    paths = files("plain_log4j") + files("dropwizard")
    lines = read_splits(spark, paths)
    tried = needed_recognisers(paths)
    assert tried != ALL
    narrow = recognise(lines, layouts.LAYOUTS, tried).select("uri", "line", "layout", "wrapper").collect()
    full = recognise(lines, layouts.LAYOUTS, ALL).select("uri", "line", "layout", "wrapper").collect()
    assert sorted(map(tuple, narrow), key=str) == sorted(map(tuple, full), key=str)


def test_long_lines_mean_a_file_was_not_hard_wrapped(spark, tmp_path):
    """Five kept lines exactly 120 wide are no hard wrap when a longer kept line exists: their
    record keeps its line breaks."""
    head = "[2024-03-11 14:02:17,418] ERROR [Consumer clientId=c-1, groupId=g] Commit failed (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)"
    tail = ["x" * 120] * 5 + ["y" * 150]
    path = tmp_path / "app.log"
    path.write_text("\n".join([head, *tail]) + "\n")
    record = records_by_line(ingest_paths(spark, path))[1]
    assert record["message"].count("\n") == len(tail)


def test_zone_names_and_hour_offsets_are_read_once(spark):
    rows = spark.createDataFrame(
        [("2024-03-11 14:02:17,418 UTC", "Europe/Berlin"), ("2024-03-11T14:02:17+01", "UTC"), ("2024-03-11 14:02:17.418+0100", "UTC"),
         ("2024-03-11 14:02:17,418", "Europe/Berlin"), ("Mar 1, 2024 @ 14:02:17.418", "UTC"), ("1 Mar 2024 14:02:17,418", "+02:00")],
        "t string, z string",
    )
    got = [r[0].isoformat() for r in rows.select(layouts._common.any_to_utc(F.col("t"), F.col("z"))).collect()]
    assert got == [
        "2024-03-11T14:02:17.418000", "2024-03-11T13:02:17", "2024-03-11T13:02:17.418000",
        "2024-03-11T13:02:17.418000", "2024-03-01T14:02:17.418000", "2024-03-01T12:02:17.418000",
    ]


def test_records_are_parsed_with_the_layouts_the_files_hold(spark):
    """A file of one layout and an untimed paste: the records projection is built for the
    layouts the fold saw (and message_only), and gives every record."""
    result = ingest_files(spark, resolve_inputs(files("plain_log4j") + files("no_timestamp")))
    assert result.accounting["records"] > 0
    assert {r["layout"] for r in result.records.select("layout").distinct().collect()} == {"log4j", "message_only"}


def test_a_kubectl_dated_exception_line_continues_its_record(spark, tmp_path):
    """``kubectl logs --timestamps`` dates every line; the exception's first line under a Kafka
    record still continues that record, as in the plain log (the 4M kubectl twin counted 337
    such lines as records of their own)."""
    stamp = "2024-03-11T14:02:17.418000000Z "
    lines = [
        "[2024-03-11 14:02:17,418] ERROR [Consumer clientId=c-1, groupId=g] Offset commit failed (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)",
        "org.apache.kafka.clients.consumer.CommitFailedException: Commit cannot be completed since the group has already rebalanced",
        "\tat org.apache.kafka.clients.consumer.internals.ConsumerCoordinator.sendOffsetCommitRequest(ConsumerCoordinator.java:1109)",
    ]
    (tmp_path / "plain.log").write_text("\n".join(lines) + "\n")
    (tmp_path / "pod.log").write_text("\n".join(stamp + line for line in lines) + "\n")
    for name in ("plain.log", "pod.log"):
        result = ingest_paths(spark, tmp_path / name)
        records = records_by_line(result)
        assert list(records) == [1] and "CommitFailedException" in records[1]["message"], name
