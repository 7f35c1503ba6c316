"""``OFFSETS_SCHEMA``: one row per line of a Kafka CLI offset dump (``forensics.offsets``), and
the kinds of row."""

from __future__ import annotations

from pyspark.sql.types import BooleanType, IntegerType, LongType, StringType, StructField, StructType, TimestampType

from .events import CLIENT_ID, GROUP_ID, INSTANCE_ID, PARTITION, TOPIC
from .records import HOST, LINE, SOURCE_FILE

# Offsets table: rows of Kafka CLI offset dumps (forensics.offsets). Column names:
SNAPSHOT_TS = "snapshot_ts"
KIND = "kind"
CURRENT_OFFSET = "current_offset"
LOG_END_OFFSET = "log_end_offset"
LAG = "lag"
LEADER_EPOCH = "leader_epoch"
CONSUMER_ID = "consumer_id"
MEMBER_ASSIGNMENT = "member_assignment"
COORDINATOR = "coordinator"
STATE = "state"
ASSIGNMENT_STRATEGY = "assignment_strategy"
MEMBERS = "members"
COMMIT_TS = "commit_ts"
EXPIRE_TS = "expire_ts"
METADATA = "metadata"
BASE_OFFSET = "base_offset"
LAST_OFFSET = "last_offset"
PRODUCER_ID = "producer_id"
PRODUCER_EPOCH = "producer_epoch"
IS_TRANSACTIONAL = "is_transactional"
IS_CONTROL = "is_control"
RECORD_COUNT = "record_count"

_S, _I, _L, _T, _B = StringType(), IntegerType(), LongType(), TimestampType(), BooleanType()

OFFSETS_SCHEMA = StructType(
    [
        StructField(SOURCE_FILE, _S, False),
        StructField(LINE, _L, False),
        StructField(SNAPSHOT_TS, _T, True),
        StructField(KIND, _S, False),
        StructField(GROUP_ID, _S, True),
        StructField(TOPIC, _S, True),
        StructField(PARTITION, _I, True),
        StructField(CURRENT_OFFSET, _L, True),
        StructField(LOG_END_OFFSET, _L, True),
        StructField(LAG, _L, True),
        StructField(LEADER_EPOCH, _I, True),
        StructField(CONSUMER_ID, _S, True),
        StructField(HOST, _S, True),
        StructField(CLIENT_ID, _S, True),
        StructField(INSTANCE_ID, _S, True),
        StructField(MEMBER_ASSIGNMENT, _S, True),
        StructField(COORDINATOR, _S, True),
        StructField(STATE, _S, True),
        StructField(ASSIGNMENT_STRATEGY, _S, True),
        StructField(MEMBERS, _I, True),
        StructField(COMMIT_TS, _T, True),
        StructField(EXPIRE_TS, _T, True),
        StructField(METADATA, _S, True),
        StructField(BASE_OFFSET, _L, True),
        StructField(LAST_OFFSET, _L, True),
        StructField(PRODUCER_ID, _L, True),
        StructField(PRODUCER_EPOCH, _I, True),
        StructField(IS_TRANSACTIONAL, _B, True),
        StructField(IS_CONTROL, _B, True),
        StructField(RECORD_COUNT, _I, True),
    ]
)

# Row kinds (values of the ``kind`` column).
DESCRIBE_OFFSETS = "describe_offsets"
DESCRIBE_MEMBERS = "describe_members"
DESCRIBE_STATE = "describe_state"
CONSUMER_OFFSETS_COMMIT = "consumer_offsets_commit"
LOG_OFFSETS = "log_offsets"
DUMP_LOG_BATCH = "dump_log_batch"
ROW_KINDS = (DESCRIBE_OFFSETS, DESCRIBE_MEMBERS, DESCRIBE_STATE, CONSUMER_OFFSETS_COMMIT, LOG_OFFSETS, DUMP_LOG_BATCH)
