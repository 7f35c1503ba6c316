"""The vocabulary and the serializer of the JSON result (``forensics analyze --json``), with no
Spark in it: the report side reads the JSON with these names alone.

The field names are a stable contract: add, never rename or drop.
"""

from __future__ import annotations

GROUP = "group"
"""The JSON's name of the model tables' ``group_id`` (``rebalances``, ``ownership``, ``findings``)."""

# The kinds of a partition's commit history (``model.commits.kind``, ``commits[].kind``): what
# the consumer logged about its committed offset or position, and the offset dumps' rows.
COMMIT = "commit"
COMMIT_FAILED = "commit failed"
RESET = "reset"
OUT_OF_RANGE = "out of range"
NO_COMMITTED_OFFSET = "no committed offset"
POSITION_FROM_COMMIT = "position from commit"
SEEK = "seek"
DUMP_COMMIT = "dump commit"
DUMP_SNAPSHOT = "dump snapshot"
DUMPED_KINDS = (DUMP_COMMIT, DUMP_SNAPSHOT)
"""Kinds of committed offsets read from offset dumps, not logged by the consumer."""
COMMITTED_KINDS = (COMMIT, *DUMPED_KINDS)
"""Kinds that state a committed offset."""
REPOSITIONING_KINDS = (RESET, OUT_OF_RANGE, NO_COMMITTED_OFFSET, SEEK)
"""Kinds that move the consumer's position away from its committed offset."""


def json_value(value):
    """A value as the JSON holds it: times in ISO 8601, UTC, to the millisecond; the rest as is."""
    return value.isoformat(timespec="milliseconds") + "Z" if hasattr(value, "isoformat") else value


def json_name(field: str) -> str:
    """A model column's name in the JSON (``group_id`` is ``group``)."""
    return GROUP if field == "group_id" else field
