"""Kafka CLI offset dumps -> offsets table: exact rows per format/version, time series, accounting.

All fixtures are read with ONE ``read_offsets`` call and collected once (module fixture), so the
per-format tests cost no Spark job of their own.
"""

from __future__ import annotations

import importlib
import pkgutil
from datetime import datetime
from pathlib import Path

import pytest

import forensics.offsets as offsets
from forensics.offsets import DUMP_KINDS, OFFSETS_SCHEMA, offsets_accounting, read_offsets
from forensics.offsets import _common as c

DATA = Path(__file__).parent.parent / "data" / "offsets"
FILES = sorted(DATA.glob("*.txt"))

MS_0418 = datetime(2024, 3, 11, 14, 2, 17, 418000)
CID1 = "consumer-1-0f0e7c1a-2b3d-4e5f-8a9b-0c1d2e3f4a5b"
CID_APP1 = "consumer-orders-app-1-0f0e7c1a-2b3d-4e5f-8a9b-0c1d2e3f4a5b"
APP1 = "consumer-orders-app-1"
OFFSETS = "describe_offsets"
MEMBERS = "describe_members"
STATE = "describe_state"
COMMIT = "consumer_offsets_commit"
LOG = "log_offsets"
BATCH = "dump_log_batch"


def offsets_row(kind=OFFSETS, **values):
    return {"kind": kind, **values}


def member(group, consumer, host, client, **values):
    row = {"kind": MEMBERS, "group_id": group, "consumer_id": consumer, "host": host, "client_id": client, **values}
    return {k: v for k, v in row.items() if v is not None}


def row0(group="orders-app", cid=CID_APP1, client=APP1, **values):
    """orders-0 at 1500 of 1620 (lag 120), owned by consumer 1 on /10.0.0.12."""
    base = {
        "kind": OFFSETS,
        "topic": "orders",
        "partition": 0,
        "current_offset": 1500,
        "log_end_offset": 1620,
        "lag": 120,
        "consumer_id": cid,
        "host": "/10.0.0.12",
        "client_id": client,
    }
    if group:
        base["group_id"] = group
    return {**base, **values}


