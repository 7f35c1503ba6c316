"""Pieces shared by the layout modules: field order, level names, timestamp normalisation."""

from __future__ import annotations

import re
from typing import Iterable

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..contract import DAY_FIRST_ORDER, MONTH_FIRST_ORDER

SEP = "\u0001"
"""Separates the extracted fields in one regexp_replace; field patterns exclude it."""

FIELDS = ("ts_text", "level", "logger", "thread", "client", "message")
"""Canonical order of the fields every layout extracts from a record's first line."""

LEVELS = "TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|SEVERE|CRITICAL"
ISO_DATETIME = r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[,.]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?"
TIME_OF_DAY = r"\d\d:\d\d:\d\d[,.]\d{3}"
LOGGER = r"[A-Za-z_$][\w.$]*"
EXCEPTION_LINE = r"(?:[a-z][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error)(?:: |$)"
"""The first line of a stack trace: a qualified exception class name, then its message."""

CLIENT_KINDS = ("Consumer", "ShareConsumer", "Producer", "AdminClient")
"""The Kafka clients whose log-context prefix opens ``[<kind> ``."""
WORKER_KIND = "Worker"
"""A Kafka Connect worker in its cluster's group: ``[Worker clientId=.., groupId=..]``."""
WORKER_OPENING = f"[{WORKER_KIND} clientId="
"""A Connect worker's prefix opens with its first field: other fields and threads say ``Worker`` too."""
BRACKETED_OPENINGS = (*(f"[{kind} " for kind in CLIENT_KINDS), WORKER_OPENING, "[GroupCoordinator ", "[GroupMetadataManager ")
"""The bracketed fields that open Kafka's log-context prefixes, as text. Never a thread
(``generic``); looked for in an export's message (``records.OPENING_MARKERS``)."""
JUL_LEVELS = "SEVERE|WARNING|INFO|CONFIG|FINE|FINER|FINEST"
"""java.util.logging's levels by name (``jul``, ``tomcat``); ``_LEVEL_ALIASES`` reads them as log4j's."""
KAFKAJS_NAMESPACES = (
    r"(?:Consumer|ConsumerGroup|Runner|FetchManager|Connection|ConnectionPool|RequestQueue|BrokerPool|Broker|Cluster|Producer|Admin)"
)
"""KafkaJS's namespaces (``logger.namespace(..)`` in its source, 2.2.4)."""
KAFKAJS_NAMESPACE = rf"\[{KAFKAJS_NAMESPACES}\] "
"""A namespace as KafkaJS's log creators open a message with it: ``[ConsumerGroup] ``."""
KAFKAJS_CONTEXT = r' \{(?:[^\n]*[,{])?"(?:groupId|memberId|clientId)":'
"""A KafkaJS line's fields written as JSON after its message, naming its group, member or client
(`` {"groupId":"g",..}``)."""
KAFKAJS_MESSAGE = rf"{KAFKAJS_NAMESPACE}[^\n]*{KAFKAJS_CONTEXT}"
"""A KafkaJS message whatever logger wrote it: its namespace, then its fields as JSON naming its
group, member or client (its own JSON lines and its documentation's text form alike)."""

