"""Kafka's log-context prefixes: who logged a message, split off before template matching.

``[Consumer instanceId=I, clientId=C, groupId=G] `` (instanceId with static membership, 2.3+),
``[Producer clientId=C, transactionalId=T] ``, ``stream-client [C] `` (no space in 1.0),
``stream-thread [T] `` then ``task|stream-task|standby-task [0_1] ``, and
``state-updater [U] `` (4.x restoration). 2.0/2.1 lines may lack the space after the thread.
Other bracketed fields before the prefix are skipped.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..layouts._common import KAFKA_OPENINGS, SEP

PREFIX_FIELDS = (
    "prefix_kind", "instance_id", "client_id", "group_id", "transactional_id",
    "stream_client", "stream_thread", "state_updater", "task", "rest",
)
_NOT = r"[^,\]\x01]*"
_KINDS = "Consumer|ShareConsumer|Producer|AdminClient"
_EXTRA = rf"(?:(?:\[(?!(?:{_KINDS}) )[^\]\x01]*\] ?)+(?={KAFKA_OPENINGS}))?"
"""Bracketed fields a team's layout puts before Kafka's prefix (``[KafkaConsumer] [segment-7] ``)."""
PREFIX = (
    rf"(?s)^{_EXTRA}(?:\[({_KINDS}) "
    rf"(?:instanceId=({_NOT}), )?clientId=({_NOT})(?:, groupId=({_NOT}))?(?:, transactionalId=([^\]\x01]*))?\] ?)?"
    r"(?:stream-client \[([^\]\x01]*)\] ?)?"
    r"(?:(?:global-)?stream-thread \[([^\]\x01]*)\] ?)?"
    r"(?:state-updater \[([^\]\x01]*)\] ?)?"
    r"(?:(?:task|stream-task|standby-task) \[([^\]\x01]*)\] ?)?"
    r"(.*)$"
)
_TEMPLATE = SEP.join(f"${n}" for n in range(1, len(PREFIX_FIELDS) + 1))


def split_prefix(message: Column) -> Column:
    """Struct of ``PREFIX_FIELDS`` (empty strings become null); ``rest`` is the message proper."""
    parts = F.split(F.regexp_replace(message, PREFIX, _TEMPLATE), SEP, len(PREFIX_FIELDS))
    return F.struct(*[F.nullif(parts[i], F.lit("")).alias(name) for i, name in enumerate(PREFIX_FIELDS)])
