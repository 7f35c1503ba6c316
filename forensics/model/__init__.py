"""Model: the group's history derived from typed events, as pure DataFrame functions.

``build_model(events)`` estimates the hosts' clock offsets from the protocol, puts every event
on the reference clock, then derives the members' generations, the partition ownership
intervals and the rebalances. Each table is a DataFrame; small ones are cached by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame

from ..events.config import config_settings
from ..spark import materialise
from .clock import clock_skew, correct_clocks
from .commits import commit_lineage
from .members import with_members
from .ownership import ownership_intervals
from .rebalances import rebalances
from .restores import restore_episodes


@dataclass(frozen=True)
class Model:
    """The modelled incident: events on one clock, the tables derived from them, the clients'
    settings (``events.config.config_settings``) and the offset dumps' table, if any."""

    events: DataFrame
    clock_skew: DataFrame
    members: DataFrame
    ownership: DataFrame
    rebalances: DataFrame
    restores: DataFrame
    commits: DataFrame
    settings: DataFrame
    offsets: DataFrame | None = None

    def cache(self) -> "Model":
        """The same model with every table cached (they are small; each is reused)."""
        return Model(*[frame.cache() for frame in self._frames()], offsets=self.offsets)

    def unpersist(self) -> None:
        for frame in self._frames():
            frame.unpersist()

    def _frames(self) -> list[DataFrame]:
        return [
            self.events, self.clock_skew, self.members, self.ownership, self.rebalances, self.restores, self.commits,
            self.settings,
        ]


def build_model(events: DataFrame, offsets: DataFrame | None = None) -> Model:
    """Model of the incident told by ``events`` (``schema.EVENTS_SCHEMA``) and, optionally,
    the offset dumps' ``offsets`` table (``schema.OFFSETS_SCHEMA``).

    Every table but the events is small and feeds later tables and the detectors, so each is
    materialised (``spark.materialise``) as it is built: that keeps each later query plan short
    instead of re-deriving the tables again and again.
    """
    skew = materialise(clock_skew(events))
    on_one_clock = correct_clocks(events, skew)
    members = materialise(with_members(on_one_clock))
    ownership = materialise(ownership_intervals(members))
    derived = [
        rebalances(members, ownership), restore_episodes(members), commit_lineage(members, ownership, offsets),
        config_settings(members),
    ]
    return Model(on_one_clock, skew, members, ownership, *[materialise(table) for table in derived], offsets=offsets)


__all__ = ["Model", "build_model", "clock_skew", "commit_lineage", "correct_clocks", "ownership_intervals", "rebalances", "restore_episodes", "with_members"]