FRANZ_GO_WORDS = (
    r"(?:joining group|joined(?:, balancing group| as leader but unable to balance group due to KIP-345 limitations)?|synced|"
    r"new group session begun|(?:eager|cooperative) consumer revoking prior assigned partitions(?: because leaving group)?|"
    r"(?:cooperative consumer )?calling onRevoke(?: at the end of a session(?: even though no partitions were lost)?)?|leaving group|"
    r"heartbeat errored|(?:join|sync) group failed|unable to commit offset for topic partition|default commit failed|updated committed|"
    r"in default commit: unable to commit offsets for topic partition|"
    r"consumer group initial heartbeat received assignment|leaving next-gen group|"
    r"consumer group heartbeat detected an updated assignment; exited heartbeat loop to assign & reentering|"
    r"consumer group heartbeat (?:saw fenced member epoch|error), abandoning assignment and rejoining(?: with new member id)?)"
)
"""The group messages of franz-go's ``kgo`` client (``catalogue/clients.yaml``'s GO entries)."""
FRANZ_GO_POSITIONS, FRANZ_GO_FETCHED = "assigning partitions", "newly fetched offsets for group "
"""franz-go's line of where a group's partitions resume (v1.2.3+): ``assigning partitions; why: newly
fetched offsets for group g, how: .., input: t[2{8100 e0 ce0}]``, the committed offsets it fetched."""
FRANZ_GO_MESSAGE = rf"(?:{FRANZ_GO_WORDS}; group: |{FRANZ_GO_POSITIONS}; why: {FRANZ_GO_FETCHED})"
"""A franz-go group line as its ``kgo.BasicLogger`` writes it, ``message; key: value, ..``: the
message, then the group it names first. Go logs carry no logger name, so these words are the
mark (``logfmt`` and ``json_lines`` rewrite a structured record of one into this form)."""
FRANZ_GO_KEYS = (
    "group",
    "member_id",
    "instance_id",
    "generation",
    "balance_protocol",
    "leader",
    "assigned",
    "added",
    "lost",
    "revoking",
    "stage",
    "err",
    "topic",
    "partition",
    "commit_from",
    "commit_to",
    "commit_epoch",
    "error_code",
    "why",
    "how",
    "input",
    "to",
)
"""The keys franz-go logs beside its group messages (``pkg/kgo/consumer_group.go``), in an order that
keeps each message's own: ``group`` first, ``commit_from`` before ``commit_to``, ``why, how, input``, ``group, to``."""
LEVEL_AND_FRANZ_GO = rf"\[(DEBUG|INFO|WARN|ERROR)\] (?={FRANZ_GO_MESSAGE})"
"""``kgo.BasicLogger``'s level before a group message: ``[INFO] joined; group: g, ..``."""


def franz_go_text(written: Column, message: Column, keys: Column, values: Column) -> Column:
    """A structured franz-go record (``written``: its line holds franz-go's words as its message
    and a ``group``) in ``kgo.BasicLogger``'s form, ``message; key: value, ..``: the record's
    pairs of ``FRANZ_GO_KEYS`` in franz-go's order, whatever order they were written in (logrus's
    and Benthos's JSON sort their keys), a logger's own context pairs left out. Other records'
    messages as they are. The test is on the line, so that a message evaluated field by field
    (queries run interpreted) is built once."""
    order = F.array(*[F.lit(key) for key in FRANZ_GO_KEYS])
    written_pairs = F.filter(F.arrays_zip(keys.alias("k"), values.alias("v")), lambda pair: pair["k"].isin(*FRANZ_GO_KEYS))
    pairs = F.array_sort(written_pairs, lambda a, b: (F.array_position(order, a["k"]) - F.array_position(order, b["k"])).cast("int"))
    text = F.concat(message, F.lit("; "), F.array_join(F.transform(pairs, lambda pair: F.concat(pair["k"], F.lit(": "), pair["v"])), ", "))
    return F.when(written, text).otherwise(message)


GO_RUBY_OPENINGS = (
    r"joinGroup succeeded for response, |sync group finished for group, |selected as leader for group, |"
    r"assigned member/topic/partitions |[Jj]oined group \S+ as member |Leaving group \S+, member |Failed to (?:join|sync) group \S+: |"
    r"client/coordinator |consumer/broker/-?\d+ (?:added|closed dead|abandoned) subscription to |"
    r"\[\[[^\]\n]*\] \{[^{}\n]*\}:\] "
)
"""Openings of the group lines of clients that write no logger name (``catalogue/go_ruby.yaml``):
segmentio/kafka-go's consumer group, Sarama's coordinator lookup and partition consumers, and the
tag ruby-kafka's logger opens a consumer's lines with (``[[<group>] {<topic>: <partitions>}:] ``)."""
KAFKA_OPENINGS = (
    rf"\[(?:{'|'.join(CLIENT_KINDS)}) |{re.escape(WORKER_OPENING)}|(?:global-)?stream-(?:thread|client) \[|state-updater \[|"
    r"(?:Consumer|Producer|Streams|Admin|ShareConsumer)Config values:|Kafka (?:version|commitId|startTimeMs):|"
    r"\[GroupCoordinator (?:\d+\]: |id=\d+[ \]])|\[GroupMetadataManager brokerId=\d+\] |"
    r"Setting offset for partition \S+ to the committed offset FetchPosition\{|"
    rf"{GO_RUBY_OPENINGS}"
)
"""Openings of a message only Kafka writes: a client's log-context prefix, a config block, the
version banner, the group coordinator's prefix in a broker log, the position line ``ConsumerUtils``
writes with no prefix (3.7+), the group lines of the Go and Ruby clients that name no logger
(``GO_RUBY_OPENINGS``) (ingest tells Kafka records by them; parse skips bracketed fields before them)."""

