"""Log-platform exports (``forensics.ingest.exports``) on hand-written downloads (tests/data/exports/).

For each export: the shape ``sniff_export`` finds, every entry's first and last physical line,
time and host, the stack-trace entry's message, and the accounting (entries' lines + lines
outside any entry == physical lines). Ordinary log files must not pass for exports. Generated
files larger than the test session's 256 KiB split check that line numbers stay exact when
Spark cuts the text into several partitions.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import random
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from forensics.errors import ForensicsError
from forensics.ingest.exports import (
    ROLES,
    SNIFF_CHARS,
    ExportShape,
    element_spans,
    export_line_count,
    parse_columns_option,
    read_export,
    sniff_export,
)
from tests.conftest import DATA, TEST_SPLIT_BYTES

EXPORTS = DATA / "exports"
SHAPES = DATA / "shapes"
B, A = "orders/orders-app/2b7e9d0c1a4f", "orders/orders-app/8f1c2d3e4b5a"
DD_B, DD_A = "i-0f9e8d7c6b5a49382", "i-0a1b2c3d4e5f60718"
POD_B, POD_A = "orders-app-7d9f6c5b8-m8q3z", "orders-app-7d9f6c5b8-x2k4p"
LAST_FRAME = "\tat java.base/java.lang.Thread.run(Thread.java:833)"


@dataclass(frozen=True)
class Export:
    file: str
    kind: str
    platform: str | None
    columns: dict
    lines: int
    outside: int
    rows: list
    """(line, line_end, time, host) of every entry, in file order (compared as a multiset: the
    compact JSON array has three entries on one line)."""


CASES = [
    Export(
        "kibana_discover.csv",
        "csv",
        "kibana",
        {"time": "@timestamp", "host": "host.name", "level": "log.level", "logger": "log.logger", "message": "message"},
        15,
        1,
        [
            (2, 2, "Mar 11, 2024 @ 14:05:33.050", "host-b"),
            (3, 3, "Mar 11, 2024 @ 14:05:32.907", "host-a"),
            (4, 12, "Mar 11, 2024 @ 14:05:31.266", "host-b"),
            (13, 13, "Mar 11, 2024 @ 14:05:31.204", "host-b"),
            (14, 14, "Mar 11, 2024 @ 14:05:04.113", "host-b"),
            (15, 15, "Mar 11, 2024 @ 14:00:03.749", "host-a"),
        ],
    ),
    Export(
        "splunk_export.csv",
        "csv",
        "splunk",
        {"time": "_time", "host": "host", "source": "source", "message": "_raw"},
        15,
        1,
        [
            (2, 2, "2024-03-11T14:05:33.050+00:00", "host-b"),
            (3, 3, "2024-03-11T14:05:33.028+00:00", "host-a"),
            (4, 12, "2024-03-11T14:05:31.266+00:00", "host-b"),
            (13, 13, "2024-03-11T14:05:31.262+00:00", "host-b"),
            (14, 14, "2024-03-11T14:05:05.904+00:00", "host-a"),
            (15, 15, "2024-03-11T14:05:04.114+00:00", "host-b"),
        ],
    ),
    Export(
        "cloudwatch_insights.csv",
        "csv",
        "cloudwatch",
        {"time": "@timestamp", "host": "@logStream", "source": "@log", "message": "@message"},
        20,
        1,
        [
            (2, 2, "2024-03-11 14:05:33.066", B),
            (3, 3, "2024-03-11 14:05:33.060", A),
            (4, 12, "2024-03-11 14:05:31.266", B),
            (13, 13, "2024-03-11 14:05:06.021", A),
            (14, 20, "2024-03-11 14:00:00.112", A),
        ],
    ),
    Export(
        "datadog_logs.csv",
        "csv",
        "datadog",
        {"time": "Date", "host": "Host", "source": "Service", "level": "Status", "message": "Message"},
        14,
        2,
        [
            (2, 2, "2024-03-11T14:05:34.288Z", DD_B),
            (3, 11, "2024-03-11T14:05:31.266Z", DD_B),
            (12, 12, "2024-03-11T14:05:05.904Z", DD_A),
            (13, 13, "2024-03-11T14:05:04.113Z", DD_B),
        ],
    ),
    Export(
        "generic_export.tsv",
        "tsv",
        None,
        {"time": "time", "host": "hostname", "level": "level", "logger": "logger", "thread": "thread", "message": "message"},
        16,
        2,
        [
            (2, 2, "2024-03-11T14:05:33.050Z", "host-b"),
            (4, 4, "2024-03-11T14:05:32.907Z", "host-a"),
            (5, 14, "2024-03-11T14:05:31.266Z", "host-b"),
            (15, 15, "2024-03-11T14:05:04.113Z", "host-b"),
            (16, 16, "2024-03-11T14:00:03.749Z", "host-a"),
        ],
    ),
    Export(
        "es_hits.ndjson",
        "ndjson",
        "elasticsearch",
        {
            "time": "_source.@timestamp",
            "host": "_source.kubernetes.pod.name",
            "source": "_source.log.file.path",
            "message": "_source.message",
        },
        5,
        1,
        [
            (1, 1, "2024-03-11T14:05:33.412Z", POD_B),
            (2, 2, "2024-03-11T14:05:31.981Z", POD_B),
            (3, 3, "2024-03-11T14:05:06.377Z", POD_A),
            (4, 4, "2024-03-11T14:05:04.790Z", POD_B),
        ],
    ),
    Export(
        "splunk_results.json",
        "ndjson",
        "splunk",
        {"time": "result._time", "host": "result.host", "source": "result.source", "message": "result._raw"},
        4,
        0,
        [
            (1, 1, "2024-03-11T14:05:33.050+00:00", "host-b"),
            (2, 2, "2024-03-11T14:05:31.266+00:00", "host-b"),
            (3, 3, "2024-03-11T14:05:05.904+00:00", "host-a"),
            (4, 4, "2024-03-11T14:05:04.113+00:00", "host-b"),
        ],
    ),
    Export(
        "grafana_loki.json",
        "json_array",
        "loki",
        {"time": "timestamp", "host": "fields.host", "source": "fields.filename", "message": "line"},
        38,
        2,
        [
            (2, 10, "1710165933050000000", "host-b"),
            (11, 19, "1710165931266000000", "host-b"),
            (20, 28, "1710165905904000000", "host-a"),
            (29, 37, "1710165904113000000", "host-b"),
        ],
    ),
    Export(
        "gcp_logs.json",
        "json_array",
        "gcp",
        {"time": "timestamp", "host": "resource.labels.pod_name", "source": "logName", "level": "severity", "message": "textPayload"},
        74,
        2,
        [
            (2, 25, "2024-03-11T14:05:33.050412873Z", POD_B),
            (26, 49, "2024-03-11T14:05:31.266902115Z", POD_B),
            (50, 73, "2024-03-11T14:05:05.904117052Z", POD_A),
        ],
    ),
    Export(
        "cloudwatch_results.json",
        "json_array",
        "cloudwatch",
        {"time": "@timestamp", "host": "@logStream", "source": "@log", "message": "@message"},
        1,
        0,
        [
            (1, 1, "2024-03-11 14:05:33.066", B),
            (1, 1, "2024-03-11 14:05:33.060", A),
            (1, 1, "2024-03-11 14:05:31.266", B),
            (1, 1, "2024-03-11 14:05:06.021", A),
        ],
    ),
]
IDS = [case.file for case in CASES]
NOT_EXPORTS = sorted(p.name for p in (EXPORTS / "not_exports").iterdir())
SHAPE_EXPORTS = [
    name
    for name in (
        "kibana_csv/discover.csv",
        "splunk_csv/splunk_export.csv",
        "cloudwatch_csv/logs-insights-results.csv",
        "ndjson_es/hits.ndjson",
        "gcp_json/stdout_20240311_S0.json",
        "azure_container_logs/query_data.csv",
    )
    if (SHAPES / name).is_file()
]
"""Exports written by hand for tests/ingest/test_shapes.py, read here as a second opinion."""


def text_of(path: Path) -> str:
    """The file's text with its line ends as they are."""
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


