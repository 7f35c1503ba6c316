"""A Kafka record found by its content, whatever surrounds it (issue 86): the floor beneath the layouts.

Never recognised from a line by itself. Ingest gives it to a line that no layout or wrapper
read (or read as another logger's record) but that carries a Kafka mark (``MARK``): a client's
log-context prefix (``[Consumer clientId=``, ``stream-thread [``), librdkafka's ``[thrd:``, a
Kafka class or logger in any abbreviation (``o.a.k.c.consumer.internals.AbstractCoordinator``,
``kafka.coordinator``, ``aiokafka.consumer.group_coordinator``), or, where no layout read the line
at all, a Kafka exception's simple name or a catalogue template's fixed text (``WEAK_MARKS``).
The message starts at the mark (after it, where the mark is a logger); the time, level, logger
and thread are taken leniently from what stands before it: the last timestamp in any known form,
a level in any case or cut short (``WARNI``), a Kafka logger, the first bracketed field that is
neither. Runs on lines that already failed, so its regexes never touch a clean log's lines.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from . import _common as c

NAME = "anchor"
DESCRIPTION = "A Kafka record found by its content (a log-context prefix, a Kafka logger or exception) in no known layout"
EXAMPLE = "2021 Sep 14 09:10:05  | 2021-09-14 09:10:04,512 - kafka.coordinator - INFO - (Re-)joining group ledger"
FIRST_CHARS = ""

_KINDS = "|".join((*c.CLIENT_KINDS, c.WORKER_KIND))
CONTEXT = (
    rf"\[(?:{_KINDS}) (?:instanceId=[^,\]\x01]*, )?clientId=|(?:global-)?stream-(?:thread|client) \[|state-updater \[|\[thrd:"
    r"|(?:Consumer|Producer|Streams|Admin|ShareConsumer)Config values:"
)
"""Kafka's log-context prefixes, librdkafka's thread and a client's config block: a message only a
Kafka client writes opens with one."""
KAFKA_CLASS = r"(?<![\w.$])(?:org\.apache\.kafka|o\.a\.kafka|org\.apa\.kaf|o\.a\.k)\.(?:[\w$]+\.)*[A-Z][\w$]*"
"""A Kafka class (a logger or an exception), full or abbreviated by logback's ``%logger{n}``
(``o.a.k.c.c.i.ConsumerCoordinator``, half-way ``o.a.k.c.consumer.internals.X``) or Quarkus."""
PYTHON_LOGGER = (
    r"(?<![\w.$/])(?:kafka\.(?:conn|cluster|client_async)(?!\.?[\w$])"
    r"|(?:kafka\.(?:coordinator|consumer|errors)|aiokafka(?=\.\w))(?:\.\w+)*(?![\w$]))"
)
"""kafka-python's and aiokafka's loggers and kafka-python's errors (not a file path's ``/aiokafka/``,
nor the word ``aiokafka`` in an application's own sentence: its loggers are its modules').
kafka-python's ``kafka.cluster`` is a module's logger; the broker's ``kafka.cluster.Partition``
(ISR changes) is no client's line."""
SPRING_LOGGER = r"(?<![\w.$])(?:org\.springframework\.kafka\.listener|o\.s\.k\.l)\.KafkaMessageListenerContainer(?![\w])"
"""Spring for Apache Kafka's listener container, whose rebalance listener writes the Java client's callbacks."""
LOGGERS = f"{KAFKA_CLASS}|{PYTHON_LOGGER}|{SPRING_LOGGER}"
MARK = f"{CONTEXT}|{LOGGERS}"
"""A Kafka mark: a line holding one is a Kafka record wherever it stands (``records`` never lets
such a line go silently). Each alternative holds one of ``records.KAFKA_MARKERS`` or
``records.MULTI_LINE_MARKERS``, so a line that the fold counts as another logger's without keeping
it holds none."""
KAFKA_EXCEPTION = (
    r"(?<![\w.$])(?:(?:org\.apache\.kafka|o\.a\.k|kafka\.errors)\.(?:[\w$]+\.)*[A-Z][\w$]*(?:Exception|Error)"
    r"|(?:CommitFailed|RebalanceInProgress|IllegalGeneration|UnknownMemberId|FencedInstanceId|ProducerFenced|TaskMigrated"
    r"|TaskCorrupted|OffsetOutOfRange|NoOffsetForPartition|CoordinatorNotAvailable|NotCoordinator|GroupCoordinatorNotAvailable"
    r"|InvalidProducerEpoch|OutOfOrderSequence|TimeoutException|Wakeup|MemberIdRequired|GroupMaxSizeReached)(?:Exception|Error))(?![\w$])"
)
"""A Kafka exception class, qualified or by its simple name (a pasted ``CommitFailedException: ..``)."""
_LEVEL_WORDS = r"(?i:TRACE|DEBUG?|DBG|INFO?|NOTICE|WARN(?:ING|IN|I)?|WRN|ERROR?|ERR|FATAL|SEVERE|CRIT(?:ICAL)?)"
LEVEL = rf"(?<![A-Za-z0-9])({_LEVEL_WORDS})(?![A-Za-z0-9])"
"""A level token in any case or cut short (a ``%.5p`` layout's ``WARNI``, ``ERRO``; ``INF``/``WRN``/``ERR``)."""
_LEVEL_NAMES = {
    "DEBU": "DEBUG",
    "DBG": "DEBUG",
    "INF": "INFO",
    "WARNI": "WARN",
    "WARNIN": "WARN",
    "WARNING": "WARN",
    "WRN": "WARN",
    "ERRO": "ERROR",
    "ERR": "ERROR",
    "SEVERE": "ERROR",
    "CRIT": "FATAL",
    "CRITICAL": "FATAL",
    "NOTICE": "INFO",
}
LOST_ESC = r"\x1b\[[0-9;]*m|\[\d[\d;]*m|\[m(?![a-z])"
"""A colour code, also where a paste lost its ESC byte (``[32mINFO [m``; not the ``[m`` of a thread ``[main]``)."""
_DATE_TIME_GAP = r"(?:[ T_\t]|\s\|\s| {2,4})"
"""What stands between a date and its time: ``T``, a space, and the separators a paste or a
pipeline put there (a tab, widened spaces, ``_``, a `` | `` column)."""
STAMP = (
    rf"(?:\d{{4}}[-/]\d\d[-/]\d\d|\d{{8}}|\d\d[.-]\d\d[.-]\d{{4}}|\d\d? [A-Z][a-z]{{2}} \d{{4}}|[A-Z][a-z]{{2}} \d\d?, \d{{4}} @)"
    rf"{_DATE_TIME_GAP}\d\d:\d\d:\d\d(?:[.,]\d{{1,9}})?(?: ?(?:Z|[+-]\d\d:?\d\d|UTC|GMT)(?![\w:]))?"
)
"""A date and time in the forms the layouts read (``_common.ANY_TIMESTAMP``), and a C/C++ head's
compact ``yyyymmdd`` date, and a date and time split otherwise: in columns of their own
(``2024-03-11 | 14:02:17``), by a tab, by spaces a paste widened, by ``_`` (a file name's form)."""
DATED = rf"^[^\n]{{0,160}}?(?<![\d.:,-]){STAMP}"
"""A line with a date and time in its first characters (``records``: such a line carrying a Kafka
mark is a record of its own, where it would otherwise continue the record above it)."""
_LAST_STAMP = rf"(?s)^.*(?<![\d.:,-])({STAMP})"
_LAST_TIME = r"(?s)^.*(?<![\d.:,-])(\d\d:\d\d:\d\d(?:[.,]\d{1,9})?)(?![\d:])"
_THREAD = rf"\[(?!\d)(?!\s*\])(?!{_LEVEL_WORDS}\s*\])((?:[^\[\]\x01]|\[[^\[\]\x01]*\])+)\]"
"""The first bracketed field that is no time and no level (nested brackets allowed once: Camel's
``[Camel (x) thread #1 - KafkaConsumer[topic]]``)."""
_AFTER_LOGGER = rf"(?::\d+|\([\w$]+\.java:\d+\))?\]?[\s:|>\])-]*(?:{_LEVEL_WORDS}(?![A-Za-z0-9])[\s:|>\])-]*)?"
"""What may stand between a logger and its message: a line number, separators, a level (Python's
``%(name)s - %(levelname)s - %(message)s``)."""
_DECORATION = (
    r"(?:\s*(?:\*\*|`|\|))+\s*$"
    r"|(?<!\\)\"(?:\s*,\s*\"[\w@.]+\"\s*:\s*(?:\"(?:[^\"\\]|\\.)*\"|[\w.+-]+))*\s*\}\s*$"
)
"""A paste's closing decoration: markdown's ``**``, a backtick, a table's closing ``|``; and the end
of a JSON record the message was a string of (a record no JSON reader took: ``"}``, or ``",
"host": "a-0"}``)."""
_TRAILING = (
    r"(?s)^(.*?)(?:\s+\|\s+((?:[\w$]+\.)+[\w$]+)(?:\([\w$]+\.java:\d+\))?|\s+\(((?:[\w$]+\.)+[\w$]+)(?::\d+)?\)"
    r"|, [A-Za-z_][\w.]*-[\w<>]+-\d+)\s*$"
)
"""A message's closing column: `` | class.method(File.java:583)`` or `` (logger)`` (the logger,
groups 2, 3), or Python's ``, %(module)s-%(funcName)s-%(lineno)d``."""
_DECORATION_PIECE = r"(?:\s|>|\*\*|`|\||\"|')"
"""A paste's opening decoration: indentation, a markdown quote, bold, a backtick, a table's ``|``, a quote."""


