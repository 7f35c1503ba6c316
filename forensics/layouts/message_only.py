"""A record that is only a message: no layout fields of its own.

Never recognised from a line by itself. Ingest gives it to a wrapped line whose wrapper dates it
(``kubectl logs --timestamps``, Docker's json-file, a Kibana paste) when the inner text is in no
layout, and to an excerpt pasted without timestamps: a line opening with Kafka's log-context
prefix (``[Consumer clientId=..]``, ``stream-thread [..]``) or with an exception class
(``org.apache.kafka.clients.consumer.CommitFailedException: ..``) that continues no record.
Such records are untimed unless a wrapper dates them, and keep their order by line. A wrapped
line in Python ``logging.basicConfig``'s default ``%(levelname)s:%(name)s:%(message)s`` (no time
of its own: kafka-python, aiokafka) gives its level and logger too.
"""

from __future__ import annotations

from pyspark.sql import Column

from . import _common as c

NAME = "message_only"
DESCRIPTION = "A message with no layout fields (untimed paste, or dated by its wrapper)"
EXAMPLE = "[Consumer clientId=consumer-orders-app-1, groupId=orders-app] (Re-)joining group"
FIRST_CHARS = ""
_SPLIT = rf"(?s)^(?:({c.LEVELS}):([A-Za-z_][\w.]*):)?(.*)$"
"""The whole line is the message, but for ``logging.basicConfig``'s default ``LEVEL:logger:``
opening (``INFO:kafka.coordinator:(Re-)joining group g``). Not a ``HEAD``: never recognised."""
_TEMPLATE = c.replacement(level="$1", logger="$2", message="$3")


def sniff(sample_lines) -> bool:
    return False


SPLIT = (_SPLIT, _TEMPLATE)


def split(value: Column) -> Column:
    return c.split_fields(value, *SPLIT)


to_utc = c.any_to_utc
