"""Client settings from config blocks become the per-client config table."""

from __future__ import annotations

from forensics.events import parse_events
from forensics.events.config import config_settings, config_table
from tests.helpers import ingest_paths

BLOCK = """[2024-03-11 14:02:16,902] INFO ConsumerConfig values: 
\tauto.offset.reset = latest
\tclient.id = consumer-orders-app-1
\tenable.auto.commit = true
\tgroup.id = orders-app
\tgroup.instance.id = null
\tmax.poll.interval.ms = 300000
\tssl.key.password = null
 (org.apache.kafka.clients.consumer.ConsumerConfig)
[2024-03-11 14:02:17,001] INFO Kafka version: 3.6.1 (org.apache.kafka.common.utils.AppInfoParser)
"""


def test_config_block_becomes_settings_of_its_client(spark, tmp_path):
    path = tmp_path / "consumer.log"
    path.write_text(BLOCK)
    events = parse_events(ingest_paths(spark, path).records)
    settings = config_settings(events)
    rows = {r["key"]: r.asDict() for r in settings.collect()}
    assert set(rows) == {"auto.offset.reset", "client.id", "enable.auto.commit", "group.id", "group.instance.id",
                         "max.poll.interval.ms", "ssl.key.password"}
    assert {r["client_id"] for r in rows.values()} == {"consumer-orders-app-1"}
    assert rows["auto.offset.reset"]["value"] == "latest" and rows["auto.offset.reset"]["line"] == 1
    (entry,) = config_table(settings)
    assert entry["kind"] == "Consumer" and entry["group_id"] == "orders-app"
    assert entry["settings"] == {
        "auto.offset.reset": "latest", "client.id": "consumer-orders-app-1", "enable.auto.commit": "true",
        "group.id": "orders-app", "group.instance.id": "null", "max.poll.interval.ms": "300000",
    }
