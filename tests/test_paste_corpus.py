"""The paste corpus (``tests/data/pastes``, issue 86): excerpts posted in public threads about
Kafka incidents, rewritten by hand in the same shape with the same Kafka facts, and labelled
with what a careful reader establishes. These checks need no Spark: every label is well formed,
points at a line that exists and names an event type or detector the toolkit has; the corpus is
large and spread over the clients. ``benchmarks/score_pastes.py`` measures the toolkit on it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from forensics.catalogue import catalogue_entries

PASTES = Path(__file__).parent / "data" / "pastes"

JAVA_CLIENTS = ("java-consumer", "kafka-streams", "spring-kafka", "connect", "ksqldb", "flink", "spark")
"""Clients built on the Java consumer (Kafka's own log templates)."""
OTHER_CLIENTS = (
    "librdkafka",
    "confluent-kafka-python",
    "confluent-kafka-go",
    "confluent-kafka-dotnet",
    "kafka-python",
    "aiokafka",
    "faust",
    "kafkajs",
    "sarama",
    "franz-go",
    "segmentio",
    "ruby-kafka",
    "karafka",
)
"""Clients with log lines of their own."""
WITNESSES = ("broker", "lag-monitor")
"""The group coordinator's broker log and lag monitors' output."""
CLIENTS = JAVA_CLIENTS + OTHER_CLIENTS + WITNESSES

MIN_EXCERPTS = 60
MIN_OTHER = 20
MIN_HEALTHY = 8
DAMAGE_DETECTORS = ("skipped_restore", "reset_to_latest_gap", "out_of_range_reset", "backward_commit", "reprocessing")
"""Detectors whose findings are a loss or a duplication: a healthy excerpt has none of them."""

FACT_KEYS = {
    "record": {"kind", "file", "line", "event_type"},
    "generation": {"kind", "group", "generation"},
    "finding": {"kind", "detector", "topic", "partition", "from", "to"},
    "commit": {"kind", "file", "line", "topic", "partition", "offset"},
    "member": {"kind", "group", "member_id"},
}
"""The keys of each kind of fact (``member`` may add ``generation``)."""


def excerpts() -> list[Path]:
    return sorted(path for path in PASTES.iterdir() if path.is_dir())


def labels_of(excerpt: Path) -> dict:
    return json.loads((excerpt / "labels.json").read_text(encoding="utf-8"))


def detector_names() -> set[str]:
    """The detectors' names, read from ``forensics/detect/__init__.py``'s ``DETECTORS`` without
    importing it (that would load pyspark's SQL functions)."""
    text = (Path(__file__).parent.parent / "forensics" / "detect" / "__init__.py").read_text(encoding="utf-8")
    block = text.split("DETECTORS = {", 1)[1].split("}", 1)[0]
    body = block.split("for detector in (", 1)[1].split(")", 1)[0]
    return {name.strip() for name in body.replace("\n", " ").split(",") if name.strip()}


EVENT_TYPES = {entry["event_type"] for entry in catalogue_entries()}


@pytest.mark.parametrize("excerpt", excerpts(), ids=lambda path: path.name)
def test_labels_are_well_formed(excerpt):
    labels = labels_of(excerpt)
    assert set(labels) == {"source", "client", "shape", "healthy", "facts"}, excerpt.name
    assert labels["source"].startswith("https://"), "the public thread the excerpt comes from"
    assert labels["client"] in CLIENTS
    assert isinstance(labels["healthy"], bool) and labels["shape"].strip()
    assert labels["facts"], "an excerpt with nothing a reader establishes measures nothing"
    names = detector_names()
    files = {path.name for path in excerpt.rglob("*") if path.is_file() and path.name != "labels.json"}
    assert files, "the excerpt's own files"
    for fact in labels["facts"]:
        kind = fact["kind"]
        required = FACT_KEYS[kind]
        assert required <= set(fact) <= required | {"generation"}, fact
        if "file" in fact:
            path = excerpt / fact["file"]
            assert path.is_file(), fact
            lines = path.read_text(encoding="utf-8").split("\n")
            assert 1 <= fact["line"] <= len(lines) and lines[fact["line"] - 1].strip(), fact
        if kind == "record":
            assert fact["event_type"] in EVENT_TYPES, fact
        elif kind == "generation":
            assert isinstance(fact["generation"], int) and fact["group"], fact
        elif kind == "finding":
            assert fact["detector"] in names, fact
            assert not (labels["healthy"] and fact["detector"] in DAMAGE_DETECTORS), "a healthy excerpt lost nothing"
            for key in ("from", "to"):
                assert fact[key] is None or isinstance(fact[key], int), fact
        elif kind == "commit":
            assert isinstance(fact["offset"], int) and isinstance(fact["partition"], int), fact


def test_record_lines_are_unique_per_type():
    """One fact per record line: a line labelled twice would be counted twice."""
    for excerpt in excerpts():
        keys = [(f["file"], f["line"]) for f in labels_of(excerpt)["facts"] if f["kind"] == "record"]
        assert len(keys) == len(set(keys)), excerpt.name


def test_corpus_is_large_and_spread():
    labels = [labels_of(excerpt) for excerpt in excerpts()]
    clients = Counter(label["client"] for label in labels)
    assert len(labels) >= MIN_EXCERPTS
    assert sum(clients[name] for name in OTHER_CLIENTS) >= MIN_OTHER
    assert sum(label["healthy"] for label in labels) >= MIN_HEALTHY
    assert not set(CLIENTS) - set(clients), "every client family has an excerpt"
    assert len({label["source"] for label in labels}) >= MIN_EXCERPTS * 3 // 4, "mostly distinct threads"
