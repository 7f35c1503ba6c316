"""The analysis behind ``forensics analyze``: one function from paths to the JSON contract.

The JSON's field names are a stable contract (``inputs``, ``accounting``, ``rebalances``,
``findings``, ...): later stages add fields, never rename or drop them.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from pyspark.sql import SparkSession

from . import __version__
from .ingest import Ingested, ingest, resolve_inputs


def analyze(
    spark: SparkSession,
    paths: Iterable[str] = (),
    offsets: Iterable[str] = (),
    tz: str = "UTC",
    hosts: Mapping[str, str] | None = None,
    tz_by_source: Mapping[str, str] | None = None,
) -> dict:
    """Analyse log files ``paths`` and offset dumps ``offsets``; return the JSON-ready result."""
    paths, offsets = list(paths), list(offsets)
    dumps = resolve_inputs(offsets) if offsets else []
    if paths:
        ingested = ingest(spark, paths, hosts=hosts, tz=tz, tz_by_source=tz_by_source)
    else:
        ingested = Ingested([], _empty_accounting(), spark.createDataFrame([], "line long"))
    try:
        return {
            "tool_version": __version__,
            "spark": {"master": _master(spark), "version": spark.version},
            "inputs": [{"kind": "log", **entry} for entry in ingested.inputs]
            + [{"kind": "offsets", "path": d.path, "host": d.host, "problem": d.problem} for d in dumps],
            "accounting": ingested.accounting,
            "unparsed_samples": ingested.unparsed_samples,
            "rebalances": [],
            "findings": [],
        }
    finally:
        ingested.release()


def _empty_accounting() -> dict:
    return {
        "lines": 0, "records": 0, "continuations": 0, "irrelevant": 0, "unparsed": 0,
        "unparsed_by_reason": {}, "files": 0, "files_with_problems": 0,
    }


def _master(spark: SparkSession) -> str:
    try:
        return spark.conf.get("spark.master")
    except Exception:  # Spark Connect sessions may not expose it
        return "spark-connect"