_DATED_START = (
    rf"^(?:{_DECORATION_PIECE}*)[^\n]{{0,80}}?(?<![\d.:,-])(?:{STAMP}|\d\d:\d\d:\d\d(?:[.,]\d{{1,9}})?)(?![\d:])[\])]?"
    rf"(?:[\s:|,>-]*(?:\[\s*{_LEVEL_WORDS}\s*\]|TRACE|DEBUG|INFO|WARN(?:ING)?|ERROR|FATAL)(?![A-Za-z0-9]))?[\s:|,>\]-]*"
)
"""A line's head of a time (and a level) before its text, where no mark opens the text: a Go
logger's ``[sarama] 2019/07/15 03:11:40 ``, a team's ``--- INFO --- [2022-02-14T09:31:07Z] ``, a
syslog time glued to its level ``Mar 14 11:02:41.388[WARN] ``. The text after it is the message
(a catalogue template's fixed text that does not open it marked the line: ``weak_marks``)."""


def _open(weak: str | None) -> str:
    return f"{c.KAFKA_OPENINGS}|\\[thrd:|{KAFKA_EXCEPTION}|{c.KAFKAJS_NAMESPACE}" + (f"|{weak}" if weak else "")


def marked_line(value: Column, weak: str | None = None) -> Column:
    """``value`` as ``prefix SEP message``, split before its Kafka mark: an opening (a log-context
    prefix, ``[thrd:``, an exception, ``weak``), else after a Kafka logger, else after a time (and
    level) that opens the line (``_DATED_START``), else at its start past a paste's decoration. Each step reads the one before it once, so each regex appears
    once in the generated code; a step applies only where no earlier one placed ``SEP``."""
    clean = F.regexp_replace(value, LOST_ESC, "")
    opened = F.regexp_replace(clean, rf"(?s)^(.*?)((?:{_open(weak)}).*)$", f"$1{c.SEP}$2")
    unsplit = rf"(?s)^(?![\s\S]*{c.SEP})"
    by_logger = F.regexp_replace(opened, rf"{unsplit}(.*?(?:{LOGGERS}){_AFTER_LOGGER})(.*)$", f"$1{c.SEP}$2")
    dated = F.regexp_replace(by_logger, rf"(?s){unsplit[4:]}({_DATED_START})", f"$1{c.SEP}")
    return F.regexp_replace(dated, rf"{unsplit}{_DECORATION_PIECE}*", c.SEP)


