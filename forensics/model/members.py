"""Group members and their generations, from each client's own log lines.

A member is one consumer client of one group on one host (``host``/``client_id``); a Kafka
Streams thread is the member of its ``<thread>-consumer`` client; the consumer lines of clients
that name no client id (kafka-python, aiokafka, KafkaJS, franz-go) belong to the client id inside
the member ids of their file (franz-go's KIP-848 member ids hold none: its default, ``kgo``); a
Spring container's lines to the client of their thread, else to the thread (one consumer each).
Its own lines are in the order it wrote them, so each event learns the generation the member was
in when it wrote the line (``generation_now``).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .. import schema as s
from ..catalogue import load_catalogue
from ..events import FRANZ_GO_LOGGER
from ..registry import EVIDENCE_ORDER, next_value

MEMBER = "member"
GENERATION_NOW = "generation_now"

JOINED = ("consumer:group:joined", "consumer:group:synced")
"""Events that name the generation the member is in (classic protocol)."""
EPOCH_STEP = "consumer:group:member_state"
"""KIP-848 member state transitions carry the member epoch instead of a group generation."""
FENCED_OR_UNKNOWN = (EPOCH_STEP, "consumer:group:heartbeat_failed", "consumer:group:lost")
"""The event types of ``epoch_fenced`` and ``member_unknown`` lines."""
STREAMS_CONSUMER_SUFFIX = "-consumer"
THREAD_CLIENT = r"(?:-restore-consumer|(?<=-StreamThread-\d{1,4})-(?:\d+_\d+-)?producer)$"
"""A Streams thread's restore consumer and producer (one per thread, or per task under
``exactly_once`` before 2.6) are named after the thread."""
MEMBER_ID_OF_CLIENT = r"^(.+)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
"""A classic member id: the client id (or ``group.instance.id``), ``-`` and the UUID the group
coordinator appends (``kafka-python-2.0.2-<uuid>``, ``aiokafka-0.10.0-<uuid>``, KafkaJS's
``<clientId>-<uuid>``)."""


def member_client(events: DataFrame) -> Column:
    """The consumer client an event belongs to: its client id, or for a Streams thread line
    without one, the thread's main consumer (``<thread>-consumer``); a thread's restore
    consumer and producers count as its main consumer (same thread, same generation)."""
    thread_consumer = F.concat(F.col(s.THREAD), F.lit(STREAMS_CONSUMER_SUFFIX))
    from_thread = F.when(F.col(s.EVENT_TYPE).startswith("streams:") & F.col(s.THREAD).isNotNull(), thread_consumer)
    client = F.regexp_replace(F.col(s.CLIENT_ID), THREAD_CLIENT, STREAMS_CONSUMER_SUFFIX)
    return F.coalesce(client, from_thread)


def client_of_member_ids() -> Column:
    """For a consumer line without a client id: the client id inside the member ids of its own
    file (a file is one process's log), the nearest one before the line, else the first after
    it. kafka-python, aiokafka and KafkaJS name member ids but no client id; null elsewhere."""
    from_member_id = F.nullif(F.regexp_extract(F.col(s.MEMBER_ID), MEMBER_ID_OF_CLIENT, 1), F.lit(""))
    in_file = Window.partitionBy(s.SOURCE_FILE).orderBy(s.LINE)
    before = F.last(from_member_id, ignorenulls=True).over(in_file.rowsBetween(Window.unboundedPreceding, Window.currentRow))
    after = next_value(from_member_id, [s.SOURCE_FILE], [s.LINE])
    return F.when(F.col(s.EVENT_TYPE).startswith("consumer:") & F.col(s.CLIENT_ID).isNull(), F.coalesce(before, after))


def sole_consumer_of_file(events: DataFrame) -> Column:
    """For a consumer line still without a client id (from 3.7 ``ConsumerUtils`` logs ``Setting
    offset for partition ..`` through a static logger, with no ``[Consumer ..]`` prefix): the one
    consumer client the consumer lines of its file name (a file is one process's log); null
    when they name none or several (two consumers, two Streams threads).

    One client is where the least and the greatest agree: ``min`` and ``max`` over the file's
    window keep one value each, where a ``collect_set`` would keep every distinct one."""
    return _sole_client(member_client(events), s.SOURCE_FILE)


def _sole_client(client: Column, *within: str) -> Column:
    """For a consumer line without a client id: the one ``client`` the consumer lines sharing its
    ``within`` columns name; null when they name none or several."""
    consumer = F.col(s.EVENT_TYPE).startswith("consumer:")
    named = F.when(consumer, client)
    scope = Window.partitionBy(*within)
    least, greatest = F.min(named).over(scope), F.max(named).over(scope)  # one client: the same
    return F.when(consumer & F.col(s.CLIENT_ID).isNull() & (least == greatest), least)


def epoch_fenced() -> Column:
    """KIP-848 / KIP-1071 lines of a member whose epoch the coordinator fenced: its transition to
    ``FENCED`` (it loses its assignment and rejoins with epoch 0) and the heartbeat answered
    FENCED_MEMBER_EPOCH (``.. failed for member M because epoch N is fenced.``; franz-go abandons its
    assignment, ``.. saw fenced member epoch, ..`` or ``.., err: FENCED_MEMBER_EPOCH: ..``)."""
    state = (F.col(s.EVENT_TYPE) == EPOCH_STEP) & (F.col("state_to") == "FENCED")
    heartbeat = (F.col(s.EVENT_TYPE) == "consumer:group:heartbeat_failed") & F.col(s.MESSAGE).rlike(r"because epoch -?\d+ is fenced\.")
    abandoned = (F.col(s.EVENT_TYPE) == "consumer:group:lost") & F.col(s.MESSAGE).rlike(
        r"saw fenced member epoch, |, err: FENCED_MEMBER_EPOCH\b"
    )
    return state | heartbeat | abandoned


def member_unknown() -> Column:
    """A KIP-848 / KIP-1071 heartbeat answered UNKNOWN_MEMBER_ID (``.. failed because member M is
    unknown.``; franz-go's ``.. rejoining with new member id; .., err: UNKNOWN_MEMBER_ID: ..``): the
    coordinator had removed the member, its session expired."""
    heartbeat = (F.col(s.EVENT_TYPE) == "consumer:group:heartbeat_failed") & F.col(s.MESSAGE).rlike(r"because member \S+ is unknown\.")
    abandoned = (F.col(s.EVENT_TYPE) == "consumer:group:lost") & F.col(s.MESSAGE).contains(", err: UNKNOWN_MEMBER_ID: ")
    return heartbeat | abandoned


def generation_mark() -> Column:
    """The generation a line says its member is in: ``joined``/``synced`` lines (classic
    protocol) or the member epoch of a KIP-848 / KIP-1071 member state transition; else null.
    Epochs below 1 are no generation: 0 is a member joining (4.0+ logs ``with epoch 0
    transitioned from UNSUBSCRIBED to JOINING``), -1 and -2 a member leaving."""
    return F.when(F.col(s.EVENT_TYPE).isin(*JOINED), F.col(s.GENERATION)).when(
        (F.col(s.EVENT_TYPE) == EPOCH_STEP) & (F.col("epoch") > 0), F.col("epoch")
    )


def member_order() -> list[Column]:
    """How a member's own lines are ordered: its clock, then file and line."""
    return [F.col(s.TS), F.col(s.SOURCE_FILE), F.col(s.LINE)]


SPRING_CONSUMER_THREAD = r"-C-\d+$"
"""The thread of a Spring for Apache Kafka listener container's consumer, ``<bean>-<n>-C-<m>``
(``org.springframework.kafka.KafkaListenerEndpointContainer#0-0-C-1``): one consumer each."""


def client_of_thread() -> Column:
    """For a consumer line without a client id: the one client id the consumer lines of its file
    and thread name (a Spring container's ``partitions assigned`` line beside the Java client's
    lines on the consumer's own thread); else, on a Spring container's consumer thread, the
    thread itself, its one consumer (the Java client's lines kept at WARN)."""
    spring = F.when(F.col(s.EVENT_TYPE).startswith("consumer:") & F.col(s.CLIENT_ID).isNull(), F.col(s.THREAD))
    on_thread = F.coalesce(
        _sole_client(F.col(s.CLIENT_ID), s.SOURCE_FILE, s.THREAD), F.when(F.col(s.THREAD).rlike(SPRING_CONSUMER_THREAD), spring)
    )
    return F.when(F.col(s.THREAD).isNotNull(), on_thread)


def franz_go_client() -> Column:
    """``kgo``, franz-go's default client id, for a franz-go line that nothing else names a client
    of: under KIP-848 (v1.19+) its member id is the client's own base64 UUID, with no client id in
    it (``kgo-<uuid>`` in the classic protocol)."""
    templates = [t.key for t in load_catalogue() if FRANZ_GO_LOGGER in t.loggers]
    return F.when(F.col(s.TEMPLATE_ID).isin(*templates), F.lit(FRANZ_GO_LOGGER))


def unnamed_member(events: DataFrame, client: Column) -> list[Column]:
    """``_unnamed`` and ``_unnamed_basis``: the member of a consumer line whose file names no
    client at all (kafka-python before 2.x at INFO logs neither a client id nor a member id):
    its host, where that host has one such file, else its file and thread
    (``file[thread]``); null for every other line (``schema.MEMBER_BASES``)."""
    consumer = F.col(s.EVENT_TYPE).startswith("consumer:")
    none_in_file = F.max(F.when(consumer, client)).over(Window.partitionBy(s.SOURCE_FILE)).isNull()
    unnamed = consumer & client.isNull() & none_in_file
    files = F.when(unnamed, F.col(s.SOURCE_FILE))
    by_host = Window.partitionBy(s.HOST)
    one_file = F.col(s.HOST).isNotNull() & (F.min(files).over(by_host) == F.max(files).over(by_host))
    by_file = F.concat(F.col(s.SOURCE_FILE), F.coalesce(F.concat(F.lit("["), F.col(s.THREAD), F.lit("]")), F.lit("")))
    return [
        F.when(unnamed, F.when(one_file, F.col(s.HOST)).otherwise(by_file)).alias("_unnamed"),
        F.when(unnamed, F.when(one_file, F.lit(s.MEMBER_BASES[1])).otherwise(F.lit(s.MEMBER_BASES[2]))).alias("_unnamed_basis"),
    ]


MEMBER_INPUTS = (
    *EVIDENCE_ORDER,
    s.EVENT_TYPE,
    s.TEMPLATE_ID,
    s.HOST,
    s.TS,
    s.CLIENT_ID,
    s.THREAD,
    s.GROUP_ID,
    s.INSTANCE_ID,
    s.MEMBER_ID,
    s.GENERATION,
    "epoch",
)
"""The columns ``with_members`` reads."""


def with_members(events: DataFrame) -> DataFrame:
    """Events with ``member`` (host/client; where a file names no client, ``unnamed_member``),
    ``generation_now``, ``member_basis`` (how the member was named), and the member's
    ``group_id``, ``instance_id`` and latest ``member_id`` filled from its other lines.

    The group of a member is the one its consumer lines name (Streams thread lines carry
    none). Generations come from ``Successfully joined/synced group ... generation N`` and,
    for the KIP-848 protocol, from the member epoch of its state transitions.

    The windows run over the columns they read alone (``MEMBER_INPUTS``), and the events join
    their results by file and line (``registry.EVIDENCE_ORDER``; one event per record): every
    window sorts its rows, and an event's other columns (the message above all) would be
    carried through every sort.
    """
    s.validate_columns(events, list(MEMBER_INPUTS), "with_members")
    filled = _members_of_lines(events.select(*MEMBER_INPUTS))
    moved = (s.GROUP_ID, s.MEMBER_ID, s.INSTANCE_ID)  # filled from the member's lines, placed after it
    joined = events.drop(s.CLIENT_ID, *moved).join(filled, list(EVIDENCE_ORDER))
    return joined.select(*[c for c in events.columns if c not in moved], MEMBER, *moved, GENERATION_NOW, s.MEMBER_BASIS)


def _members_of_lines(events: DataFrame) -> DataFrame:
    """``with_members`` on ``MEMBER_INPUTS``: each line's file and line, ``client_id``, ``member``,
    ``group_id``, ``member_id``, ``instance_id`` and ``generation_now``."""
    named = events.withColumn(s.CLIENT_ID, F.coalesce(F.col(s.CLIENT_ID), client_of_member_ids()))
    named = named.withColumn(s.CLIENT_ID, F.coalesce(F.col(s.CLIENT_ID), client_of_thread()))
    named = named.withColumn(s.CLIENT_ID, F.coalesce(F.col(s.CLIENT_ID), sole_consumer_of_file(named), franz_go_client()))
    client = member_client(named)
    with_member = named.select("*", *unnamed_member(named, client)).withColumn(
        MEMBER, F.when(client.isNotNull(), F.concat_ws("/", F.col(s.HOST), client)).otherwise(F.col("_unnamed"))
    )
    with_member = with_member.withColumn(
        s.MEMBER_BASIS, F.when(client.isNotNull(), F.lit(s.MEMBER_BASES[0])).otherwise(F.col("_unnamed_basis"))
    ).drop("_unnamed", "_unnamed_basis")
    generation = generation_mark()
    ordered = Window.partitionBy(MEMBER).orderBy(*member_order())
    upto = ordered.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    whole = ordered.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)  # first(...) over it: the first stated

    def of_member(value: Column) -> Column:
        """Filled from the member's other lines; lines of no member (the group coordinator's)
        keep their own values."""
        return F.when(F.col(MEMBER).isNotNull(), value)

    return with_member.select(
        *EVIDENCE_ORDER,
        s.CLIENT_ID,
        MEMBER,
        s.MEMBER_BASIS,
        F.coalesce(F.col(s.GROUP_ID), of_member(F.first(F.col(s.GROUP_ID), ignorenulls=True).over(whole))).alias(s.GROUP_ID),
        F.coalesce(of_member(F.last(s.MEMBER_ID, ignorenulls=True).over(upto)), F.col(s.MEMBER_ID)).alias(s.MEMBER_ID),
        F.coalesce(F.col(s.INSTANCE_ID), of_member(F.first(s.INSTANCE_ID, ignorenulls=True).over(whole))).alias(s.INSTANCE_ID),
        of_member(F.last(generation, ignorenulls=True).over(upto)).alias(GENERATION_NOW),
    )
