"""Standby replicas (num.standby.replicas) without a checkpoint start from their changelog's
beginning and never restore: their ``standby-task [..]`` lines are no skipped restore, while an
active task on the same thread with the same lines still is (KAFKA-7672)."""

from __future__ import annotations

import pytest

from tests.detect.incidents import analysed, write

INTERNALS = "org.apache.kafka.streams.processor.internals"
THREAD = "ledger-StreamThread-2"
CHANGELOG = "ledger-balances-changelog"


def streams(ts: str, text: str, logger: str) -> str:
    return f"[2025-02-14 08:{ts}] INFO {text} ({INTERNALS}.{logger})"


def no_checkpoint(ts: str, prefix: str, task: str, partition: int) -> str:
    return streams(
        ts,
        f"stream-thread [{THREAD}] {prefix} [{task}] State store balances did not find checkpoint offset, "
        f"hence would default to the starting offset at changelog {CHANGELOG}-{partition}",
        "ProcessorStateManager",
    )


LOG = [
    "[2025-02-14 08:30:00,000] INFO [Consumer clientId=ledger-StreamThread-2-consumer, groupId=ledger] Successfully joined group "
    "with generation Generation{generationId=7, memberId='ledger-StreamThread-2-consumer-1f', protocol='stream'} "
    "(org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)",
    no_checkpoint("30:00,100", "standby-task", "2_4", 4),
    streams("30:00,101", f"stream-thread [{THREAD}] standby-task [2_4] Initialized", "StandbyTask"),
    no_checkpoint("30:00,200", "stream-task", "2_5", 5),
    streams("30:00,201", f"stream-thread [{THREAD}] task [2_5] Initialized", "StreamTask"),
    streams("30:00,300", f"stream-thread [{THREAD}] State transition from PARTITIONS_ASSIGNED to RUNNING", "StreamThread"),
]


@pytest.fixture(scope="module")
def model_and_findings(spark, tmp_path_factory):
    """The model of the log and its findings, from one analysis."""
    return analysed(spark, [write(tmp_path_factory.mktemp("standby"), {"ledger-1": LOG})])


def test_a_standby_without_checkpoint_is_no_skipped_restore(model_and_findings):
    _, found = model_and_findings
    assert [(f["detector"], f["task"], f["verdict"]) for f in found if f["detector"].endswith("_restore")] == [
        ("skipped_restore", "2_5", "loss")
    ]


def test_restore_episodes_name_the_standby(model_and_findings):
    model, _ = model_and_findings
    episodes = {r["task"]: r for r in model.restores.collect()}
    assert {t: (e["standby"], e["checkpoint_found"], e["restore_completed"]) for t, e in episodes.items()} == {
        "2_4": (True, False, None),
        "2_5": (False, False, False),
    }