def with_fields(frame: DataFrame, value: Column, where: Column, out: str, weak: str | None = None) -> DataFrame:
    """``frame`` with column ``out``: the fields (``FIELDS`` order) of ``value`` anchored on its
    Kafka mark where ``where`` holds, else null. Built in projections of their own: Spark leaves a
    column that the next projection reads more than once where it is, so each regex runs once per
    row and no projection's generated code grows past the JVM's limits (one expression that
    repeated its regexes at each use did, and whole-stage code generation gave up on it)."""
    split, rest, closed = (f"_{out}_{name}" for name in ("split", "rest", "closed"))
    return (
        frame.withColumn(split, F.when(where, F.split(marked_line(value, weak), c.SEP, 2)))
        .withColumn(rest, F.regexp_replace(F.col(split)[1], _DECORATION, ""))
        .withColumn(closed, F.regexp_replace(F.col(rest), _TRAILING, f"$1{c.SEP}$2$3"))
        .withColumn(out, F.when(F.col(split).isNotNull(), _fields(F.col(split)[0], F.col(rest), F.col(closed))))
        .drop(split, rest, closed)
    )


def split_with(value: Column, weak: str | None = None) -> Column:
    """The fields of one line anchored on its Kafka mark (``FIELDS`` order), as one expression:
    for a few rows, as in tests; a table's rows take ``with_fields``."""
    split = F.split(marked_line(value, weak), c.SEP, 2)
    rest = F.regexp_replace(split[1], _DECORATION, "")
    return _fields(split[0], rest, F.regexp_replace(rest, _TRAILING, f"$1{c.SEP}$2$3"))


