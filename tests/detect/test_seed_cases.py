"""Each detector on a small hand-written incident: the seeds' own cases, exact to the offset."""

from __future__ import annotations

import pytest

from forensics.detect import DETECTORS, detect
from tests.detect.incidents import Incident, analyse_apart, keys, renamed
from tests.model.conftest import line
from tests.model.test_commits import C1_LOG, C2_LOG

SEEK = "(org.apache.kafka.clients.consumer.internals.SubscriptionState)"
POSITION = "offsetEpoch=Optional.empty, currentLeader=LeaderAndEpoch{leader=Optional[broker-1:9092 (id: 1 rack: null)], epoch=0}}"


def consumer(
    ts: str, level: str, text: str, logger: str = "(org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)", group: str = "demo"
) -> str:
    return f"[2021-03-02 10:{ts}] {level} [Consumer clientId=consumer-{group}-1, groupId={group}] {text} {logger}"


def _reset_to_latest_of_demo_topic_1() -> list[str]:
    return [
        consumer("00:00,000", "INFO", "Found no committed offset for partition demo-topic-1"),
        consumer("00:00,001", "INFO", "Seeking to LATEST offset of partition demo-topic-1", SEEK),
        consumer(
            "00:00,010", "INFO", f"Resetting offset for partition demo-topic-1 to position FetchPosition{{offset=5, {POSITION}.", SEEK
        ),
    ]


DEMO_TOPIC_1_DUMP = (
    "Dumping /var/lib/kafka/data/demo-topic-1/00000000000000000000.log\nStarting offset: 0\n"
    "baseOffset: 0 lastOffset: 4 count: 5 baseSequence: 0 lastSequence: 4 producerId: -1 producerEpoch: -1 "
    "partitionLeaderEpoch: 0 isTransactional: false isControl: false position: 0 CreateTime: 1614679200000 size: 120 "
    "magic: 2 compresscodec: NONE crc: 1 isvalid: true\n"
)


def _out_of_range_resets() -> list[str]:
    """Group ``ranges`` on host app-3: named apart from seed_001's ``demo`` on app-1 (one run)."""
    fetcher = "(org.apache.kafka.clients.consumer.internals.Fetcher)"
    return [
        consumer(
            "00:00,000",
            "INFO",
            f"Fetch position FetchPosition{{offset=120, {POSITION} is out of range for partition demo-topic-0, resetting offset",
            fetcher,
            group="ranges",
        ),
        consumer("00:00,001", "INFO", "Seeking to EARLIEST offset of partition demo-topic-0", SEEK, group="ranges"),
        consumer(
            "00:00,002",
            "INFO",
            f"Resetting offset for partition demo-topic-0 to position FetchPosition{{offset=300, {POSITION}.",
            SEEK,
            group="ranges",
        ),
        consumer(
            "00:01,000",
            "INFO",
            f"Fetch position FetchPosition{{offset=900, {POSITION} is out of range for partition demo-topic-2, resetting offset",
            fetcher,
            group="ranges",
        ),
        consumer(
            "00:01,002",
            "INFO",
            f"Resetting offset for partition demo-topic-2 to position FetchPosition{{offset=850, {POSITION}.",
            SEEK,
            group="ranges",
        ),
    ]


