"""Each detector on a small hand-written incident: the seeds' own cases, exact to the offset."""

from __future__ import annotations

import pytest

from forensics.detect import DETECTORS, detect, findings_json
from forensics.offsets import read_offsets
from tests.helpers import as_small_incident, ingest_paths, small_model
from tests.model.conftest import line
from tests.model.test_commits import C1_LOG, C2_LOG

KEY = ("detector", "group", "topic", "partition", "task", "offset_from", "offset_to", "records", "verdict", "classification", "exact")


def analyse(spark, root, offsets=None) -> list[dict]:
    dumps = read_offsets(spark, [str(p) for p in offsets]) if offsets else None
    model = small_model(spark, ingest_paths(spark, root).records, dumps)
    with as_small_incident(spark):
        return findings_json(detect(model))


def keys(findings: list[dict]) -> list[tuple]:
    return [tuple(f[k] for k in KEY) for f in findings]


def write(root, logs: dict[str, list[str]]):
    for host, lines in logs.items():
        (root / host).mkdir(parents=True, exist_ok=True)
        (root / host / "app.log").write_text("\n".join(lines) + "\n")
    return root


def test_seed_003_late_commit_of_a_lost_partition_is_a_zombie_backward_commit(spark, tmp_path):
    """c2 resumed orders-1 from 4 and committed 7; c1, which lost it, then commits 5: [4, 5) was
    processed by both, and [5, 7) is processed again by the partition's next owner."""
    found = analyse(spark, write(tmp_path, {"c1": C1_LOG, "c2": C2_LOG}))
    assert keys(found) == [("backward_commit", "orders-app", "orders", 1, None, 4, 7, 3, "duplication", "zombie", True)]
    assert [(e["file"].split("/")[-2], e["line"]) for e in found[0]["evidence"]] == [("c1", 8), ("c2", 4), ("c2", 5)]
    assert "c1/c1 committed offset 5 for orders-1 after it had lost the partition" in found[0]["explanation"]
    assert "which the partition's next owner will process again" in found[0]["explanation"]
    assert "resumed from 4, so [4, 5) was processed both by c1/c1" in found[0]["explanation"]


def test_a_zombie_step_the_owner_overtakes_replays_nothing(spark, tmp_path):
    """lab D13: c2 commits 9, past the 7 that c1's late commit of 5 went back from, before any
    reassignment. No one resumes from 5; only [4, 5), which both processed, is duplicated."""
    c2 = [*C2_LOG, line("00:10,000", "DEBUG", "c2", "Committed offset 9 for partition orders-1")]
    found = analyse(spark, write(tmp_path, {"c1": C1_LOG, "c2": c2}))
    assert keys(found) == [("backward_commit", "orders-app", "orders", 1, None, 4, 5, 1, "duplication", "zombie", True)]
    assert [(e["file"].split("/")[-2], e["line"]) for e in found[0]["evidence"]] == [("c1", 8), ("c2", 4), ("c2", 5), ("c2", 6)]
    assert "the owner's own commit of 9 overtook it before any member resumed from it" in found[0]["explanation"]


SEEK = "(org.apache.kafka.clients.consumer.internals.SubscriptionState)"
POSITION = "offsetEpoch=Optional.empty, currentLeader=LeaderAndEpoch{leader=Optional[broker-1:9092 (id: 1 rack: null)], epoch=0}}"


def consumer(ts: str, level: str, text: str, logger: str = "(org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)") -> str:
    return f"[2021-03-02 10:{ts}] {level} [Consumer clientId=consumer-demo-1, groupId=demo] {text} {logger}"


def test_seed_001_new_partition_reset_to_latest_loses_offsets_0_to_4(spark, tmp_path):
    log = [
        consumer("00:00,000", "INFO", "Found no committed offset for partition demo-topic-1"),
        consumer("00:00,001", "INFO", "Seeking to LATEST offset of partition demo-topic-1", SEEK),
        consumer(
            "00:00,010", "INFO", f"Resetting offset for partition demo-topic-1 to position FetchPosition{{offset=5, {POSITION}.", SEEK
        ),
    ]
    dump = tmp_path / "dump.txt"
    dump.write_text(
        "Dumping /var/lib/kafka/data/demo-topic-1/00000000000000000000.log\nStarting offset: 0\n"
        "baseOffset: 0 lastOffset: 4 count: 5 baseSequence: 0 lastSequence: 4 producerId: -1 producerEpoch: -1 "
        "partitionLeaderEpoch: 0 isTransactional: false isControl: false position: 0 CreateTime: 1614679200000 size: 120 "
        "magic: 2 compresscodec: NONE crc: 1 isvalid: true\n"
    )
    found = analyse(spark, write(tmp_path / "logs", {"app-1": log}), [dump])
    assert keys(found) == [("reset_to_latest_gap", "demo", "demo-topic", 1, None, 0, 5, 5, "loss", None, True)]
    assert [e["line"] for e in found[0]["evidence"] if e["file"].endswith("app.log")] == [1, 2, 3]
    without_dump = analyse(spark, tmp_path / "logs")
    assert keys(without_dump) == [("reset_to_latest_gap", "demo", "demo-topic", 1, None, 0, 5, 5, "loss", None, False)]


