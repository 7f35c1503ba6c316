"""Schemas and vocabularies shared by every stage, each defined once.

``RECORDS_SCHEMA``: one row per Kafka log record (a first line plus its continuation lines),
the output of ingest and the input of the event parser.
``EVENTS_SCHEMA``: one row per typed event (a record that matched a catalogue template),
the input of the model. ``EVENT_TYPES`` is the vocabulary of ``event_type``.
"""

from __future__ import annotations

from pyspark.sql.types import ArrayType, BooleanType, DataType, IntegerType, LongType, StringType, StructField, StructType, TimestampType


def as_ddl(data_type: DataType) -> str:
    """``data_type`` as DDL text, for ``Column.cast``: PySpark sends a type object to the JVM as
    JSON to be parsed, about a dozen py4j calls a cast, and a DDL text in one (a detector's
    ``findings`` casts all 20 finding fields)."""
    return data_type.simpleString()


# Record columns (provenance first).
SOURCE_FILE = "source_file"
HOST = "host"
LINE = "line"
LINE_END = "line_end"
LAYOUT = "layout"
TS = "ts"
LEVEL = "level"
LOGGER = "logger"
THREAD = "thread"
CLIENT = "client"
MESSAGE = "message"

RECORDS_SCHEMA = StructType(
    [
        StructField(SOURCE_FILE, StringType(), False),
        StructField(HOST, StringType(), True),
        StructField(LINE, LongType(), False),
        StructField(LINE_END, LongType(), False),
        StructField(LAYOUT, StringType(), False),
        StructField(TS, TimestampType(), True),
        StructField(LEVEL, StringType(), True),
        StructField(LOGGER, StringType(), True),
        StructField(THREAD, StringType(), True),
        StructField(CLIENT, StringType(), True),
        StructField(MESSAGE, StringType(), True),
    ]
)

# Accounting: every input line lands in exactly one bucket.
RECORDS = "records"
CONTINUATIONS = "continuations"
IRRELEVANT = "irrelevant"
UNPARSED = "unparsed"
BUCKETS = (RECORDS, CONTINUATIONS, IRRELEVANT, UNPARSED)

# Reasons a line was not understood.
UNKNOWN_LAYOUT = "unknown layout"
NO_RECORD_TO_CONTINUE = "continuation with no record before it"
BAD_TIMESTAMP = "bad timestamp"
BINARY = "binary data"
UNDECODABLE = "undecodable bytes (not UTF-8)"
MALFORMED_JSON = "malformed JSON record"
UNPARSED_REASONS = (UNKNOWN_LAYOUT, NO_RECORD_TO_CONTINUE, BAD_TIMESTAMP, BINARY, UNDECODABLE, MALFORMED_JSON)


class SchemaError(ValueError):
    """A DataFrame handed to a stage lacks columns that stage needs."""


def validate_columns(df, required, stage: str) -> None:
    """Raise ``SchemaError`` naming the missing columns when ``df`` lacks any of ``required``."""
    missing = [name for name in required if name not in df.columns]
    if missing:
        raise SchemaError(f"{stage} needs columns {missing}; got {df.columns}")


