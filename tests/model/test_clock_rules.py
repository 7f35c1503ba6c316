"""Clock offset estimation rules on tiny event tables (no log files needed)."""

from __future__ import annotations

from datetime import datetime, timedelta

from forensics.model.clock import clock_skew

SCENARIO = None
T0 = datetime(2024, 5, 14, 10, 0, 0)


def joins(spark, rows):
    """``(group, generation, host, seconds after T0)`` -> joined events."""
    data = [("consumer:group:joined", host, group, gen, T0 + timedelta(seconds=sec)) for group, gen, host, sec in rows]
    return spark.createDataFrame(data, "event_type string, host string, group_id string, generation int, ts timestamp")


def skew_of(spark, rows) -> dict:
    return {r["host"]: r.asDict() for r in clock_skew(joins(spark, rows)).collect()}


def test_consistent_offset_over_generations_is_corrected(spark):
    rows = [("g", n, "a", 10.0 * n) for n in (1, 2, 3)] + [("g", n, "b", 10.0 * n + 30.004) for n in (1, 2, 3)]
    b = skew_of(spark, rows)["b"]
    assert (b["reference"], b["offset_ms"], b["samples"], b["corrected"]) == ("a", 30004, 3, True)
    assert b["uncertainty_ms"] == 20  # no spread: the protocol's own jitter floor


def test_contradicting_generations_are_reported_not_corrected(spark):
    rows = [("g1", 1, "a", 0.0), ("g1", 1, "b", -0.008), ("g2", 5, "a", 100.0), ("g2", 5, "b", 130.002)]
    b = skew_of(spark, rows)["b"]
    assert b["uncertainty_ms"] > 10_000 and b["corrected"] is False


def test_small_offsets_are_not_corrected(spark):
    b = skew_of(spark, [("g", 1, "a", 0.0), ("g", 1, "b", 0.120)])["b"]
    assert (b["offset_ms"], b["corrected"]) == (120, False)


def test_host_without_a_shared_generation_has_no_estimate(spark):
    c = skew_of(spark, [("g", 1, "a", 0.0), ("g", 1, "b", 0.0), ("h", 9, "c", 50.0)])["c"]
    assert (c["offset_ms"], c["samples"], c["corrected"]) == (None, 0, False)
