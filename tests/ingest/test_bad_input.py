"""Messy inputs never crash ingest, and every line shows up in the accounting with its reason."""

from __future__ import annotations

import gzip
import os

import pytest

from forensics.errors import ForensicsError
from forensics.schema import UNPARSED_REASONS
from tests.helpers import buckets, ingest_paths, records_by_line

KAFKA_LINE = (
    "[2024-03-11 14:02:{s:02d},000] INFO [Consumer clientId=consumer-orders-app-1, groupId=orders-app] "
    "(Re-)joining group (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)"
)


def kafka_lines(n: int, start: int = 0) -> list[str]:
    return [KAFKA_LINE.format(s=(start + i) % 60) for i in range(n)]


def write(path, data: bytes):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_empty_file_has_no_lines_and_no_problem(spark, tmp_path):
    result = ingest_paths(spark, write(tmp_path / "empty.log", b""))
    assert result.inputs[0]["lines"] == 0 and result.inputs[0]["problem"] is None
    assert result.accounting["lines"] == 0


def test_binary_junk_is_unparsed_as_binary_data(spark, tmp_path):
    junk = bytes(range(256)) * 4 + b"\n" + b"\x00\x01\x02\n"
    result = ingest_paths(spark, write(tmp_path / "junk.bin", b"\n".join(x.encode() for x in kafka_lines(2)) + b"\n" + junk))
    entry = result.inputs[0]
    assert entry["records"] == 2
    assert entry["unparsed"] == entry["lines"] - 2
    assert set(result.accounting["unparsed_by_reason"]) == {"binary data"}
    assert set(result.accounting["unparsed_by_reason"]) <= set(UNPARSED_REASONS)


def test_invalid_utf8_line_is_unparsed_as_undecodable(spark, tmp_path):
    data = "\n".join(kafka_lines(1)).encode() + b"\n\xff\xfe caf\xe9 au lait\n"
    result = ingest_paths(spark, write(tmp_path / "latin1.log", data))
    assert buckets(result.inputs[0]) == {"lines": 2, "records": 1, "continuations": 0, "irrelevant": 0, "unparsed": 1}
    assert result.accounting["unparsed_by_reason"] == {"undecodable bytes (not UTF-8)": 1}
    assert result.unparsed_samples[0]["line"] == 2