_FRACTION = r"(?:[,.]\d{1,9})?"
_ZONE = r"(?: ?(?:Z|[+-]\d\d:?\d\d|UTC|GMT)(?![\w:]))?"
ANY_ISO = rf"\d{{4}}[-/]\d\d[-/]\d\d[ T]\d\d:\d\d:\d\d{_FRACTION}{_ZONE}"
DAY_FIRST = rf"(?:\d\d\.\d\d\.|\d\d-\d\d-)\d{{4}}[ T]\d\d:\d\d:\d\d{_FRACTION}{_ZONE}"
"""A numeric date with the day first, as custom patterns write it: ``%d{dd-MM-yyyy HH:mm:ss.SSS}``
(``15-03-2024 14:02:17.418``) or ``%d{dd.MM.yyyy HH:mm:ss,SSS}`` (German and other locales).
No locale writes the month first between dots, and a month-first date between dashes
(``03-15-2024``) is rare in logs; one read here gives no time where its day is past 12 (counted
as a bad timestamp). Between slashes British logs put the day first and American ones the
month: ``SLASHED``."""
SLASHED = rf"\d\d/\d\d/\d{{4}}[ T]\d\d:\d\d:\d\d{_FRACTION}{_ZONE}"
"""``dd/MM/yyyy`` or ``MM/dd/yyyy`` then the time: a record head, whose time is read in the
order its file's dates show (``in_date_order``; ``ingest.records.slashed_date_orders``), and not
at all where they show none: a text read with day and month swapped would be wrong without a sign."""
SLASHED_DATE = r"(\d\d)/(\d\d)/(\d{4})(?=[ T]\d\d:)"
"""A ``SLASHED`` date's fields as groups: first, second, year (``in_date_order``; ingest's
``split_facts`` reads the first two of a file's heads)."""
DAY_MONTH_YEAR = rf"\d\d? [A-Z][a-z]{{2}} \d{{4}} \d\d:\d\d:\d\d{_FRACTION}"
"""log4j's ``%d{DATE}``: ``11 Mar 2024 14:02:17,418``."""
KIBANA_TIME = rf"[A-Z][a-z]{{2}} \d\d?, \d{{4}} @ \d\d:\d\d:\d\d{_FRACTION}"
"""Kibana's display and CSV form: ``Mar 11, 2024 @ 14:02:17.418``."""
EPOCH = r"\d{13}|\d{10}(?:\.\d{1,9})?"
ANY_TIME_OF_DAY = rf"\d\d:\d\d:\d\d{_FRACTION}"
ANY_TIMESTAMP = f"{ANY_ISO}|{DAY_FIRST}|{SLASHED}|{DAY_MONTH_YEAR}|{KIBANA_TIME}|{EPOCH}|{ANY_TIME_OF_DAY}"
"""Every timestamp form recognised at the head of a record, most specific first."""
_WORDY_DATE = r"^(?:(\d\d?)[ -]([A-Z][a-z]{2})[ -](\d{4})|([A-Z][a-z]{2}) (\d\d?), (\d{4}) @) (.*)$"
"""``%d{DATE}`` or Tomcat's ``dd-MMM-yyyy`` (day, month, year) or Kibana (month, day, year), then the time of day."""
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

_LEVEL_ALIASES = {
    "WARNING": "WARN",
    "SEVERE": "ERROR",
    "CRITICAL": "FATAL",
    "NOTICE": "INFO",
    "CONFIG": "INFO",
    "FINE": "DEBUG",
    "FINER": "TRACE",
    "FINEST": "TRACE",  # java.util.logging's
    "INFORMATION": "INFO",
    "VERBOSE": "TRACE",  # .NET's (Serilog, Microsoft.Extensions.Logging)
    "EXCEPTION": "ERROR",
    "NOTSET": "TRACE",  # structlog's method names where no add_log_level renamed them
}


