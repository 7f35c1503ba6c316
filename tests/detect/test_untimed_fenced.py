"""A ``fenced`` finding on an undated paste (issue 85): it read "fenced (null) at null"; it reads
as untimed, with its file and line, and names its kind. Hand-written paste (identifiers ours)."""

from __future__ import annotations

from tests.detect.incidents import analyse, write

FENCED = (
    "ERROR [Consumer instanceId=billing-host-b, clientId=consumer-billing-2, groupId=billing-events] Caught fenced "
    "group.instance.id billing-host-b error in heartbeat thread (org.apache.kafka.clients.consumer.internals.AbstractCoordinator)"
)


def test_an_undated_fence_reads_as_untimed_never_null(spark, tmp_path):
    found = [f for f in analyse(spark, write(tmp_path, {"pasted": [FENCED]})) if f["detector"] == "fenced"]
    assert len(found) == 1 and found[0]["start"] is None
    (fence,) = found
    assert fence["classification"] == "static member" and fence["group"] == "billing-events"
    assert "was fenced (static member) on untimed line " in fence["explanation"] and "app.log:1" in fence["explanation"]
    assert "null" not in fence["explanation"]