EXPECTED = {
    "describe_1_0.txt": {
        2: row0(group=None, cid=CID1, client="consumer-1"),
        3: row0(group=None, cid=CID1, client="consumer-1", partition=1, current_offset=1588, log_end_offset=1588, lag=0),
    },
    "describe_2_2.txt": {
        4: row0(group=None, cid=CID1, client="consumer-1"),
        5: offsets_row(topic="orders", partition=5, log_end_offset=98211),
    },
    "describe_2_3_all_groups.txt": {
        5: offsets_row(group_id="billing", topic="invoices", partition=0, current_offset=77, log_end_offset=80, lag=3),
        8: row0(),
        9: offsets_row(group_id="orders-app", topic="orders", partition=5, log_end_offset=98211),
    },
    "describe_3_8_glued.txt": {3: row0(), 6: row0(snapshot_ts=datetime(2024, 3, 11, 14, 6), current_offset=1620, lag=0)},
    "describe_4_0_verbose.txt": {
        3: row0(cid="TtH1mHbYQ8u4M0o2v8p3xA", leader_epoch=4),
        4: offsets_row(
            group_id="orders-app",
            topic="orders",
            partition=1,
            log_end_offset=1588,
            consumer_id="TtH1mHbYQ8u4M0o2v8p3xA",
            host="/10.0.0.12",
            client_id=APP1,
        ),
    },
    "describe_time_series.txt": {
        4: row0(snapshot_ts=datetime(2024, 3, 11, 14, 5)),
        5: row0(snapshot_ts=datetime(2024, 3, 11, 14, 5), partition=1, current_offset=1400, log_end_offset=1410, lag=10),
        11: offsets_row(
            snapshot_ts=datetime(2024, 3, 11, 14, 6),
            group_id="orders-app",
            topic="orders",
            partition=0,
            current_offset=1610,
            log_end_offset=1700,
            lag=90,
        ),
        12: offsets_row(
            snapshot_ts=datetime(2024, 3, 11, 14, 6),
            group_id="orders-app",
            topic="orders",
            partition=1,
            current_offset=1410,
            log_end_offset=1470,
            lag=60,
        ),
    },
    "members_2_2_verbose.txt": {
        3: member(None, CID1, "/10.0.0.12", "consumer-1", member_assignment="orders(0,1), payments(2)"),
        4: member(None, "consumer-2-9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d", "/10.0.0.13", "consumer-2"),
    },
    "members_2_3.txt": {3: member("orders-app", CID_APP1, "/10.0.0.12", APP1)},
    "members_2_6_static_verbose.txt": {
        3: member(
            "orders-app",
            "orders-host-a-5b2e0f8a-6a3c-4f0f-9d7e-2c1b0a9e8d7f",
            "/10.0.0.12",
            APP1,
            instance_id="orders-host-a",
            member_assignment="orders(0,1)",
        ),
        4: member(
            "orders-app",
            "consumer-orders-app-2-0f0e7c1a-2b3d-4e5f-8a9b-0c1d2e3f4a5b",
            "/10.0.0.13",
            "consumer-orders-app-2",
            member_assignment="orders(2), payments(0)",
        ),
    },
    "members_3_8_verbose_bug.txt": {3: member("orders-app", CID_APP1, "/10.0.0.12", APP1, member_assignment="(0,1), (2)")},
    "members_4_0_verbose.txt": {
        3: member("orders-app", "TtH1mHbYQ8u4M0o2v8p3xA", "/10.0.0.12", APP1, member_assignment="orders:0,1;payments:3"),
        4: member("orders-app", "Vq3nC0xPTmWl2f9s8d7e6A", "/10.0.0.13", "consumer-orders-app-2"),
    },
    "state_2_2.txt": {
        3: {"kind": STATE, "coordinator": "kafka-2.internal:9092 (2)", "assignment_strategy": "range", "state": "Stable", "members": 3}
    },
    "state_3_7_and_3_8.txt": {
        3: {
            "kind": STATE,
            "group_id": "orders-app",
            "coordinator": "kafka-2.internal:9092 (2)",
            "assignment_strategy": "range",
            "state": "Stable",
            "members": 3,
        },
        6: {"kind": STATE, "group_id": "billing", "coordinator": "kafka-1.internal:9092 (1)", "state": "Empty", "members": 0},
    },
    "state_4_0.txt": {
        3: {
            "kind": STATE,
            "group_id": "orders-app",
            "coordinator": "kafka-2.internal:9092 (2)",
            "assignment_strategy": "uniform",
            "state": "Stable",
            "members": 3,
        }
    },
    "consumer_offsets_2_0.txt": {
        1: {
            "kind": COMMIT,
            "group_id": "orders-app",
            "topic": "orders",
            "partition": 0,
            "current_offset": 1500,
            "metadata": "",
            "commit_ts": MS_0418,
            "expire_ts": datetime(2024, 3, 18, 14, 2, 17, 418000),
        },
        2: {
            "kind": COMMIT,
            "group_id": "orders-app",
            "topic": "orders",
            "partition": 1,
            "current_offset": 1588,
            "metadata": "checkpoint-7",
            "commit_ts": datetime(2024, 3, 11, 14, 2, 17, 420000),
            "expire_ts": datetime(2024, 3, 18, 14, 2, 17, 420000),
        },
        4: {"kind": COMMIT, "group_id": "orders-app", "topic": "orders", "partition": 2},  # ::NULL tombstone
    },
    "consumer_offsets_3_6.txt": {
        1: {
            "kind": COMMIT,
            "group_id": "orders-app",
            "topic": "orders",
            "partition": 0,
            "current_offset": 1500,
            "leader_epoch": 4,
            "metadata": "",
            "commit_ts": MS_0418,
        },
        2: {
            "kind": COMMIT,
            "group_id": "orders-app",
            "topic": "orders",
            "partition": 0,
            "current_offset": 1450,
            "metadata": "replay",
            "commit_ts": datetime(2024, 3, 11, 14, 3, 17, 418000),
            "expire_ts": datetime(2024, 3, 18, 14, 3, 17, 418000),
        },
    },
    "consumer_offsets_3_9_json.txt": {
        1: {
            "kind": COMMIT,
            "group_id": "orders-app",
            "topic": "orders",
            "partition": 0,
            "current_offset": 1500,
            "leader_epoch": 4,
            "metadata": "",
            "commit_ts": MS_0418,
        },
        3: {
            "kind": COMMIT,
            "group_id": "orders-app",
            "topic": "orders",
            "partition": 1,
            "current_offset": 1588,
            "metadata": "m",
            "commit_ts": datetime(2024, 3, 11, 14, 2, 17, 420000),
            "expire_ts": datetime(2024, 3, 18, 14, 2, 17, 420000),
        },
    },
    "get_offsets_1_1.txt": {
        1: {"kind": LOG, "topic": "orders", "partition": 0, "log_end_offset": 1620},
        2: {"kind": LOG, "topic": "orders", "partition": 1, "log_end_offset": 1588},
    },
    "get_offsets_3_7.txt": {
        1: {"kind": LOG, "topic": "orders", "partition": 0, "log_end_offset": 1620},
        2: {"kind": LOG, "topic": "orders", "partition": 1, "log_end_offset": 1588},
        3: {"kind": LOG, "topic": "orders", "partition": 2},
    },
    "dump_log_1_1.txt": {
        1: {
            "kind": BATCH,
            "base_offset": 0,
            "last_offset": 2,
            "producer_id": -1,
            "producer_epoch": -1,
            "leader_epoch": 0,
            "is_transactional": False,
        }
    },
    "dump_log_2_8.txt": {
        3: {
            "kind": BATCH,
            "topic": "orders",
            "partition": 0,
            "base_offset": 0,
            "last_offset": 4,
            "record_count": 5,
            "producer_id": 1000,
            "producer_epoch": 0,
            "leader_epoch": 4,
            "is_transactional": True,
            "is_control": False,
        },
        5: {
            "kind": BATCH,
            "topic": "orders",
            "partition": 0,
            "base_offset": 5,
            "last_offset": 5,
            "record_count": 1,
            "producer_id": 1000,
            "producer_epoch": 0,
            "leader_epoch": 4,
            "is_transactional": True,
            "is_control": True,
        },
    },
    "dump_log_3_3.txt": {
        3: {
            "kind": BATCH,
            "topic": "orders",
            "partition": 3,
            "base_offset": 1500,
            "last_offset": 1519,
            "record_count": 20,
            "producer_id": 4001,
            "producer_epoch": 3,
            "leader_epoch": 4,
            "is_transactional": True,
            "is_control": False,
        },
        4: {
            "kind": BATCH,
            "topic": "orders",
            "partition": 3,
            "base_offset": 1520,
            "last_offset": 1520,
            "record_count": 1,
            "producer_id": -1,
            "producer_epoch": -1,
            "leader_epoch": 4,
            "is_transactional": False,
            "is_control": False,
        },
    },
    "mixed_unparsed.txt": {1: {"kind": LOG, "topic": "orders", "partition": 0, "log_end_offset": 1620}},
}

