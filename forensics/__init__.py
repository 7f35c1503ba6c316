"""Kafka rebalance forensics: reconstruct consumer-group rebalances and their damage from logs.

Public API, by stage::

    # session
    get_session
    # ingest
    ingest, Ingested, resolve_inputs
    # analyze (the JSON contract behind ``forensics analyze``)
    analyze

The stages need pyspark, so they are imported on first use: ``import forensics``,
``forensics --help`` and a report kernel reading a saved ``analysis_json`` never load it.
"""

from __future__ import annotations

import importlib
import sys
import types

from .errors import ForensicsError
from .package import __version__ as __version__

_LAZY = {
    # session
    "get_session": "spark",
    # ingest
    "Ingested": "ingest",
    "ingest": "ingest",
    "resolve_inputs": "ingest",
    # analyze
    "analyze": "analyze",
}
"""Public name -> the submodule that defines it."""

__all__ = [
    # session
    "get_session",
    # ingest
    "Ingested",
    "ingest",
    "resolve_inputs",
    # analyze
    "analyze",
    # errors
    "ForensicsError",
]


def __getattr__(name: str):
    """Import a public name from its submodule on first use (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


class _Package(types.ModuleType):
    """Keeps ``forensics.analyze`` and ``forensics.ingest`` the public functions.

    The import system binds each submodule it loads as an attribute of its package; these two
    functions share their submodule's name, so a loaded submodule is replaced by its function.
    """

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, types.ModuleType) and _LAZY.get(name) == name:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
