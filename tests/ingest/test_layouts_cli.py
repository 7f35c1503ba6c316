"""``forensics layouts``, ``--layout`` and ``--columns``: the user sees what was recognised, and
can name a layout or an export's columns that detection misses."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from forensics import schema as s
from forensics.cli import main
from forensics.events import parse_events
from forensics.ingest import ingest
from forensics.spark import sql_settings

SHAPES = Path(__file__).resolve().parents[1] / "data" / "shapes"
PLAIN = SHAPES / "plain_log4j"
USER_PATTERN = "%d{yyyyMMdd HHmmss.SSS} <%level> %logger{36}: %msg%n"
"""A layout no built-in recogniser knows, with a time no reader of Kafka lines by their text
(``layouts.anchor``) understands: a compact date and time, the level in angle brackets."""


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def in_user_layout(line: str) -> str:
    """A plain twin line (Kafka's log4j layout) as ``USER_PATTERN`` writes it."""
    import re

    m = re.match(r"^\[(\d{4})-(\d\d)-(\d\d) (\d\d:\d\d:\d\d),(\d{3})\] (\w+) (.*?)(?: \(([\w.$]+)\))?$", line)
    if not m:
        return line
    year, month, day, time, millis, level, message, logger = m.groups()
    return f"{year}{month}{day} {time.replace(':', '')}.{millis} <{level}> {logger or 'org.apache.kafka.clients.consumer.internals.ConsumerCoordinator'}: {message}"


@pytest.fixture(scope="module")
def user_layout_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("user-layout")
    for log in PLAIN.glob("*.log"):
        (out / log.name).write_text("\n".join(in_user_layout(x) for x in log.read_text().splitlines()) + "\n")
    return out


def typed(spark, path, **options) -> Counter:
    events = parse_events(ingest(spark, [str(path)], **options).records).collect()
    return Counter((e[s.EVENT_TYPE], e[s.HOST], e[s.GENERATION], e[s.TOPIC], e[s.PARTITION], e[s.TS] is not None) for e in events)


def test_a_layout_the_user_names_gives_the_plain_twins_events(spark, user_layout_dir):
    plain = typed(spark, PLAIN)
    assert all(dated for *_, dated in plain)
    read_by_text = typed(spark, user_layout_dir)
    assert sum(read_by_text.values()) >= 0.95 * sum(plain.values()) and not any(dated for *_, dated in read_by_text)
    named = typed(spark, user_layout_dir, layout=USER_PATTERN)
    assert sum((plain & named).values()) >= 0.95 * sum(plain.values())


def test_layouts_command_explains_a_file_and_hints_when_its_times_are_not_understood(spark, user_layout_dir):
    done = invoke("layouts", str(user_layout_dir / "host-a.log"))
    assert done.exit_code == 0, done.output
    assert "hint: its Kafka lines were read by their text, but no time" in done.output and "--layout" in done.output
    named = invoke("layouts", str(user_layout_dir / "host-a.log"), "--layout", USER_PATTERN)
    assert named.exit_code == 0, named.output
    assert "layout: user" in named.output and "hint" not in named.output
    assert "first Kafka record, line " in named.output and "| INFO |" in named.output


def test_a_file_read_by_its_kafka_text_compiles_in_spark_without_falling_back(spark, user_layout_dir):
    """Spark logs a failed compile of its generated code (a method past 64 KB) as an error with a
    long Java trace on stderr before it runs the stage interpreted; with the fallback off it fails."""
    with sql_settings(
        spark,
        {"spark.sql.codegen.fallback": "false", "spark.sql.codegen.wholeStage": "true", "spark.sql.codegen.factoryMode": "CODEGEN_ONLY"},
    ):
        assert sum(typed(spark, user_layout_dir).values()) > 0


def test_layouts_command_names_wrappers_and_exports(spark):
    done = invoke("layouts", str(SHAPES / "kubectl_timestamps"), str(SHAPES / "kibana_csv"))
    assert done.exit_code == 0, done.output
    assert "wrapped: kubectl" in done.output
    assert "kibana csv" in done.output and "time=@timestamp" in done.output


def test_columns_option_names_an_export_whose_headers_say_nothing(spark, tmp_path):
    source = (SHAPES / "kibana_csv" / "discover.csv").read_text().splitlines()
    (tmp_path / "odd.csv").write_text("\n".join(['"when","box","what"', *source[1:]]) + "\n")
    plain = typed(spark, PLAIN)
    named = typed(spark, tmp_path / "odd.csv", columns={"time": "when", "host": "box", "message": "what"})
    assert sum((plain & named).values()) >= 0.95 * sum(plain.values())


def test_wrong_layout_pattern_or_columns_is_one_clear_error(tmp_path):
    (tmp_path / "a.log").write_text("x\n")
    bad = invoke("analyze", str(tmp_path), "--layout", "%d{yyyy %msg")
    assert bad.exit_code == 2 and "layout pattern" in bad.output and "Traceback" not in bad.output
    cols = invoke("analyze", str(tmp_path), "--columns", "when=time")
    assert cols.exit_code == 2 and "Traceback" not in cols.output
