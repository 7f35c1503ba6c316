"""The model's tables: the schemas ``schema.MODEL_TABLES`` declares, and the sources each table
names (``sources.rows_from``), checked against the tables built from every sample incident."""

from __future__ import annotations

import dataclasses

import pytest
from pyspark.sql import functions as F

from forensics import schema as s
from forensics.detect import DETECTORS
from forensics.events.config import config_settings
from forensics.model import Model, build_model, clock_skew, commit_lineage, ownership_intervals, rebalances, restore_episodes
from forensics.model.members import EPOCH_STEP
from forensics.spark import known_empty
from tests.helpers import without_sources

TABLES = {
    "clock_skew": (clock_skew, lambda m: [m.events]),
    "ownership": (ownership_intervals, lambda m: [m.members]),
    "rebalances": (rebalances, lambda m: [m.members, m.ownership]),
    "restores": (restore_episodes, lambda m: [m.members]),
    "commits": (commit_lineage, lambda m: [m.members, m.ownership, m.offsets]),
    "settings": (config_settings, lambda m: [m.members]),
}
"""Each derived table of the model: its function, and its inputs taken from a model."""


def test_every_derived_table_is_declared():
    assert set(TABLES) == set(s.MODEL_TABLES)


@pytest.mark.parametrize("name", sorted(s.MODEL_TABLES))
def test_a_model_table_has_the_schema_declared(samples_model, name):
    table = getattr(samples_model, name)
    assert table.schema == s.MODEL_TABLES[name]
    assert table.count() > 0


@pytest.mark.parametrize("name", sorted(TABLES))
def test_a_model_table_is_empty_without_the_sources_it_names(samples_model, name):
    """``rows_from`` holds: without the events of the types a table names and the tables it
    names (all other inputs as they were), the table built has no rows."""
    table, inputs = TABLES[name]
    emptied = without_sources(samples_model, table.rows_from)
    assert table(*inputs(emptied)).count() == 0


def test_every_source_named_is_an_event_type_or_a_table():
    tables = {field.name for field in dataclasses.fields(Model)} - {"event_types"}
    named = {source for function in [*(t for t, _ in TABLES.values()), *DETECTORS.values()] for source in function.rows_from}
    assert named - set(s.EVENT_TYPES) - tables == set()


def test_tables_and_detectors_without_sources_are_not_built(samples_model):
    """A producer's log holds config blocks and little else: every table but the settings is the
    empty table of its schema, known to be so without a job, and only ``risky_config`` of the
    detectors, which reads the settings, is built."""
    blocks = samples_model.events.where(F.col(s.EVENT_TYPE) == "config:block").drop("ts_raw")
    model = build_model(blocks, None, frozenset({"config:block"}))
    for name, schema in s.MODEL_TABLES.items():
        table = getattr(model, name)
        assert table.schema == schema
        assert known_empty(table) == (name != "settings"), name
    assert [name for name, detector in DETECTORS.items() if not model.nothing_in(detector.rows_from)] == ["risky_config"]


def _joins(frame) -> int:
    return frame._jdf.queryExecution().optimizedPlan().toString().count("Join ")


@pytest.mark.parametrize("name", ["clock_skew", "rebalances"])
def test_a_table_plans_away_the_witnesses_its_events_lack(samples_model, name):
    """Given the event types, a table whose parts read only a group coordinator's lines or
    KIP-848 member state transitions, none of which the sample incidents hold, plans those
    parts away (``sources.empty_without``): the same rows from a plan of fewer joins. The
    inputs are checkpoints, as a large incident's are: over a small incident's local relations
    Spark's optimiser finds the filters empty by itself."""
    types = frozenset(row[0] for row in samples_model.events.select(s.EVENT_TYPE).distinct().collect())
    assert not types & {*s.event_types_of("coordinator:"), EPOCH_STEP}
    table, inputs = TABLES[name]
    checkpoints = [frame.localCheckpoint() for frame in inputs(samples_model)]
    full, typed = table(*checkpoints), table(*checkpoints, event_types=types)
    assert _joins(typed) < _joins(full)
    assert typed.count() == full.count() > 0
    assert typed.exceptAll(full).count() == 0
