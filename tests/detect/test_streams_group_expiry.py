"""A KIP-1071 streams group's coordinator fences a member whose session expired and logs no epoch
bump after it, only the target assignment of the next epoch: still a session_timeout."""

from __future__ import annotations

from tests.detect.incidents import analyse, write

GMM = "(org.apache.kafka.coordinator.group.GroupMetadataManager)"
SMM = "org.apache.kafka.clients.consumer.internals.StreamsMembershipManager"
SHARD = "[GroupCoordinator id=3 topic=__consumer_offsets partition=17]"
MEMBER_ID = "Zq3vN8tRQe2Lw5yXc1Bo7A"


def broker(ts: str, text: str) -> str:
    return f"[2025-05-20 16:{ts}] INFO {SHARD} [GroupId tallies] {text} {GMM}"


BROKER = [
    broker("40:00,100", "Computed a new target assignment for epoch 6 with 'sticky' assignor in 4ms."),
    broker("40:20,500", f"Streams member {MEMBER_ID} fenced from the group because the member session expired.."),
    broker("40:21,200", "Computed a new target assignment for epoch 7 with 'sticky' assignor in 3ms."),
]
MEMBER = [
    f"2025-05-20 16:39:58,900 INFO  [consumer_background_thread] {SMM} - [Consumer clientId=tally-StreamThread-1-consumer, "
    f"groupId=tallies] Member {MEMBER_ID} with epoch 0 transitioned from UNSUBSCRIBED to JOINING."
]


def test_a_streams_member_fenced_on_session_expiry_is_a_session_timeout(spark, tmp_path):
    found = analyse(spark, write(tmp_path, {"broker-3": BROKER, "tally-1": MEMBER}))
    timeouts = [f for f in found if f["detector"] == "session_timeout"]
    assert [(f["group"], f["host"]) for f in timeouts] == [("tallies", "tally-1")]
    assert [(e["file"].split("/")[-2], e["line"]) for e in timeouts[0]["evidence"]] == [("broker-3", 2)]
