"""The plan fitted to the input: recognisers chosen from samples, layouts from the fold's facts,
hard wrapping told from widths, and times read in one conversion."""

from __future__ import annotations

import re
from pathlib import Path

from pyspark.sql import functions as F

from forensics import layouts
from forensics.ingest import ingest_files, resolve_inputs, wrappers
from forensics.ingest.read import read_splits
from forensics.ingest.records import recognise
from forensics.ingest.sampling import ALL, needed_recognisers, sample_lines

from ..helpers import ingest_paths, records_by_line

SHAPES = Path(__file__).parents[1] / "data" / "shapes"
LAYOUT_FILES = Path(__file__).parents[1] / "data" / "layouts"


def files(shape: str) -> list[str]:
    return sorted(str(p) for p in (SHAPES / shape).iterdir())


def test_samples_name_what_the_lines_need():
    plain = needed_recognisers(files("plain_log4j"))
    assert (plain.wrappers, plain.fallback, plain.seen) == (False, False, frozenset({"log4j"}))
    kubectl = needed_recognisers(files("kubectl_timestamps"))
    assert kubectl.wrappers and kubectl.prefixed == "kubectl"
    assert needed_recognisers(files("cri_containerd")).prefixed == "cri"  # in kubectl's shape too
    assert needed_recognisers(files("docker_json_file")).wrappers
    assert not any(needed_recognisers(files(shape)).prefixed for shape in ("plain_log4j", "journald", "docker_json_file", "syslog"))
    dropwizard = needed_recognisers(files("dropwizard"))
    assert dropwizard.fallback and not dropwizard.wrappers
    assert needed_recognisers(["/no/such/file.log"]) == ALL


def test_samples_tell_whether_a_layout_may_name_no_logger(tmp_path):
    """Only a Kafka client line in a layout that names no logger needs the clients' words
    (``records.CLIENT_WORDS``): a log of layouts that always name one, or of Kafka's own layout
    where its records of one line do (a multi-line record names it on its last line only), needs
    none; one line of Kafka's layout without a logger, a JSON line, the fallback, or a wrapper do."""
    multi_line = tmp_path / "kafka.log"
    multi_line.write_text(
        "[2024-03-11 14:02:17,418] INFO [Consumer clientId=c-1, groupId=g] Updating assignment with\n"
        "\tAssigned partitions:                       [t-0]\n"
        "[2024-03-11 14:02:17,419] INFO [Consumer clientId=c-1, groupId=g] Adding newly assigned partitions: t-0 (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)\n"
        "[2024-03-11 14:02:17,420] INFO [aiokafka.consumer.group_coordinator]: Joined group 'g' (generation 3) with member_id m-1\n"
    )
    python = tmp_path / "python.log"
    python.write_text(
        "[2024-03-11 14:02:17,418] INFO (Re-)joining group g\n[2024-03-11 14:02:17,419] INFO Elected group leader -- performing partition assignments using range\n"
    )
    assert not needed_recognisers([str(multi_line)]).loggerless
    named = [
        str(LAYOUT_FILES / name)
        for name in ("logback_streams_kafka_7672.log", "jul_simpleformatter.log", "tomcat_catalina.log", "librdkafka_consumer.log")
    ]
    assert not needed_recognisers(files("plain_log4j") + named).loggerless
    assert needed_recognisers([str(multi_line), str(python)]).loggerless
    assert all(
        needed_recognisers(files(shape)).loggerless for shape in ("ecs_json", "dropwizard", "kubectl_timestamps", "logfmt", "no_timestamp")
    )
    assert needed_recognisers([str(LAYOUT_FILES / "untimed_level_logger.log")]).loggerless  # no layout seen: bare lines of any client
    assert ALL.loggerless


def test_large_file_is_sampled_at_its_head_and_spread_to_its_end(tmp_path):
    path = tmp_path / "big.log"
    lines = [f"[2024-03-11 14:02:17,418] INFO line {i} (x.Y)" for i in range(120_000)]
    lines[-1] = "2024-03-11T14:02:17.418Z " + lines[-1]  # a kubectl-wrapped last line
    path.write_text("\n".join(lines) + "\n")
    sampled = sample_lines(str(path))
    assert sampled[0] == lines[0] and sampled[-1] == lines[-1] and len(sampled) < len(lines) / 3
    assert needed_recognisers([str(path)]).wrappers


