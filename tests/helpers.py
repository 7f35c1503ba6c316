"""Shared test helpers: ingest one fixture and look at its accounting and records."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from forensics.ingest import Ingested, ingest

GENERATED = {"spark.sql.codegen.wholeStage": "true", "spark.sql.codegen.factoryMode": "FALLBACK"}
"""Spark's defaults for generated code, which the suite's session turns off (``conftest``):
for the tests of what a larger incident runs with it (``sql_settings(spark, GENERATED)``)."""


def ingest_paths(spark, *paths: Path | str, **options) -> Ingested:
    return ingest(spark, [str(p) for p in paths], **options)


@contextmanager
def as_small_incident(spark):
    """Inside the block, Spark runs as ``forensics analyze`` runs a small incident
    (``analyze.SMALL_INCIDENT``: one partition, interpreted, tables kept in the driver as they are
    materialised): a model or findings of a few lines in a second or two, not in a dozen
    adaptive jobs. Tables materialised inside stay usable after the block."""
    from forensics.analyze import SMALL_INCIDENT
    from forensics.spark import sql_settings

    with sql_settings(spark, SMALL_INCIDENT):
        yield


def small_model(spark, records, offsets=None, event_types=None):
    """The model of ``records`` (and offset dump rows ``offsets``) built as ``analyze`` builds
    a small incident's: events and dumps materialised first (``as_small_incident``)."""
    from forensics.events import parse_events
    from forensics.model import build_model
    from forensics.spark import materialise

    with as_small_incident(spark):
        events = materialise(parse_events(records))
        return build_model(events, None if offsets is None else materialise(offsets), event_types)


def buckets(entry: dict) -> dict:
    """The four accounting buckets (and lines) of an inputs entry or the totals."""
    return {k: entry[k] for k in ("lines", "records", "continuations", "irrelevant", "unparsed")}


def records_by_line(result: Ingested) -> dict[int, dict]:
    return {row["line"]: row.asDict() for row in result.records.collect()}


def without_sources(model, sources):
    """``model`` without the rows of ``sources`` (``forensics.sources.rows_from``): its events
    and members without the event types named, the tables named empty, and those event types
    counted as absent."""
    import dataclasses

    from pyspark.sql import functions as F

    from forensics import schema as s
    from forensics.spark import empty_like

    types = [source for source in sources if source in s.EVENT_TYPES]
    tables = {name: None if name == "offsets" else empty_like(getattr(model, name)) for name in sources if name not in types}
    if types:
        tables.update({name: getattr(model, name).where(~F.col(s.EVENT_TYPE).isin(*types)) for name in ("events", "members")})
    return dataclasses.replace(model, **tables, event_types=frozenset(s.EVENT_TYPES) - set(types))


def analysed_with_model(spark, paths: list[str]) -> tuple[dict, object]:
    """``analyze`` of ``paths`` and the model it built, kept by a spy on ``analyze.build_model``:
    in a small incident its tables are local relations in the driver, usable afterwards."""
    import importlib

    analyze = importlib.import_module("forensics.analyze")  # the module: the package exports its function by that name
    built = []
    build_model = analyze.build_model

    def keeping(*args, **kwargs):
        built.append(build_model(*args, **kwargs))
        return built[-1]

    analyze.build_model = keeping
    try:
        result = analyze.analyze(spark, paths)
    finally:
        analyze.build_model = build_model
    return result, built[-1]


_LAB_RESULTS: dict[str, dict] = {}


def lab_run_analysed(spark, run_dir: Path | str) -> dict:
    """A lab run's analysis as ``forensics analyze --json`` writes it, once per test session:
    tests/lab compares it with the run's truth and the Kafka 4.x class tests read its findings."""
    import io
    import json

    from forensics.analyze import analyze

    key = str(Path(run_dir).resolve())
    if key not in _LAB_RESULTS:
        out = io.StringIO()
        analyze(spark, [key], json_to=out)
        _LAB_RESULTS[key] = json.loads(out.getvalue())
    return _LAB_RESULTS[key]


def part_of(ingested: Ingested, *names: str) -> Ingested:
    """The part of ``ingested`` read from the files named ``names`` (base names, in that order):
    their inputs entries and records. No accounting: a directory's is of all its files."""
    from pyspark.sql import functions as F

    from forensics import schema as s

    inputs = [next(entry for entry in ingested.inputs if Path(entry["path"]).name == name) for name in names]
    paths = [entry["path"] for entry in inputs]
    return Ingested(inputs, {}, ingested.records.where(F.col(s.SOURCE_FILE).isin(*paths)))