def head_of(path: Path) -> str:
    return text_of(path)[:SNIFF_CHARS]


def physical_lines(path: Path) -> list[str]:
    """The file's lines as Spark's text reader sees them (LF, CRLF or a lone CR end a line)."""
    lines = re.split(r"\r\n|\r|\n", text_of(path))
    return lines[:-1] if lines and lines[-1] == "" else lines


@dataclass
class Read:
    shape: ExportShape
    rows: list
    count: object


@pytest.fixture(scope="module")
def read(spark):
    """Each export sniffed and read once per module: path -> Read (rows sorted by line)."""
    done: dict[Path, Read] = {}

    def get(path: Path) -> Read:
        if path not in done:
            shape = sniff_export(head_of(path))
            assert shape is not None, path
            frame = read_export(spark, str(path), shape)
            done[path] = Read(
                shape,
                sorted(frame.collect(), key=lambda r: (r["line"], r["time"] is None, r["time"])),
                export_line_count(spark, str(path), shape, frame),
            )
        return done[path]

    return get


# ----------------------------------------------------------------------------- sniffing


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_sniff_finds_kind_platform_and_columns(case):
    shape = sniff_export(head_of(EXPORTS / case.file))
    assert shape is not None
    assert (shape.kind, shape.platform, shape.columns) == (case.kind, case.platform, case.columns)


@pytest.mark.parametrize("name", NOT_EXPORTS)
def test_ordinary_log_files_are_not_exports(name):
    assert sniff_export(head_of(EXPORTS / "not_exports" / name)) is None


@pytest.mark.parametrize("name", ["", "\n\n", "\ufeff", "Kafka version: 3.6.1\n", "[]", "{}\n", '{"a": 1}\n'])
def test_trivial_heads_are_not_exports(name):
    assert sniff_export(name) is None