def test_out_of_range_resets_forward_lose_and_backward_replay(spark, tmp_path):
    log = [
        consumer(
            "00:00,000",
            "INFO",
            f"Fetch position FetchPosition{{offset=120, {POSITION} is out of range for partition demo-topic-0, resetting offset",
            "(org.apache.kafka.clients.consumer.internals.Fetcher)",
        ),
        consumer("00:00,001", "INFO", "Seeking to EARLIEST offset of partition demo-topic-0", SEEK),
        consumer(
            "00:00,002", "INFO", f"Resetting offset for partition demo-topic-0 to position FetchPosition{{offset=300, {POSITION}.", SEEK
        ),
        consumer(
            "00:01,000",
            "INFO",
            f"Fetch position FetchPosition{{offset=900, {POSITION} is out of range for partition demo-topic-2, resetting offset",
            "(org.apache.kafka.clients.consumer.internals.Fetcher)",
        ),
        consumer(
            "00:01,002", "INFO", f"Resetting offset for partition demo-topic-2 to position FetchPosition{{offset=850, {POSITION}.", SEEK
        ),
    ]
    found = analyse(spark, write(tmp_path, {"app-1": log}))
    assert keys(found) == [
        ("out_of_range_reset", "demo", "demo-topic", 0, None, 120, 300, 180, "loss", None, True),
        ("out_of_range_reset", "demo", "demo-topic", 2, None, 850, 900, 50, "duplication", None, True),
    ]


def test_failed_commit_then_resume_from_older_commit_is_reprocessing(spark, tmp_path):
    old_owner = [
        consumer(
            "00:00,000", "INFO", "Successfully joined group with generation Generation{generationId=3, memberId='m1', protocol='range'}"
        ),
        consumer("00:00,010", "INFO", "Adding newly assigned partitions: demo-topic-2"),
        consumer("00:01,000", "DEBUG", "Committed offset 40 for partition demo-topic-2"),
        consumer(
            "00:09,000",
            "ERROR",
            "Offset commit failed on partition demo-topic-2 at offset 95: The coordinator is not aware of this member.",
        ),
    ]
    new_owner = [
        consumer(
            "00:08,000", "INFO", "Successfully joined group with generation Generation{generationId=4, memberId='m2', protocol='range'}"
        ),
        consumer("00:08,010", "INFO", "Adding newly assigned partitions: demo-topic-2"),
        consumer(
            "00:09,500", "INFO", f"Setting offset for partition demo-topic-2 to the committed offset FetchPosition{{offset=40, {POSITION}"
        ),
    ]
    found = analyse(spark, write(tmp_path, {"app-1": old_owner, "app-2": new_owner}))
    assert keys(found) == [("reprocessing", "demo", "demo-topic", 2, None, 40, 95, 55, "expected", None, True)]


def test_every_detector_is_named_and_documented():
    assert list(DETECTORS) == [
        "skipped_restore",
        "redundant_restore",
        "reset_to_latest_gap",
        "out_of_range_reset",
        "backward_commit",
        "reprocessing",
        "rebalance_storm",
        "poll_timeout",
        "session_timeout",
        "fenced",
        "risky_config",
        "double_ownership",
        "epochless_offset_reset",
        "stale_epoch_commit",
        "stuck_revocation",
        "describe_mid_rebalance",
        "phantom_lag",
    ]
    assert all(len(function.__doc__ or "") > 120 for function in DETECTORS.values())


def test_unknown_detector_is_refused(spark):
    with pytest.raises(ValueError, match="unknown detectors"):
        detect(None, ["nonsense"])


def _streams_start(ts: str, app: str, version: str) -> list[str]:
    return [
        f"2019-05-02 {ts},100 INFO  org.apache.kafka.streams.StreamsConfig - StreamsConfig values: ",
        f"\tapplication.id = {app}",
        "\tprocessing.guarantee = exactly_once",
        "",
        f"2019-05-02 {ts},120 INFO  org.apache.kafka.common.utils.AppInfoParser - Kafka version : {version}",
    ]


def test_kafka_7672_risk_takes_the_version_banner_that_follows_the_config_block(spark, tmp_path):
    """Two exactly-once applications start one after the other in one host's log, on 2.0.0
    (KAFKA-7672) and 2.3.0 (fixed): only the first is at risk, with its own banner as evidence."""
    log = _streams_start("09:00:00", "ledger-old", "2.0.0") + _streams_start("10:00:00", "ledger-new", "2.3.0")
    found = [f for f in analyse(spark, write(tmp_path, {"h1": log})) if f["detector"] == "risky_config"]
    assert [(f["group"], f["classification"]) for f in found] == [("ledger-old", "processing.guarantee")]
    assert [e["line"] for e in found[0]["evidence"]] == [1, 5]
    assert "Kafka Streams 2.0.0" in found[0]["explanation"]
