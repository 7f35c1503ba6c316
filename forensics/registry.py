"""Small shared helpers: plugin tables, literal lookup maps, the next value in an order, the
value of the earliest / latest row with ties broken, the first value stated."""

from __future__ import annotations

from types import ModuleType
from typing import Mapping

from pyspark.sql import Column, Window
from pyspark.sql import functions as F

from . import schema as s


def registry(attribute: str, *modules: ModuleType) -> dict[str, ModuleType]:
    """``{module.<attribute>: module}`` in the given order; a repeated name raises."""
    table: dict[str, ModuleType] = {}
    for module in modules:
        name = getattr(module, attribute)
        if name in table:
            raise ValueError(f"duplicate {attribute} {name!r} in {module.__name__} and {table[name].__name__}")
        table[name] = module
    return table


def literal_map(mapping: Mapping[str, object], value_type: str = "string") -> Column:
    """A literal ``map<string, value_type>`` column (for small tables: one entry per file, month...)."""
    entries = F.create_map(*[F.lit(x) for item in mapping.items() for x in item])
    return entries.cast(f"map<string,{value_type}>")


def next_value(value: Column, partition: list, order: list[str], after_current: bool = False) -> Column:
    """The first non-null ``value`` at or (``after_current``) after each row, in ``order`` within
    ``partition``: ``first(value, ignorenulls)`` over the rows that follow, computed as the last
    non-null value of a running frame in the reverse order. Spark recomputes a frame that ends at
    ``unboundedFollowing`` for every row (O(n²) in a partition's rows, one file's events); the
    running frame is one pass."""
    reverse = Window.partitionBy(*partition).orderBy(*[F.col(name).desc() for name in order])
    return F.last(value, ignorenulls=True).over(reverse.rowsBetween(Window.unboundedPreceding, -1 if after_current else Window.currentRow))


EVIDENCE_ORDER = (s.SOURCE_FILE, s.LINE)


def earliest(value: Column | str, order: Column | str, *ties: Column | str) -> Column:
    """Aggregate: ``value`` of the row with the least ``order`` (rows where it is null left
    out), ties broken by ``ties`` (default: the line's file and number). ``min_by`` alone takes
    whichever tied row the aggregation meets first, so two hosts logging in the same
    millisecond gave plan-dependent evidence."""
    return F.min_by(value, _order_key(order, ties))


def latest(value: Column | str, order: Column | str, *ties: Column | str) -> Column:
    """Aggregate: ``value`` of the row with the greatest ``order``, ties broken as ``earliest``'s
    (the greatest of ``ties`` wins)."""
    return F.max_by(value, _order_key(order, ties))


def first_stated(value: Column | str, order: Column | str = s.TS, *ties: Column | str) -> Column:
    """Aggregate: the first non-null ``value`` in log order (``order``, then ``ties``: by default the
    line's file and number). ``first(value, ignorenulls=True)`` takes the first non-null value the
    aggregation meets, which depends on the partitioning (a small incident in one partition and a
    large one in many could name different members, leaders or protocols)."""
    value = F.col(value) if isinstance(value, str) else value
    order = F.col(order) if isinstance(order, str) else order
    return F.min_by(value, F.when(value.isNotNull(), F.struct(order, *(ties or EVIDENCE_ORDER))))


def _order_key(order: Column | str, ties: tuple) -> Column:
    order = F.col(order) if isinstance(order, str) else order
    return F.when(order.isNotNull(), F.struct(order, *(ties or EVIDENCE_ORDER)))