def test_a_head_cut_inside_an_entry_still_sniffs():
    head = head_of(EXPORTS / "kibana_discover.csv")
    cut = head[: head.index("ConsumerCoordinator.java:1117")]
    assert sniff_export(cut).platform == "kibana"
    gcp = head_of(EXPORTS / "gcp_logs.json")
    assert sniff_export(gcp[: gcp.index('"insertId": "9v7i')]).platform == "gcp"


def test_bom_and_crlf_header():
    shape = sniff_export('\ufeff"_time","host","_raw"\r\n"2024-03-11T14:05:33.050+00:00","host-b","x"\r\n')
    assert (shape.kind, shape.platform, shape.columns) == ("csv", "splunk", {"time": "_time", "host": "host", "message": "_raw"})


def test_names_match_case_insensitively_and_prefer_the_raw_line():
    shape = sniff_export("TIMESTAMP,HOST,MESSAGE,LINE,_RAW\n2024-03-11T14:05:33Z,host-a,msg,1,raw\n")
    assert shape.columns == {"time": "TIMESTAMP", "host": "HOST", "message": "_RAW"}


def test_a_line_number_column_is_not_the_message():
    shape = sniff_export(
        'time,host,line,message\n2024-03-11T14:05:33Z,host-a,17,"[Consumer clientId=c-1, groupId=g] (Re-)joining group"\n'
        "2024-03-11T14:05:34Z,host-a,18,x\n"
    )
    assert shape.columns["message"] == "message"


def test_columns_make_an_export_of_any_header():
    head = 'when,who,what\n2024-03-11T14:02:17.418Z,host-a,"[Consumer clientId=c-1, groupId=g] (Re-)joining group"\n'
    assert sniff_export(head) is None
    shape = sniff_export(head, parse_columns_option("time=when,host=who,message=what"))
    assert (shape.kind, shape.platform, shape.columns) == ("csv", None, {"time": "when", "host": "who", "message": "what"})


def test_columns_override_the_usual_names():
    shape = sniff_export(head_of(EXPORTS / "es_hits.ndjson"), {"host": "host.name"})
    assert shape.columns["host"] == "_source.host.name"  # found under the hit's _source
    shape = sniff_export(head_of(EXPORTS / "gcp_logs.json"), {"host": 'labels."compute.googleapis.com/resource_name"'})
    assert shape.columns["host"] == 'labels."compute.googleapis.com/resource_name"'


def test_columns_naming_a_missing_column_lists_the_available_ones():
    with pytest.raises(ForensicsError) as csv_error:
        sniff_export(head_of(EXPORTS / "kibana_discover.csv"), {"host": "agent.name"})
    assert "host=agent.name" in str(csv_error.value) and "host.name" in str(csv_error.value)
    assert "\n" not in str(csv_error.value)
    with pytest.raises(ForensicsError) as json_error:
        sniff_export(head_of(EXPORTS / "splunk_results.json"), {"thread": "thread_name"})
    assert "result._raw" in str(json_error.value)


def test_columns_leave_ordinary_logs_alone():
    assert sniff_export(head_of(EXPORTS / "not_exports" / "kafka_log4j.log"), {"message": "msg"}) is None


# ----------------------------------------------------------------------------- --columns


def test_parse_columns_option():
    assert parse_columns_option("time=@timestamp, host=host.name,MESSAGE=_raw") == {
        "time": "@timestamp",
        "host": "host.name",
        "message": "_raw",
    }
    assert parse_columns_option('host=labels."k8s-pod/a,b",message=textPayload') == {
        "host": 'labels."k8s-pod/a,b"',
        "message": "textPayload",
    }


@pytest.mark.parametrize(
    "text, says",
    [
        ("time=@timestamp,colour=red", "unknown role 'colour'"),
        ("time", "is not ROLE=COLUMN"),
        ("time=,message=_raw", "is not ROLE=COLUMN"),
        ("=x", "is not ROLE=COLUMN"),
        ("host=a,host=b", "twice"),
        (" , ", "empty"),
    ],
)
def test_parse_columns_option_errors(text, says):
    with pytest.raises(ForensicsError) as error:
        parse_columns_option(text)
    assert says in str(error.value)
    assert error.value.fix and "\n" not in str(error.value)


# ----------------------------------------------------------------------------- reading


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_entry_at_its_lines_with_time_and_host(read, case):
    got = read(EXPORTS / case.file)
    assert sorted((r["line"], r["line_end"], r["time"], r["host"]) for r in got.rows) == sorted(case.rows)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_line_accounting(read, case):
    path = EXPORTS / case.file
    got = read(path)
    assert got.count.lines == len(physical_lines(path)) == case.lines
    assert got.count.entries == len(case.rows)
    assert got.count.outside == case.outside
    assert got.count.entry_lines + got.count.outside == got.count.lines
    if case.kind != "json_array":
        assert sum(r["line_end"] - r["line"] + 1 for r in got.rows) == got.count.entry_lines


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_stack_trace_is_one_entry(read, case):
    got = read(EXPORTS / case.file)
    [entry] = [r for r in got.rows if "CommitFailedException" in (r["message"] or "")]
    lines = entry["message"].split("\n")
    assert "Offset commit with offsets {orders-2=OffsetAndMetadata{offset=40612" in lines[0]
    assert lines[-1] == LAST_FRAME
    assert len(lines) == (10 if case.kind == "tsv" else 9)  # the TSV's message holds an empty line
    assert "\r" not in entry["message"]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_columns_without_a_role_are_null(read, case):
    got = read(EXPORTS / case.file)
    assert got.rows[0].asDict().keys() == {"line", "line_end", *ROLES, "truncated"}
    assert not any(r["truncated"] for r in got.rows)  # nothing cut in a whole download
    for role in set(ROLES) - set(case.columns):
        assert all(r[role] is None for r in got.rows)


