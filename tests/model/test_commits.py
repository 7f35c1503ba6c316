"""Commit lineage (seed 003): c1 lost orders-1 in a rebalance but commits it late, after the
new owner c2 committed further; the late commit is outside c1's ownership."""

from __future__ import annotations

import pytest

from tests.helpers import ingest_paths, small_model
from tests.model.conftest import generation, line, rows

SCENARIO = None


C1_LOG = [
    line("00:00,100", "INFO", "c1", f"Successfully joined group with generation {generation(7, 'c1-m')}"),
    line("00:00,120", "INFO", "c1", "Adding newly assigned partitions: orders-0, orders-1"),
    line("00:05,000", "DEBUG", "c1", "Committed offset 4 for partition orders-1"),
    line("00:06,000", "INFO", "c1", "Request joining group due to: group is already rebalancing"),
    line("00:06,010", "INFO", "c1", "Revoke previously assigned partitions orders-0, orders-1"),
    line("00:06,200", "INFO", "c1", f"Successfully joined group with generation {generation(8, 'c1-m')}"),
    line("00:06,230", "INFO", "c1", "Adding newly assigned partitions: orders-0"),
    line("00:09,000", "DEBUG", "c1", "Committed offset 5 for partition orders-1"),
]
C2_LOG = [
    line("00:06,050", "INFO", "c2", "(Re-)joining group"),
    line("00:06,201", "INFO", "c2", f"Successfully joined group with generation {generation(8, 'c2-m')}"),
    line("00:06,231", "INFO", "c2", "Adding newly assigned partitions: orders-1"),
    line(
        "00:06,240",
        "INFO",
        "c2",
        "Setting offset for partition orders-1 to the committed offset FetchPosition{offset=4, "
        "offsetEpoch=Optional[2], currentLeader=LeaderAndEpoch{leader=Optional[broker-1:9092 (id: 1 rack: null)], epoch=2}}",
    ),
    line("00:08,000", "DEBUG", "c2", "Committed offset 7 for partition orders-1"),
]


@pytest.fixture(scope="module")
def commits(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("seed_003")
    for host, lines in (("c1", C1_LOG), ("c2", C2_LOG)):
        (root / host).mkdir()
        (root / host / "app.log").write_text("\n".join(lines) + "\n")
    return small_model(spark, ingest_paths(spark, root).records).commits


def test_history_of_orders_1_in_order_with_attribution(commits):
    history = commits.where("partition = 1").orderBy("sequence")
    assert [
        tuple(r)
        for r in history.select("sequence", "kind", "offset", "member", "generation", "previous_offset", "in_own_interval").collect()
    ] == [
        (1, "commit", 4, "c1/c1", 7, None, True),
        (2, "position from commit", 4, "c2/c2", 8, 4, True),
        (3, "commit", 7, "c2/c2", 8, 4, True),
        (4, "commit", 5, "c1/c1", 8, 7, False),
    ]


def test_late_commit_falls_in_the_new_owners_interval(commits):
    assert rows(commits.where("partition = 1 and offset = 5"), "owner", "owner_generation", "line") == [("c2/c2", 8, 8)]


def test_a_failed_commit_of_two_partitions_keeps_both(spark, tmp_path):
    """One log line may commit (or fail to commit) several partitions: each keeps its own row."""
    failed = (
        "Offset commit with offsets {orders-0=OffsetAndMetadata{offset=10, leaderEpoch=2, metadata=''}, "
        "orders-1=OffsetAndMetadata{offset=20, leaderEpoch=2, metadata=''}} failed"
    )
    log = C1_LOG[:2] + [line("00:05,500", "ERROR", "c1", failed)]
    (tmp_path / "c1").mkdir()
    (tmp_path / "c1" / "app.log").write_text("\n".join(log) + "\n")
    commits = small_model(spark, ingest_paths(spark, tmp_path).records).commits
    assert sorted(rows(commits.where("line = 3"), "partition", "offset")) == [(0, 10), (1, 20)]