# Event types, namespaced with colons. The catalogue may use only these.
EVENT_TYPES = (
    # consumer group membership (classic and KIP-848 protocols)
    "consumer:version",
    "consumer:subscribed",
    "consumer:group:coordinator_discovered",
    "consumer:group:coordinator_unavailable",
    "consumer:group:join_started",
    "consumer:group:join_requested",
    "consumer:group:join_failed",
    "consumer:group:joined",
    "consumer:group:sync_failed",
    "consumer:group:synced",
    "consumer:group:assignment_finished",
    "consumer:group:assignment_received",
    "consumer:group:assigned",
    "consumer:group:revoked",
    "consumer:group:lost",
    "consumer:group:generation_reset",
    "consumer:group:leave",
    "consumer:group:poll_timeout",
    "consumer:group:session_timeout",
    "consumer:group:heartbeat_failed",
    "consumer:group:fenced",
    "consumer:group:member_state",
    "consumer:group:assignment_invalid",
    "consumer:group:ownership_conflict",
    "consumer:group:listener_failed",
    # offsets and positions
    "consumer:offset:committed",
    "consumer:offset:commit_failed",
    "consumer:offset:commit_requested",
    "consumer:offset:no_committed",
    "consumer:offset:set_committed",
    "consumer:offset:committed_ignored",
    "consumer:offset:seek",
    "consumer:offset:seek_strategy",
    "consumer:offset:reset",
    "consumer:offset:out_of_range",
    "consumer:offset:truncation",
    # client configuration blocks (ConsumerConfig values: ...)
    "config:block",
    # Kafka Streams
    "streams:client:state",
    "streams:thread:state",
    "streams:assignment",
    "streams:task:created",
    "streams:task:initialized",
    "streams:task:restored",
    "streams:task:running",
    "streams:task:suspended",
    "streams:task:closed_clean",
    "streams:task:closed_dirty",
    "streams:task:recycled",
    "streams:task:migrated",
    "streams:checkpoint:loaded",
    "streams:checkpoint:missing",
    "streams:checkpoint:written",
    "streams:checkpoint:write_failed",
    "streams:checkpoint:unmatched",
    "streams:store:wiped",
    "streams:restore:start",
    "streams:restore:progress",
    "streams:restore:finished",
    "streams:reset_policy",
    "streams:revocation:finished",
    "streams:thread:summary",
    "streams:process_id:created",
    "streams:process_id:loaded",
    "streams:group:status",
    # producer and transactions
    "producer:fenced",
    "producer:epoch_bumped",
    "producer:sequence:out_of_order",
    "producer:transaction:aborted",
    "producer:transaction:error_state",
    # group coordinator (broker): classic generations and KIP-848 group epochs, as the broker states them
    "coordinator:group:preparing_rebalance",
    "coordinator:group:stabilized",
    "coordinator:group:assignment_received",
    "coordinator:group:empty",
    "coordinator:group:member_joined",
    "coordinator:group:member_failed",
    "coordinator:group:member_left",
    "coordinator:group:member_fenced",
    "coordinator:group:static_member_replaced",
    "coordinator:group:epoch_bumped",
    "coordinator:group:target_assignment",
    "coordinator:group:member_assignment",
    "coordinator:offsets:expired",
    "coordinator:partition:loaded",
)


def event_types_of(prefix: str) -> tuple[str, ...]:
    """The event types whose name starts with ``prefix`` (``"streams:"``, ``"coordinator:group:"``)."""
    return tuple(event_type for event_type in EVENT_TYPES if event_type.startswith(prefix))


# Event columns beyond the record's provenance.
EVENT_TYPE = "event_type"
TEMPLATE_ID = "template_id"
KAFKA_VERSIONS = "kafka_versions"
CLIENT_ID = "client_id"
GROUP_ID = "group_id"
INSTANCE_ID = "instance_id"
MEMBER_ID = "member_id"
GENERATION = "generation"
TASK = "task"
TOPIC = "topic"
PARTITION = "partition"
OFFSET = "offset"
PARTITIONS = "partitions"

_S, _I, _L, _LIST = StringType(), IntegerType(), LongType(), ArrayType(StringType())

EVENT_FIELDS = StructType(
    [
        StructField(CLIENT_ID, _S),
        StructField(GROUP_ID, _S),
        StructField(INSTANCE_ID, _S),
        StructField(MEMBER_ID, _S),
        StructField(GENERATION, _I),
        StructField("protocol", _S),
        StructField("leader_id", _S),
        StructField("transactional_id", _S),
        StructField("state_updater", _S),
        StructField(TASK, _S),
        StructField("store", _S),
        StructField("changelog", _S),
        StructField(TOPIC, _S),
        StructField(PARTITION, _I),
        StructField(OFFSET, _L),
        StructField("offset_epoch", _I),
        StructField("end_offset", _L),
        StructField("records", _L),
        StructField(PARTITIONS, _LIST),
        StructField("added_partitions", _LIST),
        StructField("revoked_partitions", _LIST),
        StructField("owned_partitions", _LIST),
        StructField("strategy", _S),
        StructField("reason", _S),
        StructField("error", _S),
        StructField("state_from", _S),
        StructField("state_to", _S),
        StructField("coordinator", _S),
        StructField("producer_id", _L),
        StructField("producer_epoch", _I),
        StructField("epoch", _I),
        StructField("config_kind", _S),
        StructField("member_count", _I),
        StructField("task_role", _S),
    ]
)
"""Typed fields an event may carry (null where its line does not say). On the coordinator's lines
``generation`` is what the line names (``old generation N`` of ``preparing_rebalance`` leads to
N+1), ``member_count`` the members it counts and ``coordinator`` its ``__consumer_offsets-P``.
``task_role`` is ``standby`` or ``active`` where a Streams line's task prefix says which
(``standby-task [0_1]`` against ``task``/``stream-task [0_1]``)."""

