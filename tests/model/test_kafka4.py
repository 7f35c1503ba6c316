"""Kafka 4.x rebalance protocols as witnesses: KIP-848 consumers (4.0.0) and a Kafka Streams
application on the Streams rebalance protocol (KIP-1071, 4.1.0), written by hand under
tests/data/witnesses/kafka4/<scenario> (README.md: the story; expected.json: what they must give).

Each scenario is ingested, parsed, modelled and detected once (module-scoped fixture); the tests
compare the typed events, rebalances (one per group epoch), ownership intervals and findings with
expected.json.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from forensics.detect import detect, findings_json
from tests.helpers import as_small_incident, ingest_paths, small_model

SCENARIOS = ("consumer_scale_out", "streams_scale_out")
EVENT_FIELDS = (
    "member_id",
    "epoch",
    "state_from",
    "state_to",
    "task",
    "topic",
    "partition",
    "offset",
    "error",
    "reason",
    "partitions",
    "added_partitions",
    "revoked_partitions",
    "owned_partitions",
)
"""The typed fields expected.json states for its sample of events (when not null or empty)."""


@dataclass(frozen=True)
class Analysed:
    expected: dict
    records: int
    events: list[dict]
    rebalances: list[dict]
    ownership: list[dict]
    findings: list[dict]
    positions: list[dict]


def _clock(value):
    return value.strftime("%H:%M:%S.%f")[:-3] if hasattr(value, "strftime") else value


@pytest.fixture(scope="module", params=SCENARIOS)
def analysed(request, spark, data_dir) -> Analysed:
    root = (data_dir / "witnesses" / "kafka4" / request.param).resolve()

    def at(file, line=None) -> str:
        relative = str(Path(file).resolve().relative_to(root))
        return relative if line is None else f"{relative}:{line}"

    ingested = ingest_paths(spark, root)
    model = small_model(spark, ingested.records)
    events = model.events
    with as_small_incident(spark):
        analysed = Analysed(
            expected=json.loads((root / "expected.json").read_text(encoding="utf-8")),
            records=ingested.records.count(),
            events=[
                {
                    "file": at(r["source_file"]),
                    "line": r["line"],
                    "event_type": r["event_type"],
                    "template": r["template_id"],
                    **{k: r[k] for k in EVENT_FIELDS if r[k] not in (None, [])},
                }
                for r in events.collect()
            ],
            rebalances=[
                {
                    **{
                        k: _clock(r[k])
                        for k in (
                            "generation",
                            "protocol_type",
                            "start_ts",
                            "end_ts",
                            "duration_ms",
                            "members_joined",
                            "members_left",
                            "trigger",
                            "moved",
                        )
                    },
                    "start": at(r["start_file"], r["start_line"]),
                }
                for r in model.rebalances.orderBy("generation").collect()
            ],
            ownership=[
                {
                    k: _clock(r[k])
                    for k in ("topic", "partition", "task", "host", "generation", "from_ts", "to_ts", "ended", "from_line", "to_line")
                }
                for r in model.ownership.orderBy("task", "topic", "partition", "from_ts").collect()
            ],
            findings=[
                {
                    **{
                        k: f[k]
                        for k in (
                            "detector",
                            "verdict",
                            "severity",
                            "group",
                            "topic",
                            "partition",
                            "task",
                            "offset_from",
                            "offset_to",
                            "records",
                            "exact",
                            "classification",
                            "host",
                            "member",
                            "start",
                        )
                    },
                    "evidence": [at(e["file"], e["line"]) for e in f["evidence"]],
                }
                for f in findings_json(detect(model))
            ],
            positions=[
                r.asDict()
                for r in model.members.where("event_type = 'consumer:offset:set_committed'").select("member", "group_id").collect()
            ],
        )
    yield analysed


def test_every_kafka_line_is_typed_but_the_start_time_banner(analysed):
    expected = analysed.expected
    assert (analysed.records, len(analysed.events)) == (expected["records"], expected["typed_events"])
    by_type: dict[str, int] = {}
    for event in analysed.events:
        by_type[event["event_type"]] = by_type.get(event["event_type"], 0) + 1
    assert by_type == expected["events_by_type"]


def test_4x_lines_become_typed_events_with_their_fields(analysed):
    by_line = {(e["file"], e["line"]): e for e in analysed.events}
    assert [by_line.get((e["file"], e["line"])) for e in analysed.expected["events"]] == analysed.expected["events"]


def test_one_rebalance_per_group_epoch(analysed):
    assert analysed.rebalances == analysed.expected["rebalances"]


def test_ownership_intervals(analysed):
    assert analysed.ownership == analysed.expected["ownership"]


def test_findings_with_exact_ranges_and_evidence(analysed):
    assert analysed.findings == analysed.expected["findings"]


def test_positions_logged_without_prefix_belong_to_the_files_consumer(analysed):
    """``ConsumerUtils`` logs ``Setting offset for partition ..`` with no client prefix (static logger)."""
    assert analysed.positions
    assert all(p["member"] and p["group_id"] for p in analysed.positions)
