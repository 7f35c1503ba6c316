"""Small shared helpers: plugin tables and literal lookup maps."""

from __future__ import annotations

from types import ModuleType
from typing import Mapping

from pyspark.sql import Column
from pyspark.sql import functions as F


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