# Several JSON records on one line (the Java formatter writes no newline): a list per line.
EXPECTED_MULTI = {
    "consumer_offsets_4_0_json.txt": {
        1: [
            {
                "kind": COMMIT,
                "group_id": "orders-app",
                "topic": "orders",
                "partition": 0,
                "current_offset": 1500,
                "leader_epoch": 4,
                "metadata": "",
                "commit_ts": MS_0418,
            },
            {"kind": COMMIT, "group_id": "orders-app", "topic": "orders", "partition": 1},  # "value":null
        ],
        2: [
            {
                "kind": COMMIT,
                "group_id": "orders-app",
                "topic": "orders",
                "partition": 2,
                "current_offset": 98211,
                "leader_epoch": -1,
                "metadata": "",
                "commit_ts": datetime(2024, 3, 11, 14, 2, 17, 500000),
            }
        ],
    }
}


@pytest.fixture(scope="module")
def table(spark):
    """file name -> line -> list of the non-null values of each row (provenance removed)."""
    df = read_offsets(spark, [str(p) for p in FILES])
    assert df.schema == OFFSETS_SCHEMA
    by_file: dict[str, dict[int, list[dict]]] = {}
    for row in df.collect():
        values = {k: v for k, v in row.asDict().items() if v is not None and k not in ("source_file", "line")}
        by_file.setdefault(Path(row["source_file"]).name, {}).setdefault(row["line"], []).append(values)
    return by_file


def _sorted(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: (r.get("partition", -1), r.get("current_offset", -1)))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_rows_per_format(table, name):
    got = table.get(name, {})
    assert sorted(got) == sorted(EXPECTED[name]), "lines that gave rows"
    for line, expected in EXPECTED[name].items():
        assert got[line] == [expected], f"{name}:{line}"