def test_values_of_the_other_roles(read):
    kibana = read(EXPORTS / "kibana_discover.csv").rows
    assert kibana[3]["message"] == (
        '[2024-03-11 14:05:31,204] WARN pricing-service answered after 327102 ms for batch "b-42" (timeout 5000 ms) '
        "(com.example.orders.PricingClient)"
    )
    assert (kibana[2]["level"], kibana[2]["logger"]) == ("ERROR", "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator")
    tsv = read(EXPORTS / "generic_export.tsv").rows
    assert tsv[3]["thread"] == "kafka-coordinator-heartbeat-thread | orders-app"
    assert read(EXPORTS / "gcp_logs.json").rows[1]["source"] == "projects/acme-prod/logs/stderr"
    assert (
        read(EXPORTS / "cloudwatch_insights.csv").rows[-1]["message"].split("\n")[-1]
        == " (org.apache.kafka.clients.consumer.ConsumerConfig)"
    )
    assert (
        read(EXPORTS / "splunk_export.csv")
        .rows[0]["message"]
        .endswith("orders-2, orders-3 (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)")
    )


def test_read_with_columns_given(spark):
    path = EXPORTS / "es_hits.ndjson"
    shape = sniff_export(head_of(path), {"host": "host.name"})
    hosts = {r["host"] for r in read_export(spark, str(path), shape).collect()}
    assert hosts == {"gke-prod-eu-pool-1-5c1d"}  # the node: both pods ran on it


def entry_on_its_lines(kind: str, lines: list[str], row) -> bool:
    """The oracle: the entry's message is written on the physical lines it is said to span."""
    text = row["message"] or ""
    first, last = text.split("\n")[0][:30], text.split("\n")[-1][:20]
    if kind in ("csv", "tsv"):
        return first.replace('"', '""') in lines[row["line"] - 1] and last.replace('"', '""') in lines[row["line_end"] - 1]
    escaped = json.dumps(text)[1:-1][:40]
    return escaped in "\n".join(lines[row["line"] - 1 : row["line_end"]])


@pytest.mark.parametrize("name", [c.file for c in CASES] + [f"../shapes/{s}" for s in SHAPE_EXPORTS])
def test_each_message_is_written_on_its_lines(read, name):
    path = (EXPORTS / name).resolve()
    got = read(path)
    lines = physical_lines(path)
    assert got.rows and all(entry_on_its_lines(got.shape.kind, lines, r) for r in got.rows)
    assert got.count.entry_lines + got.count.outside == got.count.lines == len(lines)


# ----------------------------------------------------------------------------- JSON arrays


def test_element_spans():
    assert element_spans("") == []
    assert element_spans("[]\n") == []
    assert element_spans('[{"a":"]}{["},{"b":"x\\"}"}]') == [(1, 1), (1, 1)]
    assert element_spans('[\r\n  {\r\n    "a": [1, {"b": 2}]\r\n  },\r  "s",\n  3\n]') == [(2, 4), (5, 5), (6, 6)]
    assert element_spans('\ufeff[\n{"a":\n1}, {"b": [\n]}\n]\n') == [(2, 3), (3, 4)]


# ----------------------------------------------------------------------------- split files


def write_big_csv(path: Path, records: int, newline: str) -> None:
    """A Kibana-like CSV whose messages say on which lines they are written: every 7th carries
    a stack trace, every 50th is followed by an empty line, every 90th holds an empty line."""
    frames = ["org.apache.kafka.clients.consumer.CommitFailedException: Offset commit cannot be completed"] + [
        f"\tat com.example.orders.OrderConsumer.step{k}(OrderConsumer.java:{100 + k})" for k in range(7)
    ]
    out, line = ['"@timestamp","host.name","message"'], 2
    for n in range(records):
        extra = frames if n % 7 == 0 else []
        if n % 90 == 0:
            extra = ["", *extra, "after an empty line"]
        end = line + len(extra)
        body = newline.join([f"[Consumer clientId=consumer-orders-app-1, groupId=orders-app] record at {line} to {end}", *extra])
        out.append(f'"Mar 11, 2024 @ 14:05:{n % 60:02d}.000","host-{"ab"[n % 2]}","{body}"')
        line = end + 1
        if n % 50 == 0:
            out.append("")
            line += 1
    path.write_text(newline.join(out) + newline, encoding="utf-8", newline="")


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_line_numbers_stay_exact_in_a_split_file(spark, tmp_path, newline):
    path = tmp_path / "discover.csv"
    write_big_csv(path, 6000, newline)
    assert path.stat().st_size > 4 * TEST_SPLIT_BYTES
    shape = sniff_export(head_of(path))
    rows = read_export(spark, str(path), shape)
    said = F.regexp_extract("message", r"record at (\d+) to (\d+)", 1).cast("long")
    said_end = F.regexp_extract("message", r"record at (\d+) to (\d+)", 2).cast("long")
    wrong = rows.agg(
        F.count(F.lit(1)).alias("n"), F.sum(((F.col("line") != said) | (F.col("line_end") != said_end)).cast("int")).alias("wrong")
    ).first()
    assert (wrong["n"], wrong["wrong"]) == (6000, 0)
    count = export_line_count(spark, str(path), shape, rows)
    assert count.outside == 1 + 6000 // 50 and count.lines == len(physical_lines(path))


