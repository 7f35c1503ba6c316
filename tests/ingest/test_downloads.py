"""Loki's lines as analysts take them out: Grafana's "Download logs" as text (behind their time,
under a few header lines) and ``logcli query``'s output (behind their time and labels, trimmed),
both newest first by default (``wrappers``' ``grafana`` and ``logcli``,
``sampling.runs_newest_first``). Each physical line is an entry of its own, so newest first a
record's continuation lines (a config block, a stack trace) come above its head; they are
joined to it in the order written."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

from forensics.ingest.sampling import runs_newest_first

from ..helpers import buckets, ingest_paths, records_by_line

PLAIN = Path(__file__).resolve().parents[1] / "data" / "shapes" / "plain_log4j" / "host-b.log"
HEADER = ['Common labels: {"app":"orders-app","namespace":"shop","pod":"host-b"}', 'Line limit: "1000 (64 returned)"', "", ""]
STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\]")


def timed(lines: list[str]) -> list[tuple[datetime, str]]:
    """Each line with the time Loki would give it: its record's, a microsecond later per line."""
    out, at = [], None
    for line in lines:
        stamp = STAMP.match(line)
        at = datetime.fromisoformat(f"{stamp[1]}.{stamp[2]}").replace(tzinfo=timezone.utc) if stamp else at + timedelta(microseconds=1)
        out.append((at, line))
    return out


def grafana_10(entries) -> list[str]:
    """Grafana 10 and later: the epoch milliseconds, the time in ISO 8601 (UTC), the line."""
    return [f"{int(at.timestamp() * 1000)}\t{at.strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z\t{line}" for at, line in entries]


def grafana_9(entries) -> list[str]:
    """Before: the browser's local time alone (here UTC), to the millisecond."""
    return [f"{at.strftime('%Y-%m-%d %H:%M:%S.%f')[:-3]}\t{line}" for at, line in entries]


def test_a_download_newest_first_reads_as_the_log_it_came_from(spark, tmp_path):
    """Newest first (Grafana's default) and oldest first, each record reads as in the plain log,
    the config block and the exception with their record; a record is cited at its head's line
    in the download (which holds its first line); the header lines are counted, not read."""
    plain_lines = PLAIN.read_text().splitlines()
    expected = ingest_paths(spark, PLAIN)
    entries = timed(plain_lines)
    fields = ("ts", "level", "logger", "message")
    read = {}
    for name, written in (("newest", grafana_10(entries[::-1])), ("oldest", grafana_9(entries))):
        download = tmp_path / f"{name}.txt"
        download.write_text("\n".join(HEADER + written) + "\n")
        result = ingest_paths(spark, download)
        records = read[name] = records_by_line(result)
        assert sorted([r[f] for f in fields] for r in records.values()) == sorted(
            [r[f] for f in fields] for r in records_by_line(expected).values()
        )
        text = download.read_text().split("\n")
        for line, record in records.items():
            assert record["message"].split("\n")[0].rstrip() in text[line - 1], (name, line)
            assert record["line_end"] == line if name == "newest" else record["line_end"] >= line
        got, plain = buckets(result.inputs[0]), buckets(expected.inputs[0])
        assert got == {**plain, "lines": plain["lines"] + len(HEADER), "unparsed": len(HEADER)}
        assert result.inputs[0]["wrappers"] == {"grafana": len(plain_lines)}
    failed = next(r for r in read["newest"].values() if r["level"] == "ERROR")
    assert failed["message"].split("\n")[1].startswith("org.apache.kafka.clients.consumer.CommitFailedException")


def test_only_a_download_of_single_lines_newest_first_is_turned_round():
    """Newest first only where every line from the first entry on is one (a shipper that joined
    a record's lines into one entry writes them under it, in the order written), by the epoch
    milliseconds where given."""
    entries = timed(PLAIN.read_text().splitlines())
    assert runs_newest_first(HEADER + grafana_10(entries[::-1]))
    assert runs_newest_first(grafana_9(entries[::-1]))
    assert not runs_newest_first(HEADER + grafana_10(entries))
    joined = grafana_9(entries[:1])[::-1] + ["\tallow.auto.create.topics = true"] + grafana_9(entries[60:])[::-1]
    assert not runs_newest_first(joined)
    assert not runs_newest_first([f"{at.isoformat()} {line}" for at, line in entries[::-1]])  # kubectl's shape
    tie = ["1710165931267\t2024-03-11 14:05:31.267\tb", "1710165931266\t2024-03-11 14:05:31.267\ta"]
    assert runs_newest_first(tie) and not runs_newest_first(tie[::-1])


def logcli(entries, labels: str, zone: timezone) -> list[str]:
    """``logcli query``'s default output: RFC 3339 to the second in ``--timezone``'s zone, the
    labels not every line shares, the line trimmed."""
    return [f"{at.astimezone(zone).isoformat(timespec='seconds').replace('+00:00', 'Z')} {labels} {line.strip()}" for at, line in entries]


def test_logcli_output_reads_as_the_log_it_came_from(spark, tmp_path):
    """Newest first (logcli's default) and ``--forward``, in UTC and in a local zone, with the pod
    among the labels or none (one stream: its labels all common): each record reads as in the
    plain log but for the white space logcli trimmed, its frames counted as the plain log's are,
    on the pod's host or else the file's."""

    def as_read(record):
        message = "\n".join(line.strip() for line in record["message"].rstrip().split("\n"))
        return [record["ts"], record["level"], record["logger"], message]

    plain_lines = PLAIN.read_text().splitlines()
    expected = ingest_paths(spark, PLAIN)
    entries = timed(plain_lines)
    paris = timezone(timedelta(hours=1))
    for name, written, host in (
        ("newest", logcli(entries[::-1], '{pod="orders-1", stream="stdout"}', timezone.utc), "orders-1"),
        ("forward", logcli(entries, "{}", paris), "forward"),
    ):
        path = tmp_path / f"{name}.txt"
        path.write_text("\n".join(written) + "\n")
        result = ingest_paths(spark, path)
        records = records_by_line(result)
        assert sorted(map(as_read, records.values())) == sorted(map(as_read, records_by_line(expected).values())), name
        assert {r["host"] for r in records.values()} == {host}
        assert buckets(result.inputs[0]) == buckets(expected.inputs[0]), name
        assert result.inputs[0]["wrappers"] == {"logcli": len(plain_lines)}


def test_logcli_output_newest_first_is_told_by_the_instants_not_the_text():
    """logcli writes each time in its zone's offset of the day: across the autumn change of the
    clocks, the newer time may read earlier."""
    newer, older = "2024-10-27T02:30:00+01:00 {} b", "2024-10-27T02:45:00+02:00 {} a"  # 01:30 and 00:45 UTC
    assert runs_newest_first([newer, older]) and not runs_newest_first([older, newer])
