"""``registry.next_value``: the first non-null value at or after each row, in one pass;
``earliest`` / ``latest``: ties broken by file and line, whatever order the rows come in;
``first_stated``: the first non-null value in log order, however the rows are partitioned."""

from __future__ import annotations

from pyspark.sql import Window
from pyspark.sql import functions as F

from forensics.registry import earliest, first_stated, latest, next_value


def test_next_value_is_first_ignoring_nulls_over_the_rows_that_follow(spark):
    rows = [
        ("a", 1, None),
        ("a", 2, "x"),
        ("a", 3, None),
        ("a", 4, None),
        ("a", 5, "y"),
        ("a", 6, None),
        ("b", 1, "z"),
        ("b", 2, None),
        ("c", 1, None),
    ]
    frame = spark.createDataFrame(rows, "file string, line int, value string")
    following = Window.partitionBy("file").orderBy("line")
    got = (
        frame.select(
            "file",
            "line",
            next_value(F.col("value"), ["file"], ["line"]).alias("at_or_after"),
            next_value(F.col("value"), ["file"], ["line"], after_current=True).alias("after"),
            F.first("value", ignorenulls=True)
            .over(following.rowsBetween(Window.currentRow, Window.unboundedFollowing))
            .alias("want_at_or_after"),
            F.first("value", ignorenulls=True).over(following.rowsBetween(1, Window.unboundedFollowing)).alias("want_after"),
        )
        .orderBy("file", "line")
        .collect()
    )
    assert [(r["at_or_after"], r["after"]) for r in got] == [(r["want_at_or_after"], r["want_after"]) for r in got]
    assert [r["after"] for r in got] == ["x", "y", "y", "y", None, None, None, None, None]
    assert [r["at_or_after"] for r in got] == ["x", "x", "y", "y", "y", None, "z", None, None]


def test_earliest_and_latest_break_ties_by_file_and_line_in_any_row_order(spark):
    rows = [
        ("g", "b.log", 7, 10, "b7"),
        ("g", "a.log", 9, 10, "a9"),
        ("g", "a.log", 3, 10, "a3"),
        ("g", "c.log", 1, 20, "c1"),
        ("g", "z.log", 1, None, "no time"),
        ("h", "b.log", 2, 5, "b2"),
        ("h", "a.log", 4, 5, "a4"),
    ]
    schema = "group string, source_file string, line int, ts int, value string"
    for order in (rows, rows[::-1], rows[2:] + rows[:2]):
        frame = spark.createDataFrame(order, schema).repartition(3)
        got = (
            frame.groupBy("group")
            .agg(earliest("value", "ts").alias("first"), latest("value", "ts").alias("last"))
            .orderBy("group")
            .collect()
        )
        assert [(r["first"], r["last"]) for r in got] == [("a3", "c1"), ("a4", "b2")]
    ties = spark.createDataFrame([("x", 2), ("y", 2), ("w", 1)], "mover string, count int")
    assert ties.agg(latest("mover", "count", "mover")).first()[0] == "y"


def test_first_stated_is_the_first_non_null_value_in_log_order_in_any_partitioning(spark):
    rows = [
        ("g", "b.log", 9, 30, "late"),
        ("g", "b.log", 2, 10, None),
        ("g", "a.log", 5, 20, "early"),
        ("g", "c.log", 1, 20, "tie, later file"),
        ("h", "a.log", 1, None, None),
        ("h", "a.log", 2, 5, "h"),
    ]
    schema = "group string, source_file string, line int, ts int, value string"
    met_first = set()
    for order in (rows, rows[::-1], rows[2:] + rows[:2]):
        for frame in (spark.createDataFrame(order, schema).coalesce(1), spark.createDataFrame(order, schema).repartition(3, "line")):
            got = frame.groupBy("group").agg(first_stated("value").alias("stated"), F.first("value", ignorenulls=True).alias("met"))
            got = got.orderBy("group").collect()
            assert [(r["group"], r["stated"]) for r in got] == [("g", "early"), ("h", "h")]
            met_first.add(got[0]["met"])
    assert len(met_first) > 1  # first(ignorenulls) answers by the rows' order, which the partitioning decides