def write_tricky_csv(path: Path, seed: int, newline: str) -> str:
    """A CSV in every shape the quote pairing must survive, in many splits: empty lines before the
    header, values over 2 lines back to back, over 60-200 lines (across buckets and splits) with
    empty lines and doubled quotes in them, unquoted cells, blank lines and records between
    records, and a last value that a cut download left open. Returns the text."""
    rng = random.Random(seed)
    out = ["", "", '"@timestamp","host.name","message"']
    for n in range(5000):
        kind = rng.random()
        size = 2 if kind < 0.3 else rng.randint(60, 200) if kind < 0.33 else rng.randint(3, 9) if kind < 0.45 else 1
        body = [f"record {n} line {k} " + rng.choice(["", 'said "hi"', '"', '""', "x" * rng.randint(0, 90)]) for k in range(size)]
        if size > 2:
            body[rng.randrange(1, size)] = ""
        stamp = f"2024-03-11T14:{n % 60:02d}:00Z" if n % 3 else f'"Mar 11, 2024 @ 14:{n % 60:02d}:00.000"'
        value = newline.join(body).replace('"', '""')
        out.append(f'{stamp},"host-{"ab"[n % 2]}","{value}"')
        out.extend(rng.choice([[], [], [], [""], ["   "], [",,"]]))
    out.append('"2024-03-11T15:00:00Z","host-a","cut by the download' + newline + "\tat a.B.c(B.java:1)")
    text = newline.join(out)
    path.write_text(text, encoding="utf-8", newline="")
    return text


def csv_module_records(text: str) -> list[tuple[int, int, str, str, str]]:
    """(first line, last line, time, host, message) of each record as Python's csv module reads
    ``text``, line breaks inside a value as LF; no header, no blank records."""
    reader = csv.reader(io.StringIO(text, newline=""))
    records, before = [], 0
    for cells in reader:
        if "".join(cells).strip():
            records.append((before + 1, reader.line_num, *[re.sub(r"\r\n|\r", "\n", c) for c in cells]))
        before = reader.line_num
    return records[1:]


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_records_are_those_of_pythons_csv_module_in_a_split_file(spark, tmp_path, newline):
    path = tmp_path / "export.csv"
    text = write_tricky_csv(path, seed=18, newline=newline)
    assert path.stat().st_size > 4 * TEST_SPLIT_BYTES
    shape = sniff_export(text[:SNIFF_CHARS])
    assert shape.header_line == 3
    rows = read_export(spark, str(path), shape)
    got = sorted(tuple(r) for r in rows.select("line", "line_end", "time", "host", "message").collect())
    expected = csv_module_records(text)
    assert got == expected and expected[-1][-1] == "cut by the download\n\tat a.B.c(B.java:1)"
    count = export_line_count(spark, str(path), shape, rows)
    assert count.lines == len(physical_lines(path)) and count.entries == len(expected)


@pytest.mark.parametrize("name", ["kibana_discover.csv", "generic_export.tsv", "es_hits.ndjson", "gcp_logs.json"])
def test_column_types(spark, name):
    path = EXPORTS / name
    frame = read_export(spark, str(path), sniff_export(head_of(path)))
    assert frame.dtypes == [("line", "bigint"), ("line_end", "bigint")] + [(role, "string") for role in ROLES] + [("truncated", "boolean")]


EDGES = {
    "blank_records.csv": (
        '"time","host","message"\n"t1","h1","a"\n   \n"t2","h2","b\nc"\n,,\n"t3","h3","d"\n',
        [(2, 2, "a"), (4, 5, "b\nc"), (7, 7, "d")],
        7,
        3,
    ),
    "breaks_in_values.csv": (
        'time,host,message\nt1,h1,"a\rb"\nt2,h2,"c\r\n\r\nd"\nt3,h3,e\n',
        [(2, 3, "a\nb"), (4, 6, "c\n\nd"), (7, 7, "e")],
        7,
        1,
    ),
    "lone_cr.csv": ('time,host,message\rt1,h1,"a\rb"\rt2,h2,c\r', [(2, 3, "a\nb"), (4, 4, "c")], 4, 1),
    "header_only.csv": ("time,host,message\n", [], 1, 1),
    "spaced_array.json": (
        '\n\n[\n\n  {"@message": "m1", "@timestamp": "t1"}\n\n  ,{"@message": "m2\\nx"}\n]\n\n',
        [(5, 5, "m1"), (7, 7, "m2\nx")],
        9,
        7,
    ),
    "not_json_line.ndjson": (
        '{"_index":"i","_id":"1","_source":{"@timestamp":"t","message":"m"}}\n\nnot json\n   \n{"_index":"i","_id":"2","_source":{"message":"m2"}}',
        [(1, 1, "m"), (3, 3, "not json"), (5, 5, "m2")],
        5,
        2,
    ),
}
"""Name -> (text, (line, line_end, message) of each entry, physical lines, lines outside any
entry): blank records, line breaks of every kind inside values, old Mac line ends, no entries,
blank lines around an array's elements, a line of NDJSON that is no JSON."""


