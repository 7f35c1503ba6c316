"""Findings from partial evidence (issue 85): where the logs prove an event but not its offset
range, the finding says so (``exact`` false, the unknown range fields null, ``missing`` naming
what would measure it), an offset dump completes it, and the recovery plan measures before it
resets. Hand-written excerpts, each the shape the issue names."""

from __future__ import annotations

import json

import pytest

from forensics.recovery import attach_recovery
from forensics.recovery.commands import offsets_partition
from forensics.report.tables import offset_range
from tests.detect.incidents import Incident, analyse_apart, keys, renamed
from tests.detect.test_seed_cases import POSITION, SEEK, consumer
from tests.model.conftest import generation, line

DESCRIBE_DEMO = 'kafka-consumer-groups.sh --bootstrap-server "$BOOTSTRAP_SERVERS" --describe --group demo'


def of(found: list[dict], detector: str) -> list[dict]:
    return [f for f in found if f["detector"] == detector]


def resume(ts: str, client: str, tp: str, offset: int) -> str:
    return line(ts, "INFO", client, f"Setting offset for partition {tp} to the committed offset FetchPosition{{offset={offset}, {POSITION}")


FAILED_COMMIT = {
    "c1": [
        line("00:00,100", "INFO", "c1", f"Successfully joined group with generation {generation(5, 'c1-m')}"),
        line("00:00,120", "INFO", "c1", "Adding newly assigned partitions: orders-0"),
        line("00:09,000", "INFO", "c1", "Failing OffsetCommit request since the consumer is not part of an active group"),
    ],
    "c2": [
        line("00:06,201", "INFO", "c2", f"Successfully joined group with generation {generation(6, 'c2-m')}"),
        line("00:06,231", "INFO", "c2", "Adding newly assigned partitions: orders-0"),
        resume("00:06,240", "c2", "orders-0", 40),
    ],
}


def test_a_failed_commit_without_offsets_then_a_resume_is_unmeasured_reprocessing(found):
    """``Failing OffsetCommit request since the consumer is not part of an active group`` names no
    offsets: c1 held orders-0 and c2 resumed it from 40, so what c1 processed since its last
    commit was processed twice, by how much the logs do not say."""
    found = of(found["failed_commit"], "reprocessing")
    assert keys(found) == [("reprocessing", "orders-app", "orders", 0, None, 40, None, None, "expected", None, False)]
    finding = found[0]
    assert [(e["file"].split("/")[-2], e["line"]) for e in finding["evidence"]] == [("c1", 3), ("c2", 2), ("c2", 3)]
    assert finding["member"] == "c1/c1" and finding["member_basis"] == "client id"
    assert "unmeasured" in finding["explanation"] and "null" not in finding["explanation"]
    assert "c1/c1" in finding["missing"]["what"]
    assert (
        'kafka-consumer-groups.sh --bootstrap-server "$BOOTSTRAP_SERVERS" --describe --group orders-app' in finding["missing"]["commands"]
    )
    assert offset_range(finding) == "unmeasured (from 40)"


RESET_TO_LATEST = {
    "app-1": [
        consumer("00:00,000", "INFO", "Found no committed offset for partition demo-topic-1"),
        consumer("00:00,001", "INFO", "Seeking to LATEST offset of partition demo-topic-1", SEEK),
    ]
}
DEMO_TOPIC_1_DUMP = (
    "Dumping /var/lib/kafka/data/demo-topic-1/00000000000000000000.log\nStarting offset: 0\n"
    "baseOffset: 0 lastOffset: 4 count: 5 baseSequence: 0 lastSequence: 4 producerId: -1 producerEpoch: -1 "
    "partitionLeaderEpoch: 0 isTransactional: false isControl: false position: 0 CreateTime: 1614679200000 size: 120 "
    "magic: 2 compresscodec: NONE crc: 1 isvalid: true\n"
)


def test_a_reset_to_latest_with_no_offset_logged_is_unmeasured_and_a_dump_gives_its_start(found, found_with_dumps):
    found = of(found["reset_to_latest"], "reset_to_latest_gap")
    assert keys(found) == [("reset_to_latest_gap", "demo", "demo-topic", 1, None, None, None, None, "loss", None, False)]
    assert [e["line"] for e in found[0]["evidence"]] == [1, 2]
    assert "log-end offset of demo-topic-1" in found[0]["missing"]["what"]
    assert DESCRIBE_DEMO in found[0]["missing"]["commands"]
    assert "kafka-dump-log.sh --files <log.dirs>/demo-topic-1/<segment>.log" in found[0]["missing"]["commands"]
    with_dump = of(found_with_dumps["reset_to_latest"], "reset_to_latest_gap")
    assert keys(with_dump) == [("reset_to_latest_gap", "demo", "demo-topic", 1, None, 0, None, None, "loss", None, False)]