EVENTS_SCHEMA = StructType(
    [
        StructField(EVENT_TYPE, _S, False),
        StructField(TEMPLATE_ID, _S, False),
        StructField(KAFKA_VERSIONS, _S, True),
        *[field for field in RECORDS_SCHEMA.fields if field.name != MESSAGE],
        *EVENT_FIELDS.fields,
        StructField(MESSAGE, _S, True),
    ]
)
"""One row per typed event: type and template, the record's provenance, typed fields, text.

``thread`` is the Streams thread (from the ``stream-thread [..]`` prefix) where the line
names one, else the layout's thread; ``partitions`` lists are ``topic-N`` strings.
"""

CATALOGUE_FIELDS = (
    "generation",
    "member_id",
    "protocol",
    "leader_id",
    "instance_id",
    "group_id",
    "client_id",
    "partitions",
    "added_partitions",
    "revoked_partitions",
    "owned_partitions",
    "topic_partition",
    "topic",
    "partition",
    "offset",
    "offset_epoch",
    "end_offset",
    "records",
    "strategy",
    "reason",
    "error",
    "state_from",
    "state_to",
    "task",
    "thread",
    "store",
    "changelog",
    "coordinator",
    "producer_id",
    "producer_epoch",
    "transactional_id",
    "epoch",
    "config_kind",
    "member_count",
)
"""Names a catalogue pattern may capture; each maps onto an event column (``topic_partition``
fills ``topic`` and ``partition``)."""

# Accounting of records once parsed.
EVENTS = "events"
UNRECOGNISED_KAFKA = "unrecognised_kafka"

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

_T, _B = TimestampType(), BooleanType()

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


# Findings: the detectors' one output schema (forensics.detect). Stable JSON field names.
DETECTOR = "detector"
SEVERITY = "severity"
VERDICT = "verdict"
OFFSET_FROM = "offset_from"
OFFSET_TO = "offset_to"
EVIDENCE = "evidence"

VERDICTS = ("loss", "duplication", "delay", "expected")
"""``loss``: records never processed; ``duplication``: records processed twice; ``delay``: the
group stood still or redid work; ``expected``: allowed by the configured delivery guarantee
(or a setting that makes an incident possible), still quantified where it has a range."""
SEVERITIES = ("critical", "warning", "info")

EVIDENCE_LINE = StructType([StructField("file", _S, True), StructField("line", _L, True)])
"""One line of evidence: its file and 1-based line number."""
EVIDENCE_TYPE = ArrayType(EVIDENCE_LINE)

MISSING = "missing"
MISSING_TYPE = StructType([StructField("what", _S), StructField("commands", ArrayType(_S))])
"""What an unmeasured finding lacks (``what``: the offsets or the log end that would measure its
range) and the commands that show it (``kafka-consumer-groups --describe``, ``kafka-dump-log
--offsets-decoder``, ``kafka-get-offsets``), brokers named ``"$BOOTSTRAP_SERVERS"``."""
MEMBER_BASIS = "member_basis"
MEMBER_BASES = ("client id", "host", "file and thread")
"""How a consumer line's member is named: its client id (logged, or inside its member id, its
thread's, its file's), else, where its file names none (kafka-python before 2.x at INFO), its
host, or its file and thread where the host has several such files."""

FINDINGS_SCHEMA = StructType(
    [
        StructField(DETECTOR, _S, False),
        StructField(SEVERITY, _S, False),
        StructField(VERDICT, _S, False),
        StructField(GROUP_ID, _S, True),
        StructField(TOPIC, _S, True),
        StructField(PARTITION, _I, True),
        StructField(TASK, _S, True),
        StructField(OFFSET_FROM, _L, True),
        StructField(OFFSET_TO, _L, True),
        StructField(RECORDS, _L, True),
        StructField("exact", _B, True),
        StructField("classification", _S, True),
        StructField(HOST, _S, True),
        StructField("member", _S, True),
        StructField("start", _T, True),
        StructField("end", _T, True),
        StructField(EVIDENCE, EVIDENCE_TYPE, False),
        StructField("explanation", _S, False),
        StructField("kafka_reference", _S, False),
        StructField("remedy", _S, False),
        StructField(MISSING, MISSING_TYPE, True),
        StructField(MEMBER_BASIS, _S, True),
    ]
)
"""One row per finding. ``offset_from``/``offset_to`` is the half-open range affected and
``records`` its size; ``exact`` true when the range is measured, false when it is only a bound
or, with the range null, unmeasured (the logs prove the event, not its range): ``missing`` then
says what would measure it; ``evidence`` the file and line of every log or dump line that
proves it; ``member_basis`` how ``member`` was named (``MEMBER_BASES``). In the JSON
``group_id`` is ``group``."""


# The model's tables (forensics.model): each table's columns, in order, with their types.
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
