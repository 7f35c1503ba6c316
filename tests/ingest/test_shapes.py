"""One incident, written by hand in every log shape analysts receive (tests/data/shapes/).

``plain_log4j`` is the incident in Kafka's own log4j layout; every other directory holds the same
records as another system writes them (application layouts, container and syslog wrappers,
JSON layouts, log-platform exports). Each shape must give what the plain twin gives:

1. its typed events: at least ``MIN_EVENT_SHARE`` of the plain twin's, matched as a multiset of
   (event type, host, generation, topic, partition);
2. the same findings (detector, group, topic, partition, offset range);
3. every event at a line that holds its text (the first ``TEXT_PREFIX`` characters of the
   message's first line occur on that physical line of the file);
4. the hosts host-a and host-b.

The plain twin goes through ``analyze`` itself once. All shapes (and the plain twin again) are
ingested and parsed in ONE pass, and modelled and detected in ONE more: each shape's groups,
hosts and client / member ids are prefixed with the shape's name, so the shapes stay apart in
one model (the suite stays fast: one analysis, not one per shape).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from forensics import schema as s
from forensics.analyze import analyze
from forensics.events import parse_events
from forensics.ingest import ingest

SHAPES_DIR = Path(__file__).resolve().parents[1] / "data" / "shapes"
PLAIN = "plain_log4j"
SHAPES = sorted(p.name for p in SHAPES_DIR.iterdir() if p.is_dir() and p.name != PLAIN)
EXPECTED = json.loads((SHAPES_DIR / "expected.json").read_text())
HOSTS = {"host-a", "host-b"}

EVENT_KEY = (s.EVENT_TYPE, s.HOST, s.GENERATION, s.TOPIC, s.PARTITION)
FINDING_KEY = ("detector", "group", "topic", "partition", "offset_from", "offset_to")
MIN_EVENT_SHARE = 0.95
TEXT_PREFIX = 30
SHOWN = 12
"""How many mismatches an assertion message lists."""


@dataclass(frozen=True)
class Analysis:
    result: dict
    events: list[dict]
    """One dict per typed event: ``EVENT_KEY`` plus file, line and message."""

    def event_keys(self) -> Counter:
        return Counter(tuple(e[k] for k in EVENT_KEY) for e in self.events)

    def findings(self) -> list[tuple]:
        return sorted((tuple(f[k] for k in FINDING_KEY) for f in self.result["findings"]), key=repr)


IDS = (s.GROUP_ID, s.HOST, s.CLIENT_ID, s.MEMBER_ID, s.INSTANCE_ID)
"""Event columns prefixed with the shape's name, so that shapes never meet in the model."""
SEP = "|"


def shape_of(source_file: str) -> str:
    return Path(local_path(source_file)).relative_to(SHAPES_DIR).parts[0]


@pytest.fixture(scope="module")
def batch(spark) -> dict[str, Analysis]:
    """Every shape directory's typed events and findings, from one ingest, one parse, one model."""
    from pyspark.sql import functions as F

    from forensics.detect import detect, findings_json
    from forensics.events.config import config_table
    from forensics.model import build_model
    from forensics.spark import materialise
    from tests.helpers import as_small_incident

    records = ingest(spark, [str(SHAPES_DIR / shape) for shape in [PLAIN, *SHAPES]]).records
    shape = F.regexp_extract(F.col(s.SOURCE_FILE), r"/shapes/([^/]+)/", 1)
    with as_small_incident(spark):
        events = parse_events(records)
        apart = materialise(
            events.select(*[F.concat(shape, F.lit(SEP), F.col(c)).alias(c) if c in IDS else F.col(c) for c in events.columns])
        )
        model = build_model(apart)
        findings = findings_json(detect(model))
        blocks = [row.asDict() for row in config_table(model.settings).collect()]
    rows = [row.asDict() for row in apart.select(*EVENT_KEY, s.SOURCE_FILE, s.LINE, s.MESSAGE).collect()]
    out = {}
    for name in [PLAIN, *SHAPES]:
        # host-a.log in every shape directory: ingest keeps them apart as <shape>/host-a
        mine = [{**e, s.HOST: e[s.HOST].split(SEP, 1)[1].rsplit("/", 1)[-1]} for e in rows if shape_of(e[s.SOURCE_FILE]) == name]
        found = [
            {**f, "group": (f["group"] or "").split(SEP, 1)[-1] or None} for f in findings if (f["group"] or "").startswith(name + SEP)
        ]
        config = sorted(
            (b[s.HOST].split(SEP, 1)[1].rsplit("/", 1)[-1], b["kind"], tuple(b["settings"].items()))
            for b in blocks
            if shape_of(b[s.SOURCE_FILE]) == name
        )
        out[name] = Analysis({"findings": found, "config": config}, mine)
    return out


@pytest.fixture(scope="module")
def analysed(batch):
    return batch.__getitem__


@pytest.fixture(scope="module")
def plain_analysis(spark) -> dict:
    """``analyze`` itself on the plain twin: the real path, end to end."""
    return analyze(spark, [str(SHAPES_DIR / PLAIN)])


@pytest.fixture(scope="module")
def plain(analysed) -> Analysis:
    return analysed(PLAIN)


