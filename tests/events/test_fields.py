"""Column helpers: partition lists in every notation Kafka prints, reset strategies, prefixes."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from forensics.events import fields as f
from forensics.events.prefix import split_prefix


def column_values(spark, values, transform, schema="text string"):
    df = spark.createDataFrame([(v,) for v in values], schema)
    return [row[0] for row in df.select(transform(F.col("text"))).collect()]


def test_partition_lists_in_every_notation(spark):
    texts = ["[orders-0, orders-1]", "orders-0, orders-1", "[]", "", "orders-3", "[my-topic.v2-10]", None]
    assert column_values(spark, texts, f.partition_list) == [
        ["orders-0", "orders-1"],
        ["orders-0", "orders-1"],
        [],
        [],
        ["orders-3"],
        ["my-topic.v2-10"],
        None,
    ]


def test_topic_and_partition_of_a_topic_partition(spark):
    texts = ["orders-3", "my-topic.v2-10", "AuditTrailBatch-store1-changelog-1", "no_partition", None]
    assert column_values(spark, texts, f.topic_of) == ["orders", "my-topic.v2", "AuditTrailBatch-store1-changelog", None, None]
    assert column_values(spark, texts, f.partition_of) == [3, 10, 1, None, None]


def test_reset_strategy_across_versions(spark):
    texts = ["LATEST", "latest", "AutoOffsetResetStrategy{type=earliest}", "beginning", "end", "something", None]
    assert column_values(spark, texts, f.reset_strategy) == ["latest", "latest", "earliest", "earliest", "latest", None, None]


def test_null_group_for_groupless_consumers(spark):
    assert column_values(spark, ["", "null", "orders-app", None], f.null_group) == [None, None, "orders-app", None]


@pytest.mark.parametrize(
    "message, expected",
    [
        (
            "[Consumer clientId=c-1, groupId=g] (Re-)joining group",
            {"prefix_kind": "Consumer", "client_id": "c-1", "group_id": "g", "rest": "(Re-)joining group"},
        ),
        (
            "[Consumer instanceId=pod-7, clientId=c-1, groupId=g] Revoke previously assigned partitions orders-1",
            {
                "prefix_kind": "Consumer",
                "instance_id": "pod-7",
                "client_id": "c-1",
                "group_id": "g",
                "rest": "Revoke previously assigned partitions orders-1",
            },
        ),
        (
            "[Producer clientId=app-StreamThread-1-1_1-producer, transactionalId=app-1_1] Closing the Kafka producer",
            {
                "prefix_kind": "Producer",
                "client_id": "app-StreamThread-1-1_1-producer",
                "transactional_id": "app-1_1",
                "rest": "Closing the Kafka producer",
            },
        ),
        (
            "stream-thread [app-StreamThread-1]No checkpoint found for task 1_1",
            {"stream_thread": "app-StreamThread-1", "rest": "No checkpoint found for task 1_1"},
        ),
        (
            "stream-thread [app-StreamThread-1] task [0_1] Restored and ready to run",
            {"stream_thread": "app-StreamThread-1", "task": "0_1", "rest": "Restored and ready to run"},
        ),
        (
            "stream-client [app-8f1c]State transition from CREATED to REBALANCING",
            {"stream_client": "app-8f1c", "rest": "State transition from CREATED to REBALANCING"},
        ),
        (
            "state-updater [app-StateUpdater-1] Finished restoring changelog app-store-changelog-1",
            {"state_updater": "app-StateUpdater-1", "rest": "Finished restoring changelog app-store-changelog-1"},
        ),
        (
            "Setting offset for partition orders-0 to the committed offset 5\nsecond line",
            {"rest": "Setting offset for partition orders-0 to the committed offset 5\nsecond line"},
        ),
    ],
)
def test_log_context_prefixes_split_off(spark, message, expected):
    row = spark.createDataFrame([(message,)], "m string").select(split_prefix(F.col("m")).alias("p")).first()["p"].asDict()
    assert {k: v for k, v in row.items() if v is not None} == expected


def test_class_name_is_the_trailing_word_run_as_regexp_extract_finds_it(spark):
    """``class_name`` searches from the end; it must give what the unanchored
    ``regexp_extract(logger, "([\\w$]+)$", 1)`` gives, line terminators before the end included."""
    loggers = [
        "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator",
        "kafka.coordinator",
        "Outer$Inner",
        "$",
        "plain",
        "trailing.",
        "a.b.",
        "",
        "with space",
        "a-b",
        "x/y:z",
        "ünïcode.Klass",
        "Klasse.ünï",
        "abc\n",
        "a.b\r\n",
        "a.b\r",
        "a.b\n\n",
        "a\u2028",
        "a.b\u0085",
        "a\nb",
        "\n",
        "a.b \n",
        None,
    ]
    expected = column_values(spark, loggers, lambda c: F.regexp_extract(c, r"([\w$]+)$", 1))
    assert column_values(spark, loggers, f.class_name) == expected
    assert expected[:3] == ["ConsumerCoordinator", "coordinator", "Outer$Inner"] and expected[5] == ""
