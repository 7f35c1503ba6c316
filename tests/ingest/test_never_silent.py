"""No Kafka line is lost silently (issue 86): over every fixture, sample and lab run log, each
line that carries a Kafka mark (``anchor.marked``: a log-context prefix, a Kafka logger or
class, librdkafka's ``[thrd:``; no stack-trace text) is in a Kafka record, or counted in its
input's ``kafka_not_read`` (unparsed lines with a Kafka mark are counted there too).

A line is in a record when it lies in the record's lines (``line`` to ``line_end``), or, where a
record is cited by its head alone (a file written newest first, whose continuation lines stand
above the head; an export's entries joined by time), when its text is in a record that starts
near it. One ingest per batch of files, not per file."""

from __future__ import annotations

import gzip
import re
from bisect import bisect_left, bisect_right
from collections import defaultdict
from pathlib import Path

import pytest

from forensics import schema as s
from forensics.ingest import KAFKA_NOT_READ, ingest_files, resolve_inputs
from forensics.layouts import anchor
from forensics.offsets import sniff_file

ROOT = Path(__file__).resolve().parents[2]
NOT_LOGS = {"expected.json", "truth.json"}
"""Files of a fixture that state its truth, not logs."""
NOT_LOG_DIRS = {"offsets", "offsets_damaged", "journal"}
"""Offset dumps (read by ``forensics.offsets``) and a lab run's journal of what it produced and processed."""
NOT_LOG_SUFFIXES = {".md", ".prom"}
NEAR = 100
"""How far (in lines) from a record a line cited by its text alone may stand."""
LINE_END = re.compile(r"\r\n|\r|\n")
_MARK = re.compile(anchor.MARK)
_ESCAPES = (("\\t", "\t"), ("\\n", "\n"), ('\\"', '"'), ("#011", "\t"), ("#012", "\n"))
_KEY_END = re.compile(r"[\"\t\n)]")
_FIELD_END = re.compile(r"[\"\t\n),]")


def fixture_logs() -> list[Path]:
    """Every log under tests/data and sample_logs (not a fixture's truth, notes or offset dumps)."""
    found = []
    for base in ("tests/data", "sample_logs"):
        for path in sorted((ROOT / base).rglob("*")):
            parts = set(path.relative_to(ROOT).parts)
            if path.is_file() and path.suffix not in NOT_LOG_SUFFIXES and path.name.lower() not in NOT_LOGS and not NOT_LOG_DIRS & parts:
                found.append(path)
    return [p for p in found if not sniff_file(str(p))]


def lab_logs() -> list[Path]:
    """The lab runs' logs: clients' and brokers' (``lab/runs/<scenario>/<client>/**/*.log``)."""
    return [p for p in sorted((ROOT / "lab" / "runs").glob("*/*/**/*.log")) if not sniff_file(str(p))]


def physical_lines(path: str) -> list[str]:
    """A file's lines as Hadoop's reader splits them (\\n, \\r\\n or a lone \\r)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as handle:
        text = handle.read().decode("utf-8", "replace")
    lines = LINE_END.split(text)
    return lines[:-1] if lines and lines[-1] == "" else lines


def _keys(line: str) -> list[tuple[str, str]]:
    """Each Kafka mark of ``line`` (its escapes undone) and the text from it to the end of its
    field: what a record holding the line holds in its message (or its logger)."""
    text = line
    for escaped, plain in _ESCAPES:
        text = text.replace(escaped, plain)
    keys = []
    for match in _MARK.finditer(text):
        for stop in (_KEY_END, _FIELD_END):  # a CSV field ends at a comma
            end = stop.search(text, match.end())
            keys.append((match.group(0), text[match.start() : min(end.start() if end else len(text), match.start() + 60)].strip()))
    return keys


def silent_lines(result) -> list[tuple[str, int, str]]:
    """The lines that carry a Kafka mark, are in no Kafka record of ``result`` and are not counted
    as not read: (file, line, text). A file whose not-read count misses some is reported whole."""
    records: dict[str, list] = defaultdict(list)
    for row in result.records.select(s.SOURCE_FILE, s.LINE, s.LINE_END, s.LOGGER, s.MESSAGE).collect():
        records[row[0]].append(row)
    silent = []
    for entry in result.inputs:
        if entry["duplicate_of"] or entry["problem"]:
            continue
        path = entry["path"]
        lines = physical_lines(path)
        spans = sorted(records[path], key=lambda row: row[s.LINE])
        starts = [row[s.LINE] for row in spans]
        covered = {n for row in spans for n in range(row[s.LINE], row[s.LINE_END] + 1)}
        uncovered = []
        for number, line in enumerate(lines, 1):
            if number in covered or not anchor.marked(line):
                continue
            near = spans[bisect_left(starts, number - NEAR) : bisect_right(starts, number + NEAR)]
            if not any(key in (row[s.MESSAGE] or "") or mark == row[s.LOGGER] for mark, key in _keys(line) for row in near):
                uncovered.append(number)
        counted = entry[KAFKA_NOT_READ]
        if len(uncovered) > counted or (uncovered and entry["kafka_not_read_line"] not in uncovered):
            silent += [(path, n, lines[n - 1][:200]) for n in uncovered]
    return silent


def _ingested(spark, paths: list[Path]):
    from forensics.spark import sql_settings
    from tests.helpers import GENERATED

    with sql_settings(spark, GENERATED):  # thousands of lines: generated code pays
        return ingest_files(spark, resolve_inputs([str(p) for p in paths]))


@pytest.mark.parametrize("batch", ["fixtures", "lab"])
def test_every_kafka_line_is_read_or_counted(spark, batch):
    paths = fixture_logs() if batch == "fixtures" else lab_logs()
    assert len(paths) > 100
    result = _ingested(spark, paths)
    silent = silent_lines(result)
    assert not silent, f"{len(silent)} Kafka lines in {len({p for p, _, _ in silent})} files neither read nor counted: {silent[:10]}"


def test_a_lost_kafka_line_is_found(spark, tmp_path):
    """The check finds a Kafka line that ingest did not read (a broker's config block, no client's
    record) once its count is taken away: the count is what keeps it honest."""
    log = tmp_path / "server.log"
    log.write_text(
        "[2024-03-11 14:02:17,118] INFO [Consumer clientId=c-1, groupId=g] (Re-)joining group (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)\n"
        "[2024-03-11 14:02:18,000] INFO KafkaConfig values: \n"
        "\tgroup.consumer.assignors = [org.apache.kafka.coordinator.group.assignor.UniformAssignor]\n"
        "\tlog.dirs = /tmp/kraft\n"
        " (kafka.server.KafkaConfig)\n"
    )
    result = _ingested(spark, [log])
    (entry,) = result.inputs
    assert entry[KAFKA_NOT_READ] == 1 and entry["kafka_not_read_line"] == 3
    assert not silent_lines(result)
    entry[KAFKA_NOT_READ] = 0
    assert [line for _, line, _ in silent_lines(result)] == [3]