def _failed_commit(group: str = "retries") -> dict[str, list[str]]:
    """Group ``retries``, topic ``retry-topic``, hosts app-4 and app-5: named apart from the other
    demo incidents of the run."""
    joined = "Successfully joined group with generation Generation{{generationId={}, memberId='{}', protocol='range'}}"
    old_owner = [
        consumer("00:00,000", "INFO", joined.format(3, "m1"), group=group),
        consumer("00:00,010", "INFO", "Adding newly assigned partitions: retry-topic-2", group=group),
        consumer("00:01,000", "DEBUG", "Committed offset 40 for partition retry-topic-2", group=group),
        consumer(
            "00:09,000",
            "ERROR",
            "Offset commit failed on partition retry-topic-2 at offset 95: The coordinator is not aware of this member.",
            group=group,
        ),
    ]
    new_owner = [
        consumer("00:08,000", "INFO", joined.format(4, "m2"), group=group),
        consumer("00:08,010", "INFO", "Adding newly assigned partitions: retry-topic-2", group=group),
        consumer(
            "00:09,500",
            "INFO",
            f"Setting offset for partition retry-topic-2 to the committed offset FetchPosition{{offset=40, {POSITION}",
            group=group,
        ),
    ]
    return {"app-4": old_owner, "app-5": new_owner}


def _streams_start(ts: str, app: str, version: str) -> list[str]:
    return [
        f"2019-05-02 {ts},100 INFO  org.apache.kafka.streams.StreamsConfig - StreamsConfig values: ",
        f"\tapplication.id = {app}",
        "\tprocessing.guarantee = exactly_once",
        "",
        f"2019-05-02 {ts},120 INFO  org.apache.kafka.common.utils.AppInfoParser - Kafka version : {version}",
    ]


def _zombie_ahead() -> dict[str, list[str]]:
    """Group ``ahead``, hosts z1 and z2: z1 loses ahead-topic-1 to -4 to z2, which resumes each
    from 10; z1 commits 12 and 16 (1) or 16 (2 to 4) late, before z2's next commit: 20 (1, 4),
    none (2), 13 (3); then 14 (4), a step back from z2's 20."""

    def at(ts: str, level: str, host: str, text: str) -> str:
        return consumer(ts, level, text.replace("TOPIC", "ahead-topic"), group="ahead").replace("consumer-ahead-1", host)

    joined = "Successfully joined group with generation Generation{{generationId={}, memberId='{}', protocol='range'}}"
    resume = "Setting offset for partition ahead-topic-{} to the committed offset FetchPosition{{offset=10, {}"
    old_owner = [
        at("00:00,100", "INFO", "z1", joined.format(3, "z1-m")),
        at("00:00,120", "INFO", "z1", "Adding newly assigned partitions: TOPIC-0, TOPIC-1, TOPIC-2, TOPIC-3, TOPIC-4"),
        *(at("00:01,000", "DEBUG", "z1", f"Committed offset 10 for partition TOPIC-{p}") for p in (1, 2, 3, 4)),
        at("00:02,000", "INFO", "z1", "Revoke previously assigned partitions TOPIC-0, TOPIC-1, TOPIC-2, TOPIC-3, TOPIC-4"),
        at("00:02,200", "INFO", "z1", joined.format(4, "z1-m")),
        at("00:02,230", "INFO", "z1", "Adding newly assigned partitions: TOPIC-0"),
        at("00:03,000", "DEBUG", "z1", "Committed offset 12 for partition TOPIC-1"),
        *(at("00:04,000", "DEBUG", "z1", f"Committed offset 16 for partition TOPIC-{p}") for p in (1, 2, 3, 4)),
        at("00:06,000", "DEBUG", "z1", "Committed offset 14 for partition TOPIC-4"),
    ]
    new_owner = [
        at("00:02,050", "INFO", "z2", "(Re-)joining group"),
        at("00:02,201", "INFO", "z2", joined.format(4, "z2-m")),
        at("00:02,231", "INFO", "z2", "Adding newly assigned partitions: TOPIC-1, TOPIC-2, TOPIC-3, TOPIC-4"),
        *(at("00:02,240", "INFO", "z2", resume.format(p, POSITION)) for p in (1, 2, 3, 4)),
        at("00:05,000", "DEBUG", "z2", "Committed offset 20 for partition TOPIC-1"),
        at("00:05,000", "DEBUG", "z2", "Committed offset 13 for partition TOPIC-3"),
        at("00:05,000", "DEBUG", "z2", "Committed offset 20 for partition TOPIC-4"),
    ]
    return {"z1": old_owner, "z2": new_owner}


