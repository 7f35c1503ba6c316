"""Lag monitors as offset sources: Burrow's HTTP JSON and Prometheus exporters -> offsets table.

Every fixture (and the inline bad-input cases, written once per module) is read with ONE
``read_offsets`` call and one ``offsets_accounting`` call; ``forensics analyze`` runs once (on
the Burrow REWIND document alone), and ``backward_commit`` once on a model of the other rows.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from pyspark.sql import functions as F

import forensics.offsets as offsets
from forensics.cli import main
from forensics.detect import detect, findings_json
from forensics.offsets import DUMP_KINDS, OFFSETS_SCHEMA, burrow, offsets_accounting, prometheus, read_offsets, sniff_file
from forensics.report.figures import committed_offsets
from forensics.schema import RECORDS_SCHEMA
from tests.helpers import as_small_incident, small_model

DATA = Path(__file__).parent.parent / "data" / "offsets"
BURROW_REWIND = DATA / "burrow_rewind.json"
BURROW_SINGLE_LINE = DATA / "burrow_lag_1_2_single_line.json"
KAFKA_EXPORTER = DATA / "kafka_exporter_1_7_three_scrapes.prom"
LAG_EXPORTER = DATA / "kafka_lag_exporter_0_8_two_scrapes.prom"
FIXTURES = [BURROW_REWIND, BURROW_SINGLE_LINE, KAFKA_EXPORTER, LAG_EXPORTER]

COMMIT, SNAPSHOT, LOG = "consumer_offsets_commit", "describe_offsets", "log_offsets"
MINUTE_14 = datetime(2024, 3, 11, 14, 0)
LAG_CID = "consumer-payments-app-1-5b2e0f8a-6a3c-4f0f-9d7e-2c1b0a9e8d7f"


def at(minute: int, second: int = 0, ms: int = 0) -> datetime:
    return datetime(2024, 3, 11, 14, minute, second, ms * 1000)


def burrow_commit(partition, offset, lag, host, client, state, committed, seen=None, group="orders-app", topic="orders"):
    row = {
        "kind": COMMIT,
        "group_id": group,
        "topic": topic,
        "partition": partition,
        "current_offset": offset,
        "log_end_offset": offset + lag,
        "lag": lag,
        "host": host,
        "client_id": client,
        "state": state,
        "commit_ts": committed,
    }
    return {**row, "snapshot_ts": seen} if seen else row


def group_row(snapshot, partition, current=None, lag=None, group="orders-app", topic="orders", **member):
    row = {"kind": SNAPSHOT, "group_id": group, "topic": topic, "partition": partition, **member}
    values = {
        "snapshot_ts": snapshot,
        "current_offset": current,
        "lag": lag,
        "log_end_offset": current + lag if current is not None and lag is not None else None,
    }
    return {**row, **{k: v for k, v in values.items() if v is not None}}


def log_row(snapshot, partition, end, topic="orders"):
    row = {"kind": LOG, "topic": topic, "partition": partition, "log_end_offset": end}
    return {**row, "snapshot_ts": snapshot} if snapshot else row


def exporter_scrape(minute, first_line, currents, lags, ends):
    """Rows of one kafka_exporter scrape: offset samples at ``first_line``.., log ends 15 lines below."""
    rows = {}
    for p, (current, lag, end) in enumerate(zip(currents, lags, ends)):
        rows[first_line + p] = group_row(at(minute), p, current, lag)
        rows[first_line + 15 + p] = log_row(at(minute), p, end)
    return rows


LAG_MEMBER = {"host": "/10.0.0.31", "consumer_id": LAG_CID, "client_id": "consumer-payments-app-1"}
EXPECTED = {
    BURROW_REWIND.name: {
        16: [burrow_commit(0, 1400, 20, "/10.0.0.12", "consumer-orders-app-1", "OK", at(0), at(0, 0, 412))],
        22: [burrow_commit(0, 1500, 0, "/10.0.0.12", "consumer-orders-app-1", "OK", at(9), at(9, 0, 388))],
        37: [burrow_commit(1, 1588, 12, "/10.0.0.13", "consumer-orders-app-2", "REWIND", at(0, 1, 250), at(0, 1, 611))],
        43: [burrow_commit(1, 1502, 140, "/10.0.0.13", "consumer-orders-app-2", "REWIND", at(9, 1, 250), at(9, 1, 604))],
        58: [burrow_commit(2, 98100, 9, "/10.0.0.13", "consumer-orders-app-2", "OK", at(0, 2, 500), at(0, 2, 817))],
        64: [burrow_commit(2, 98211, 0, "/10.0.0.13", "consumer-orders-app-2", "OK", at(9, 2, 500), at(9, 2, 790))],
    },
    BURROW_SINGLE_LINE.name: {  # Burrow 1.2: no observedAt; invoices-1 has no commits (start/end null): no row
        1: [
            burrow_commit(0, 300, 4, "/10.0.0.21", "billing-1", "REWIND", at(0, 5), group="billing", topic="invoices"),
            burrow_commit(0, 320, 40, "/10.0.0.21", "billing-1", "REWIND", at(9, 5), group="billing", topic="invoices"),
            burrow_commit(2, 77, 3, "/10.0.0.22", "billing-2", "STALL", at(0, 5, 100), group="billing", topic="invoices"),
            burrow_commit(2, 77, 3, "/10.0.0.22", "billing-2", "STALL", at(9, 5, 100), group="billing", topic="invoices"),
        ]
    },
    KAFKA_EXPORTER.name: {  # -1 is "no committed offset"; 1.2345e+06 is the Go client's float
        **{
            line: [row]
            for line, row in exporter_scrape(5, 10, [1500, 1588, 1234500, None], [120, 0, 11, None], [1620, 1588, 1234511, 40]).items()
        },
        **{
            line: [row]
            for line, row in exporter_scrape(6, 38, [1610, 1502, 1234511, None], [90, 96, 0, None], [1700, 1598, 1234511, 40]).items()
        },
        **{
            line: [row]
            for line, row in exporter_scrape(7, 66, [1700, 1598, 1234511, None], [0, 0, 5, None], [1700, 1598, 1234516, 40]).items()
        },
    },
    LAG_EXPORTER.name: {  # no stamps, no sample timestamps: the order of the scrapes in the file
        3: [group_row(None, 0, 12345678, 22, "payments-app", "payments", **LAG_MEMBER)],
        4: [group_row(None, 1, 230, 0, "payments-app", "payments")],
        18: [log_row(None, 0, 12345700, "payments")],
        19: [log_row(None, 1, 230, "payments")],
        25: [group_row(None, 0, 12345699, 1, "payments-app", "payments", **LAG_MEMBER)],
        26: [group_row(None, 1, 230, 0, "payments-app", "payments")],
        40: [log_row(None, 0, 12345700, "payments")],
        41: [log_row(None, 1, 230, "payments")],
    },
}

# Inline cases: (file name, text, expected rows by line, unparsed lines).
FEDERATE = "\n".join(
    [
        "# TYPE kafka_consumergroup_current_offset untyped",
        'kafka_consumergroup_current_offset{consumergroup="odd \\"group\\"",instance="exporter:9308",job="kafka",partition="0",topic="t"} 42 1710166200000',
        'kafka_consumergroup_group_offset{cluster_name="prod",group="g",topic="t",partition="1",} NaN',
        'kafka_consumergroup_lag{consumergroup="g",partition="2",topic="t"} 7 1710166200000',
        'kafka_consumergroup_current_offset{consumergroup="g",topic="t"} 5',
        "# EOF",
    ]
)
GLUED = (
    '{"error":false,"message":"consumer status returned","status":{"cluster":"c","group":"g","status":"OK","partitions":['
    '{"topic":"t","partition":0,"status":"OK","start":{"offset":5,"timestamp":1710165600000,"lag":0},'
    '"end":{"offset":9,"timestamp":1710165660000,"lag":0}}]}}'
    '{"error":false,"message":"consumer status returned","status":{"cluster":"c","group":"g","status":"OK","partitions":['
    '{"topic":"t","partition":0,"status":"OK","start":{"offset":9,"timestamp":1710165660000,"lag":0},'
    '"end":{"offset":12,"timestamp":1710165720000,"lag":1}}]}}\n'
    '{"error":false,"message":"consumer status returned","status":{"cluster":"c","group":"gone","status":"NOTFOUND",'
    '"partitions":null,"partition_count":0,"maxlag":null,"totallag":0},"request":{"url":"/v3/kafka/c/consumer/gone/status","host":"b"}}\n'
)
DETAIL = '{"error":false,"message":"consumer detail returned","topics":{"t":[{"offsets":[],"owner":"","current-lag":0}]}}\n'
CUT = "".join(BURROW_REWIND.read_text().splitlines(keepends=True)[:20])
T = "t"
INLINE = {
    "federate.prom": (
        FEDERATE + "\n",
        {
            2: [group_row(at(10), 0, 42, group='odd "group"', topic=T)],
            3: [group_row(None, 1, group="g", topic=T)],
            4: [group_row(at(10), 2, lag=7, group="g", topic=T)],
        },
        [5],
    ),
    "glued.json": (
        GLUED,
        {
            1: [
                {
                    "kind": COMMIT,
                    "group_id": "g",
                    "topic": T,
                    "partition": 0,
                    "current_offset": o,
                    "log_end_offset": o + lag,
                    "lag": lag,
                    "state": "OK",
                    "commit_ts": at(m),
                }
                for o, lag, m in ((5, 0, 0), (9, 0, 1), (9, 0, 1), (12, 1, 2))
            ]
        },
        [],
    ),
    "detail.json": (DETAIL, {}, [1]),
    "cut.json": (CUT, {}, list(range(1, 21))),
}


@pytest.fixture(scope="module")
def inline_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("lag_monitors")
    for name, (text, _, _) in INLINE.items():
        (root / name).write_text(text)
    return root


@pytest.fixture(scope="module")
def paths(inline_dir):
    return [str(p) for p in FIXTURES] + [str(inline_dir / name) for name in INLINE]


@pytest.fixture(scope="module")
def offsets_table(spark, paths):
    return read_offsets(spark, paths).localCheckpoint()


@pytest.fixture(scope="module")
def table(offsets_table):
    """file name -> line -> the non-null values of its rows (provenance removed)."""
    assert offsets_table.schema == OFFSETS_SCHEMA
    by_file: dict[str, dict[int, list[dict]]] = {}
    for row in offsets_table.collect():
        values = {k: v for k, v in row.asDict().items() if v is not None and k not in ("source_file", "line")}
        by_file.setdefault(Path(row["source_file"]).name, {}).setdefault(row["line"], []).append(values)
    return by_file


def _sorted(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: (r["partition"], str(r.get("commit_ts")), r.get("current_offset", -1)))


@pytest.mark.parametrize("name", sorted(EXPECTED) + sorted(INLINE))
def test_rows_per_monitor_document(table, name):
    expected = EXPECTED.get(name) or INLINE[name][1]
    got = table.get(name, {})
    assert sorted(got) == sorted(expected), "lines that gave rows"
    for line, rows in expected.items():
        assert _sorted(got[line]) == _sorted(rows), f"{name}:{line}"


def test_every_line_lands_in_one_bucket(spark, paths):
    lines = sum(len(p.read_text().splitlines()) for p in FIXTURES) + sum(len(t.splitlines()) for t, _, _ in INLINE.values())
    rows = sum(len(e) for e in EXPECTED.values()) + sum(len(e) for _, e, _ in INLINE.values())
    records = sum(len(r) for e in EXPECTED.values() for r in e.values()) + sum(len(r) for _, e, _ in INLINE.values() for r in e.values())
    unparsed = sum(len(u) for _, _, u in INLINE.values())
    assert (lines, rows, records, unparsed) == (231 + 29, 39 + 4, 42 + 7, 22)
    assert offsets_accounting(spark, paths) == {
        "lines": lines,
        "rows": rows,
        "skipped": lines - rows - unparsed,
        "unparsed": unparsed,
        "records": records,
    }


# ---- sniff -------------------------------------------------------------------------------

SNIFFED = {"burrow": [BURROW_REWIND, BURROW_SINGLE_LINE], "prometheus": [KAFKA_EXPORTER, LAG_EXPORTER]}
CLI_DUMPS = sorted(DATA.glob("*.txt"))


@pytest.mark.parametrize("kind", sorted(SNIFFED))
def test_sniff_accepts_own_and_rejects_other_kinds(kind):
    module = DUMP_KINDS[kind]
    for own in SNIFFED[kind]:
        sample = own.read_text().splitlines()[: offsets.SNIFF_LINES]
        assert module.sniff(sample), own.name
        assert offsets.sniff(sample) == kind == sniff_file(str(own))
    others = [p for k, ps in SNIFFED.items() if k != kind for p in ps] + CLI_DUMPS
    for other in others:
        assert not module.sniff(other.read_text().splitlines()), f"{kind} accepted {other.name}"


def test_cli_dump_kinds_reject_monitor_documents():
    for kind, module in DUMP_KINDS.items():
        if kind not in SNIFFED:
            for path in FIXTURES:
                assert not module.sniff(path.read_text().splitlines()[: offsets.SNIFF_LINES]), f"{kind} accepted {path.name}"


def test_sniff_rejects_logs_and_other_json():
    log = [
        "[2024-03-11 14:05:00,123] INFO [Consumer clientId=c-1, groupId=g] Setting offset for partition t-0 to the "
        "committed offset FetchPosition{offset=5} (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)"
    ]
    for module in (burrow, prometheus):
        assert not module.sniff(log)
        assert not module.sniff(DETAIL.splitlines())
        assert not module.sniff(['{"log":"x 1\\n","stream":"stdout","time":"2024-03-11T14:05:00Z"}'])


# ---- findings ----------------------------------------------------------------------------

KEY = ("detector", "group", "topic", "partition", "offset_from", "offset_to", "records", "exact", "classification", "verdict")


def _analyze(*dumps: Path) -> dict:
    args = [x for dump in dumps for x in ("--offsets", str(dump))]
    done = CliRunner().invoke(main, ["analyze", *args, "--json", "-"])
    assert done.exit_code == 0, done.output
    return json.loads(done.output)


def _evidence(finding: dict) -> list[tuple[str, int]]:
    return [(Path(e["file"]).name, e["line"]) for e in finding["evidence"]]


@pytest.fixture(scope="module")
def burrow_result(spark):
    return _analyze(BURROW_REWIND)


def test_burrow_rewind_document_alone_gives_the_backward_commit(burrow_result):
    result = burrow_result
    assert [e["kind"] for e in result["inputs"]] == ["offsets"] and result["accounting"]["lines"] == 0
    assert result["offsets"]["by_kind"] == {COMMIT: 6}
    assert result["offsets"]["accounting"] == {"lines": 102, "rows": 6, "skipped": 96, "unparsed": 0, "records": 6}
    assert result["rebalances"] == []
    (finding,) = result["findings"]
    assert tuple(finding[k] for k in KEY) == ("backward_commit", "orders-app", "orders", 1, 1502, 1588, 86, True, "replay", "duplication")
    assert (finding["start"], finding["end"]) == ("2024-03-11T14:00:01.250Z", "2024-03-11T14:09:01.250Z")
    assert _evidence(finding) == [(BURROW_REWIND.name, 37), (BURROW_REWIND.name, 43)]
    lines = BURROW_REWIND.read_text().splitlines()
    assert [lines[n - 1].strip() for n in (37, 43)] == ['"start": {', '"end": {']
    assert "offset 1502 for orders-1" in finding["explanation"] and "committed 1588" in finding["explanation"]


def test_burrow_commits_feed_the_commit_lineage_and_figure(burrow_result):
    commits = [(c["partition"], c["kind"], c["offset"], c["previous_offset"]) for c in burrow_result["commits"]]
    assert commits == [
        (0, "dump commit", 1400, None),
        (0, "dump commit", 1500, 1400),
        (1, "dump commit", 1588, None),
        (1, "dump commit", 1502, 1588),
        (2, "dump commit", 98100, None),
        (2, "dump commit", 98211, 98100),
    ]
    figure = committed_offsets(burrow_result).figure
    assert [list(trace.y) for trace in figure.data if trace.mode == "lines+markers"] == [[1400, 1500], [1588, 1502], [98100, 98211]]


def test_exporter_scrapes_and_a_rewind_inside_burrows_window(spark, offsets_table):
    """Every row but the REWIND document's (its orders-1 is the exporter's orders-1 too)."""
    rows = offsets_table.where(~F.col("source_file").endswith(BURROW_REWIND.name))
    model = small_model(spark, spark.createDataFrame([], RECORDS_SCHEMA), rows)
    with as_small_incident(spark):
        found = sorted(findings_json(detect(model, ["backward_commit"])), key=lambda f: f["group"])
    assert [tuple(f[k] for k in KEY) for f in found] == [
        ("backward_commit", "billing", "invoices", 0, None, None, None, False, "rewind", "duplication"),
        ("backward_commit", "orders-app", "orders", 1, 1502, 1588, 86, True, "replay", "duplication"),
    ]
    rewind, scraped = found
    assert _evidence(rewind) == [(BURROW_SINGLE_LINE.name, 1)]
    assert (rewind["host"], rewind["member"]) == ("/10.0.0.21", "billing-1")
    assert "first and last commits (300, then 320) do not show the step" in rewind["explanation"]
    assert _evidence(scraped) == [(KAFKA_EXPORTER.name, 11), (KAFKA_EXPORTER.name, 39)]
    assert (scraped["start"], scraped["end"]) == ("2024-03-11T14:05:00.000Z", "2024-03-11T14:06:00.000Z")
