"""The lab broker's own pieces that need no Kafka to check."""

from lab import broker


def test_a_cluster_id_never_starts_with_a_dash_that_kafka_storage_reads_as_an_option():
    ids = [broker._cluster_id() for _ in range(2000)]
    assert all(len(i) == 22 and not i.startswith("-") for i in ids)
    assert len(set(ids)) == len(ids)