def _fields(prefix: Column, rest: Column, closed: Column) -> Column:
    """``split_with``'s fields from what stands before the mark (``prefix``), the message with its
    decoration off (``rest``) and the message with its closing column split off (``closed``)."""
    tail = F.split(closed, c.SEP, 2)
    message = F.when(closed.contains(c.SEP), tail[0]).otherwise(rest)
    trailing_logger = F.when(closed.contains(c.SEP), F.nullif(tail[1], F.lit("")))
    stamp = F.nullif(F.regexp_extract(prefix, _LAST_STAMP, 1), F.lit(""))
    iso = F.regexp_replace(
        F.regexp_replace(stamp, r"(?<=\d)(?:[_\t]|\s\|\s| {2,4})(?=\d\d:)", " "), r"^(\d{4})(\d\d)(\d\d)(?=[ T])", "$1-$2-$3"
    )
    ts = F.coalesce(iso, F.regexp_extract(prefix, _LAST_TIME, 1))
    logger = F.coalesce(
        F.nullif(F.regexp_extract(prefix, f"({LOGGERS})", 1), F.lit("")),
        F.nullif(F.regexp_extract(trailing_logger, rf"^({LOGGERS})", 1), F.lit("")),
        F.lit(""),
    )
    thread = F.regexp_extract(prefix, _THREAD, 1)
    level = F.upper(F.regexp_extract(prefix, LEVEL, 1))
    names = F.create_map(*[F.lit(x) for pair in _LEVEL_NAMES.items() for x in pair])
    return F.array(ts, F.coalesce(names[level], level), logger, F.trim(thread), F.lit(""), F.ltrim(message))


WEAK_GATE_CHARS = 16
"""A catalogue template's fixed text is a mark of a Kafka line (``weak_marks``) when at least this
long; so are its fixed texts together where each is shorter (``WEAK_PART_CHARS``)."""
WEAK_PART_CHARS = 3
"""The shortest of a template's fixed texts that counts towards a mark of several (``weak_marks``)."""
OPENING_CHARS = 10
"""The text a weakly marked template's messages open with splits a line before it (``weak_marks``)
when at least this long: ``Fetch offset `` in ``fetcher->_handle_fetch_response():750 - Fetch
offset 17250 is out of range ..``, whose mark (`` is out of range for ``) stands further on."""


def _weak_parts(template) -> tuple[str, ...]:
    """The fixed texts whose presence together marks a line as the template's: its gate where that
    is long enough, else its fixed texts of ``WEAK_PART_CHARS`` or more when there are several, of
    ``WEAK_GATE_CHARS`` together (kafka-go's ``joined group `` .. `` as member `` .. `` in generation ``);
    none otherwise."""
    from ..catalogue import literal_runs

    gate = template.gate.strip()
    if len(gate) >= WEAK_GATE_CHARS and " " in gate:
        return (gate,)
    parts = tuple(text.strip() for text in literal_runs(template) if len(text.strip()) >= WEAK_PART_CHARS)
    spaced = sum(" " in text for text in parts)
    return parts if len(parts) > 1 and spaced and sum(map(len, parts)) >= WEAK_GATE_CHARS else ()