@pytest.mark.parametrize("name", sorted(EDGES))
def test_edge_cases(spark, tmp_path, name):
    text, entries, lines, outside = EDGES[name]
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", newline="")
    shape = sniff_export(text)
    rows = read_export(spark, str(path), shape)
    assert sorted((r["line"], r["line_end"], r["message"]) for r in rows.collect()) == entries
    count = export_line_count(spark, str(path), shape, rows)
    assert (count.lines, count.entries, count.outside) == (lines, len(entries), outside)


def test_exports_and_a_log_read_together_give_each_file_what_it_gives_alone(spark):
    """A plain log and exports of three platforms in one ingest: every file's entry in
    ``inputs`` and every record are those it gives when read alone."""
    from forensics.ingest import ingest
    from tests.helpers import as_small_incident

    files = [
        str(DATA.parent.parent / "sample_logs" / "reset_to_latest_gap" / "demo-consumer-1" / "app.log"),
        *[str(EXPORTS / name) for name in ("kibana_discover.csv", "splunk_export.csv", "es_hits.ndjson")],
    ]

    def records(result):
        return sorted(tuple(row) for row in result.records.collect())

    with as_small_incident(spark):
        together = ingest(spark, files)
        alone = [ingest(spark, [path]) for path in files]
    assert [entry["path"] for entry in together.inputs] == [one.inputs[0]["path"] for one in alone] == files
    assert together.inputs == [one.inputs[0] for one in alone]
    assert records(together) == sorted(row for one in alone for row in records(one))
    assert together.accounting["lines"] == sum(one.accounting["lines"] for one in alone)


@pytest.mark.parametrize("name", ["kibana_discover.csv", "generic_export.tsv", "es_hits.ndjson"])
def test_a_gzipped_export_reads_as_the_export_itself(spark, tmp_path, name):
    """Analysts compress large downloads: ``NAME.gz`` is sniffed through gzip and read whole (a
    gzip file is one split), with the records and accounting of the plain file."""
    from forensics.ingest import ingest

    plain, packed = tmp_path / name, tmp_path / f"{name}.gz"
    shutil.copy(EXPORTS / name, plain)
    with open(plain, "rb") as source, gzip.open(packed, "wb") as target:
        shutil.copyfileobj(source, target)

    def read(path):
        result = ingest(spark, [str(path)])
        return result.accounting, result.inputs[0]["export"], sorted(tuple(r) for r in result.records.drop("source_file").collect())

    as_written = read(plain)
    assert read(packed) == as_written and as_written[1] is not None


PLAIN_HOST_B = DATA / "shapes" / "plain_log4j" / "host-b.log"


@pytest.mark.parametrize("newest_first", [True, False])
def test_an_entry_per_physical_line_continues_the_entry_before_it(spark, tmp_path, newest_first):
    """A platform that stored each line of a container's output as an entry (CloudWatch from
    awslogs, Cloud Logging from GKE, Filebeat with no multiline setting): the entries that open
    indented or with stack-trace text join the entry before them in time, from their host, as
    the lines of one record; a record's lines share their millisecond, so in a newest-first
    export they are taken in reverse file order. Each record then reads as in the plain log."""
    from forensics.ingest import ingest

    from ..helpers import records_by_line

    rows, at = [], None
    for text in PLAIN_HOST_B.read_text().splitlines():
        stamp = re.match(r"^\[(\S+ \S+),(\d{3})\]", text)
        at = f"{stamp[1]}.{stamp[2]}" if stamp else at
        rows.append((at, "host-b", text))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["@timestamp", "@logStream", "@message"])
    writer.writerows(rows[::-1] if newest_first else rows)
    export = tmp_path / "logs-insights-results.csv"
    export.write_text(out.getvalue())
    plain, got = ingest(spark, [str(PLAIN_HOST_B)]), ingest(spark, [str(export)])
    fields = ("ts", "level", "logger")
    assert sorted(tuple(r[f] for f in fields) for r in records_by_line(got).values()) == sorted(
        tuple(r[f] for f in fields) for r in records_by_line(plain).values()
    )
    messages = [r["message"] for r in records_by_line(got).values()]
    config = next(m for m in messages if m.startswith("ConsumerConfig values:"))
    assert (
        config.rstrip()
        == next(m for m in (r["message"] for r in records_by_line(plain).values()) if m.startswith("ConsumerConfig values:")).rstrip()
    )
    failed = next(m for m in messages if "Offset commit with offsets" in m)
    assert (
        failed.split("\n")[1].startswith("org.apache.kafka.clients.consumer.CommitFailedException")
        and "\tat java.base/java.lang.Thread.run" in failed
    )
    continued = len(rows) - sum(1 for _, _, text in rows if text.startswith("[2024-"))
    assert {k: got.accounting[k] for k in ("lines", "records", "continuations", "unparsed")} == {
        "lines": len(rows) + 1,
        "records": plain.accounting["records"],
        "continuations": continued,
        "unparsed": 0,
    }


