"""Detector names, without importing Spark (``forensics.detect`` needs pyspark)."""

DETECTOR_NAMES = (
    "skipped_restore",
    "redundant_restore",
    "reset_to_latest_gap",
    "out_of_range_reset",
    "backward_commit",
    "reprocessing",
    "rebalance_storm",
    "poll_timeout",
    "session_timeout",
    "fenced",
    "risky_config",
)
"""The stable detector vocabulary of ``forensics.detect.DETECTORS``, in its order."""
