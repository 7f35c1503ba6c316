"""Last checkpoint written before a task opens (restore episodes): on one host, task 0_1 moves
from StreamThread-1 (generation 5) to StreamThread-2 (generation 6) and StreamThread-2 loads
the checkpoint StreamThread-1 wrote; task 0_2 moves the same way but StreamThread-2 finds no
checkpoint although one was written, so its restore could have started from it.

StreamThread-1 writes the last checkpoint of 0_2 after it joined generation 6 (as a thread
does when it closes a task during a cooperative rebalance): that line opens no episode.
Checkpoints of another host, checkpoints written after the task opened and unknown offsets
(-4) are not candidates."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from tests.helpers import ingest_paths, small_model

PSM = "(org.apache.kafka.streams.processor.internals.ProcessorStateManager)"
CC = "(org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)"
T1, T2 = "app-StreamThread-1", "app-StreamThread-2"
STORE, OTHER = "app-store-changelog", "app-other-changelog"


def joined(ts: str, thread: str, generation: int) -> str:
    return (
        f"[2024-06-01 10:{ts}] INFO [Consumer clientId={thread}-consumer, groupId=app] Successfully joined group with "
        f"generation Generation{{generationId={generation}, memberId='{thread}-m', protocol='stream'}} {CC}"
    )


def task_line(ts: str, level: str, thread: str, task: str, text: str) -> str:
    return f"[2024-06-01 10:{ts}] {level} stream-thread [{thread}] task [{task}] {text} {PSM}"


HOST_A = [
    joined("00:00,000", T1, 5),  # 1
    task_line(
        "00:00,100",
        "INFO",
        T1,
        "0_1",
        f"State store store did not find checkpoint offset, hence would default to the starting offset at changelog {STORE}-1",
    ),
    task_line(
        "00:00,110",
        "INFO",
        T1,
        "0_2",
        f"State store store did not find checkpoint offset, hence would default to the starting offset at changelog {STORE}-2",
    ),
    task_line("00:05,000", "DEBUG", T1, "0_1", f"Writing checkpoint: {{{STORE}-1=100}}"),  # 4: older
    task_line("00:09,000", "DEBUG", T1, "0_1", f"Writing checkpoint: {{{STORE}-1=40200, {OTHER}-1=-4}}"),  # 5: last for 0_1
    joined("00:09,005", T1, 6),  # 6
    task_line("00:09,010", "DEBUG", T1, "0_2", f"Writing checkpoint: {{{STORE}-2=777}}"),  # 7: last for 0_2
    joined("00:10,000", T2, 6),  # 8
    task_line("00:10,100", "INFO", T2, "0_1", f"State store store initialized from checkpoint with offset 40200 at changelog {STORE}-1"),
    task_line(
        "00:10,110",
        "INFO",
        T2,
        "0_2",
        f"State store store did not find checkpoint offset, hence would default to the starting offset at changelog {STORE}-2",
    ),
    task_line("00:20,000", "DEBUG", T2, "0_1", f"Writing checkpoint: {{{STORE}-1=50000}}"),  # 11: after the opening
]
HOST_B = [
    task_line("00:09,500", "DEBUG", T1, "0_1", f"Writing checkpoint: {{{STORE}-1=99999}}")  # another state dir
]


@pytest.fixture(scope="module")
def restores(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("checkpoints")
    for host, lines in (("host-a", HOST_A), ("host-b", HOST_B)):
        (root / host).mkdir()
        (root / host / "app.log").write_text("\n".join(lines) + "\n")
    model = small_model(spark, ingest_paths(spark, root).records)
    return {(r["host"], r["thread"], r["generation"], r["task"]): r.asDict() for r in model.restores.collect()}


def checkpoint_of(episode: dict):
    evidence = episode["last_checkpoint_evidence"]
    return (
        episode["last_checkpoint_offset"],
        episode["last_checkpoint_thread"],
        episode["last_checkpoint_ts"] and episode["last_checkpoint_ts"].strftime("%H:%M:%S.%f")[:-3],
        evidence and (evidence["file"].rsplit("/", 2)[-2], evidence["line"]),
    )


def test_checkpoint_lines_open_no_episode(restores):
    assert set(restores) == {("host-a", T1, 5, "0_1"), ("host-a", T1, 5, "0_2"), ("host-a", T2, 6, "0_1"), ("host-a", T2, 6, "0_2")}


def test_new_owner_on_the_same_host_sees_the_previous_threads_last_checkpoint(restores):
    episode = restores[("host-a", T2, 6, "0_1")]
    assert (episode["changelog"], episode["checkpoint_found"]) == (f"{STORE}-1", True)
    assert checkpoint_of(episode) == (40200, T1, "10:00:09.000", ("host-a", 5))


def test_checkpoint_written_but_not_found_shows_where_the_restore_could_have_started(restores):
    episode = restores[("host-a", T2, 6, "0_2")]
    assert (episode["checkpoint_found"], episode["changelog"]) == (False, f"{STORE}-2")
    assert checkpoint_of(episode) == (777, T1, "10:00:09.010", ("host-a", 7))


def test_no_checkpoint_before_the_first_opening(restores):
    assert checkpoint_of(restores[("host-a", T1, 5, "0_1")]) == (None, None, None, None)
    assert restores[("host-a", T1, 5, "0_1")]["opened_ts"].strftime("%H:%M:%S.%f")[:-3] == "10:00:00.100"


def test_checkpoint_map_entries_and_unknown_offsets(spark):
    from forensics.model.restores import checkpoints_written

    members = spark.createDataFrame(
        [
            ("streams:checkpoint:written", "h", T1, None, "f", 3, "{my-app-a-b-changelog-10=5, other-changelog-0=-4, x-1=0}"),
            ("streams:checkpoint:written", "h", T1, None, "f", 4, "{}"),
            ("streams:checkpoint:loaded", "h", T1, None, "f", 5, "y-2"),
        ],
        "event_type string, host string, thread string, client_id string, source_file string, line long, changelog string",
    ).withColumn("ts", F.current_timestamp())
    got = sorted((r["changelog"], r["offset"], r["evidence"]["line"]) for r in checkpoints_written(members).collect())
    assert got == [("my-app-a-b-changelog-10", 5, 3), ("x-1", 0, 3)]
