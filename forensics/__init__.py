"""Kafka rebalance forensics: reconstruct consumer-group rebalances and their damage from logs.

Public API, by stage::

    # session
    get_session
    # ingest
    ingest, Ingested, resolve_inputs
    # analyze (the JSON contract behind ``forensics analyze``)
    analyze
"""

from __future__ import annotations

__version__ = "0.1.0"

# session
from .spark import get_session

# ingest
from .ingest import Ingested, ingest, resolve_inputs

# analyze
from .analyze import analyze

from .errors import ForensicsError

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