INCIDENTS = {
    "seed_003": Incident({"c1": C1_LOG, "c2": C2_LOG}),
    "seed_001": Incident({"app-1": _reset_to_latest_of_demo_topic_1()}),
    "out_of_range": Incident({"app-3": _out_of_range_resets()}),
    "failed_commit": Incident(_failed_commit()),
    "kafka_7672": Incident({"h1": _streams_start("09:00:00", "ledger-old", "2.0.0") + _streams_start("10:00:00", "ledger-new", "2.3.0")}),
}
"""The module's incidents, analysed in one run (``analyse_apart``)."""
WITH_DUMPS = {
    "seed_001": Incident({"app-1": _reset_to_latest_of_demo_topic_1()}, (DEMO_TOPIC_1_DUMP,)),
    "zombie_overtaken": Incident(
        {"c1": C1_LOG, "c2": [*C2_LOG, line("00:10,000", "DEBUG", "c2", "Committed offset 9 for partition orders-1")]}
    ),
    "zombie_ahead": Incident(_zombie_ahead()),
}
"""A second run: seed_001 again with an offset dump, zombie_overtaken (seed_003's hosts and
group) and zombie_ahead; no dump names their partitions."""


@pytest.fixture(scope="module")
def found(spark, tmp_path_factory) -> dict[str, list[dict]]:
    root = tmp_path_factory.mktemp("seed_cases")
    return analyse_apart(spark, root / "logs", INCIDENTS)


@pytest.fixture(scope="module")
def found_with_dumps(spark, tmp_path_factory) -> dict[str, list[dict]]:
    root = tmp_path_factory.mktemp("seed_cases_dumped")
    return analyse_apart(spark, root / "logs", WITH_DUMPS)


def test_seed_003_late_commit_of_a_lost_partition_is_a_zombie_backward_commit(found):
    """c2 resumed orders-1 from 4 and committed 7; c1, which lost it, then commits 5: [4, 5) was
    processed by both, and [5, 7) is processed again by the partition's next owner."""
    found = found["seed_003"]
    assert keys(found) == [("backward_commit", "orders-app", "orders", 1, None, 4, 7, 3, "duplication", "zombie", True)]
    assert [(e["file"].split("/")[-2], e["line"]) for e in found[0]["evidence"]] == [("c1", 8), ("c2", 4), ("c2", 5)]
    assert "c1/c1 committed offset 5 for orders-1 after it had lost the partition" in found[0]["explanation"]
    assert "which the partition's next owner will process again" in found[0]["explanation"]
    assert "resumed from 4, so [4, 5) was processed both by c1/c1" in found[0]["explanation"]


def test_a_zombie_step_the_owner_overtakes_replays_nothing(found_with_dumps):
    """lab D13: c2 commits 9, past the 7 that c1's late commit of 5 went back from, before any
    reassignment. No one resumes from 5; only [4, 5), which both processed, is duplicated."""
    found = found_with_dumps["zombie_overtaken"]
    assert keys(found) == [("backward_commit", "orders-app", "orders", 1, None, 4, 5, 1, "duplication", "zombie", True)]
    assert [(e["file"].split("/")[-2], e["line"]) for e in found[0]["evidence"]] == [("c1", 8), ("c2", 4), ("c2", 5), ("c2", 6)]
    assert "the owner's own commit of 9 overtook it before any member resumed from it" in found[0]["explanation"]