THREAD = "wordcount-app-8f1c5b7e-2d34-4b8a-9a61-3c5e7f0a1b2c-StreamThread-1"
STREAMS_FROM_LATEST = {
    "s1": [
        f"[2024-03-11 14:04:20,180] INFO [Consumer clientId={THREAD}-consumer, groupId=wordcount-app] Found no committed offset "
        "for partition wordcount-input-0 (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)",
        f"[2024-03-11 14:04:20,190] INFO stream-thread [{THREAD}] Setting topic 'wordcount-input' to consume from latest offset "
        "(org.apache.kafka.streams.processor.internals.StreamThread)",
    ]
}


def test_a_streams_thread_consuming_from_latest_with_no_offset_logged_is_an_unmeasured_gap(found):
    found = of(found["streams_from_latest"], "reset_to_latest_gap")
    assert keys(found) == [("reset_to_latest_gap", "wordcount-app", "wordcount-input", 0, None, None, None, None, "loss", None, False)]
    assert [e["line"] for e in found[0]["evidence"]] == [1, 2]


RDK_JOIN = '%7|1710165737.406|JOINGROUP|rdkafka#consumer-1| [thrd:main]: I am elected leader for group "orders-rdk" with 1 member(s)'
"""Group ``orders-rdk``: named apart from the other incidents' ``orders-app`` in one run."""


def rdk_out_of_range(partition: int, target: str) -> str:
    return (
        f"%4|1710165737.613|OFFSET|rdkafka#consumer-1| [thrd:main]: orders [{partition}]: offset reset (at offset 1234, broker 2) "
        f"to {target}: fetch failed due to requested offset not available on the broker: Broker: Offset out of range"
    )


RDK_RESETS = {"w1": [RDK_JOIN, rdk_out_of_range(3, "END"), rdk_out_of_range(2, "BEGINNING")]}
ORDERS_2_DUMP = (
    "Dumping /var/lib/kafka/data/orders-2/00000000000000001500.log\nStarting offset: 1500\n"
    "baseOffset: 1500 lastOffset: 1504 count: 5 baseSequence: 0 lastSequence: 4 producerId: -1 producerEpoch: -1 "
    "partitionLeaderEpoch: 0 isTransactional: false isControl: false position: 0 CreateTime: 1614679200000 size: 120 "
    "magic: 2 compresscodec: NONE crc: 1 isvalid: true\n"
)


def test_librdkafkas_logical_out_of_range_reset_is_unmeasured_unless_a_dump_shows_the_log_start(found, found_with_dumps):
    found = of(found["rdkafka_resets"], "out_of_range_reset")
    assert keys(found) == [
        ("out_of_range_reset", "orders-rdk", "orders", 2, None, 1234, None, None, "loss", None, False),
        ("out_of_range_reset", "orders-rdk", "orders", 3, None, 1234, None, None, "loss", None, False),
    ]
    end, beginning = found[1], found[0]
    assert "log-end offset of orders-3" in end["missing"]["what"] and "log-start offset of orders-2" in beginning["missing"]["what"]
    assert (
        'kafka-get-offsets.sh --bootstrap-server "$BOOTSTRAP_SERVERS" --topic orders --partitions 2 --time -2'
        in beginning["missing"]["commands"]
    )
    completed = of(found_with_dumps["rdkafka_resets"], "out_of_range_reset")
    assert keys(completed) == [
        ("out_of_range_reset", "orders-rdk", "orders", 2, None, 1234, 1500, 266, "loss", None, True),
        ("out_of_range_reset", "orders-rdk", "orders", 3, None, 1234, None, None, "loss", None, False),
    ]
    assert completed[0]["missing"] is None and len(completed[0]["evidence"]) == 2


POSITIONS_BACK = {
    "c1": [
        line("00:00,100", "INFO", "c1", f"Successfully joined group with generation {generation(7, 'c1-m')}"),
        line("00:00,120", "INFO", "c1", "Adding newly assigned partitions: orders-1"),
        resume("00:00,130", "c1", "orders-1", 2),
        line("00:09,100", "INFO", "c1", f"Successfully joined group with generation {generation(9, 'c1-m')}"),
        line("00:09,120", "INFO", "c1", "Adding newly assigned partitions: orders-1"),
        resume("00:09,130", "c1", "orders-1", 2),
    ],
    "c2": [
        line("00:05,100", "INFO", "c2", f"Successfully joined group with generation {generation(8, 'c2-m')}"),
        line("00:05,120", "INFO", "c2", "Adding newly assigned partitions: orders-1"),
        resume("00:05,130", "c2", "orders-1", 6),
    ],
}


