"""Model: the group's history derived from typed events, as pure DataFrame functions.

``build_model(events)`` estimates the hosts' clock offsets from the protocol, puts every event
on the reference clock, then derives the members' generations, the partition ownership
intervals and the rebalances. Each table is a DataFrame; small ones are cached by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from pyspark.sql import DataFrame

from .. import schema as s
from ..events.config import config_settings
from ..sources import nothing_in
from ..spark import concurrently, empty_of, kept_with_rows, known_empty, materialise, materialised_together
from .clock import clock_skew, correct_clocks
from .commits import commit_lineage
from .members import with_members
from .ownership import ownership_intervals
from .rebalances import rebalances
from .restores import restore_episodes


@dataclass(frozen=True)
class Model:
    """The modelled incident: events on one clock, the tables derived from them, the clients'
    settings (``events.config.config_settings``), the offset dumps' table, if any, and the
    event types the events hold (``None``: not counted)."""

    events: DataFrame
    clock_skew: DataFrame
    members: DataFrame
    ownership: DataFrame
    rebalances: DataFrame
    restores: DataFrame
    commits: DataFrame
    settings: DataFrame
    offsets: DataFrame | None = None
    event_types: frozenset[str] | None = None

    def cache(self) -> Model:
        """The same model with every table cached (they are small; each is reused)."""
        return Model(*[frame.cache() for frame in self._frames()], offsets=self.offsets, event_types=self.event_types)

    def unpersist(self) -> None:
        for frame in self._frames():
            frame.unpersist()

    def nothing_in(self, sources) -> bool:
        """Whether none of ``sources`` (event types, table names: ``sources.rows_from``) has a
        row, as known without a job."""
        return nothing_in(sources, self.event_types, self._tables())

    def _tables(self) -> dict[str, DataFrame | None]:
        return {field.name: getattr(self, field.name) for field in fields(self) if field.name != "event_types"}

    def _frames(self) -> list[DataFrame]:
        """Every table but the offset dumps'."""
        return [frame for name, frame in self._tables().items() if name != "offsets"]


def build_model(
    events: DataFrame, offsets: DataFrame | None = None, event_types: frozenset[str] | None = None, at_once: bool = True
) -> Model:
    """Model of the incident told by ``events`` (``schema.EVENTS_SCHEMA``) and, optionally,
    the offset dumps' ``offsets`` table (``schema.OFFSETS_SCHEMA``); ``event_types``: the
    event types among ``events``, where they were counted.

    Every table but the events is small and feeds later tables and the detectors, so each is
    materialised (``spark.materialise``) as it is built: that keeps each later query plan short
    instead of re-deriving the tables again and again. A table none of whose sources
    (``sources.rows_from``) has rows is the empty table of its schema (``schema.MODEL_TABLES``),
    not built: a producer's log has no rebalances, ownership, restores or commits. The four
    tables that need only the members and the ownership are kept by one job
    (``spark.materialised_together``), whose independent stages run at once; not ``at_once``,
    a job each, one after another (``spark.room_to_run_at_once``: a small local heap). Their
    plans, and the detectors' (``detect``), are made at once (``spark.concurrently``), each
    analysed by the driver in a thread of its own, so that Spark's planning of one overlaps
    another's.
    """
    tables: dict[str, DataFrame | None] = {"offsets": offsets}

    def planned(name: str, table, *inputs: DataFrame, **options) -> DataFrame:
        if nothing_in(table.rows_from, event_types, tables):
            return empty_of(events.sparkSession, s.MODEL_TABLES[name])
        return table(*inputs, **options)

    def built(name: str, table, *inputs: DataFrame, **options) -> DataFrame:
        tables[name] = _kept(planned(name, table, *inputs, **options))
        return tables[name]

    skew, skew_rows = kept_with_rows(planned("clock_skew", clock_skew, events, event_types=event_types))
    tables["clock_skew"] = skew
    on_one_clock = correct_clocks(events, skew_rows)
    members = materialise(with_members(on_one_clock))
    ownership = built("ownership", ownership_intervals, members)
    plans = concurrently(
        events.sparkSession,
        lambda: planned("rebalances", rebalances, members, ownership, event_types=event_types),
        lambda: planned("restores", restore_episodes, members),
        lambda: planned("commits", commit_lineage, members, ownership, offsets),
        lambda: planned("settings", config_settings, members),
    )
    later = materialised_together(plans) if at_once else [_kept(plan) for plan in plans]
    return Model(on_one_clock, skew, members, ownership, *later, offsets=offsets, event_types=event_types)


def _kept(table: DataFrame) -> DataFrame:
    """``table`` materialised, unless it is known to be empty (``spark.known_empty``)."""
    return table if known_empty(table) else materialise(table)


__all__ = [
    "Model",
    "build_model",
    "clock_skew",
    "commit_lineage",
    "correct_clocks",
    "ownership_intervals",
    "rebalances",
    "restore_episodes",
    "with_members",
]