_NAMED_GROUP = re.compile(r"\(\?P<(\w+)>")


def java_pattern(pattern: str) -> tuple[str, tuple[tuple[str, int], ...]]:
    """Rewrite Python named groups as plain groups (Java names allow no ``_``); keep their numbers."""
    numbers = re.compile(pattern).groupindex
    return _NAMED_GROUP.sub("(", pattern), tuple(sorted(numbers.items(), key=lambda item: item[1]))


def contains_any(value: Column, needles) -> Column:
    """Whether ``value`` contains one of ``needles``: substring scans, no regex."""
    test = None
    for needle in needles:
        test = value.contains(needle) if test is None else test | value.contains(needle)
    return test


def replacement(**groups: str) -> str:
    """A regexp_replace template emitting the canonical fields, message last.

    ``groups`` maps field name to a Java group reference such as ``"$1"`` (``"$2$4"``
    concatenates alternatives; a group that did not take part appends nothing).
    """
    return SEP.join(groups.get(name, "") for name in FIELDS)


def split_fields(value: Column, head: str | Column, template: str | Column) -> Column:
    """Extract all fields of a head line with ONE regex evaluation: array in FIELDS order."""
    return F.split(F.regexp_replace(value, head, template), SEP, len(FIELDS))


def normalise_level(level: Column) -> Column:
    """Upper-case level names, folding WARNING/SEVERE/CRITICAL/NOTICE and JUL's CONFIG/FINE.. to log4j's names."""
    upper = F.upper(F.trim(level))
    mapping = F.create_map(*[F.lit(x) for pair in _LEVEL_ALIASES.items() for x in pair])
    return F.coalesce(mapping[upper], F.when(upper != "", upper))


def iso_to_utc(ts_text: Column, tz: Column) -> Column:
    """UTC timestamp from an ISO-like text; zone-less text is read in the source's zone ``tz``.

    Accepts ``,`` or ``.`` before the fraction, ``T`` or a space, and a zone (``Z``, ``+01:00``,
    ``+0100``, ``+01``, `` UTC``, `` GMT``) that Spark's parser reads. Unparseable text gives
    null (the caller accounts it as a bad timestamp)."""
    return _parsed_in_zone(ts_text, ts_text, tz)


def _parsed_in_zone(iso_text: Column, zone_text: Column, tz: Column) -> Column:
    """``iso_text`` parsed, in ``tz`` unless ``zone_text`` (the same time, perhaps before its date
    was rewritten to ISO) names a zone. This runs once per record, so each text is read once: a
    zone is told by a character after the date (``+ - Z U G``), not by a regex, and a zoned text
    is parsed as it is and then left in UTC."""
    zone_marks = F.translate(F.substring(zone_text, 11, 64), "+-ZUG", "+++++")
    zone = F.when(zone_marks.contains("+"), F.lit("UTC")).otherwise(tz)
    return F.to_utc_timestamp(F.try_to_timestamp(F.translate(iso_text, ",", ".")), zone)


def in_date_order(ts_text: Column, order: Column) -> Column:
    """A ``SLASHED`` date of ``ts_text`` rewritten as ``yyyy/MM/dd`` in its file's ``order``
    (``DAY_FIRST_ORDER``, ``MONTH_FIRST_ORDER``); as it is where the order is unknown (null),
    which no conversion reads."""
    slashed = f"^{SLASHED_DATE}"
    return (
        F.when(order == DAY_FIRST_ORDER, F.regexp_replace(ts_text, slashed, "$3/$2/$1"))
        .when(order == MONTH_FIRST_ORDER, F.regexp_replace(ts_text, slashed, "$3/$1/$2"))
        .otherwise(ts_text)
    )


def is_slashed(ts_text: Column) -> Column:
    """Whether a timestamp text opens with a ``SLASHED`` date not put in order (``in_date_order``)."""
    return F.substring(ts_text, 3, 1) == "/"


