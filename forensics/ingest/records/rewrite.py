"""Rewrites of heads before they are split: helper columns, then columns that replace the head's own."""

from __future__ import annotations

from typing import Mapping

from pyspark.sql import Column, DataFrame

Rewrite = tuple[tuple[tuple[str, Column], ...], Mapping[str, Column]]
"""Columns added to a frame one after another, then columns that replace its own (``rewritten``)."""


def rewritten(frame: DataFrame, rewrite: Rewrite) -> DataFrame:
    """``frame`` with a rewrite's helper columns added, then its columns as they were, each one
    the rewrite replaces in its place."""
    added, replaced = rewrite
    columns = frame.columns
    for name, column in added:
        frame = frame.withColumn(name, column)
    return frame.select(*[replaced[c].alias(c) if c in replaced else c for c in columns])