def test_the_shapes_are_there():
    assert len(SHAPES) >= 25
    for shape in [PLAIN, *SHAPES]:
        assert [p for p in (SHAPES_DIR / shape).iterdir() if p.is_file()], shape


def test_plain_twin_gives_the_recorded_rebalances_and_findings(plain_analysis, plain):
    rebalances = [(r["group"], r["generation"]) for r in plain_analysis["rebalances"]]
    assert rebalances == [(r["group"], r["generation"]) for r in EXPECTED["rebalances"]]
    expected = sorted((tuple(f[k] for k in FINDING_KEY) for f in EXPECTED["findings"]), key=repr)
    assert Analysis(plain_analysis, []).findings() == expected
    assert plain.findings() == expected  # the batch gives what analyze gives
    assert plain_analysis["accounting"]["events"] == len(plain.events) == EXPECTED["typed_events"]


@pytest.mark.parametrize("shape", SHAPES)
def test_shape_gives_the_plain_twins_typed_events(analysed, plain, shape):
    want, got = plain.event_keys(), analysed(shape).event_keys()
    matched = sum((want & got).values())
    missing = sorted((want - got).elements(), key=repr)
    assert matched >= MIN_EVENT_SHARE * sum(want.values()), (
        f"{shape}: {matched} of the plain twin's {sum(want.values())} typed events "
        f"({sum(got.values())} typed events in all); missing {len(missing)}, e.g. {missing[:SHOWN]}"
    )


@pytest.mark.parametrize("shape", SHAPES)
def test_shape_gives_the_plain_twins_findings(analysed, plain, shape):
    assert analysed(shape).findings() == plain.findings(), shape


@cache
def physical_lines(path: str) -> list[str]:
    """A file's physical lines (ending at LF, CRLF or a lone CR, as ingest counts them)."""
    return re.split(r"\r\n|\r|\n", Path(path).read_bytes().decode("utf-8", errors="replace"))


def local_path(source_file: str) -> str:
    return unquote(urlparse(source_file).path) if source_file.startswith("file:") else source_file


@pytest.mark.parametrize("shape", [PLAIN, *SHAPES])
def test_every_event_is_at_a_line_that_holds_its_text(analysed, shape):
    wrong = []
    for event in analysed(shape).events:
        text = (event[s.MESSAGE] or "").split("\n", 1)[0].strip()[:TEXT_PREFIX]
        lines = physical_lines(local_path(event[s.SOURCE_FILE]))
        line = event[s.LINE]
        if not 1 <= line <= len(lines) or text not in lines[line - 1]:
            wrong.append((Path(local_path(event[s.SOURCE_FILE])).name, line, event[s.EVENT_TYPE], text))
    assert not wrong, f"{shape}: {len(wrong)} events point to a line without their text, e.g. {wrong[:SHOWN]}"


@pytest.mark.parametrize("shape", [PLAIN, *SHAPES])
def test_shape_events_come_from_host_a_and_host_b(analysed, shape):
    assert {e[s.HOST] for e in analysed(shape).events} == HOSTS, shape


@pytest.mark.parametrize("shape", SHAPES)
def test_shape_gives_the_plain_twins_client_settings(analysed, plain, shape):
    """Each host's ``ConsumerConfig values:`` block, a record of many lines, reads as in the plain
    twin, whatever wrapped, escaped, hard-wrapped or turned round its lines, or made each of them
    an export's entry (``gcp_json``)."""
    assert analysed(shape).result["config"] == plain.result["config"], shape


AS_WRITTEN = (
    "aws_logs_tail",
    "cri_containerd",
    "docker_compose",
    "docker_compose_timestamps",
    "docker_json_file",
    "grafana_download",
    "heroku_logs",
    "journald",
    "kafka_log4j_with_line",
    "kibana_paste",
    "kubectl_prefix",
    "kubectl_timestamps",
    "logcli",
    "logger_line_suffix",
    "message_holds_line",
    "no_millis_level_first",
    "pipe_custom",
    "quarkus",
    "stern",
    "stern_json",
    "syslog",
    "tanuki_wrapper",
)
"""Shapes that keep every line of a record as the application wrote it (behind a wrapper, or in
another layout's head): a record of several lines reads exactly as in the plain twin.
``TRIMMED``: shapes whose wrapper trimmed each line's leading white space too."""
TRIMMED = ("logcli",)


@pytest.mark.parametrize("shape", AS_WRITTEN)
def test_a_record_of_several_lines_reads_as_written(analysed, plain, shape):
    """The evidence a report quotes: the config block and the failed commit with its exception,
    no wrapper's prefix left on a continuation line (a runtime's time, syslog's host, a tab
    escaped as ``#011``). Trailing white space aside: ``aws logs tail`` strips it from every line."""

    def texts(analysis):
        def as_read(message):
            return "\n".join(line.strip() if shape in TRIMMED else line.rstrip() for line in message.rstrip().split("\n"))

        return sorted((e[s.EVENT_TYPE], e[s.HOST], as_read(e[s.MESSAGE])) for e in analysis.events if "\n" in (e[s.MESSAGE] or ""))

    assert len(texts(plain)) == 3 and texts(analysed(shape)) == texts(plain), shape
