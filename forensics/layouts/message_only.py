"""A record that is only a message: no layout fields of its own.

Never recognised from a line by itself. Ingest gives it to a wrapped line whose wrapper dates it
(``kubectl logs --timestamps``, Docker's json-file, a Kibana paste) when the inner text is in no
layout, and to an excerpt pasted without timestamps: a line opening with Kafka's log-context
prefix (``[Consumer clientId=..]``, ``stream-thread [..]``) or with an exception class
(``org.apache.kafka.clients.consumer.CommitFailedException: ..``) that continues no record.
Such records are untimed unless a wrapper dates them, and keep their order by line. A wrapped
line in Python ``logging.basicConfig``'s default ``%(levelname)s:%(name)s:%(message)s`` (no time
of its own: kafka-python, aiokafka) gives its level and logger too, as does a pasted line that
kept its level and Kafka logger but lost its time (``LEVEL_AND_KAFKA_LOGGER``), and a KafkaJS
line in its documentation's text form gives its level (``LEVEL_AND_KAFKAJS``), as does a franz-go
group line of ``kgo.BasicLogger`` with no prefix (``[INFO] joined; group: g, ..``).
"""

from __future__ import annotations

from pyspark.sql import Column

from . import _common as c

NAME = "message_only"
DESCRIPTION = "A message with no layout fields (untimed paste, or dated by its wrapper)"
EXAMPLE = "[Consumer clientId=consumer-orders-app-1, groupId=orders-app] (Re-)joining group"
FIRST_CHARS = ""
_KAFKA_LOGGER = r"(?:org\.apache\.kafka|o\.a\.k)\.[\w.$]*[\w$]"
LEVEL_AND_KAFKA_LOGGER = rf"\[?({c.LEVELS})\s*\]?\s*(?:\[({_KAFKA_LOGGER})(?::\d+)?\] ?|({_KAFKA_LOGGER})(?::\d+)?(?: - |: | (?=\[)))"
"""An excerpt's line whose timestamp was cut off but whose level and Kafka logger were kept, in
any of the usual forms: ``[INFO ][org.apache.kafka.clients.Metadata] msg`` (Logstash's own
layout), ``INFO  o.a.k.c.c.i.ConsumerCoordinator - msg``, ``WARN [org.apache.kafka..] msg``."""
LEVEL_AND_KAFKAJS = rf"({c.LEVELS}) (?={c.KAFKAJS_NAMESPACE})"
"""A KafkaJS line in the text form its documentation's custom log creator writes,
``${label} [${namespace}] ${message} ${JSON.stringify(others)}``: ``INFO [ConsumerGroup] Consumer
has joined the group {"groupId":"g",..}``; the level is read, the message keeps its namespace."""
_SPLIT = rf"(?s)^(?:({c.LEVELS}):([A-Za-z_][\w.]*):|{LEVEL_AND_KAFKA_LOGGER}|{LEVEL_AND_KAFKAJS}|{c.LEVEL_AND_FRANZ_GO})?(.*)$"
"""The whole line is the message, but for ``logging.basicConfig``'s default ``LEVEL:logger:``
opening (``INFO:kafka.coordinator:(Re-)joining group g``), ``LEVEL_AND_KAFKA_LOGGER``,
``LEVEL_AND_KAFKAJS`` and ``_common.LEVEL_AND_FRANZ_GO``. Not a ``HEAD``: never recognised."""
_TEMPLATE = c.replacement(level="$1$3$6$7", logger="$2$4$5", message="$8")


def sniff(sample_lines) -> bool:
    return False


SPLIT = (_SPLIT, _TEMPLATE)


def split(value: Column) -> Column:
    return c.split_fields(value, *SPLIT)


to_utc = c.any_to_utc