def test_narrow_plan_recognises_what_the_full_plan_does(spark):
    paths = files("plain_log4j") + files("dropwizard")
    lines = read_splits(spark, paths)
    tried = needed_recognisers(paths)
    assert tried != ALL
    narrow = recognise(lines, layouts.LAYOUTS, tried).select("uri", "line", "layout", "wrapper").collect()
    full = recognise(lines, layouts.LAYOUTS, ALL).select("uri", "line", "layout", "wrapper").collect()
    assert sorted(map(tuple, narrow), key=str) == sorted(map(tuple, full), key=str)


KUBECTL_INNER = [
    "[2024-03-11 14:02:17,418] INFO [Consumer clientId=c-1, groupId=g] Revoke previously assigned partitions t-0 (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)",
    "org.apache.kafka.clients.consumer.CommitFailedException: Commit cannot be completed",
    "\tat org.apache.kafka.clients.consumer.internals.ConsumerCoordinator.sendOffsetCommitRequest(ConsumerCoordinator.java:1109)",
    "\t... 12 more",
    "Caused by: java.io.IOException: x",
    "",
    " ",
    "a message in no layout",
    "\x1b[32mINFO\x1b[0m coloured",
    "[2024-03-11 14:02:17,418] \x1b[31mERROR\x1b[0m coloured (x.Y)",
    "2024-03-11 14:02:17,418 INFO  o.a.k.c.c.KafkaConsumer - a logback line",
    '{"@timestamp":"2024-03-11T14:02:17.418Z","level":"INFO","logger_name":"org.apache.kafka.X","message":"a JSON record"}',
    "text with a \u2028 line separator and a \u0085 next line",
    "2024-03-11T14:02:17.418Z kubectl inside kubectl",
    "host java[4242]: journald's shape",
    "Caused by: a shape journald's regex reads too",
    "host \x1b[1mjava\x1b[0m[4242]: journald's shape once the colour is removed",
]
"""Inner lines of a kubectl-wrapped log: heads in several layouts, continuations, blank and
coloured lines, lines that journald's shape (tried first) reads."""
KUBECTL_ODD = [
    "2024-03-11T14:02:17.418Z",
    "2024-03-11T14:02:17+01:00 an offset zone",
    "2024-03-11T14:02:17.1234567890Z ten digits",
    "\x1b[0m2024-03-11T14:02:17.418Z colour first",
    "2024-03-11 14:02:17.418Z no T",
    "not wrapped at all",
    "[2024-03-11 14:02:17,418] INFO an unwrapped log4j line (x.Y)",
    "2024-03-11T14:02:17.418000+00:00 ecs/orders/5f1a9c0e aws logs tail's shape",
    "2024-03-11T14:02:17.418Z app[worker.1]: Heroku's shape",
    '2024-03-11T14:02:17Z {pod="orders-0"} logcli\'s shape',
]
"""Lines of that log that are not, or not exactly, behind kubectl's prefix."""


def test_kubectl_lines_peeled_first_are_read_as_the_full_plan_reads_them(spark, tmp_path):
    """Where the samples show only kubectl's prefix, lines with it skip the exact layouts and
    most wrapper regexes; every line still gets the layout, wrapper, time and inner line that
    the full plan gives it, the lines in another shape included."""
    stamps = ["2024-03-11T14:02:17.418123456Z ", "2024-03-11T14:02:17Z ", "2024-03-11T14:02:17.4+02:00 ", "2024-03-11T14:02:17,418-0500 "]
    wrapped = [stamps[i % len(stamps)] + KUBECTL_INNER[i % len(KUBECTL_INNER)] for i in range(3 * len(stamps) * len(KUBECTL_INNER))]
    sampled, odd = tmp_path / "pod.log", tmp_path / "odd.log"
    sampled.write_text("\n".join(wrapped) + "\n", encoding="utf-8")
    odd.write_text("\n".join(wrapped + KUBECTL_ODD) + "\n", encoding="utf-8")
    assert not needed_recognisers([str(sampled)]).prefixed  # the U+2028 line splits in two in Python's samples
    kept = [line for line in wrapped if "\u2028" not in line]
    sampled.write_text("\n".join(kept) + "\n", encoding="utf-8")
    tried = needed_recognisers([str(sampled)])
    assert tried.prefixed == "kubectl"
    lines = read_splits(spark, [str(sampled), str(odd)])
    columns = ["uri", "line", "value", "layout", "wrapper", "w_ts", "w_host"]
    first = recognise(lines, layouts.LAYOUTS, tried).select(columns).collect()
    full = recognise(lines, layouts.LAYOUTS, ALL).select(columns).collect()
    assert sorted(map(tuple, first), key=str) == sorted(map(tuple, full), key=str)
    taken = read_splits(spark, [str(sampled)]).where(wrappers.prefixed_wrapper(F.col("value"), "kubectl").isNotNull()).count()
    first_way = [line for line in kept if re.match(wrappers.KUBECTL_ONLY, line)]  # the lines peeled first
    assert taken == len(first_way) > len(kept) / 2 and not any("[4242]: " in line or "Caused by" in line for line in first_way)
    by_value = {r["value"]: r for r in full if r["uri"].endswith("odd.log")}
    assert by_value["text with a \u2028 line separator and a \u0085 next line"]["wrapper"] == "kubectl"  # any text is an inner line
    assert by_value["2024-03-11T14:02:17.418Z kubectl inside kubectl"]["layout"] == "message_only"
    assert by_value["journald's shape"]["wrapper"] == "journald"
    odd_lines = {r["line"]: r for r in full if r["uri"].endswith("odd.log") and r["line"] > len(wrapped)}
    assert [odd_lines[len(wrapped) + 1 + i]["wrapper"] for i in range(len(KUBECTL_ODD))] == [
        None,
        "kubectl",
        None,
        "kubectl",
        None,
        None,
        None,
        "aws_tail",
        "heroku",
        "logcli",  # the colour code is removed before a wrapper is looked for
    ]


