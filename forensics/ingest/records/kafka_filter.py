"""Which lines and records are a Kafka client's: cheap substring scans first, regexes after."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from ... import layouts
from ...layouts import anchor
from ...layouts._common import BRACKETED_OPENINGS, EXCEPTION_LINE, FRANZ_GO_MESSAGE, KAFKAJS_MESSAGE, LEVEL_AND_FRANZ_GO, contains_any

KAFKA_MARKERS = ("afka", "a.k", "clientId=", "stream-", "state-updater [", "[thrd:")
"""Cheap substring test: a line containing none of these, in a layout that names its logger,
cannot be a Kafka client record by itself (a Kafka logger, full or abbreviated as ``o.a.k.`` or
Quarkus's ``org.apa.kaf.``, a log-context prefix such as ``stream-thread [``, ``Kafka
version:`` and the like, librdkafka's ``[thrd:main]`` in an application's own layout). Each
needle is one more scan of every line, so they are few and short."""
CLIENT_WORDS = ("roup", "artition", "Heartbeat", "ommit", "oordinator", "poll timeout", "subscribed topics")
"""The words of kafka-python's and aiokafka's lines (``PYTHON_CLIENT_MESSAGE``) and franz-go's
(``; group: ``), and the ``"groupId"`` a KafkaJS JSON line names where a custom log creator left
out its ``logger``: their only mark where the layout names no logger. Scanned for only where the
samples of the inputs show such a layout (``sampling.Recognisers.loggerless``): each needle is a
scan of every line, a cost paid only where the words are the sole mark (docs/performance.md)."""

MULTI_LINE_MARKERS = ("Config values:",)
"""Heads of multi-line records whose logger comes only on their last line (log4j layout)."""
OPENING_MARKERS = (*BRACKETED_OPENINGS, "task [", "#consumer-", "#producer-")
"""A piece of each Kafka opening of a message (``KAFKA_PREFIX``) that ``KAFKA_MARKERS`` may miss:
an export's message column can hold the message alone, without the logger."""

KAFKA_LOGGER = (
    r"^((org\.apache\.kafka|o\.a\.k|org\.apa\.kaf|o\.a\.kafka|aiokafka|kafka\.consumer)\."
    r"|kafka\.coordinator(\.(base|consumer|heartbeat))?$|kafkajs$|(org\.springframework\.kafka\.listener|o\.s\.k\.l)\.KafkaMessageListenerContainer$)"
)
"""The Java client's loggers, and the other clients': kafka-python's group and consumer loggers
(``kafka.coordinator[.base|.consumer|.heartbeat]``, ``kafka.consumer.*``; not the broker's
``kafka.coordinator.group.*``), aiokafka's and KafkaJS's; Spring for Apache Kafka's listener
container, whose rebalance listener writes the Java client's callbacks (``partitions assigned``)."""
PYTHON_CLIENT_MESSAGE = (
    r"(?:\(Re-\)joining|Successfully (?:joined|synced)|Joined|Leaving consumer) group |Elected group leader -- |"
    r"Received successful JoinGroup response for group |LeaveGroup request succeeded|Group \S+ is rebalancing|"
    r"(?:Setting newly|Revoking previously) assigned partitions\b|"
    r"(?:Heartbeat|OffsetCommit|Auto offset commit|(?:Pre-rebalance o|O)ffset commit)(?: failed)?(?: for group |: )|"
    r"Heartbeat (?:session|poll) expired|Consumer poll timeout has expired|Discovered coordinator \S+ for group |Group coordinator for \S+ is |"
    r"Marking the coordinator dead \(node |Skipping heartbeat: no active group: |Updating subscribed topics to: |"
    r"[^\n]*(?:TopicPartition\(topic='|OffsetAndMetadata\(offset=)"
)
"""kafka-python's and aiokafka's group and offset lines by their words alone (``catalogue``'s PY
entries), for a layout that writes no logger: Faust's ``[%(asctime)s] [%(process)s]
[%(levelname)s] %(message)s``, a team's ``logging.basicConfig(format=..)``."""
_KAFKA_OPENINGS = layouts._common.KAFKA_OPENINGS
_KAFKA_MESSAGE = (
    rf"{_KAFKA_OPENINGS}|task \[|org\.apache\.kafka\.[\w.$]+(Exception|Error)\b|{layouts.librdkafka.LOG_CALLBACK}|{KAFKAJS_MESSAGE}"
    rf"|{PYTHON_CLIENT_MESSAGE}|{FRANZ_GO_MESSAGE}"
)
KAFKA_PREFIX = rf"^({_KAFKA_MESSAGE}|(\[[^\]\x01]*\] ?){{1,3}}({_KAFKA_MESSAGE}))"
"""A Kafka record by its message, also behind a team's own bracketed fields (``[KafkaConsumer] [segment-7] ``)."""
BARE_HEAD = rf"^({_KAFKA_OPENINGS}|{EXCEPTION_LINE}|{layouts.message_only.LEVEL_AND_KAFKA_LOGGER}|{layouts.message_only.LEVEL_AND_KAFKAJS}|{LEVEL_AND_FRANZ_GO})"
"""A line of a paste without timestamps that opens a record by itself: Kafka's log-context
prefix, an exception class name (``CommitFailedException``, ``TaskMigratedException``), a
level and a Kafka logger (``message_only.LEVEL_AND_KAFKA_LOGGER``), or a level and a KafkaJS
namespace (``message_only.LEVEL_AND_KAFKAJS``), or franz-go's ``[INFO] joined; group: ..``
(``_common.LEVEL_AND_FRANZ_GO``)."""


