"""Model: the group's history derived from typed events, as pure DataFrame functions.

``build_model(events)`` estimates the hosts' clock offsets from the protocol, puts every event
on the reference clock, then derives the members' generations, the partition ownership
intervals and the rebalances. Each table is a DataFrame; small ones are cached by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame

from .clock import clock_skew, correct_clocks
from .commits import commit_lineage
from .members import with_members
from .ownership import ownership_intervals
from .rebalances import rebalances
from .restores import restore_episodes


@dataclass(frozen=True)
class Model:
    """The modelled incident: events on one clock, and the tables derived from them."""

    events: DataFrame
    clock_skew: DataFrame
    members: DataFrame
    ownership: DataFrame
    rebalances: DataFrame
    restores: DataFrame
    commits: DataFrame

    def cache(self) -> "Model":
        """The same model with every table cached (they are small; each is reused)."""
        return Model(*[frame.cache() for frame in self._frames()])

    def unpersist(self) -> None:
        for frame in self._frames():
            frame.unpersist()

    def _frames(self) -> list[DataFrame]:
        return [self.events, self.clock_skew, self.members, self.ownership, self.rebalances, self.restores, self.commits]


def build_model(events: DataFrame, offsets: DataFrame | None = None) -> Model:
    """Model of the incident told by ``events`` (``schema.EVENTS_SCHEMA``) and, optionally,
    the offset dumps' ``offsets`` table (``schema.OFFSETS_SCHEMA``).

    The clock offsets, the members' events and the ownership intervals are small and feed
    every later table, so they are materialised (``localCheckpoint``) as they are built:
    that keeps each later query plan short instead of re-deriving them again and again.
    """
    skew = clock_skew(events).localCheckpoint()
    on_one_clock = correct_clocks(events, skew)
    members = with_members(on_one_clock).localCheckpoint()
    ownership = ownership_intervals(members).localCheckpoint()
    return Model(
        on_one_clock, skew, members, ownership, rebalances(members, ownership), restore_episodes(members),
        commit_lineage(members, ownership, offsets),
    )


__all__ = ["Model", "build_model", "clock_skew", "commit_lineage", "correct_clocks", "ownership_intervals", "rebalances", "restore_episodes", "with_members"]
