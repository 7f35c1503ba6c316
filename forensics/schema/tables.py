"""The schemas of the model's tables (``forensics.model``): each table's columns, in order, with
their types, and ``MODEL_TABLES`` by table name."""

from __future__ import annotations

from pyspark.sql.types import ArrayType, BooleanType, IntegerType, LongType, StringType, StructField, StructType, TimestampType

from .events import CLIENT_ID, MEMBER_ID
from .findings import EVIDENCE_LINE, EVIDENCE_TYPE

_S, _I, _L, _T, _B = StringType(), IntegerType(), LongType(), TimestampType(), BooleanType()
_LIST = ArrayType(StringType())


def _table(*columns: tuple) -> StructType:
    """A table's schema from ``(name, type)`` columns, nullable unless a third item says ``False``."""
    return StructType([StructField(*column) for column in columns])


_ASSIGNMENT = StructType([StructField("member", _S), StructField("assigned_ts", _T)])
_MISSING_MEMBER = StructType([StructField(MEMBER_ID, _S), StructField(CLIENT_ID, _S)])

CLOCK_SKEW_SCHEMA = _table(
    ("host", _S),
    ("reference", _S),
    ("offset_ms", _L),
    ("uncertainty_ms", _L),
    ("samples", _L, False),
    ("corrected", _B),
    ("offset_min_ms", _L),
    ("offset_max_ms", _L),
)
OWNERSHIP_SCHEMA = _table(
    ("group_id", _S),
    ("topic", _S),
    ("partition", _I),
    ("task", _S),
    ("host", _S),
    ("client_id", _S),
    ("thread", _S),
    ("member_id", _S),
    ("instance_id", _S),
    ("generation", _I),
    ("from_ts", _T),
    ("to_ts", _T),
    ("ended", _S),
    ("source_file", _S),
    ("from_line", _L),
    ("to_line", _L),
    ("member", _S),
    ("member_basis", _S),
)
REBALANCES_SCHEMA = _table(
    ("group_id", _S),
    ("generation", _I),
    ("start_ts", _T),
    ("joined_ts", _T),
    ("end_ts", _T),
    ("duration_ms", _L),
    ("members", _LIST, False),
    ("member_ids", _LIST, False),
    ("instance_ids", _LIST, False),
    ("members_joined", _LIST, False),
    ("members_left", _LIST, False),
    ("leader", _S),
    ("assignments", ArrayType(_ASSIGNMENT, False), False),
    ("protocol", _S),
    ("protocol_type", _S),
    ("moved", _LIST, False),
    ("trigger", _S, False),
    ("start_file", _S),
    ("start_line", _L),
    ("trigger_source", _S, False),
    ("coordinator_host", _S),
    ("coordinator_partition", _S),
    ("coordinator_start_ts", _T),
    ("coordinator_stabilized_ts", _T),
    ("coordinator_assignment_ts", _T),
    ("coordinator_reason", _S),
    ("coordinator_member_count", _I),
    ("coordinator_leader", _S),
    ("coordinator_member_ids", _LIST),
    ("coordinator_joined", _LIST),
    ("coordinator_left", _LIST),
    ("coordinator_file", _S),
    ("coordinator_line", _L),
    ("missing_members", ArrayType(_MISSING_MEMBER, False), False),
    ("missing_member_count", _I),
)
RESTORES_SCHEMA = _table(
    ("group_id", _S),
    ("host", _S),
    ("thread", _S),
    ("generation", _I),
    ("task", _S, False),
    ("changelog", _S),
    ("topic", _S),
    ("partition", _I),
    ("checkpoint_found", _B),
    ("store_wiped", _B),
    ("reset_offset", _L),
    ("restore_from", _L),
    ("restore_to", _L),
    ("records_restored", _L),
    ("restore_completed", _B),
    ("restore_finished_ts", _T),
    ("last_checkpoint_offset", _L),
    ("last_checkpoint_ts", _T),
    ("last_checkpoint_thread", _S),
    ("last_checkpoint_evidence", EVIDENCE_LINE),
    ("opened_ts", _T),
    ("running_ts", _T),
    ("previous_host", _S),
    ("previous_thread", _S),
    ("previous_released_ts", _T),
    ("same_instance", _B),
    ("gap_ms", _L),
    ("source_file", _S),
    ("opened_line", _L),
    ("evidence", EVIDENCE_TYPE, False),
    ("previous_evidence", EVIDENCE_LINE),
    ("standby", _B),
)
COMMITS_SCHEMA = _table(
    ("group_id", _S),
    ("topic", _S),
    ("partition", _I),
    ("ts", _T),
    ("kind", _S),
    ("offset", _L),
    ("strategy", _S),
    ("member", _S),
    ("host", _S),
    ("client_id", _S),
    ("generation", _I),
    ("source", _S, False),
    ("source_file", _S),
    ("line", _L),
    ("strategy_line", _L),
    ("template_id", _S),
    ("sequence", _I, False),
    ("previous_offset", _L),
    ("owner", _S),
    ("owner_generation", _I),
    ("in_own_interval", _B),
    ("member_basis", _S),
)
SETTINGS_SCHEMA = _table(
    ("source_file", _S),
    ("host", _S),
    ("line", _L),
    ("ts", _T),
    ("config_kind", _S),
    ("client_id", _S),
    ("group_id", _S),
    ("application_id", _S),
    ("key", _S, False),
    ("value", _S, False),
)
MODEL_TABLES = {
    "clock_skew": CLOCK_SKEW_SCHEMA,
    "ownership": OWNERSHIP_SCHEMA,
    "rebalances": REBALANCES_SCHEMA,
    "restores": RESTORES_SCHEMA,
    "commits": COMMITS_SCHEMA,
    "settings": SETTINGS_SCHEMA,
}
"""The schema of each table ``build_model`` derives from the events, by its name in ``Model``
(what each table's function describes)."""