def kafka_marked(value: Column) -> Column:
    """Whether a line carries a Kafka mark (``anchor.MARK``) and is no stack-trace text: a line
    that must be read, or reported as not read (issue 86). Substring scans guard the regex."""
    return contains_any(value, KAFKA_MARKERS + MULTI_LINE_MARKERS) & value.rlike(anchor.MARK) & ~value.rlike(anchor.STACK_TEXT)


def is_kafka(layout: Column, logger: Column, message: Column) -> Column:
    """A record of a Kafka client: a librdkafka line, a Kafka logger, a Kafka log-context
    prefix (``[Consumer clientId=..]``, ``stream-thread [..]``) opening the message, or
    librdkafka's thread in its first characters (``librdkafka.DECORATED``)."""
    decorated = message.contains("[thrd:") & message.rlike(f"^{layouts.librdkafka.DECORATED}")
    return (
        layout.isin("librdkafka", anchor.NAME) | F.coalesce(logger, F.lit("")).rlike(KAFKA_LOGGER) | message.rlike(KAFKA_PREFIX) | decorated
    )


def may_be_kafka_entry(layout: Column, message: Column, logger: Column) -> Column:
    """Whether an export's entry may be a Kafka record, by substring scans only: its whole
    message (a log4j logger may close its last line) and its logger column. An entry that fails
    is one ``is_kafka`` calls irrelevant: it is only counted, as ``fold_lines`` folds such lines."""
    by_logger = contains_any(F.coalesce(logger, F.lit("")), KAFKA_MARKERS)
    return layout.eqNullSafe("librdkafka") | may_be_kafka_line(message) | contains_any(message, OPENING_MARKERS) | by_logger


def kafka_markers(loggerless: bool = True) -> tuple[str, ...]:
    """``KAFKA_MARKERS``, with ``CLIENT_WORDS`` where a layout may name no logger."""
    return KAFKA_MARKERS + CLIENT_WORDS if loggerless else KAFKA_MARKERS


def may_be_kafka_line(value: Column, loggerless: bool = True) -> Column:
    """The cheap test ``kafka_lines`` wants its lines to pass: a few substring scans, no regex;
    on a line as read (a byte-order mark may open it); ``loggerless``: see ``kafka_markers``."""
    return contains_any(value, kafka_markers(loggerless) + MULTI_LINE_MARKERS) | value.startswith("%") | value.startswith("\ufeff%")
