"""Every catalogue example, ingested and parsed by Spark, becomes its event with its fields."""

from __future__ import annotations

import json
import re

import pytest
from pyspark.sql import functions as F

from forensics import schema as s
from forensics.catalogue import first_word, load_catalogue, precedence
from forensics.events import ANY_WORD, gate_candidates, match_records, parse_events
from tests.helpers import ingest_paths

TEMPLATES = load_catalogue()

# Catalogue capture name -> (event column, how the column shows the captured text).
COLUMN_OF = {"topic_partition": None, "thread": s.THREAD}


def expected_value(name: str, text: str, event: dict):
    """The event column value a captured text becomes (lists decoded, numbers typed)."""
    if name == "topic_partition":
        topic, _, partition = text.rpartition("-")
        return {"topic": topic, "partition": int(partition)}
    column = COLUMN_OF.get(name, name)
    field = next(f for f in s.EVENT_FIELDS.fields + s.RECORDS_SCHEMA.fields if f.name == column)
    type_name = field.dataType.simpleString()
    if type_name == "array<string>":
        return {column: listed_partitions(text)}
    if type_name in ("int", "bigint"):
        return {column: int(text)}
    if name == "strategy":
        words = {
            "earliest": "earliest",
            "latest": "latest",
            "none": "none",
            "by_duration": "by_duration",
            "beginning": "earliest",
            "end": "latest",
        }
        return {column: next(v for w, v in words.items() if w in text.lower())}
    return {column: text or None}


def listed_partitions(text: str) -> list[str]:
    """``topic-N`` items of a captured partition list, read here on its own from each client's
    notation: KafkaJS's ``{"t":[0,1]}``, Python's ``{TopicPartition(topic='t', partition=0)}``,
    librdkafka's ``t [0]``, Java's ``[t-0, t-1]``, a Faust worker's table rows ``| t | {0-2, 5} |``,
    franz-go's ``t[0 1], u[2]`` (also with offsets, ``t[0{5 e0 ce0}]``, ``t[0{4=>5}, 1{..}]``) and Go maps ``map[t:[0 1] u:[2]]``,
    kafka-go's ``t/[0 1]`` and ruby-kafka's backquoted topic and partitions."""
    if "Topic Partition Set" in text:
        rows = re.findall(r"^\W\s*(\S+)\s*\W\s*\{(.*)\}\s*\W$", text, re.MULTILINE)
        spans = [(topic, [int(n) for n in span.split("-")]) for topic, spans in rows for span in spans.split(", ")]
        return [f"{topic}-{p}" for topic, ends in spans for p in range(ends[0], ends[-1] + 1)]
    if text.startswith('{"'):
        return [f"{topic}-{p}" for topic, partitions in json.loads(text).items() for p in partitions]
    ruby = re.fullmatch(r"`([^`]+)`: ([\d, ]*)", text)
    if ruby:
        return [f"{ruby[1]}-{p}" for p in re.split(r"[ ,]+", ruby[2]) if p]
    go = re.findall(r"([\w.-]+)[:/]?\[([\d ,]*)\]", re.sub(r"\{[^}]*\}", "", text.removeprefix("map[")))
    if go or text == "map[]":
        return [f"{topic}-{p}" for topic, numbers in go for p in re.split(r"[ ,]+", numbers) if p]
    python = re.findall(r"TopicPartition\(topic='([^']*)', partition=(\d+)\)", text)
    if python or text.endswith("set()"):
        return [f"{topic}-{p}" for topic, p in python]
    librdkafka = re.fullmatch(r"(\S+) \[(\d+)\]", text.strip())
    if librdkafka:
        return [f"{librdkafka[1]}-{librdkafka[2]}"]
    return [p.strip() for p in text.strip().strip("[]").split(",") if p.strip()]


@pytest.fixture(scope="module")
def events_by_line(spark, tmp_path_factory):
    path = tmp_path_factory.mktemp("catalogue") / "examples.log"
    first_lines, line = {}, 1
    with open(path, "w", encoding="utf-8") as out:
        for template in TEMPLATES:
            first_lines[line] = template
            out.write(template.example + "\n")
            line += template.example.count("\n") + 1
    events = parse_events(ingest_paths(spark, path).records).collect()
    by_line = {row[s.LINE]: row.asDict() for row in events}
    return {template.key: by_line.get(line) for line, template in first_lines.items()}


@pytest.mark.parametrize("template", TEMPLATES, ids=[t.key for t in TEMPLATES])
def test_example_parses_to_its_event_type_and_fields(template, events_by_line):
    event = events_by_line[template.key]
    assert event is not None, "no event parsed from the example"
    assert event[s.EVENT_TYPE] == template.event_type
    for name, text in template.fields:
        for column, value in expected_value(name, text, event).items():
            assert event[column] == value, (name, column)


def test_every_template_key_is_unique():
    assert len({t.key for t in TEMPLATES}) == len(TEMPLATES)


def test_spark_finds_every_templates_gates_in_the_literal_hash_table_and_no_other_keys(spark):
    """``gate_candidates``: Python puts each gate in the bucket of its key's CRC-32 and Spark
    looks it up by its own; a key of non-ASCII text, or of a word no template starts with,
    finds nothing else."""
    gates = {
        (first_word(t) or ANY_WORD, logger, order)
        for order, t in precedence(TEMPLATES)
        for logger in (t.loggers if t.needs_logger else ("", *t.loggers))
    }
    keys = sorted({(word, logger) for word, logger, _ in gates}) + [("Zurückgesetzt", ""), ("Revoking", "Zürich")]
    found = (
        spark.createDataFrame(keys, "word string, logger string")
        .select("word", "logger", F.explode(gate_candidates(F.col("word"), F.col("logger"), TEMPLATES)).alias("gate"))
        .select("word", "logger", "gate.t_word", "gate.t_logger", "gate.t_order")
        .collect()
    )
    assert all((row["word"], row["logger"]) == (row["t_word"], row["t_logger"]) for row in found)
    assert {(row["word"], row["logger"], row["t_order"]) for row in found} == gates


def test_the_regexes_run_over_candidates_sorted_by_template_and_nothing_pushes_them_below(spark, tmp_path):
    """``match_records`` sorts the candidates by template within each partition so that Spark
    compiles each pattern once per partition: the projection that runs the regexes must sit on
    that sort in the plan Spark executes, not below it (as a filter on its result would be)."""
    from forensics.spark import STATIC_SHUFFLES, sql_settings

    path = tmp_path / "app.log"
    path.write_text("".join(t.example + "\n" for t in TEMPLATES[:40]), encoding="utf-8")
    with sql_settings(spark, STATIC_SHUFFLES):
        plan = match_records(ingest_paths(spark, path).records)._jdf.queryExecution().executedPlan().toString().splitlines()
    regexes = [i for i, line in enumerate(plan) if "regexp_replace(" in line]
    assert len(regexes) == 1
    below = plan[regexes[0] + 1]
    assert re.search(r"Sort \[t_order#\d+ ASC NULLS FIRST\], false", below), below[:200]