def test_json_records_run_together_on_one_line(table):
    name = "consumer_offsets_4_0_json.txt"
    got = table[name]
    assert sorted(got) == sorted(EXPECTED_MULTI[name])
    for line, expected in EXPECTED_MULTI[name].items():
        assert _sorted(got[line]) == _sorted(expected)


def test_every_fixture_is_checked():
    assert {p.name for p in FILES} == set(EXPECTED) | set(EXPECTED_MULTI)


def test_describe_snapshots_become_a_time_series(table):
    rows = [r for rows in table["describe_time_series.txt"].values() for r in rows]
    series = sorted((r["snapshot_ts"], r["partition"], r["current_offset"]) for r in rows)
    assert series == [
        (datetime(2024, 3, 11, 14, 5), 0, 1500),
        (datetime(2024, 3, 11, 14, 5), 1, 1400),
        (datetime(2024, 3, 11, 14, 6), 0, 1610),
        (datetime(2024, 3, 11, 14, 6), 1, 1410),
    ]
    assert len({r["snapshot_ts"] for r in rows}) == 2


def test_snapshot_argument_fills_rows_above_any_stamp(spark):
    rows = read_offsets(spark, [str(DATA / "describe_3_8_glued.txt")], snapshot_ts="2024-03-11 14:05:00").collect()
    assert sorted((r["line"], r["snapshot_ts"]) for r in rows) == [(3, datetime(2024, 3, 11, 14, 5)), (6, datetime(2024, 3, 11, 14, 6))]


def test_accounting_adds_up(spark):
    totals = offsets_accounting(spark, [str(p) for p in FILES])
    rows = sum(len(lines) for lines in EXPECTED.values()) + sum(len(lines) for lines in EXPECTED_MULTI.values())
    records = sum(len(lines) for lines in EXPECTED.values()) + 3
    assert totals == {"lines": 104, "rows": rows, "skipped": 104 - rows - 2, "unparsed": 2, "records": records}
    assert totals["rows"] + totals["skipped"] + totals["unparsed"] == totals["lines"]


# ---- the kinds parsed --------------------------------------------------------------------


def test_a_kind_gives_rows_only_where_kinds_present_finds_its_marker(spark):
    """``kinds_present`` leaves a kind out only where its ``parse`` (and ``structure_lines``) gives
    nothing: every kind run over every fixture, each fixture a file of its own."""
    from functools import reduce

    from pyspark.sql import functions as F

    fixtures = sorted(p for p in DATA.iterdir() if p.is_file())
    prepared = offsets.prepare_lines(offsets._read(spark, [str(p) for p in fixtures]))
    frames = []
    for kind, module in DUMP_KINDS.items():
        frames.append(module.parse(prepared).select(F.lit(kind).alias("kind"), c.SOURCE_FILE))
        if hasattr(module, "structure_lines"):
            frames.append(module.structure_lines(prepared).select(F.lit(kind).alias("kind"), c.SOURCE_FILE))
    gave = {(row["kind"], Path(row[c.SOURCE_FILE]).name) for row in reduce(lambda a, b: a.unionByName(b), frames).distinct().collect()}
    found = {(kind, p.name) for p in fixtures for kind in offsets.kinds_present([str(p)])}
    assert {kind for kind, _ in gave} == set(DUMP_KINDS), "every kind has a fixture"
    assert gave <= found
    assert len(found - gave) <= 3, "the markers tell the kinds apart"


def test_kinds_present_reads_local_files_whole_or_answers_every_kind(tmp_path, monkeypatch):
    import gzip

    get_offsets, dump_log = str(DATA / "get_offsets_3_7.txt"), str(DATA / "dump_log_2_8.txt")
    assert offsets.kinds_present([get_offsets]) == ("get_offsets",)
    assert offsets.kinds_present([get_offsets, dump_log]) == ("get_offsets", "dump_log")  # DUMP_KINDS order
    zipped = tmp_path / "dump.txt.gz"
    zipped.write_bytes(gzip.compress((DATA / "dump_log_2_8.txt").read_bytes()))
    assert offsets.kinds_present([str(zipped)]) == ("dump_log",)
    noise = tmp_path / "noise.txt"
    noise.write_text("this is not a dump\n\nWarning: nothing here\n")
    assert offsets.kinds_present([str(noise)]) == ()
    damaged = tmp_path / "damaged.txt.gz"
    damaged.write_bytes(zipped.read_bytes()[:-12])
    assert offsets.kinds_present([get_offsets, str(damaged)]) is None
    assert offsets.kinds_present([get_offsets, "hdfs://namenode/dumps/get-offsets.txt"]) is None
    assert offsets.kinds_present([str(tmp_path)]) is None
    monkeypatch.setattr(offsets, "MARKED_BYTES", (DATA / "get_offsets_3_7.txt").stat().st_size + 10)
    assert offsets.kinds_present([get_offsets]) == ("get_offsets",)
    assert offsets.kinds_present([get_offsets, dump_log]) is None


