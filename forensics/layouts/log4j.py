"""Kafka's own default layout ``[%d] %p %m (%c)%n`` (log4j 1.x/reload4j up to 3.9, log4j2 from 4.0).

The logger comes last, in parentheses, with its line number where the layout has ``(%c:%L)``
(Confluent Platform and ksqlDB ship that form), or in brackets after the level, as Python's
``[%(asctime)s] %(levelname)s [%(name)s]: %(message)s`` writes it (aiokafka's examples).
Multi-line messages (``Updating assignment with`` and friends) carry it only on their last
physical line, so it is optional here and recovered after continuation lines are joined.
"""

from __future__ import annotations

from pyspark.sql import Column

from . import _common as c

NAME = "log4j"
DESCRIPTION = "Kafka default log4j layout: [%d] %p %m (%c)%n"
EXAMPLE = (
    "[2024-03-11 14:02:17,418] INFO [Consumer clientId=consumer-orders-app-1, groupId=orders-app] "
    "(Re-)joining group (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)"
)
FIRST_CHARS = "["
HEAD = rf"(?s)^\[({c.ISO_DATETIME})\] +({c.LEVELS}) +(?:\[({c.LOGGER})\]: )?(.*?)(?: \(({c.LOGGER})(?::\d+)?\))?$"
START = rf"^\[{c.ISO_DATETIME}\] +(?:{c.LEVELS}) "
"""Enough to recognise a record's first line; the full ``HEAD`` (whose lazy message group
costs far more) only runs on the lines that are kept."""
TEMPLATE = c.replacement(ts_text="$1", level="$2", logger="$3$5", message="$4")
NAMED_LOGGER = rf"{START} *(?:\[{c.LOGGER}\]: |.* \({c.LOGGER}(?::\d+)?\)$)"
"""A head that names its logger, in either place (a regex for Python's ``re`` too): Kafka's own
``%m (%c)`` does, Python's ``[%(asctime)s] %(levelname)s %(message)s`` does not."""


def sniff(sample_lines) -> bool:
    return c.sniff_regex(HEAD, sample_lines)


SPLIT = (HEAD, TEMPLATE)


def split(value: Column) -> Column:
    return c.split_fields(value, *SPLIT)


to_utc = c.iso_to_utc