@lru_cache(maxsize=1)
def weak_marks() -> tuple[tuple[tuple[str, ...], ...], str]:
    """The catalogue templates' fixed texts (``_weak_parts``: each mark one text, or several that
    must all stand in the line) as substrings to look for, and the texts that open those templates'
    messages (the fixed text itself, or the template's leading text of ``OPENING_CHARS`` or more)
    as a regex alternation (``split_with``): a line that no layout read and that holds one is a Kafka line
    pasted without its head (```Heartbeat failed for group g because it is rebalancing```)."""
    from ..catalogue import leading_text, load_catalogue

    marked = [(t, _weak_parts(t)) for t in load_catalogue()]
    marked = [(t, parts) for t, parts in marked if parts]
    needles = tuple(sorted({parts for _, parts in marked}))
    leads = {leading_text(t).strip() for t, _ in marked}
    openings = {parts[0] for t, parts in marked if t.gate_at_start and len(parts) == 1} | {
        text for text in leads if len(text) >= OPENING_CHARS and " " in text
    }
    return needles, "|".join(re.escape(text) for text in sorted(openings, key=len, reverse=True))


WEAK_GATE_GRAM = 5
"""The length of the pieces of ``weak_gate``."""


@lru_cache(maxsize=1)
def weak_gate() -> tuple[str, ...]:
    """Pieces of ``WEAK_GATE_GRAM`` characters (no space) such that each of ``weak_marks``' texts
    holds one: a line that holds none holds no mark, and a few substring scans spare it the
    hundreds of the marks (chosen greedily, each piece the one in most texts not yet covered)."""
    texts = weak_marks()[0]  # a line holding a mark holds each of its parts: a piece of any will do
    pieces_of = {t: {part[i : i + WEAK_GATE_GRAM] for part in t for i in range(len(part) - WEAK_GATE_GRAM + 1)} - {""} for t in texts}
    pieces_of = {t: {p for p in pieces if " " not in p} or {max(t, key=len)} for t, pieces in pieces_of.items()}
    gate: list[str] = []
    uncovered = set(texts)
    while uncovered:
        counts = Counter(p for t in uncovered for p in pieces_of[t])
        best = min(counts, key=lambda p: (-counts[p], p))
        gate.append(best)
        uncovered = {t for t in uncovered if best not in pieces_of[t]}
    return tuple(gate)


def sniff(sample_lines) -> bool:
    return False


to_utc = c.any_to_utc


FRAME = r"at [\w$.<>/-]+\((?:[\w$.-]+\.(?:java|scala|kt|groovy):\d+|Native Method|Unknown Source)\)"
"""A stack frame that names its source: ``at o.a.k.X.y(X.java:1311)``, ``(Native Method)``."""
STACK_TEXT = (
    rf"^\s+(?:at \S|\.\.\. \d+ )|^\s*(?:Caused by: |Suppressed: |\.\.\. \d+ more|{c.EXCEPTION_LINE})"
    r"|(?:^|\s)at [\w$.<>/-]+\([^()\n]*\)\s*$|(?:^|\s)\.\.\. \d+ (?:more|common frames omitted)\s*$"
    rf"|^(?!.*(?:{CONTEXT}))(?:|.*?(?:[\s\"',]|\\t|#011))(?:{FRAME}|Caused by: |Suppressed: )|^(?!.*(?:{CONTEXT})).*?[\",](?:{c.EXCEPTION_LINE})"
)
"""Stack-trace text, also behind a prefix (a wrapper's, a shipper's) and inside a wrapper that
escapes its tab (Docker's and a shipper's JSON ``\\tat``, rsyslog's ``#011at``, a CSV field), a
frame followed by its jar (logback's ``~[kafka-clients-3.6.1.jar:?]``), an exception's first
line as a JSON or CSV field of its own (an export storing each line as an entry): it belongs to the record
above it, whatever Kafka class it names, and is no Kafka mark. A line holding a log-context prefix
too (a JSON record with its ``stack_trace``) is the record itself."""
_PY_MARK = re.compile(MARK)
_PY_STACK = re.compile(STACK_TEXT)


def marked(line: str) -> bool:
    """Whether ``line`` (as read) carries a Kafka mark and is no stack-trace text, which belongs to
    the record above it: the lines that ingest must read or report as not read."""
    return bool(_PY_MARK.search(line)) and not _PY_STACK.search(line)
