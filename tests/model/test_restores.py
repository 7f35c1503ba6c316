"""Restore episodes on the KAFKA-7672 sample incident: task 1_1 reset to 0 and ran unrestored."""

from __future__ import annotations

SCENARIO = None


def test_task_1_1_episode_shows_the_skipped_restore(spark):
    from tests.conftest import DATA
    from tests.helpers import ingest_paths, small_model

    sample = DATA / "cli" / "kafka-7672"
    model = small_model(spark, ingest_paths(spark, sample).records)
    episodes = {(r["host"], r["task"]): r.asDict() for r in model.restores.collect()}
    assert set(episodes) == {("host-a", "0_5"), ("host-b", "1_1"), ("host-a", "1_1")}
    episode = episodes[("host-a", "1_1")]
    assert {
        k: episode[k]
        for k in (
            "thread",
            "generation",
            "changelog",
            "topic",
            "partition",
            "checkpoint_found",
            "reset_offset",
            "restore_completed",
            "previous_host",
            "same_instance",
        )
    } == {
        "thread": "AuditTrailBatch-StreamThread-1",
        "generation": 323,
        "changelog": "AuditTrailBatch-store1-changelog-1",
        "topic": "AuditTrailBatch-store1-changelog",
        "partition": 1,
        "checkpoint_found": False,
        "reset_offset": 0,
        "restore_completed": False,
        "previous_host": "host-b",
        "same_instance": False,
    }
    assert episode["running_ts"].strftime("%H:%M:%S.%f")[:-3] == "08:27:54.653"
    assert episode["gap_ms"] == 50447  # host-b's thread died at 08:27:02.706; task opened 08:27:53.153
    assert [(e["file"].rsplit("/", 2)[-2], e["line"]) for e in episode["evidence"]][:2] == [("host-a", 40), ("host-a", 41)]
    assert episode["group_id"] == "AuditTrailBatch"
