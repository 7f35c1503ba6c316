"""What a model table or a detector is made from: the sources all of its rows come from.

A small incident rarely holds every kind of witness: a producer's log has no rebalances, an
incident without Kafka Streams no restores. A table or detector marked with ``rows_from`` is
empty when none of its sources has rows, and is then not built at all (building the plan of a
table costs the driver tenths of a second even when it has nothing to compute).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from .spark import empty_like, known_empty


def rows_from(*sources: str):
    """Marks a model table or a detector whose rows all come from rows of ``sources`` (joined
    to others only to add to them): event types (the events of that type) and tables of the
    ``Model`` by name. Without a row in any of them it has none either."""

    def mark(function):
        function.rows_from = sources
        return function

    return mark


def nothing_in(sources: Iterable[str], event_types: Collection[str] | None, tables: Mapping[str, object]) -> bool:
    """Whether none of ``sources`` has a row, as known without running a job: an event type
    that is not among ``event_types`` (those the events hold; ``None``: not counted) and a
    table of ``tables`` (name -> DataFrame or ``None``) that is ``spark.known_empty``."""
    for source in sources:
        if source in tables:
            if not known_empty(tables[source]):
                return False
        elif event_types is None or source in event_types:
            return False
    return True


def empty_without(frame, sources: Iterable[str], event_types: Collection[str] | None):
    """``frame``, or the empty relation of its schema when none of the event types ``sources``
    is among ``event_types`` (where counted): Spark's optimiser then plans away every join with
    it and whatever is computed only for it (``spark.empty_of``), instead of computing no row."""
    return empty_like(frame) if nothing_in(sources, event_types, {}) else frame
