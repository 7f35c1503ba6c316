"""Shared test helpers: ingest one fixture and look at its accounting and records."""

from __future__ import annotations

from pathlib import Path

from forensics.ingest import Ingested, ingest


def ingest_paths(spark, *paths: Path | str, **options) -> Ingested:
    return ingest(spark, [str(p) for p in paths], **options)


def buckets(entry: dict) -> dict:
    """The four accounting buckets (and lines) of an inputs entry or the totals."""
    return {k: entry[k] for k in ("lines", "records", "continuations", "irrelevant", "unparsed")}


def records_by_line(result: Ingested) -> dict[int, dict]:
    return {row["line"]: row.asDict() for row in result.records.collect()}