def test_long_lines_mean_a_file_was_not_hard_wrapped(spark, tmp_path):
    """Five kept lines exactly 120 wide are no hard wrap when a longer kept line exists: their
    record keeps its line breaks."""
    head = "[2024-03-11 14:02:17,418] ERROR [Consumer clientId=c-1, groupId=g] Commit failed (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)"
    tail = ["x" * 120] * 5 + ["y" * 150]
    path = tmp_path / "app.log"
    path.write_text("\n".join([head, *tail]) + "\n")
    record = records_by_line(ingest_paths(spark, path))[1]
    assert record["message"].count("\n") == len(tail)


def test_zone_names_and_hour_offsets_are_read_once(spark):
    rows = spark.createDataFrame(
        [
            ("2024-03-11 14:02:17,418 UTC", "Europe/Berlin"),
            ("2024-03-11T14:02:17+01", "UTC"),
            ("2024-03-11 14:02:17.418+0100", "UTC"),
            ("2024-03-11 14:02:17,418", "Europe/Berlin"),
            ("Mar 1, 2024 @ 14:02:17.418", "UTC"),
            ("1 Mar 2024 14:02:17,418", "+02:00"),
        ],
        "t string, z string",
    )
    got = [r[0].isoformat() for r in rows.select(layouts._common.any_to_utc(F.col("t"), F.col("z"))).collect()]
    assert got == [
        "2024-03-11T14:02:17.418000",
        "2024-03-11T13:02:17",
        "2024-03-11T13:02:17.418000",
        "2024-03-11T13:02:17.418000",
        "2024-03-01T14:02:17.418000",
        "2024-03-01T12:02:17.418000",
    ]


def test_records_are_parsed_with_the_layouts_the_files_hold(spark):
    """A file of one layout and an untimed paste: the records projection is built for the
    layouts the fold saw (and message_only), and gives every record."""
    result = ingest_files(spark, resolve_inputs(files("plain_log4j") + files("no_timestamp")))
    assert result.accounting["records"] > 0
    assert {r["layout"] for r in result.records.select("layout").distinct().collect()} == {"log4j", "message_only"}


def test_a_kubectl_dated_exception_line_continues_its_record(spark, tmp_path):
    """``kubectl logs --timestamps`` dates every line; the exception's first line under a Kafka
    record still continues that record, as in the plain log (the 4M kubectl twin counted 337
    such lines as records of their own)."""
    stamp = "2024-03-11T14:02:17.418000000Z "
    lines = [
        "[2024-03-11 14:02:17,418] ERROR [Consumer clientId=c-1, groupId=g] Offset commit failed (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)",
        "org.apache.kafka.clients.consumer.CommitFailedException: Commit cannot be completed since the group has already rebalanced",
        "\tat org.apache.kafka.clients.consumer.internals.ConsumerCoordinator.sendOffsetCommitRequest(ConsumerCoordinator.java:1109)",
    ]
    (tmp_path / "plain.log").write_text("\n".join(lines) + "\n")
    (tmp_path / "pod.log").write_text("\n".join(stamp + line for line in lines) + "\n")
    for name in ("plain.log", "pod.log"):
        result = ingest_paths(spark, tmp_path / name)
        records = records_by_line(result)
        assert list(records) == [1] and "CommitFailedException" in records[1]["message"], name