def test_positions_fetched_at_assignment_that_go_back_are_a_backward_commit(found_with_dumps):
    """2, then 6, then 2: the committed offset went back from 6 to 2 between the assignments."""
    found = of(found_with_dumps["positions_back"], "backward_commit")
    assert keys(found) == [("backward_commit", "orders-app", "orders", 1, None, 2, 6, 4, "duplication", "unseen", True)]
    assert [(e["file"].split("/")[-2], e["line"]) for e in found[0]["evidence"]] == [("c1", 6), ("c2", 3)]
    assert found[0]["missing"]["commands"][0].startswith("kafka-dump-log.sh --offsets-decoder")


NO_GENERATION = {
    "p1": renamed(
        [
            line("00:00,120", "INFO", "c1", "Adding newly assigned partitions: orders-1"),
            line("00:05,000", "DEBUG", "c1", "Committed offset 7 for partition orders-1"),
            line("00:08,000", "DEBUG", "c1", "Committed offset 5 for partition orders-1"),
        ],
        {"clientId=c1": "clientId=p1", "orders-app": "payments-app", "orders-1": "payments-1"},
    )
}
"""Host p1, group ``payments-app``, topic ``payments``: named apart from failed_commit's c1 in
``orders-app`` (one run)."""


def test_a_commit_by_the_owner_with_no_generation_logged_is_not_a_zombie(found):
    """No join line in the logs: the generations are unknown, and the owner's own commit inside
    its interval is its own (issue 85: ``==`` on null generations made it a zombie)."""
    found = of(found["no_generation"], "backward_commit")
    assert [(f["offset_from"], f["offset_to"], f["classification"], f["exact"]) for f in found] == [(5, 7, "replay", True)]


INCIDENTS = {
    "failed_commit": Incident(FAILED_COMMIT),
    "reset_to_latest": Incident(RESET_TO_LATEST),
    "streams_from_latest": Incident(STREAMS_FROM_LATEST),
    "rdkafka_resets": Incident(RDK_RESETS),
    "no_generation": Incident(NO_GENERATION),
}
"""The module's incidents without offset dumps, analysed in one run (``analyse_apart``)."""
WITH_DUMPS = {
    "reset_to_latest": Incident(RESET_TO_LATEST, (DEMO_TOPIC_1_DUMP,)),
    "rdkafka_resets": Incident(RDK_RESETS, (ORDERS_2_DUMP,)),
    "positions_back": Incident(POSITIONS_BACK),
}
"""Those analysed again with their dumps, in a second run; positions_back (no dump, and hosts c1
and c2 as failed_commit's) with them."""


@pytest.fixture(scope="module")
def found(spark, tmp_path_factory) -> dict[str, list[dict]]:
    return analyse_apart(spark, tmp_path_factory.mktemp("partial") / "logs", INCIDENTS)


@pytest.fixture(scope="module")
def found_with_dumps(spark, tmp_path_factory) -> dict[str, list[dict]]:
    return analyse_apart(spark, tmp_path_factory.mktemp("partial_dumped") / "logs", WITH_DUMPS)


def test_an_unmeasured_findings_recovery_plan_measures_first_and_resets_nothing():
    finding = {
        "detector": "reprocessing",
        "verdict": "duplication",
        "group": "orders-app",
        "topic": "orders",
        "partition": 0,
        "offset_from": 40,
        "offset_to": None,
        "records": None,
        "exact": False,
        "evidence": [{"file": "/i/c1/app.log", "line": 3}],
        "explanation": "x.",
        "kafka_reference": "y",
        "remedy": "z",
        "missing": {
            "what": "the offset c1/c1 had processed",
            "commands": [
                "kafka-dump-log.sh --offsets-decoder --files <log.dirs>/__consumer_offsets-<N>/<segment>.log  # N: ...",
                'kafka-consumer-groups.sh --bootstrap-server "$BOOTSTRAP_SERVERS" --describe --group orders-app',
            ],
        },
    }
    (with_plan,) = attach_recovery({"findings": [finding]})["findings"]
    plan = with_plan["recovery"]
    assert plan["kind"] == "manual" and plan["reset_rows"] == [] and plan["csv_file"] is None
    assert [s["step"] for s in plan["steps"]] == ["measure_1", "measure_2", "plan"]
    assert f"__consumer_offsets-{offsets_partition('orders-app')}/" in plan["steps"][0]["command"]
    assert offsets_partition("orders-app") == 5  # Java: Math.abs("orders-app".hashCode()) % 50
    assert not any("--reset-offsets" in (s["command"] or "") for s in plan["steps"])
    assert "null" not in json.dumps(plan["summary"])
