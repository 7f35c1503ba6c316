"""Kafka's log-context prefixes: who logged a message, split off before template matching.

``[Consumer instanceId=I, clientId=C, groupId=G] `` (instanceId with static membership, 2.3+),
``[Worker clientId=C, groupId=G] `` (a Kafka Connect worker in its cluster's group),
``[Producer clientId=C, transactionalId=T] ``, ``stream-client [C] `` (no space in 1.0),
``stream-thread [T] `` then ``task|stream-task|standby-task [0_1] `` (``standby`` set for a
standby task's, whose log context StandbyTask and StandbyTaskCreator open so since 2.6), and
``state-updater [U] `` (4.x restoration). 2.0/2.1 lines may lack the space after the thread.
The group coordinator's (broker) prefixes: ``[GroupCoordinator 1]: `` and ``[GroupMetadataManager
brokerId=1] `` (Scala coordinator, 1.0-3.9), ``[GroupCoordinator id=1 topic=__consumer_offsets
partition=12] `` (the new coordinator's shards, 3.6+; ``coordinator_topic``/``coordinator_partition``).
Other bracketed fields before the prefix are skipped. A librdkafka line written by an application's
logger (``MAXPOLL [rdkafka#consumer-1] [thrd:main]: ``) gives its ``facility`` and its handle
name as ``client_id``.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..layouts._common import CLIENT_KINDS, KAFKA_OPENINGS, SEP, WORKER_KIND, contains_any
from ..layouts.librdkafka import DECORATED, LOG_CALLBACK

PREFIX_FIELDS = (
    "prefix_kind",
    "instance_id",
    "client_id",
    "group_id",
    "transactional_id",
    "stream_client",
    "stream_thread",
    "state_updater",
    "standby",
    "task",
    "coordinator_topic",
    "coordinator_partition",
    "rest",
)
_NOT = r"[^,\]\x01]*"
_KINDS = "|".join((*CLIENT_KINDS, WORKER_KIND))
_EXTRA = rf"(?:(?:\[(?!(?:{_KINDS}) )[^\]\x01]*\] ?)+(?={KAFKA_OPENINGS}))?"
"""Bracketed fields a team's layout puts before Kafka's prefix (``[KafkaConsumer] [segment-7] ``)."""
_BROKER = (
    r"(?:\[GroupCoordinator \d+\]: |\[GroupMetadataManager brokerId=\d+\] "
    r"|\[GroupCoordinator id=\d+(?: topic=([^\s\]\x01]+) partition=(\d+))?\] )?"
)
"""The group coordinator's prefixes (broker logs); the new coordinator's names its partition."""
PREFIX = (
    rf"(?s)^{_EXTRA}(?:\[({_KINDS}) "
    rf"(?:instanceId=({_NOT}), )?clientId=({_NOT})(?:, groupId=({_NOT}))?(?:, transactionalId=([^\]\x01]*))?\] ?)?"
    r"(?:stream-client \[([^\]\x01]*)\] ?)?"
    r"(?:(?:global-)?stream-thread \[([^\]\x01]*)\] ?)?"
    r"(?:state-updater \[([^\]\x01]*)\] ?)?"
    r"(?:(?:task|stream-task|(standby)-task) \[([^\]\x01]*)\] ?)?"
    rf"{_BROKER}(.*)$"
)
_TEMPLATE = SEP.join(f"${n}" for n in range(1, len(PREFIX_FIELDS) + 1))
_CALLBACK = rf"(?s)^(?:{LOG_CALLBACK})?(.*)$"
"""librdkafka's facility and handle before the message, when an application's logger wrote it."""
_DECORATED_CALLBACK = rf"(?s)^(?:{LOG_CALLBACK}|{DECORATED})?(.*)$"
"""``_CALLBACK`` or, where none of its forms opens the message, ``librdkafka.DECORATED``."""


def split_prefix(message: Column) -> Column:
    """Struct of ``PREFIX_FIELDS`` (empty strings become null) and ``facility``; ``rest`` is the
    message proper."""
    callback = _callback(message)
    return _prefix_struct(callback, _parts(callback[2]))


def with_split_prefix(frame: DataFrame, message: Column, name: str) -> DataFrame:
    """``frame`` with the column ``name``: ``split_prefix`` of ``message``, each of its two
    regexes run once per row (in one projection Spark would evaluate them again for several
    fields of the struct)."""
    callback, parts = f"{name}_callback", f"{name}_parts"
    split = frame.withColumn(callback, _callback(message)).withColumn(parts, _parts(F.col(callback)[2]))
    return split.withColumn(name, _prefix_struct(F.col(callback), F.col(parts))).drop(callback, parts)


def _callback(message: Column) -> Column:
    """[librdkafka's facility, its handle, the rest of the message]; the facility is ``""``, not
    null, where a librdkafka line names none (``librdkafka.DECORATED``, rdkafka-ruby's): the record's
    logger then is the application's, which no template of librdkafka's lines names. Only a
    message that names a librdkafka handle or thread (``CALLBACK_MARKS``) goes through the
    regexes; the rest, nearly every Java client's line, is the rest of the message as it is,
    with no regex run over it."""
    return F.when(contains_any(message, CALLBACK_MARKS), _callback_split(message)).otherwise(
        F.array(F.lit(None).cast("string"), F.lit(""), message)
    )


CALLBACK_MARKS = ("#consumer-", "#producer-", "[thrd:")
"""What every opening ``_CALLBACK`` or ``_DECORATED_CALLBACK`` reads holds: a librdkafka handle
name (``client.id#consumer-N``) or its thread (``[thrd:main]: ``)."""


def _callback_split(message: Column) -> Column:
    """``_callback`` of a message that may open with librdkafka's facility, handle or thread."""
    split = F.split(
        F.when(message.contains("[thrd:"), F.regexp_replace(message, _DECORATED_CALLBACK, f"$1$3$5{SEP}$2$4$6$7{SEP}$9{SEP}$8")).otherwise(
            F.regexp_replace(message, _CALLBACK, f"$1$3$5{SEP}$2$4$6{SEP}$7")
        ),
        SEP,
        4,
    )
    opened = F.length(split[2]) < F.length(message)
    quoted = F.coalesce(F.get(split, 3) == '"', F.lit(False))  # a fourth field only where DECORATED was tried
    return F.array(F.when(opened, split[0]), split[1], F.when(quoted, _unquoted(split[2])).otherwise(split[2]))


def _unquoted(text: Column) -> Column:
    """The text of a quoted string whose opening quote is gone: up to its closing quote, with
    ``\\"`` and ``\\\\`` unescaped (Serilog's rendering of a string property)."""
    inside = F.regexp_replace(text, r'(?s)^((?:[^"\\]|\\.)*)".*$', "$1")
    return F.regexp_replace(inside, r"\\(.)", "$1")


def _parts(text: Column) -> Column:
    """The ``PREFIX_FIELDS`` of ``text``, in order, as an array."""
    return F.split(F.regexp_replace(text, PREFIX, _TEMPLATE), SEP, len(PREFIX_FIELDS))


def _prefix_struct(callback: Column, parts: Column) -> Column:
    fields = {name: F.nullif(parts[i], F.lit("")) for i, name in enumerate(PREFIX_FIELDS)}
    fields["client_id"] = F.coalesce(F.nullif(callback[1], F.lit("")), fields["client_id"])
    return F.struct(*[value.alias(name) for name, value in fields.items()], callback[0].alias("facility"))
