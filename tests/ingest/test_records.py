"""The fold of all lines: each kind of line lands under the right key."""

from __future__ import annotations

from pyspark.sql import functions as F

from forensics.ingest.records import FOLD_BINARY, FOLD_FRAME, FOLD_UNDECODABLE, FOLDS, fold_lines, slashed_date_orders
from forensics.layouts import LAYOUTS, ONE_LINE

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


def _kept_rows(seed: int, lines: int = 60):
    """A file's kept rows at random: gaps (folded lines), heads of a multi-line layout and of a
    one-line one, and continuation candidates, some of them bare heads of a paste."""
    import random

    rng = random.Random(seed)
    rows = []
    for line in range(1, lines + 1):
        roll = rng.random()
        if roll < 0.25:
            continue  # not kept: breaks a record
        layout = "log4j" if roll < 0.4 else "json_lines" if roll < 0.45 else None
        value = "[Consumer clientId=c-1, groupId=g] paste" if layout is None and rng.random() < 0.1 else f"text {line}"
        rows.append((f"file:/x/{seed}.log", line, layout, value))
    return rows


def test_stitching_in_blocks_marks_the_heads_a_whole_file_window_marks(spark):
    from forensics.ingest.records import stitch
    from forensics.registry import literal_map

    rows = [row for seed in range(40) for row in _kept_rows(seed)]
    rows += [("file:/x/long.log", line, "log4j" if line == 2 else None, "x") for line in range(2, 14)]  # one record across 4 blocks of 3
    rows += [
        ("file:/x/cut.log", line, "log4j" if line == 2 else None, "x") for line in range(2, 14) if line != 7
    ]  # a gap at a block's first line
    hosts = {2: "a", 3: "a", 4: "b", 5: "a", 6: None, 7: "b"}  # one file of two writers: 5 is a's line after b's head
    rows += [("file:/x/hosts.log", line, "log4j" if line in (2, 4) else None, "x") for line in hosts]
    kept = spark.createDataFrame(
        [(*row, hosts.get(row[1]) if row[0].endswith("/hosts.log") else None) for row in rows],
        "uri string, line long, layout string, value string, w_host string",
    )
    first_heads = {}
    for uri, line, layout, _ in rows:
        if layout is not None:
            first_heads[uri] = min(line, first_heads.get(uri, line))
    first_head = literal_map(first_heads, "bigint")[F.col("uri")]
    untimed = sorted({r[0] for r in rows} - {u for u, line in first_heads.items() if line == 1})

    def marks(block_lines, by_host=False, leading_block_lines="same"):
        leading = block_lines if leading_block_lines == "same" else leading_block_lines
        stitched = stitch(kept, first_head, untimed, block_lines, by_host, leading)
        return sorted((r["uri"], r["line"], r["layout"], r["head_line"]) for r in stitched.collect())

    whole = marks(None)
    assert marks(3) == whole and marks(7) == whole
    assert (
        marks(3, leading_block_lines=None) == whole and marks(None, leading_block_lines=3) == whole
    )  # the lines before a file's first head apart
    by_host = marks(None, by_host=True)
    assert marks(3, by_host=True) == by_host and marks(3, by_host=True, leading_block_lines=None) == by_host
    assert [head for uri, _, _, head in by_host if uri.endswith("/hosts.log")] == [2, 2, 4, 2, 4, 4]
    assert [row for row in by_host if not row[0].endswith("/hosts.log")] == [row for row in whole if not row[0].endswith("/hosts.log")]
    long_heads = {line: head for uri, line, _, head in whole if uri.endswith("/long.log")}
    assert set(long_heads.values()) == {2}
    cut_heads = {line: head for uri, line, _, head in whole if uri.endswith("/cut.log")}
    assert cut_heads[6] == 2 and cut_heads[8] is None
    assert sum(1 for _, _, layout, _ in whole if layout == "message_only") > 0  # the paste path is covered


