"""kafka-python 2.2+ logs a reset's offset but not its strategy (``Resetting offset for partition
P to offset N.``) and no configuration: a first reset of a partition the group never committed
went to the log end unless N was the log start. Reported as at most [0, N), exact where a dump
shows the log start below N; nothing where the dump shows N is the log start, or the group had
committed the partition. The Java client's same words are no such proof (issue 86: Beam's and
Spark's offset probes)."""

from __future__ import annotations

import pytest

from tests.detect.incidents import Incident, analyse_apart, keys, renamed


def py(ts: str, logger: str, text: str) -> str:
    return f"2025-01-10 12:{ts} INFO kafka.{logger} {text}"


def assigned(ts: str, partition: int) -> str:
    return py(
        ts,
        "coordinator.consumer",
        f"Setting newly assigned partitions {{TopicPartition(topic='parcels', partition={partition})}} for group depot",
    )


def reset(ts: str, partition: int, offset: int) -> str:
    return py(
        ts, "consumer.fetcher", f"Resetting offset for partition TopicPartition(topic='parcels', partition={partition}) to offset {offset}."
    )


def dump(start: int, topic: str = "parcels") -> str:
    return (
        f"Dumping /var/lib/kafka/data/{topic}-6/{start:020d}.log\nLog starting offset: {start}\n"
        f"baseOffset: {start} lastOffset: {start + 9} count: 10 baseSequence: 0 lastSequence: 9 producerId: -1 producerEpoch: -1 "
        "partitionLeaderEpoch: 0 isTransactional: false isControl: false position: 0 CreateTime: 1736512000000 size: 300 "
        "magic: 2 compresscodec: none crc: 1 isvalid: true\n"
    )


def gaps(found: list[dict]) -> list[tuple]:
    return keys([f for f in found if f["detector"] == "reset_to_latest_gap"])


UNSTATED = [assigned("00:00,100", 6), reset("00:00,200", 6, 44)]
RESUMED = {
    "sorter-2": [
        assigned("00:00,200", 6),
        py(
            "00:00,300",
            "consumer.fetcher",
            "Resetting offset for partition TopicPartition(topic='parcels', partition=6) to the committed offset 12",
        ),
    ],
    "sorter-1": [assigned("00:05,000", 6), reset("00:05,100", 6, 44)],
}
APART = {"group depot": "group hub", "topic='parcels'": "topic='crates'"}
"""A copy's group ``hub`` and topic ``crates``, named apart from the ``depot`` and ``parcels`` of
another incident of its run."""


def java(ts: str, text: str, logger: str = "internals.SubscriptionState") -> str:
    prefix = "[Consumer clientId=consumer-probe-1, groupId=probe]"
    return f"[2025-01-10 12:{ts}] INFO {prefix} {text} (org.apache.kafka.clients.consumer.{logger})"


PROBE = [java(f"00:00,{300 + p}", f"Resetting offset for partition pings-{p} to offset {531550 + p}.", "internals.Fetcher") for p in (3, 4)]
"""An offset-lookup consumer (Spark's driver) probing the log end of partitions it never commits:
the Java client's reset line, with no strategy named, follows an explicit seekToEnd as much as the
automatic reset, so it proves no skipped records."""
SEEK_TO_END = [
    java("00:00,100", "Subscribed to partition(s): clicks-4", "KafkaConsumer"),
    java("00:00,110", "Seeking to LATEST offset of partition clicks-4"),
    java("00:00,120", "Resetting offset for partition clicks-4 to offset 88412."),
]
"""Beam's offset consumer: assign(), an explicit seekToEnd, then the reset it asked for."""
INCIDENTS = {
    "unstated": Incident({"sorter-1": UNSTATED}),
    "resumed": Incident({f"hub-{host}": renamed(lines, APART) for host, lines in RESUMED.items()}),
    "probe": Incident({"driver-1": PROBE}),
    "seek_to_end": Incident({"beam-1": renamed(SEEK_TO_END, {"probe": "beam"})}),
}
"""Analysed in one run (``analyse_apart``): resumed's copy on hosts hub-sorter-1 and hub-sorter-2."""
WITH_DUMPS = {
    "below": Incident({"sorter-1": UNSTATED}, (dump(20),)),
    "at": Incident({"hub-sorter-1": renamed(UNSTATED, APART)}, (dump(44, "crates"),)),
}
"""Unstated's reset again, with a dump whose log start is below its offset and, in a copy named
apart, with one whose log start is at it: one run."""


@pytest.fixture(scope="module")
def found(spark, tmp_path_factory) -> dict[str, list[dict]]:
    root = tmp_path_factory.mktemp("unstated")
    return {**analyse_apart(spark, root / "logs", INCIDENTS), **analyse_apart(spark, root / "dumped", WITH_DUMPS)}


def test_a_reset_with_no_strategy_of_an_uncommitted_partition_is_at_most_a_gap(found):
    assert gaps(found["unstated"]) == [("reset_to_latest_gap", "depot", "parcels", 6, None, 0, 44, 44, "loss", None, False)]
    assert "does not name its strategy" in found["unstated"][0]["explanation"]
    assert gaps(found["below"]) == [("reset_to_latest_gap", "depot", "parcels", 6, None, 20, 44, 24, "loss", None, True)]
    assert gaps(found["at"]) == []


def test_no_gap_once_the_group_had_resumed_the_partition_from_a_commit(found):
    assert gaps(found["resumed"]) == []


def test_the_java_clients_reset_line_alone_is_no_gap(found):
    """Its ``Resetting offset for partition P to offset N.`` says no more than that the position was
    set: an explicit seek to the end (said or not) loses nothing."""
    assert gaps(found["probe"]) == []
    assert gaps(found["seek_to_end"]) == []


def test_the_templates_read_as_the_automatic_reset_are_resets_that_name_no_strategy():
    from forensics.catalogue import load_catalogue
    from forensics.detect.resets import AUTO_RESET_TEMPLATES

    templates = {template.key: template for template in load_catalogue()}
    for key in AUTO_RESET_TEMPLATES:
        assert templates[key].event_type == "consumer:offset:reset"
        assert "strategy" not in {name for name, _ in templates[key].groups} and "offset" in {name for name, _ in templates[key].groups}
