"""Static membership: a restarted member gets its partitions back in the same generation,
with no rebalance (Kafka 2.6, group.instance.id)."""

from __future__ import annotations

from tests.model.conftest import rows

SCENARIO = "static_restart_2_6"


def test_the_restart_makes_no_new_generation(model):
    assert rows(model.rebalances, "generation", "instance_ids") == [(3, ["pod-a", "pod-b"])]


def test_same_instance_keeps_its_partitions_across_the_restart(model):
    assert rows(
        model.ownership.where("host = 'pod-b'"), "partition", "instance_id", "generation", "from_ts", "to_ts", "ended", "from_line"
    ) == sorted(
        [(p, "pod-b", 3, "08:00:03.546", "08:05:00.105", "revoked", 20) for p in (3, 4, 5)]
        + [(p, "pod-b", 3, "08:05:21.363", None, "end of logs", 53) for p in (3, 4, 5)],
        key=lambda r: tuple("" if v is None else str(v) for v in r),
    )
    assert {r["instance_id"] for r in model.ownership.where("host = 'pod-a'").collect()} == {"pod-a"}
