"""The fold of all lines: each kind of line lands under the right key."""

from __future__ import annotations

from pyspark.sql import functions as F

from forensics.ingest.records import FOLD_BINARY, FOLD_FRAME, FOLD_UNDECODABLE, FOLDS, fold_lines
from forensics.layouts import LAYOUTS

NOISE = {
    "log4j": "[2024-03-11 14:02:17,418] INFO request served (com.example.web.Server)",
    "logback": "2024-03-11 14:02:17,418 INFO  com.example.web.Server - request served",
    "spring_boot": "2024-03-11 14:02:17.418  INFO 41873 --- [           main] c.e.web.Server                           : request served",
    "json_lines": '{"@timestamp":"2024-03-11T14:02:17.418Z","level":"INFO","logger_name":"com.example.web.Server","message":"request served"}',
    "generic": "2024-03-11 14:02:17.418 | INFO  | [main] | c.e.web.Server | request served",
}


def test_other_loggers_fold_under_their_layout_and_junk_under_its_reason(spark):
    lines = [(f"file:/x/{name}.log", i, 1, text) for i, (name, text) in enumerate(NOISE.items())] + [
        ("file:/x/j.log", 9, 1, "\tat com.example.Foo.bar(Foo.java:1)"),
        ("file:/x/j.log", 9, 2, "\x00\x01junk"),
    ]
    df = spark.createDataFrame(lines, "uri string, split int, line long, value string").withColumn("start", F.lit(0))
    rows = fold_lines(df).collect()
    uri_of = {r["split"]: r["uri"] for r in rows if r["uri"] is not None}
    folded = {(uri_of[r["split"]], r["k"]): r["layout"] for r in rows}
    for name in NOISE:
        ((key, layout),) = [(k, layout) for (uri, k), layout in folded.items() if uri.endswith(f"/{name}.log")]
        assert FOLDS[key] == ("irrelevant", None) and layout == name
    assert {k for (uri, k) in folded if uri.endswith("/j.log")} == {FOLD_FRAME, FOLD_BINARY}
    assert FOLD_UNDECODABLE in FOLDS and set(LAYOUTS) >= set(NOISE)