def test_a_dump_of_no_kind_still_counts_the_lines_every_kind_skips(spark, tmp_path):
    noise = tmp_path / "noise.txt"
    noise.write_text("this is not a dump\n\nWarning: nothing here\n")
    read = offsets.read_offsets_accounted(spark, [str(noise)])
    assert read.table.schema == OFFSETS_SCHEMA and read.table.count() == 0
    assert read.accounting == {"lines": 3, "rows": 0, "skipped": 2, "unparsed": 1, "records": 0}


# ---- sniff -------------------------------------------------------------------------------

SAMPLES = {
    "consumer_groups": ["describe_2_3_all_groups.txt", "members_4_0_verbose.txt", "state_2_2.txt", "describe_1_0.txt"],
    "consumer_offsets_topic": [
        "consumer_offsets_2_0.txt",
        "consumer_offsets_3_6.txt",
        "consumer_offsets_3_9_json.txt",
        "consumer_offsets_4_0_json.txt",
    ],
    "get_offsets": ["get_offsets_1_1.txt", "get_offsets_3_7.txt"],
    "dump_log": ["dump_log_2_8.txt", "dump_log_3_3.txt", "dump_log_1_1.txt"],
}


def _lines(name: str) -> list[str]:
    return (DATA / name).read_text().splitlines()


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_sniff_accepts_own_and_rejects_other_kinds(kind):
    module = DUMP_KINDS[kind]
    for own in SAMPLES[kind]:
        assert module.sniff(_lines(own)), own
    for other, names in SAMPLES.items():
        if other != kind:
            for name in names:
                assert not module.sniff(_lines(name)), f"{kind} accepted {name}"
    assert offsets.sniff(_lines(SAMPLES[kind][0])) == kind


def test_sniff_rejects_noise():
    assert offsets.sniff(["", "hello world", "# 2024-03-11T14:05:00Z"]) is None


# ---- registry ----------------------------------------------------------------------------


def test_every_module_is_registered():
    names = [m.name for m in pkgutil.iter_modules(offsets.__path__) if not m.name.startswith("_")]
    modules = {importlib.import_module(f"forensics.offsets.{name}") for name in names}
    assert modules == set(DUMP_KINDS.values())
    for kind, module in DUMP_KINDS.items():
        assert module.KIND == kind
        assert set(module.ROW_KINDS) <= set(c.ROW_KINDS)
        assert callable(module.sniff) and callable(module.parse) and callable(module.skip)
        assert isinstance(module.MARKER.pattern, bytes)  # searched in the files' bytes (kinds_present)


def test_duplicate_kind_names_raise():
    from forensics.registry import registry

    with pytest.raises(ValueError, match="duplicate KIND 'log_offsets'|duplicate KIND"):
        registry("KIND", offsets.get_offsets, offsets.get_offsets)


def test_stamp_formats(spark):
    from pyspark.sql import functions as F

    texts = [
        "# 2024-03-11T14:05:00Z",
        "Mon Mar 11 14:06:00 UTC 2024",
        "Mon Mar 11 15:07:00 CET 2024",
        "Mon Mar  4 09:00:00 +0200 2024",
        "2024-03-11 14:08:00",
        "orders:0:1620",
    ]
    df = spark.createDataFrame([(t,) for t in texts], ["v"])
    got = [r[0] for r in df.select(c.stamp_ts(c.stamp_text(F.col("v")))).collect()]
    assert got == [
        datetime(2024, 3, 11, 14, 5),
        datetime(2024, 3, 11, 14, 6),
        datetime(2024, 3, 11, 14, 7),
        datetime(2024, 3, 4, 7, 0),
        datetime(2024, 3, 11, 14, 8),
        None,
    ]
