"""``EVENTS_SCHEMA``: one row per typed event (a record that matched a catalogue template), the
input of the model. ``EVENT_TYPES`` is the vocabulary of ``event_type``, ``CATALOGUE_FIELDS``
what a catalogue pattern may capture."""

from __future__ import annotations

from pyspark.sql.types import ArrayType, IntegerType, LongType, StringType, StructField, StructType

from .records import MESSAGE, RECORDS_SCHEMA

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