def _nearest_heads(rows) -> dict[int, int | None]:
    """What ``stitch`` must mark in a file of several writers, walked line by line: a head marks
    itself; another row the nearest head above it, through kept lines only, of its own host or
    of none named (any head, for a row of no host), unless that head's layout has one line."""
    kept = {line: (layout, host) for _, line, layout, _, host in rows}
    marks = {}
    for line, (layout, host) in kept.items():
        above = line - 1
        while above in kept and not (kept[above][0] and (host is None or kept[above][1] in (None, host))):
            above -= 1
        head = kept.get(above, (None, None))[0]
        marks[line] = line if layout else above if head and head not in ONE_LINE else None
    return marks


def test_stitching_where_writers_interleave_joins_each_row_to_its_own_writers_head(spark):
    import random

    from forensics.ingest.records import stitch

    rng = random.Random(18)
    rows = []
    for seed in range(30):
        for line in range(1, 41):
            if rng.random() < 0.2:
                continue  # not kept: ends every record above it
            layout = "log4j" if rng.random() < 0.3 else "json_lines" if rng.random() < 0.05 else None
            rows.append(
                (f"file:/x/w{seed}.log", line, layout, f"text {line}", rng.choice(["a", "b", "c", None] if seed % 3 else ["a", "b"]))
            )
    kept = spark.createDataFrame(rows, "uri string, line long, layout string, value string, w_host string")
    marked = {(r["uri"], r["line"]): r["head_line"] for r in stitch(kept, None, None, None, True).collect()}
    for seed in range(30):
        uri = f"file:/x/w{seed}.log"
        expected = _nearest_heads([row for row in rows if row[0] == uri])
        assert {line: head for (u, line), head in marked.items() if u == uri} == expected, uri
    assert sum(1 for (_, line), head in marked.items() if head is not None and head != line) > 100  # rows do continue heads


OPENINGS = [
    "[Consumer clientId=c-1, groupId=g] Revoke previously assigned partitions t-0",
    "[Consumer instanceId=i-1, clientId=c-1, groupId=g] Request joining group due to: rebalance",
    "[ShareConsumer clientId=s-1, groupId=g] Acknowledged",
    "[Producer clientId=p-1] Resetting the last seen epoch",
    "[AdminClient clientId=a-1] Metadata update failed",
    "stream-thread [app-StreamThread-1] State transition from RUNNING to PARTITIONS_REVOKED",
    "global-stream-thread [app-GlobalStreamThread] Restoring",
    "stream-client [app] State transition from REBALANCING to RUNNING",
    "state-updater [app-StateUpdater-1] Restoration of task 0_1 completed",
    "ConsumerConfig values: ",
    "Kafka version: 3.7.0",
    "[GroupCoordinator 1]: Preparing to rebalance group g in state PreparingRebalance",
    "[GroupCoordinator id=1 topic=__consumer_offsets partition=12] Dynamic member joined",
    "[GroupMetadataManager brokerId=1] Removed 0 expired offsets in 1 milliseconds.",
    "task [0_1] Suspended running",
    "org.apache.kafka.clients.consumer.CommitFailedException: Commit cannot be completed",
    "REBALANCE [app-1#consumer-1] [thrd:main]: Group g is rebalancing",
    "SEND [svc#producer-2] [thrd:b1]: Sent ProduceRequest",
    "[KafkaListener] [segment-7] [Consumer clientId=c-1, groupId=g] Setting offset",
]
LOGGERS = [
    "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator",
    "o.a.k.c.c.i.ConsumerCoordinator",
    "org.apa.kaf.cli.con.int.ConsumerCoordinator",
    "aiokafka.consumer.group_coordinator",
    "kafka.coordinator.consumer",
    "kafka.consumer.fetcher",
    "kafkajs",
    "com.example.Other",
    None,
]


def test_an_export_entry_that_may_be_a_kafka_record_is_never_folded(spark):
    """``may_be_kafka_entry`` folds an export's entry by substring scans; ``is_kafka`` must then
    call it irrelevant: every Kafka opening, alone or behind a team's brackets, every Kafka
    logger given as a column, and every line of the sample logs as a message column."""
    from forensics.ingest.records import is_kafka, may_be_kafka_entry
    from tests.conftest import DATA

    samples = [
        line
        for path in sorted((DATA.parent.parent / "sample_logs").rglob("*.log"))
        for line in path.read_text(errors="replace").splitlines()
    ]
    messages = OPENINGS + [text.split("] ", 1)[-1] for text in samples] + [text.split(" - ", 1)[-1] for text in samples]
    rows = [(m, None) for m in messages] + [("Revoking all partitions", logger) for logger in LOGGERS]
    frame = spark.createDataFrame(rows, "message string, logger string")
    layout = F.lit("message_only")
    kafka = is_kafka(layout, F.col("logger"), F.col("message"))
    kept = may_be_kafka_entry(layout, F.col("message"), F.col("logger"))
    counts = frame.agg(F.sum(kafka.cast("int")).alias("kafka"), F.sum((kafka & ~kept).cast("int")).alias("folded")).first()
    assert counts["folded"] == 0 and counts["kafka"] >= len(OPENINGS) + len(LOGGERS) - 2