AZURE_HEADER = "{time},Computer,PodName,ContainerName,LogMessage\r\n"
BARE_LINE = "[Consumer clientId=c-1, groupId=g] Revoke previously assigned partitions orders-2"


AZURE_TIMES = [
    ('"TimeGenerated [UTC]"', "3/11/2024, 2:02:17.418 PM", "2024-03-11T14:02:17.418000"),
    ('"TimeGenerated [UTC]"', "3/11/2024, 12:02:17 AM", "2024-03-11T00:02:17"),
    ('"TimeGenerated [Local Time]"', "3/11/2024, 3:02:17.418 PM", "2024-03-11T14:02:17.418000"),  # the analyst's zone: Paris
    ("TimeGenerated", "2024-03-11T14:02:17.418Z", "2024-03-11T14:02:17.418000"),  # a query's result through the API
    ('"TimeGenerated [UTC]"', "11/3/2024, 2:02:17.418 pm", None),  # a locale that puts the day first: not guessed
]


@pytest.fixture(scope="module")
def azure_exports(spark, tmp_path_factory):
    """An Azure portal export per case of ``AZURE_TIMES``, each its own ``query_data.csv`` in a
    directory of its own, read in one ingest in the analyst's zone (Europe/Paris): path -> (its
    inputs entry, its records)."""
    from ..helpers import ingest_paths

    base = tmp_path_factory.mktemp("azure")
    paths = []
    for number, (time_column, written, _) in enumerate(AZURE_TIMES):
        path = base / str(number) / "query_data.csv"
        path.parent.mkdir()
        path.write_text(AZURE_HEADER.format(time=time_column) + f'"{written}",aks-nodepool1-vmss000002,orders-0,orders,"{BARE_LINE}"\r\n')
        paths.append(str(path))
    result = ingest_paths(spark, *paths, tz="Europe/Paris")
    rows = [row.asDict() for row in result.records.collect()]
    return {path: (next(e for e in result.inputs if e["path"] == path), [r for r in rows if r["source_file"] == path]) for path in paths}


@pytest.mark.parametrize("case", range(len(AZURE_TIMES)), ids=[f"{c}-{w}" for c, w, _ in AZURE_TIMES])
def test_azure_portal_times_are_read_in_the_zone_the_column_names(azure_exports, case):
    """The Azure portal exports a query's times as its grid shows them (English, US) and names
    the zone in the column: a record dated only by the export is dated by that time. A time in a
    form that may put the day first is not guessed: the record is counted as undated."""
    read_as = AZURE_TIMES[case][2]
    entry, (record,) = list(azure_exports.values())[case]
    assert (record["host"], record["ts"] and record["ts"].isoformat(), record["message"]) == ("orders-0", read_as, BARE_LINE)
    assert entry["undated_records"] == (read_as is None)  # shown, not dated with day and month swapped


# ----------------------------------------------------------------------------- structured pastes (issue 86)

STRUCTURED = DATA / "structured"


def test_a_headerless_csv_is_sniffed_by_what_its_cells_hold():
    shape = sniff_export(head_of(STRUCTURED / "headerless_rows.csv"))
    assert (shape.kind, shape.platform, shape.header_line) == ("csv", None, 0)
    assert shape.columns == {"time": "1", "host": "2", "message": "4"}  # the host with dots, not the application's name


def test_columns_name_a_headerless_csvs_columns_by_position():
    shape = sniff_export(head_of(STRUCTURED / "headerless_rows.csv"), parse_columns_option("time=1,host=3,message=4"))
    assert shape.columns == {"time": "1", "host": "3", "message": "4"}
    with pytest.raises(ForensicsError) as error:
        sniff_export(head_of(STRUCTURED / "headerless_rows.csv"), parse_columns_option("message=9"))
    assert "by position, 1 to 4" in str(error.value)


def test_columns_by_position_in_a_csv_with_a_header():
    shape = sniff_export(
        'when,who,what\n2024-03-11T14:02:17.418Z,host-a,"[Consumer clientId=c-1, groupId=g] (Re-)joining group"\n',
        parse_columns_option("time=1,host=2,message=3"),
    )
    assert shape.columns == {"time": "when", "host": "who", "message": "what"}


