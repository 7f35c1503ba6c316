"""'Ignoring the returned OffsetAndMetadata{..} since its partition P is no longer assigned' is the
consumer dropping a committed offset it had fetched to initialise P, because P was revoked
before the OffsetFetch response came back. It is neither a commit nor a resume from a commit:
the commit lineage must not count it as either (so it can never look like a backward or a
zombie commit, nor like the new owner resuming from an old commit)."""

from __future__ import annotations

import pytest

from tests.helpers import ingest_paths, small_model
from tests.model.conftest import generation, line

UTILS = "(org.apache.kafka.clients.consumer.internals.ConsumerUtils)"


C1_LOG = [
    line("00:00,100", "INFO", "c1", f"Successfully joined group with generation {generation(7, 'c1-m')}"),
    line("00:00,120", "INFO", "c1", "Adding newly assigned partitions: orders-0, orders-1"),
    line("00:00,200", "DEBUG", "c1", "Committed offset 9 for partition orders-1"),
    line("00:06,010", "INFO", "c1", "Revoke previously assigned partitions orders-1"),
    line(
        "00:06,020",
        "INFO",
        "c1",
        "Ignoring the returned OffsetAndMetadata{offset=4, leaderEpoch=2, metadata=''} since its partition orders-1 is no longer assigned",
    ),
    # 3.7+: logged by ConsumerUtils through a static logger, without the [Consumer ..] prefix
    "[2024-06-01 09:00:06,030] INFO Ignoring the returned OffsetAndMetadata{offset=3, leaderEpoch=null, metadata=''} "
    f"since its partition orders-1 is no longer assigned {UTILS}",
]


@pytest.fixture(scope="module")
def model(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("committed_ignored")
    (root / "c1").mkdir()
    (root / "c1" / "app.log").write_text("\n".join(C1_LOG) + "\n")
    return small_model(spark, ingest_paths(spark, root).records)


def test_the_lines_are_typed_with_the_offset_they_ignore(model):
    ignored = model.events.where("event_type = 'consumer:offset:committed_ignored'").orderBy("line")
    assert [tuple(r) for r in ignored.select("line", "topic", "partition", "offset", "offset_epoch", "client_id").collect()] == [
        (5, "orders", 1, 4, 2, "c1"),
        (6, "orders", 1, 3, None, None),
    ]


def test_commit_lineage_keeps_only_the_real_commit(model):
    history = model.commits.where("partition = 1").orderBy("sequence")
    assert [tuple(r) for r in history.select("kind", "offset", "line").collect()] == [("commit", 9, 3)]