def is_time_of_day(ts_text: Column) -> Column:
    """Whether a timestamp text is a time of day alone (``14:02:17.418``), which names no day.
    Told by its third character, not by a regex: it is tested once per record."""
    return F.substring(ts_text, 3, 1) == ":"


_SLASHED_OR_DAY_FIRST = r"^(?:(\d{4})/(\d\d)/(\d\d)|(\d\d)[.-](\d\d)[.-](\d{4})(?=[ T]))"
"""``2024/03/15`` or a ``DAY_FIRST`` date, rewritten to ISO's order by ``$1$6-$2$5-$3$4``."""
_MONTH_NUMBERS = [(f"-{name}-", f"-{i + 1:02d}-") for i, name in enumerate(_MONTHS)]


def any_to_utc(ts_text: Column, tz: Column) -> Column:
    """UTC timestamp of any ``ANY_TIMESTAMP`` form: ISO-like (``/`` dates, `` UTC`` zones), day first (``DAY_FIRST``),
    ``%d{DATE}``, Kibana's ``Mar 11, 2024 @ ..``, epoch seconds or milliseconds (UTC by
    definition). A time of day alone gives null: it names no day.

    The wordy and ``/`` forms are rewritten to ISO by replacements that leave other texts as
    they are, one after the other, so that the text is read once per step (small code)."""
    text = F.trim(ts_text)
    iso = F.regexp_replace(text, _WORDY_DATE, "$3$6-$2$4-$1$5 $7")  # 2024-Mar-1 14:02:17
    for name, number in _MONTH_NUMBERS:
        iso = F.replace(iso, F.lit(name), F.lit(number))
    iso = F.regexp_replace(F.regexp_replace(iso, r"(?<=^\d{4}-\d\d-)(?=\d )", "0"), _SLASHED_OR_DAY_FIRST, "$1$6-$2$5-$3$4")
    seconds = text.try_cast("decimal(20,6)")  # epoch milliseconds have 13 digits, seconds 10
    epoch = F.timestamp_micros(F.round(seconds * F.when(seconds >= 1e12, 1_000).otherwise(1_000_000)).cast("long"))
    utc = text.endswith(" UTC")
    meridiem = F.substring(text, -3, 3).isin(" AM", " PM") | (utc & F.substring(text, -7, 3).isin(" AM", " PM"))
    return (
        F.when(text.rlike(r"^(\d{13}|\d{10}(\.\d+)?)$"), epoch)
        .when(is_time_of_day(text), F.lit(None).cast("timestamp"))
        .when(meridiem, _meridiem_time(text, F.when(utc, F.lit("UTC")).otherwise(tz)))
        .otherwise(_parsed_in_zone(iso, text, tz))
    )


US_PORTAL_TIME = "M/d/yyyy, h:mm:ss[.SSSSSS] a"
"""The Azure portal's time in English (US), as its grid shows it and its CSV export writes it:
``3/11/2024, 2:02:17.418 PM``. Only ``AM``/``PM`` in capitals: locales that write ``pm`` put the
day first, and such a text stays unread (counted) rather than read with day and month swapped."""


JUL_TIME = "MMM d, yyyy h:mm:ss a"
"""java.util.logging's ``SimpleFormatter`` in English: ``Jul 17, 2024 1:50:29 PM`` (``layouts.jul``)."""


def _meridiem_time(text: Column, zone: Column) -> Column:
    """``text`` in ``US_PORTAL_TIME`` (perhaps with `` UTC`` after it) or ``JUL_TIME`` as UTC, read in ``zone``."""
    bare = F.regexp_replace(text, " UTC$", "")
    return F.to_utc_timestamp(F.coalesce(F.try_to_timestamp(bare, F.lit(US_PORTAL_TIME)), F.try_to_timestamp(bare, F.lit(JUL_TIME))), zone)


def sniff_regex(pattern: str, sample_lines: Iterable[str], share: float = 0.3) -> bool:
    """True when at least ``share`` of the non-blank sample lines start a record of the layout."""
    compiled = re.compile(pattern)
    lines = [line for line in sample_lines if line.strip()]
    hits = sum(1 for line in lines if compiled.match(line))
    return bool(lines) and hits >= max(1, share * len(lines))