def test_truncated_gzip_keeps_what_was_read_and_says_so(spark, tmp_path):
    text = ("\n".join(kafka_lines(20000)) + "\n").encode()
    packed = gzip.compress(text)
    result = ingest_paths(spark, write(tmp_path / "rotated.log.gz", packed[: len(packed) // 2]))
    entry = result.inputs[0]
    assert entry["problem"].startswith("truncated gzip")
    assert 0 < entry["lines"] < 20000
    assert entry["records"] == entry["lines"]


def test_concatenated_gzip_members_are_read_whole(spark, tmp_path):
    members = gzip.compress(("\n".join(kafka_lines(3)) + "\n").encode()) + gzip.compress(("\n".join(kafka_lines(2, 3)) + "\n").encode())
    result = ingest_paths(spark, write(tmp_path / "cat.log.gz", members))
    assert result.inputs[0]["problem"] is None
    assert sorted(records_by_line(result)) == [1, 2, 3, 4, 5]


def test_crlf_and_lone_cr_end_lines(spark, tmp_path):
    a, b, c = kafka_lines(3)
    result = ingest_paths(spark, write(tmp_path / "windows.log", f"{a}\r\n{b}\r{c}".encode()))
    records = records_by_line(result)
    assert sorted(records) == [1, 2, 3]
    assert not records[1]["message"].endswith("\r")


def test_utf8_bom_does_not_hide_the_first_record(spark, tmp_path):
    result = ingest_paths(spark, write(tmp_path / "bom.log", "\ufeff".encode() + "\n".join(kafka_lines(2)).encode()))
    assert sorted(records_by_line(result)) == [1, 2]


def test_ten_megabyte_line_is_accounted(spark, tmp_path):
    huge = "x" * (10 * 1024 * 1024)
    lines = kafka_lines(1) + [huge] + kafka_lines(1, 1)
    result = ingest_paths(spark, write(tmp_path / "huge.log", "\n".join(lines).encode()))
    assert buckets(result.inputs[0]) == {"lines": 3, "records": 2, "continuations": 1, "irrelevant": 0, "unparsed": 0}


def test_two_layouts_in_one_file_are_both_parsed(spark, tmp_path):
    logback = (
        "2024-03-11 14:02:17,418 INFO  org.apache.kafka.clients.consumer.internals.ConsumerCoordinator - "
        "[Consumer clientId=c-1, groupId=g] (Re-)joining group"
    )
    lines = kafka_lines(2) + [logback, logback] + kafka_lines(1, 5)
    result = ingest_paths(spark, write(tmp_path / "mixed.log", "\n".join(lines).encode()))
    entry = result.inputs[0]
    assert entry["layout"] == "log4j" and entry["layouts"] == {"log4j": 3, "logback": 2}
    assert entry["records"] == 5


def test_lines_out_of_time_order_keep_their_line_numbers(spark, tmp_path):
    lines = kafka_lines(1, 30) + kafka_lines(1, 10) + kafka_lines(1, 20)
    records = records_by_line(ingest_paths(spark, write(tmp_path / "unordered.log", "\n".join(lines).encode())))
    assert [records[n]["ts"].second for n in (1, 2, 3)] == [30, 10, 20]


def test_file_of_unknown_layout_is_unparsed_with_that_reason(spark, tmp_path):
    text = b"GROUP  TOPIC  PARTITION  CURRENT-OFFSET\norders-app orders 0 1500\n\tat nothing.Here(X.java:1)\n"
    result = ingest_paths(spark, write(tmp_path / "dump.txt", text))
    assert buckets(result.inputs[0]) == {"lines": 3, "records": 0, "continuations": 0, "irrelevant": 0, "unparsed": 3}
    assert result.accounting["unparsed_by_reason"] == {"unknown layout": 3}


def test_text_before_the_first_record_is_an_orphan_continuation(spark, tmp_path):
    lines = ["\tat truncated.Frame(X.java:1)", "Caused by: java.io.IOException: cut"] + kafka_lines(1)
    result = ingest_paths(spark, write(tmp_path / "cut.log", "\n".join(lines).encode()))
    assert result.inputs[0]["records"] == 1
    assert result.accounting["unparsed_by_reason"] == {"continuation with no record before it": 1}
    assert result.inputs[0]["continuations"] == 1  # the folded stack frame


def test_hidden_file_names_are_read_not_skipped(spark, tmp_path):
    result = ingest_paths(
        spark,
        write(tmp_path / ".hidden.log", "\n".join(kafka_lines(2)).encode()),
        write(tmp_path / "_under.log", "\n".join(kafka_lines(3)).encode()),
    )
    assert {os.path.basename(e["path"]): e["records"] for e in result.inputs} == {".hidden.log": 2, "_under.log": 3}
    sources = {row["source_file"] for row in result.records.select("source_file").collect()}
    assert sources == {str(tmp_path / ".hidden.log"), str(tmp_path / "_under.log")}


def test_odd_characters_in_file_names_keep_provenance(spark, tmp_path):
    name = "host a+b <x>%41 é.log"
    result = ingest_paths(spark, write(tmp_path / name, "\n".join(kafka_lines(2)).encode()))
    assert result.inputs[0]["records"] == 2
    assert {r["source_file"] for r in records_by_line(result).values()} == {str(tmp_path / name)}


def test_nonexistent_path_is_one_clear_error(spark, tmp_path):
    with pytest.raises(ForensicsError, match="No such file or directory: .*nowhere.log"):
        ingest_paths(spark, tmp_path / "nowhere.log")


def test_bad_time_zone_is_one_clear_error(spark, tmp_path):
    with pytest.raises(ForensicsError, match="Unknown time zone 'Mars/Olympus'"):
        ingest_paths(spark, write(tmp_path / "a.log", b"x\n"), tz="Mars/Olympus")


def test_duplicated_file_is_analysed_once_and_said_so(spark, tmp_path):
    text = "[2024-03-11 14:02:33,221] INFO [Consumer clientId=c-1, groupId=g] Subscribed to topic(s): orders (org.apache.kafka.clients.consumer.KafkaConsumer)\n"
    for host in ("host-a", "host-b"):
        (tmp_path / host).mkdir()
        (tmp_path / host / "app.log").write_text(text * 3)
    ingested = ingest_paths(spark, tmp_path)
    assert ingested.accounting["lines"] == 3 and ingested.accounting["duplicate_files"] == 1
    assert sorted(bool(entry["duplicate_of"]) for entry in ingested.inputs) == [False, True]
    assert ingested.records.count() == 3
