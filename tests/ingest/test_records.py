"""The fold of all lines: each kind of line lands under the right key."""

from __future__ import annotations

from forensics.ingest.records import FOLD_BINARY, FOLD_FRAME, FOLD_UNDECODABLE, FOLDS, fold_lines
from forensics.layouts import LAYOUTS

NOISE = {
    "log4j": "[2024-03-11 14:02:17,418] INFO request served (com.example.web.Server)",
    "logback": "2024-03-11 14:02:17,418 INFO  com.example.web.Server - request served",
    "spring_boot": "2024-03-11 14:02:17.418  INFO 41873 --- [           main] c.e.web.Server                           : request served",
    "json_lines": '{"@timestamp":"2024-03-11T14:02:17.418Z","level":"INFO","logger_name":"com.example.web.Server","message":"request served"}',
}


def test_other_loggers_fold_under_their_layout_and_junk_under_its_reason(spark):
    lines = [(f"file:/x/{name}.log", 1, text) for name, text in NOISE.items()] + [
        ("file:/x/j.log", 1, "\tat com.example.Foo.bar(Foo.java:1)"),
        ("file:/x/j.log", 2, "\x00\x01junk"),
    ]
    df = spark.createDataFrame(lines, "uri string, line long, value string")
    folded = {(r["uri"], r["k"]): r["layout"] for r in fold_lines(df).collect()}
    for name in NOISE:
        (key,) = [k for (uri, k) in folded if uri.endswith(f"/{name}.log")]
        assert FOLDS[key] == ("irrelevant", None, name)
    assert {k for (uri, k) in folded if uri.endswith("/j.log")} == {FOLD_FRAME, FOLD_BINARY}
    assert FOLD_UNDECODABLE in FOLDS and set(LAYOUTS) >= set(NOISE)