def test_a_zombie_commit_above_the_owners_resume_that_is_no_step_back_is_duplication(found_with_dumps):
    """z2 resumed ahead-topic-1 from 10; z1, which lost it, commits 12 and 16 before z2's first
    commit, 20: [10, 16) was processed by both, once, from z1's highest late commit. Partition 2:
    z2 commits nothing more, its reach is unproven. Partition 3: z2's 13 steps back from z1's 16,
    the owner's ``replay`` of [10, 16), and the zombie's commit is not counted again. Partition 4:
    z1's later step back from z2's 20 to 14 is the zombie's [10, 20), which holds [10, 16)."""
    found = found_with_dumps["zombie_ahead"]
    assert keys(found) == [
        ("backward_commit", "ahead", "ahead-topic", 1, None, 10, 16, 6, "duplication", "zombie", True),
        ("backward_commit", "ahead", "ahead-topic", 3, None, 10, 16, 6, "duplication", "replay", True),
        ("backward_commit", "ahead", "ahead-topic", 4, None, 10, 20, 10, "duplication", "zombie", True),
    ]
    assert [(e["file"].split("/")[-2], e["line"]) for e in found[0]["evidence"]] == [("z1", 11), ("z2", 4), ("z2", 8)]
    assert "z1/z1 committed offset 16 for ahead-topic-1 after it had lost the partition" in found[0]["explanation"]
    assert "had resumed from 10 and committed 20 after it, so [10, 16) was processed both by z1/z1" in found[0]["explanation"]


def test_seed_001_new_partition_reset_to_latest_loses_offsets_0_to_4(found, found_with_dumps):
    with_dump = found_with_dumps["seed_001"]
    assert keys(with_dump) == [("reset_to_latest_gap", "demo", "demo-topic", 1, None, 0, 5, 5, "loss", None, True)]
    assert [e["line"] for e in with_dump[0]["evidence"] if e["file"].endswith("app.log")] == [1, 2, 3]
    without_dump = found["seed_001"]
    assert keys(without_dump) == [("reset_to_latest_gap", "demo", "demo-topic", 1, None, 0, 5, 5, "loss", None, False)]


def test_out_of_range_resets_forward_lose_and_backward_replay(found):
    assert keys(found["out_of_range"]) == [
        ("out_of_range_reset", "ranges", "demo-topic", 0, None, 120, 300, 180, "loss", None, True),
        ("out_of_range_reset", "ranges", "demo-topic", 2, None, 850, 900, 50, "duplication", None, True),
    ]


def test_failed_commit_then_resume_from_older_commit_is_reprocessing(found):
    assert keys(found["failed_commit"]) == [("reprocessing", "retries", "retry-topic", 2, None, 40, 95, 55, "expected", None, True)]


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


def test_kafka_7672_risk_takes_the_version_banner_that_follows_the_config_block(found):
    """Two exactly-once applications start one after the other in one host's log, on 2.0.0
    (KAFKA-7672) and 2.3.0 (fixed): only the first is at risk, with its own banner as evidence."""
    found = [f for f in found["kafka_7672"] if f["detector"] == "risky_config"]
    assert [(f["group"], f["classification"]) for f in found] == [("ledger-old", "processing.guarantee")]
    assert [e["line"] for e in found[0]["evidence"]] == [1, 5]
    assert "Kafka Streams 2.0.0" in found[0]["explanation"]


def test_incidents_that_one_analysis_would_merge_are_refused(spark, tmp_path):
    """``analyse_apart``: two incidents on one host, or in one group, are not analysed together
    (a file of the same bytes as another is read once: the second incident would have no events)."""
    seed_001 = _reset_to_latest_of_demo_topic_1()
    other_partition = renamed(seed_001, {"demo-topic-1": "demo-topic-3"})
    with pytest.raises(ValueError, match="share hosts: \\['app-1'\\]"):
        analyse_apart(spark, tmp_path / "hosts", {"a": Incident({"app-1": seed_001}), "b": Incident({"app-1": seed_001})})
    with pytest.raises(ValueError, match="share groups, members or partitions: .*'group_id', 'demo'.*\\['a', 'b'\\]"):
        analyse_apart(spark, tmp_path / "groups", {"a": Incident({"app-1": seed_001}), "b": Incident({"app-2": other_partition})})
