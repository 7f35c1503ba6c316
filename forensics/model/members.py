"""Group members and their generations, from each client's own log lines.

A member is one consumer client of one group on one host (``host``/``client_id``); a Kafka
Streams thread is the member of its ``<thread>-consumer`` client. Its own lines are in the
order it wrote them, so each event learns the generation the member was in when it wrote the
line (``generation_now``).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .. import schema as s

MEMBER = "member"
GENERATION_NOW = "generation_now"

JOINED = ("consumer:group:joined", "consumer:group:synced")
"""Events that name the generation the member is in (classic protocol)."""
EPOCH_STEP = "consumer:group:member_state"
"""KIP-848 member state transitions carry the member epoch instead of a group generation."""
STREAMS_CONSUMER_SUFFIX = "-consumer"
THREAD_CLIENT = r"(?:-restore-consumer|(?<=-StreamThread-\d{1,4})-(?:\d+_\d+-)?producer)$"
"""A Streams thread's restore consumer and producer (one per thread, or per task under
``exactly_once`` before 2.6) are named after the thread."""


def member_client(events: DataFrame) -> Column:
    """The consumer client an event belongs to: its client id, or for a Streams thread line
    without one, the thread's main consumer (``<thread>-consumer``); a thread's restore
    consumer and producers count as its main consumer (same thread, same generation)."""
    thread_consumer = F.concat(F.col(s.THREAD), F.lit(STREAMS_CONSUMER_SUFFIX))
    from_thread = F.when(F.col(s.EVENT_TYPE).startswith("streams:") & F.col(s.THREAD).isNotNull(), thread_consumer)
    client = F.regexp_replace(F.col(s.CLIENT_ID), THREAD_CLIENT, STREAMS_CONSUMER_SUFFIX)
    return F.coalesce(client, from_thread)


def generation_mark() -> Column:
    """The generation a line says its member is in: ``joined``/``synced`` lines (classic
    protocol) or the member epoch of a KIP-848 member state transition; else null."""
    return (
        F.when(F.col(s.EVENT_TYPE).isin(*JOINED), F.col(s.GENERATION))
        .when(F.col(s.EVENT_TYPE) == EPOCH_STEP, F.col("epoch"))
    )


def member_order() -> list[Column]:
    """How a member's own lines are ordered: its clock, then file and line."""
    return [F.col(s.TS), F.col(s.SOURCE_FILE), F.col(s.LINE)]


def with_members(events: DataFrame) -> DataFrame:
    """Events with ``member`` (host/client), ``generation_now``, and the
    member's ``group_id``, ``instance_id`` and latest ``member_id`` filled from its other lines.

    The group of a member is the one its consumer lines name (Streams thread lines carry
    none). Generations come from ``Successfully joined/synced group ... generation N`` and,
    for the KIP-848 protocol, from the member epoch of its state transitions.
    """
    s.validate_columns(events, [s.EVENT_TYPE, s.HOST, s.CLIENT_ID, s.THREAD, s.GROUP_ID, s.GENERATION, "epoch"], "with_members")
    client = member_client(events)
    with_member = events.withColumn("_client", client).withColumn(
        MEMBER, F.when(client.isNotNull(), F.concat_ws("/", F.col(s.HOST), client))
    )
    by_member = Window.partitionBy(MEMBER)
    group = F.coalesce(F.col(s.GROUP_ID), F.first(F.col(s.GROUP_ID), ignorenulls=True).over(by_member))
    generation = generation_mark()
    ordered = Window.partitionBy(MEMBER).orderBy(*member_order())
    upto = ordered.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    return with_member.select(
        *[c for c in with_member.columns if c not in (s.GROUP_ID, s.MEMBER_ID, s.INSTANCE_ID, "_client")],
        group.alias(s.GROUP_ID),
        F.last(s.MEMBER_ID, ignorenulls=True).over(upto).alias(s.MEMBER_ID),
        F.coalesce(F.col(s.INSTANCE_ID), F.first(s.INSTANCE_ID, ignorenulls=True).over(by_member)).alias(s.INSTANCE_ID),
        F.last(generation, ignorenulls=True).over(upto).alias(GENERATION_NOW),
    )