@pytest.mark.parametrize(
    "head",
    [
        "2024-03-11 14:02:17,418 INFO [Consumer clientId=c-1, groupId=g] (Re-)joining group, again\n2024-03-11 14:02:18,418 INFO x, y\n",
        '"a","b"\n"c","d"\n',  # quoted, but neither a time nor Kafka text
        '"2024-03-11T14:02:17Z","host-a","[Consumer clientId=c-1, groupId=g] (Re-)joining group"\n"2024-03-11T14:02:18Z","host-a"\n"x"\n',
    ],
)
def test_rows_without_a_header_that_are_no_export(head):
    assert sniff_export(head) is None


def test_a_json_field_holding_kafka_text_is_the_message_whatever_its_name():
    shape = sniff_export(head_of(STRUCTURED / "cut_array.json"))
    assert (shape.kind, shape.columns) == ("json_array", {"time": "ts", "host": "pod", "message": "text"})


def test_a_json_array_cut_before_its_end_gives_its_complete_elements_and_what_parses_of_the_cut_one(spark):
    path = STRUCTURED / "cut_array.json"
    shape = sniff_export(head_of(path))
    frame = read_export(spark, str(path), shape)
    rows = sorted(frame.collect(), key=lambda r: r["line"])
    assert [(r["line"], r["line_end"], r["truncated"]) for r in rows] == [(2, 2, False), (3, 3, False), (4, 4, True)]
    assert rows[1]["message"] == "[Consumer clientId=ledger-main, groupId=ledger-settle] (Re-)joining group"
    assert rows[2]["message"].endswith("Adding newly assigned partitions: settlements-1") and rows[2]["host"] == "ledger-7c9d-2kq4x"
    count = export_line_count(spark, str(path), shape, frame)
    assert (count.lines, count.entries, count.outside, count.truncated) == (4, 3, 1, 1)


def test_an_ndjson_line_cut_before_its_end_gives_the_fields_written_whole(spark):
    path = STRUCTURED / "cut_lines.ndjson"
    shape = sniff_export(head_of(path))
    assert shape.platform == "cloudwatch"
    frame = read_export(spark, str(path), shape)
    rows = sorted(frame.collect(), key=lambda r: r["line"])
    assert [(r["line"], r["truncated"], r["time"], r["host"]) for r in rows] == [
        (1, False, "2025-02-03T09:41:05.870Z", "ledger/ledger-main/6c1e"),
        (2, True, "2025-02-03T09:41:09.004Z", "ledger/ledger-main/6c1e"),
    ]
    assert rows[1]["message"] == "[Consumer clientId=ledger-main, groupId=ledger-settle] Adding newly assigned partitions: settlements-1"
    assert export_line_count(spark, str(path), shape, frame).truncated == 1


def test_pretty_printed_json_records_one_after_another_are_one_entry_each(spark):
    path = STRUCTURED / "documents.json"
    shape = sniff_export(head_of(path))
    assert (shape.kind, shape.columns) == ("json_documents", {"time": "when", "host": "origin.pod", "message": "body.rendered"})
    frame = read_export(spark, str(path), shape)
    rows = sorted(frame.collect(), key=lambda r: r["line"])
    assert [(r["line"], r["line_end"], r["host"]) for r in rows] == [(1, 5, "ledger-7c9d-2kq4x"), (6, 10, "ledger-7c9d-2kq4x")]
    count = export_line_count(spark, str(path), shape, frame)
    assert (count.lines, count.entries, count.outside) == (10, 2, 0)


def test_a_headerless_csv_read_at_its_lines(spark):
    path = STRUCTURED / "headerless_rows.csv"
    shape = sniff_export(head_of(path))
    frame = read_export(spark, str(path), shape)
    rows = sorted(frame.collect(), key=lambda r: r["line"])
    assert [(r["line"], r["host"][:12]) for r in rows] == [
        (1, "ip-10-7-2-19"),
        (2, "ip-10-7-2-19"),
        (3, "ip-10-7-2-19"),
        (4, "ip-10-7-2-23"),
    ]
    assert rows[2]["message"].startswith("[Consumer clientId=ledger-main, groupId=ledger-settle] Successfully joined group")
    count = export_line_count(spark, str(path), shape, frame)
    assert (count.lines, count.entries, count.outside) == (4, 4, 0)


def test_columns_by_position_read_a_headerless_csv_into_kafka_records(spark):
    """``--columns time=1,host=3,message=4`` on rows without a header: each row a record of its
    line, the host the third column's (the application's name here, as the option says)."""
    from forensics.ingest import ingest
    from tests.helpers import as_small_incident

    path = STRUCTURED / "headerless_rows.csv"
    with as_small_incident(spark):
        result = ingest(spark, [str(path)], columns=parse_columns_option("time=1,host=3,message=4"))
    rows = {r["line"]: r for r in result.records.select("line", "host", "message").collect()}
    assert {2, 3, 4} <= rows.keys() and {rows[n]["host"] for n in rows} == {"ledger"}  # line 1 names no client: ingest's to tell
    assert rows[2]["message"] == "[Consumer clientId=ledger-main, groupId=ledger-settle] Adding newly assigned partitions: settlements-1"
    assert result.accounting["lines"] == 4 and result.accounting["unparsed"] == 0
