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
    assert set(rows) == {
        "auto.offset.reset",
        "client.id",
        "enable.auto.commit",
        "group.id",
        "group.instance.id",
        "max.poll.interval.ms",
        "ssl.key.password",
    }
    assert {r["client_id"] for r in rows.values()} == {"consumer-orders-app-1"}
    assert rows["auto.offset.reset"]["value"] == "latest" and rows["auto.offset.reset"]["line"] == 1
    (entry,) = [row.asDict() for row in config_table(settings).collect()]
    assert entry["kind"] == "Consumer" and entry["group_id"] == "orders-app" and entry["line"] == 1
    assert entry["settings"] == {
        "auto.offset.reset": "latest",
        "client.id": "consumer-orders-app-1",
        "enable.auto.commit": "true",
        "group.id": "orders-app",
        "group.instance.id": "null",
        "max.poll.interval.ms": "300000",
    }


def test_each_block_is_one_row_in_file_order_and_a_key_logged_twice_keeps_its_greatest_value(spark, tmp_path):
    path = tmp_path / "two-clients.log"
    second = BLOCK.replace("consumer-orders-app-1", "consumer-orders-app-2").replace(
        "\tgroup.id = orders-app\n", "\tgroup.id = orders-app\n\tgroup.id = orders-zz\n"
    )
    path.write_text(BLOCK + second)
    table = config_table(config_settings(parse_events(ingest_paths(spark, path).records)), ("client.id", "group.id"))
    rows = [row.asDict() for row in table.collect()]
    assert [(r["line"], r["client_id"]) for r in rows] == [(1, "consumer-orders-app-1"), (11, "consumer-orders-app-2")]
    assert [r["settings"] for r in rows] == [
        {"client.id": "consumer-orders-app-1", "group.id": "orders-app"},
        {"client.id": "consumer-orders-app-2", "group.id": "orders-zz"},
    ]
