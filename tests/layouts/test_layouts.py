"""Each layout recognises its own lines and rejects the other layouts' lines (sniff both ways)."""

from __future__ import annotations

import importlib
import pkgutil
from datetime import datetime

import pytest
from pyspark.sql import functions as F

import forensics.layouts as layouts_pkg
from forensics.layouts import LAYOUTS, head_layout, sniff, split_fields


def test_every_layout_module_is_registered():
    names = [m.name for m in pkgutil.iter_modules(layouts_pkg.__path__) if not m.name.startswith("_")]
    modules = {n for n in names if hasattr(importlib.import_module(f"forensics.layouts.{n}"), "NAME")}  # pattern: compiles user layouts
    assert modules == {module.__name__.rsplit(".", 1)[1] for module in LAYOUTS.values()}


RECOGNISED = [name for name, layout in LAYOUTS.items() if hasattr(layout, "HEAD") or hasattr(layout, "head")]
"""Layouts recognised from a line by itself (``message_only`` is given by ingest only)."""
FALLBACK = "generic"
"""Recognises any timestamp-and-level layout, so also the exact text layouts before it."""


@pytest.mark.parametrize("name", RECOGNISED)
def test_layout_sniffs_its_own_example(name):
    assert LAYOUTS[name].sniff([LAYOUTS[name].EXAMPLE]) is True


@pytest.mark.parametrize("name", RECOGNISED)
def test_layout_rejects_every_other_layouts_example(name):
    before = list(LAYOUTS)[: list(LAYOUTS).index(name)] if name == FALLBACK else []
    others = [layout.EXAMPLE for other, layout in LAYOUTS.items() if other != name and other not in before and other != "message_only"]
    assert all(LAYOUTS[name].sniff([line]) is False for line in others)


def test_a_table_of_layouts_never_recognised_by_themselves_gives_null_columns(spark):
    """A layout table that samples narrowed to layouts no line is recognised by alone (the anchor,
    ``message_only``) names no layout and splits nothing: null columns, never a missing expression
    that fails the whole ingest (a hard-wrapped librdkafka paste did)."""
    table = {name: LAYOUTS[name] for name in ("message_only", "anchor")}
    frame = spark.createDataFrame([("7|2018-03-02 09:14:05.207|rdkafka#consumer-1|JOIN| Group",)], "value string")
    row = frame.select(
        head_layout(F.col("value"), table).alias("layout"),
        split_fields(F.lit("anchor"), F.col("value"), {"anchor": LAYOUTS["anchor"]}).alias("parts"),
    ).first()
    assert (row["layout"], row["parts"]) == (None, None)


def test_message_only_is_never_sniffed():
    assert LAYOUTS["message_only"].sniff([LAYOUTS["message_only"].EXAMPLE]) is False
    assert sniff([LAYOUTS["message_only"].EXAMPLE]) is None


@pytest.mark.parametrize("name", RECOGNISED)
def test_registry_sniff_names_the_layout_of_each_example(name):
    assert sniff([LAYOUTS[name].EXAMPLE]) == name


def test_stack_trace_lines_sniff_as_no_layout():
    assert sniff(["\tat com.example.Foo.bar(Foo.java:10)", "Caused by: java.io.IOException: x"]) is None


def test_seed_000_kafka_7672_line_is_logback():
    line = (
        "2018-10-23 08:27:54,357 INFO  org.apache.kafka.streams.processor.internals.StoreChangelogReader - "
        "stream-thread [AuditTrailBatch-StreamThread-1]No checkpoint found for task 1_1 state store "
        "AuditTrailBatch-store1-changelog-1 with EOS turned on. Reinitializing the task and restore its state from the beginning."
    )
    assert sniff([line]) == "logback"


def test_log4j_takes_a_logger_in_brackets_after_the_level(spark):
    """Python's ``[%(asctime)s] %(levelname)s [%(name)s]: %(message)s`` (aiokafka's examples) reads
    as Kafka's layout with the logger before the message; Kafka's own prefixes stay in the message."""
    from pyspark.sql import functions as F

    lines = [
        "[2016-10-16 15:09:43,842] DEBUG [aiokafka.consumer.group_coordinator]: Issuing group metadata request to broker 1002",
        "[2024-03-11 14:02:17,418] INFO [GroupCoordinator 1]: Stabilized group orders-app generation 12 (__consumer_offsets-5) "
        "(kafka.coordinator.group.GroupCoordinator)",
    ]
    layout = LAYOUTS["log4j"]
    parts = [r[0] for r in spark.createDataFrame([(x,) for x in lines], "value string").select(layout.split(F.col("value"))).collect()]
    assert (parts[0][2], parts[0][5]) == ("aiokafka.consumer.group_coordinator", "Issuing group metadata request to broker 1002")
    assert (parts[1][2], parts[1][5]) == (
        "kafka.coordinator.group.GroupCoordinator",
        "[GroupCoordinator 1]: Stabilized group orders-app generation 12 (__consumer_offsets-5)",
    )


