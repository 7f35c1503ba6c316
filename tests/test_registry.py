"""``registry.next_value``: the first non-null value at or after each row, in one pass."""

from __future__ import annotations

from pyspark.sql import Window
from pyspark.sql import functions as F

from forensics.registry import next_value


def test_next_value_is_first_ignoring_nulls_over_the_rows_that_follow(spark):
    rows = [("a", 1, None), ("a", 2, "x"), ("a", 3, None), ("a", 4, None), ("a", 5, "y"), ("a", 6, None),
            ("b", 1, "z"), ("b", 2, None), ("c", 1, None)]
    frame = spark.createDataFrame(rows, "file string, line int, value string")
    following = Window.partitionBy("file").orderBy("line")
    got = frame.select(
        "file", "line",
        next_value(F.col("value"), ["file"], ["line"]).alias("at_or_after"),
        next_value(F.col("value"), ["file"], ["line"], after_current=True).alias("after"),
        F.first("value", ignorenulls=True).over(following.rowsBetween(Window.currentRow, Window.unboundedFollowing)).alias("want_at_or_after"),
        F.first("value", ignorenulls=True).over(following.rowsBetween(1, Window.unboundedFollowing)).alias("want_after"),
    ).orderBy("file", "line").collect()
    assert [(r["at_or_after"], r["after"]) for r in got] == [(r["want_at_or_after"], r["want_after"]) for r in got]
    assert [r["after"] for r in got] == ["x", "y", "y", "y", None, None, None, None, None]
    assert [r["at_or_after"] for r in got] == ["x", "x", "y", "y", "y", None, "z", None, None]
