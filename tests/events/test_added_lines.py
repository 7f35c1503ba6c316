"""Catalogue lines whose wording overlaps another version's: the right template wins in Spark."""

from __future__ import annotations

import pytest

from forensics.events import parse_events
from tests.helpers import ingest_paths

ST = "(org.apache.kafka.streams.processor.internals.StreamThread)"
THREAD = "stream-thread [app-StreamThread-1]"
LINES = [
    # 1.0-2.3: multi-line, with the suspended task lists (S11)
    f"[2024-06-01 10:00:00,000] INFO {THREAD} partition revocation took 21 ms.\n\tsuspended active tasks: [0_5]\n\tsuspended standby tasks: [] {ST}",
    # 2.4-2.5 (S12)
    f"[2024-06-01 10:00:01,000] INFO {THREAD} partition revocation took 35 ms.\n\tcurrent suspended active tasks: [0_1, 1_1]\n {ST}",
    # 2.6+: one line, no task list (S13)
    f"[2024-06-01 10:00:02,000] INFO {THREAD} partition revocation took 12 ms. {ST}",
    # 4.3+: a global store's checkpoint, static logger, no prefix
    "[2024-06-01 10:00:03,000] DEBUG Writing checkpoint: {app-global-changelog-0=17} for task null "
    "(org.apache.kafka.streams.state.internals.LegacyCheckpointingStateStore)",
    # 1.1-2.1: the exception inline, not the other two wordings of the same opening
    "[2024-06-01 10:00:04,000] WARN task [0_1] Failed to write offset checkpoint file to /s/app/0_1/.checkpoint: "
    "java.io.IOException: disk full (org.apache.kafka.streams.processor.internals.ProcessorStateManager)",
    "[2024-06-01 10:00:05,000] WARN Failed to write offset checkpoint file to /s/app/global/.checkpoint for global stores: "
    "java.io.IOException: disk full (org.apache.kafka.streams.processor.internals.GlobalStateManagerImpl)",
]


@pytest.fixture(scope="module")
def events(spark, tmp_path_factory):
    path = tmp_path_factory.mktemp("added_lines") / "app.log"
    path.write_text("\n".join(LINES) + "\n")
    rows = parse_events(ingest_paths(spark, path).records).collect()
    return {row["ts"].strftime("%S"): row.asDict() for row in rows}


def test_revocation_lines_of_each_version(events):
    assert [(events[s]["event_type"], events[s]["template_id"], events[s]["task"]) for s in ("00", "01", "02")] == [
        ("streams:task:suspended", "S11", "[0_5]"),
        ("streams:task:suspended", "S12", "[0_1, 1_1]"),
        ("streams:revocation:finished", "S13", None),
    ]


def test_global_store_checkpoint_names_no_task(events):
    event = events["03"]
    assert (event["event_type"], event["template_id"], event["changelog"], event["task"], event["topic"]) == (
        "streams:checkpoint:written",
        "S56",
        "{app-global-changelog-0=17}",
        None,
        None,
    )


def test_checkpoint_write_failures_by_wording(events):
    assert [(events[s]["template_id"], events[s]["error"], events[s]["task"]) for s in ("04", "05")] == [
        ("S97", "java.io.IOException: disk full", "0_1"),
        ("S98", "java.io.IOException: disk full", None),
    ]