CLOSINGS = [
    # text, [logger, thread, the text without them] (or [text]: no logger closes a line)
    (
        "Stabilized group g generation 3 (kafka.coordinator.group.GroupCoordinator) [executor-Rebalance]",
        ["kafka.coordinator.group.GroupCoordinator", "executor-Rebalance", "Stabilized group g generation 3"],
    ),
    (
        "Successfully joined group (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator:672) - app=connect, clusterId=confluent",
        ["org.apache.kafka.clients.consumer.internals.ConsumerCoordinator", "", "Successfully joined group"],
    ),
    (
        "ConsumerConfig values: \n\tgroup.id = g\n (org.apache.kafka.clients.consumer.ConsumerConfig) [task-thread-0]\n",
        ["org.apache.kafka.clients.consumer.ConsumerConfig", "task-thread-0", "ConsumerConfig values: \n\tgroup.id = g\n\n"],
    ),
    (
        "Setting offset FetchPosition{leader=Optional[k:9092 (id: 0 rack: null)], epoch=3}} (a.b.ConsumerCoordinator)",
        ["a.b.ConsumerCoordinator", "", "Setting offset FetchPosition{leader=Optional[k:9092 (id: 0 rack: null)], epoch=3}}"],
    ),
    ("Rebalance failed (3)", ["Rebalance failed (3)"]),
    ("at x.Y.z(Y.java:12)", ["at x.Y.z(Y.java:12)"]),
    (  # a hard wrap broke the logger after its first letters
        "Detected that the thread is being fenced. (or\ng.apache.kafka.streams.processor.internals.StreamThread:613)",
        ["org.apache.kafka.streams.processor.internals.StreamThread", "", "Detected that the thread is being fenced."],
    ),
    (  # .. and in its last word
        "Successfully joined group (o.a.k.c.c.internals.Consumer\nCoordinator)\nnext line",
        ["o.a.k.c.c.internals.ConsumerCoordinator", "", "Successfully joined group\nnext line"],
    ),
    ("Rebalance failed (see\nthe docs)", ["Rebalance failed (see\nthe docs)"]),
    ("Rebalance failed (see\nlater)", ["Rebalance failed (see\nlater)"]),
]


def test_a_logger_that_closes_a_line_is_read_with_its_thread_or_context(spark):
    from forensics.ingest.records import closing_fields

    frame = spark.createDataFrame([(text,) for text, _ in CLOSINGS], "text string")
    got = [row[0] for row in frame.select(closing_fields(F.col("text"))).collect()]
    assert got == [fields for _, fields in CLOSINGS]


def test_slashed_date_orders_take_the_field_past_12_as_the_day():
    """Per file, over its splits: the field that passes 12 is the day; none, or both (no order
    a file can have), leave the file's order unknown (None); a file without such dates is not named."""
    row = lambda split, first, second: {"split": split, "slashed_1": first, "slashed_2": second}  # noqa: E731
    offsets = {
        0: ("file:/a.log", 0),
        1: ("file:/a.log", 100),
        2: ("file:/b.log", 0),
        3: ("file:/c.log", 0),
        4: ("file:/d.log", 0),
        5: ("file:/e.log", 0),
    }
    rows = [row(0, 9, 7), row(1, 14, 7), row(2, 3, 15), row(3, 3, 4), row(4, 13, 14), row(5, None, None)]
    assert slashed_date_orders(rows, offsets) == {
        "file:/a.log": "day_first",
        "file:/b.log": "month_first",
        "file:/c.log": None,
        "file:/d.log": None,
    }
