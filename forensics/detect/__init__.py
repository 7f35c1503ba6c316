"""Detectors: pure functions from the modelled incident to findings in one schema.

Each detector is named after the incident class it finds (the names are a stable vocabulary,
used as-is in ``forensics analyze --json`` under ``findings``) and returns a DataFrame in
``schema.FINDINGS_SCHEMA``. ``detect`` runs them all but those none of whose sources has rows
(``sources.rows_from``): a producer's log has no poll timeouts to find, nor restores. Their
plans are made at once (``spark.concurrently``; see ``model.build_model``).
"""

from __future__ import annotations

from functools import partial

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from .. import contract as c
from .. import schema as s
from ..model import Model
from ..spark import concurrently
from ._finding import all_of
from .backward_commits import backward_commit
from .config import risky_config
from .group import fenced, poll_timeout, rebalance_storm, session_timeout
from .kafka4 import describe_mid_rebalance, double_ownership, epochless_offset_reset, phantom_lag, stale_epoch_commit, stuck_revocation
from .reprocessing import reprocessing
from .resets import out_of_range_reset, reset_to_latest_gap
from .restores import redundant_restore, skipped_restore

DETECTORS = {
    detector.__name__: detector
    for detector in (
        skipped_restore,
        redundant_restore,
        reset_to_latest_gap,
        out_of_range_reset,
        backward_commit,
        reprocessing,
        rebalance_storm,
        poll_timeout,
        session_timeout,
        fenced,
        risky_config,
        double_ownership,
        epochless_offset_reset,
        stale_epoch_commit,
        stuck_revocation,
        describe_mid_rebalance,
        phantom_lag,
    )
}
"""Detector name -> function(Model) -> findings DataFrame."""

FINDING_ORDER = (s.DETECTOR, s.GROUP_ID, s.TOPIC, s.PARTITION, s.TASK, s.OFFSET_FROM, "start", s.HOST, "member")


def detect(model: Model, detectors=None) -> DataFrame:
    """The findings of ``detectors`` (names; all by default) on ``model``, in one DataFrame."""
    names = list(DETECTORS) if detectors is None else list(detectors)
    unknown = [name for name in names if name not in DETECTORS]
    if unknown:
        raise ValueError(f"unknown detectors {unknown}; known: {sorted(DETECTORS)}")
    run = [partial(DETECTORS[name], model) for name in names if not model.nothing_in(DETECTORS[name].rows_from)]
    found = concurrently(model.events.sparkSession, *run)
    return all_of(model.events.sparkSession, found)


def ordered_findings(findings: DataFrame) -> DataFrame:
    """``findings`` in their stable order (``FINDING_ORDER``, nulls first), then by their first
    evidence line: undated findings (``start`` null) keep the order of their lines."""
    return findings.orderBy(*[F.col(name).asc_nulls_first() for name in FINDING_ORDER], F.col(s.EVIDENCE)[0].asc_nulls_first())


def finding_json(row: Row) -> dict:
    """A finding as a JSON-ready dict (``group_id`` is ``group``; times ISO 8601 UTC)."""
    return {c.json_name(k): c.json_value(v) for k, v in row.asDict(recursive=True).items()}


def findings_json(findings: DataFrame) -> list[dict]:
    """Findings as JSON-ready dicts in their stable order."""
    return [finding_json(row) for row in ordered_findings(findings).collect()]


__all__ = ["DETECTORS", "detect", "finding_json", "findings_json", "ordered_findings"]