def test_spark_layout_reads_a_fraction_and_keeps_a_logger_it_does_not_know(spark):
    """A team's ``%d{yy/MM/dd HH:mm:ss.SS} %p %c{1}: %m`` (Spark's layout with hundredths) and
    log4j's full ``%c``: a Kafka class's short name becomes its full one, any other logger stays."""
    from pyspark.sql import functions as F

    lines = [
        "24/03/11 14:02:21.41 INFO ConsumerCoordinator: [Consumer clientId=c-1, groupId=g] (Re-)joining group",
        "24/03/11 14:02:21,418 WARN com.example.orders.KafkaConsumer: poll took 3100 ms",
    ]
    layout = LAYOUTS["spark"]
    value = F.col("value")
    rows = (
        spark.createDataFrame([(x,) for x in lines], "value string")
        .select(
            layout.head(value).alias("head"),
            layout.split(value).alias("p"),
            layout.to_utc(layout.split(value)[0], F.lit("UTC")).alias("ts"),
        )
        .collect()
    )
    assert [r["head"] for r in rows] == [True, True]
    assert [(r["p"][1], r["p"][2]) for r in rows] == [
        ("INFO", "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"),
        ("WARN", "com.example.orders.KafkaConsumer"),
    ]
    assert [r["ts"] for r in rows] == [datetime(2024, 3, 11, 14, 2, 21, 410000), datetime(2024, 3, 11, 14, 2, 21, 418000)]


@pytest.mark.parametrize(
    "level",
    [
        " INFO 41873",
        " INFO [orders-app,5f1a9c0e2b7d4e31,a8c6b2d09e7f4a15] 41873",  # Spring Cloud Sleuth's logging.pattern.level
        " app=orders-app environment=prod INFO 41873",  # MDC values before the level (a team's pattern)
    ],
)
def test_spring_boot_with_a_teams_additions_around_the_level(spark, level):
    from pyspark.sql import functions as F

    line = (
        f"2024-03-11 14:02:17.418 {level} --- [           main] o.a.k.c.c.i.ConsumerCoordinator          : "
        "[Consumer clientId=consumer-orders-app-1, groupId=orders-app] (Re-)joining group"
    )
    parts = spark.createDataFrame([(line,)], "value string").select(LAYOUTS["spring_boot"].split(F.col("value"))).first()[0]
    assert parts[:4] == ["2024-03-11 14:02:17.418", "INFO", "o.a.k.c.c.i.ConsumerCoordinator", "main"]
    assert parts[5] == "[Consumer clientId=consumer-orders-app-1, groupId=orders-app] (Re-)joining group"


@pytest.mark.parametrize(
    "between", ["[orders-app] ", "[orders-app] [ntainer#0-0-C-1] [803B448A0489F84084905D3093480352-3425F23BB2432450] "]
)
def test_spring_boot_3_application_name_and_correlation_ids(spark, between):
    """Boot 3.2+: ``[app-name]`` before the thread and, with tracing, ``[trace-span]`` after it."""
    from pyspark.sql import functions as F

    thread = "" if "ntainer" in between else "[           main] "
    line = (
        f"2024-03-11T14:02:17.418+01:00  INFO 41873 --- {between}{thread}o.a.k.c.c.i.ConsumerCoordinator          : "
        "[Consumer clientId=consumer-orders-app-1, groupId=orders-app] (Re-)joining group"
    )
    parts = spark.createDataFrame([(line,)], "value string").select(LAYOUTS["spring_boot"].split(F.col("value"))).first()[0]
    assert parts[:4] == [
        "2024-03-11T14:02:17.418+01:00",
        "INFO",
        "o.a.k.c.c.i.ConsumerCoordinator",
        "ntainer#0-0-C-1" if thread == "" else "main",
    ]
    assert parts[5] == "[Consumer clientId=consumer-orders-app-1, groupId=orders-app] (Re-)joining group"
