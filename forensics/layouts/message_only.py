"""A record that is only a message: no layout fields of its own.

Never recognised from a line by itself. Ingest gives it to a wrapped line whose wrapper dates it
(``kubectl logs --timestamps``, Docker's json-file, a Kibana paste) when the inner text is in no
layout, and to an excerpt pasted without timestamps: a line opening with Kafka's log-context
prefix (``[Consumer clientId=..]``, ``stream-thread [..]``) or with an exception class
(``org.apache.kafka.clients.consumer.CommitFailedException: ..``) that continues no record.
Such records are untimed unless a wrapper dates them, and keep their order by line.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from . import _common as c

NAME = "message_only"
DESCRIPTION = "A message with no layout fields (untimed paste, or dated by its wrapper)"
EXAMPLE = "[Consumer clientId=consumer-orders-app-1, groupId=orders-app] (Re-)joining group"
FIRST_CHARS = ""


def sniff(sample_lines) -> bool:
    return False


def split(value: Column) -> Column:
    return F.array(*[F.lit(None).cast("string")] * (len(c.FIELDS) - 1), value)


def to_utc(ts_text: Column, tz: Column) -> Column:
    return c.any_to_utc(ts_text, tz)
