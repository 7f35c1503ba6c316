"""A Streams thread frozen past session.timeout.ms (SIGSTOP, a GC pause) is expired by the group
coordinator; thawed, it goes on with the tasks it no longer owns and its transaction commit is
fenced (TaskMigratedException): a zombie task, reported as ``fenced`` beside the
``session_timeout``. (lab run streams_zombie_task_eos; issue 84)"""

from __future__ import annotations

from tests.detect.incidents import Incident, analyse_apart

CC = "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"
ST = "org.apache.kafka.streams.processor.internals.StreamThread"
GC = "(kafka.coordinator.group.GroupCoordinator)"
MEMBER_ID = "tally-a-StreamThread-1-consumer-0d7f3c1e-5b2a-4e86-9c41-7a3e5f2b9d10"


def tally(ts: str, level: str, thread: str, logger: str, text: str) -> str:
    return f"2026-03-02 10:15:{ts} {level:<5} [{thread}] {logger} - {text}"


def consumer(ts: str, text: str, thread: str = "tally-a-StreamThread-1") -> str:
    return tally(ts, "INFO", thread, CC, f"[Consumer clientId=tally-a-StreamThread-1-consumer, groupId=tallies] {text}")


ZOMBIE_TASK = {
    "tally-a": [
        consumer(
            "01,100", f"Successfully joined group with generation Generation{{generationId=3, memberId='{MEMBER_ID}', protocol='stream'}}"
        ),
        consumer(
            "01,140", f"Successfully synced group in generation Generation{{generationId=3, memberId='{MEMBER_ID}', protocol='stream'}}"
        ),
        consumer(
            "14,200",
            "Group coordinator 127.0.0.1:40111 (id: 2147483646 rack: null) is unavailable or invalid due to cause: session timed out "
            "without receiving a heartbeat response. isDisconnected: false. Rediscovery will be attempted.",
            thread="kafka-coordinator-heartbeat-thread | tallies",
        ),
        tally(
            "14,215",
            "WARN",
            "tally-a-StreamThread-1",
            ST,
            "stream-thread [tally-a-StreamThread-1] Detected that the thread is being fenced. This implies that this thread missed a "
            "rebalance and dropped out of the consumer group. Will close out all assigned tasks and rejoin the consumer group.",
        ),
        "org.apache.kafka.streams.errors.TaskMigratedException: Producer got fenced trying to commit a transaction [stream-thread [main]]; "
        "it means all tasks belonging to this thread should be migrated.",
    ],
    "broker-1": [
        f"[2026-03-02 10:15:12,990] INFO [GroupCoordinator 1]: Member {MEMBER_ID} in group tallies has failed, removing it from the group {GC}"
    ],
}


def test_a_thawed_streams_thread_fenced_on_a_task_it_lost_is_a_zombie_and_a_session_timeout(spark, tmp_path):
    found = analyse_apart(spark, tmp_path, {"zombie": Incident(logs=ZOMBIE_TASK)})
    zombie = {f["detector"]: f for f in found["zombie"]}
    assert {"fenced", "session_timeout"} <= set(zombie)
    fence = zombie["fenced"]
    assert (fence["group"], fence["host"], fence["classification"]) == ("tallies", "tally-a", "task migrated")
    assert [(e["file"].split("/")[-2], e["line"]) for e in fence["evidence"]] == [("tally-a", 4)]
    assert zombie["session_timeout"]["host"] == "tally-a"
