"""Compile a layout pattern the user names (``--layout PATTERN``) into a layout object.

``compile_layout(pattern)`` returns a ``PatternLayout`` with the same attributes and functions
as the layout modules of this package (``NAME``, ``DESCRIPTION``, ``EXAMPLE``, ``FIRST_CHARS``,
``HEAD``, ``START``, ``TEMPLATE``, ``sniff``, ``split``, ``to_utc``). Two families are read:

- logback / log4j2 / log4j 1 ``PatternLayout``: ``%d{yyyy-MM-dd HH:mm:ss.SSS} [%t] %-5level
  %logger{36} - %msg%n``, with format modifiers (``%-5p``, ``%.-1p``, ``%-40.40logger{39}``),
  composite words (``%highlight(..)``, ``%style{..}{..}``, ``%replace(..){..}``, ``%-30(..)``),
  named dates (``ISO8601``, ``DEFAULT``, ``ABSOLUTE``, ``DATE``, ``COMPACT``, ``UNIX_MILLIS``..),
  a date's time zone option (``%d{.., UTC}``, ``%d{..}{UTC}``) and ``${NAME:-default}``;
- Python ``logging`` formats: ``%(asctime)s %(levelname)-8s %(name)s: %(message)s``
  (``asctime`` as logging's default ``2021-03-01 10:00:00,515``, or ``datefmt`` if given).

Only the first physical line of a record is described: whatever follows the first ``%n``
(stack traces, ``%ex``) continues the record. Fields after the message are optional, because
a multi-line message puts them on its last line, not its first (Kafka's ``[%d] %p %m (%c)%n``).

``FIRST_CHARS`` is ``""`` when the pattern's first characters cannot be told (a thread, MDC
value or message first): the caller must then skip the first-character gate. A date with no
year or no day (``%d{ABSOLUTE}``, ``%d{HH:mm:ss.SSS}``) gives null timestamps: it names no day.
Epoch dates (``UNIX``, ``UNIX_MILLIS``, ``%(created)f``) and dates with an offset are read as
written; zone-less dates are read in the source's zone ``tz`` unless the pattern names a zone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Iterable

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..errors import ForensicsError
from . import _common as c

DIGITS = "0123456789"
UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LOWER = UPPER.lower()
ANSI = r"(?:\x1b\[[0-9;]*m)*"
"""Colour codes that logback's ``%highlight``/``%red``.. write even into files."""
NAME_CHARS = r"[\w.$-]+"
FREE_TEXT = r"[^\x01]*?"

SAMPLE = {
    "level": "INFO",
    "logger": "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator",
    "thread": "main",
    "message": "[Consumer clientId=consumer-orders-1, groupId=orders] (Re-)joining group",
    "file": "ConsumerCoordinator.java",
    "method": "joinGroup",
}
"""Values of the generated ``EXAMPLE`` line; its date is 2024-03-11 14:02:17.418 UTC."""


# ---------------------------------------------------------------- dates


@dataclass(frozen=True)
class DateSpec:
    """A date conversion: its regex (no groups), how to parse it, and a sample of it.

    ``kind`` is ``datetime``, ``undated`` (no year or day: null timestamps), ``epoch_s`` or
    ``epoch_ms``. ``normalise`` is an optional ``(regex, replacement)`` applied before parsing
    with ``spark_format`` (drops day names, unifies ``T``/space, separates adjacent fractions).
    """

    regex: str
    kind: str
    spark_format: str = ""
    normalise: tuple[str, str] | None = None
    zoned: bool = False
    zone: str | None = None
    sample: str = ""
    first: str | None = DIGITS
    pad_millis: bool = False


@dataclass(frozen=True)
class _DateToken:
    regex: str
    spark: str
    emit: str | None = None  # None: keep the matched text; else write this instead
    sample: str = ""
    numeric: bool = False
    text: str | None = None  # literal text, quoted in the Spark pattern together with its neighbours


NAMED_DATES = {
    "DEFAULT": "yyyy-MM-dd HH:mm:ss,SSS",
    "DEFAULT_PERIOD": "yyyy-MM-dd HH:mm:ss.SSS",
    "DEFAULT_MICROS": "yyyy-MM-dd HH:mm:ss,SSSSSS",
    "DEFAULT_NANOS": "yyyy-MM-dd HH:mm:ss,SSSSSSSSS",
    "ISO8601": "yyyy-MM-dd'T'HH:mm:ss,SSS",
    "ISO8601_BASIC": "yyyyMMdd'T'HHmmss,SSS",
    "ISO8601_BASIC_PERIOD": "yyyyMMdd'T'HHmmss.SSS",
    "ISO8601_PERIOD": "yyyy-MM-dd'T'HH:mm:ss.SSS",
    "ISO8601_PERIOD_MICROS": "yyyy-MM-dd'T'HH:mm:ss.SSSSSS",
    "ISO8601_OFFSET_DATE_TIME_HH": "yyyy-MM-dd'T'HH:mm:ss,SSSX",
    "ISO8601_OFFSET_DATE_TIME_HHMM": "yyyy-MM-dd'T'HH:mm:ss,SSSXX",
    "ISO8601_OFFSET_DATE_TIME_HHCMM": "yyyy-MM-dd'T'HH:mm:ss,SSSXXX",
    "ABSOLUTE": "HH:mm:ss,SSS",
    "ABSOLUTE_PERIOD": "HH:mm:ss.SSS",
    "ABSOLUTE_MICROS": "HH:mm:ss,SSSSSS",
    "ABSOLUTE_NANOS": "HH:mm:ss,SSSSSSSSS",
    "COMPACT": "yyyyMMddHHmmssSSS",
    "DATE": "dd MMM yyyy HH:mm:ss,SSS",
    "DATE_PERIOD": "dd MMM yyyy HH:mm:ss.SSS",
    "US_MONTH_DAY_YEAR2_TIME": "dd/MM/yy HH:mm:ss.SSS",
    "US_MONTH_DAY_YEAR4_TIME": "dd/MM/yyyy HH:mm:ss.SSS",
}
"""log4j2's named date formats (log4j 1 and logback know ISO8601, ABSOLUTE and DATE)."""
EPOCH_DATES = {"UNIX": DateSpec(r"\d{9,11}", "epoch_s", sample="1710165737"),
               "UNIX_MILLIS": DateSpec(r"\d{12,14}", "epoch_ms", sample="1710165737418")}
DEFAULT_DATE = NAMED_DATES["DEFAULT"]
"""``%d`` alone: the same text in logback (ISO8601), log4j 1 (ISO8601) and log4j2 (DEFAULT)."""
FLEX_T = ("ISO8601",)
"""log4j2 writes ``T`` for ``%d{ISO8601}``, logback and log4j 1 a space: both are read."""

_NUMBER_SAMPLES = {"y": "2024", "M": "03", "d": "11", "D": "071", "H": "14", "k": "14", "K": "02",
                   "h": "02", "m": "02", "s": "17"}
_TEXT_SAMPLES = {"MMM": "Mar", "MMMM": "March", "E": "Mon", "EEEE": "Monday"}
DATE_LETTERS = "yMLdDHhkKmsSnaEzZXx"


def _date_error(fmt: str, problem: str) -> ForensicsError:
    return ForensicsError(
        f"Cannot read the date format {fmt!r} of the layout pattern: {problem}.",
        f"Use the letters {DATE_LETTERS} (java.time / SimpleDateFormat), quoted text, or a named "
        f"format ({', '.join([*NAMED_DATES, *EPOCH_DATES])}).",
    )


def _date_parts(fmt: str) -> list[tuple[bool, str]]:
    """``(is_field, text)`` runs of a Java date pattern: letter runs, and literal text."""
    parts: list[tuple[bool, str]] = []
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch == "'":
            text, i = _quoted(fmt, i)
            parts.append((False, text))
        elif ch.isalpha():
            j = i
            while j < len(fmt) and fmt[j] == ch:
                j += 1
            parts.append((True, fmt[i:j]))
            i = j
        elif ch in "[]{}#":
            raise _date_error(fmt, f"{ch!r} (optional sections and reserved characters) is not supported")
        else:
            parts.append((False, ch))
            i += 1
    return parts


def _quoted(fmt: str, i: int) -> tuple[str, int]:
    """Text of the quoted literal starting at ``fmt[i] == "'"`` (``''`` is a quote) and its end."""
    if fmt.startswith("''", i):
        return "'", i + 2
    text, j = "", i + 1
    while j < len(fmt):
        if fmt[j] != "'":
            text, j = text + fmt[j], j + 1
        elif fmt.startswith("''", j):
            text, j = text + "'", j + 2
        else:
            return text, j + 1
    raise _date_error(fmt, "a quote is not closed")


def _numeric(letter: str, count: int) -> _DateToken:
    if letter == "y":
        return _DateToken(r"\d{2}" if count == 2 else r"\d{4}", "yy" if count == 2 else "yyyy",
                          sample="24" if count == 2 else "2024", numeric=True)
    if letter in "Sn":
        n = min(count, 9)
        return _DateToken(rf"\d{{{n}}}", "S" * n, sample="418".ljust(n, "0")[:n], numeric=True)
    if letter == "D":
        return _DateToken(r"\d{1,3}" if count < 3 else r"\d{3}", "D" * min(count, 3),
                          sample="71" if count < 3 else "071", numeric=True)
    sample = _NUMBER_SAMPLES[letter]
    if count == 1:
        return _DateToken(r"\d{1,2}", letter, sample=sample.lstrip("0") or "0", numeric=True)
    return _DateToken(r"\d{2}", letter * 2, sample=sample, numeric=True)


def _date_token(fmt: str, letters: str) -> _DateToken:
    """Regex, Spark parse pattern and sample of one run of a pattern letter."""
    letter, count = letters[0], len(letters)
    if letter in "ML" and count >= 3:
        if count == 3:
            return _DateToken(r"[A-Z][a-z]{2}", "MMM", sample="Mar")
        return _DateToken(r"[A-Z][a-z]+", "MMMM", sample="March")
    if letter in "ML":
        return _numeric("M", count)
    if letter in "yDdHhkKmsSn":
        return _numeric(letter, count)
    if letter == "a":
        return _DateToken(r"[AP]M", "a", sample="PM")
    if letter == "E":  # Spark parses no day names: matched, then dropped before parsing
        return _DateToken(r"[A-Z][a-z]{2}" if count < 4 else r"[A-Z][a-z]+", "", emit="",
                          sample="Mon" if count < 4 else "Monday")
    if letter in "Xx" and count <= 3:
        z = "Z|" if letter == "X" else ""
        body = (r"[+-]\d\d(?:\d\d)?", r"[+-]\d{4}", r"[+-]\d\d:\d\d")[count - 1]
        sample = ("Z", "Z", "Z") if letter == "X" else ("+00", "+0000", "+00:00")
        return _DateToken(f"(?:{z}{body})", letter * count, sample=sample[count - 1])
    if letter == "Z" and count <= 3:
        return _DateToken(r"[+-]\d{4}", "Z", sample="+0000")
    if letter == "Z" and count == 5:
        return _DateToken(r"(?:Z|[+-]\d\d:\d\d)", "XXX", sample="Z")
    if letter == "z" and count <= 3:
        return _DateToken(r"[A-Z][A-Za-z]{1,5}", "z", sample="UTC")
    raise _date_error(fmt, f"the pattern letters {letters!r} are not supported")


def _spark_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def compile_date(fmt: str, zone: str | None = None, pad_millis: bool = False) -> DateSpec:
    """A ``DateSpec`` of a Java date pattern or named format; ``zone``: the pattern's own zone."""
    name = fmt.strip()
    if name in EPOCH_DATES:
        return EPOCH_DATES[name]
    tokens: list[_DateToken] = []
    letters = ""
    for is_field, text in _date_parts(NAMED_DATES.get(name, fmt)):
        if not is_field:
            flexible = name in FLEX_T and text == "T"
            tokens.append(_DateToken("[ T]", "", emit=" ", sample="T", text=" ") if flexible
                          else _DateToken(_rx(text), "", sample=text, text=text))
            continue
        token = _date_token(fmt, text)
        if text[0] in "Sn" and tokens and tokens[-1].numeric:  # Spark cannot split ssSSS: add a '.'
            tokens.append(_DateToken("", "", emit=".", text="."))
        tokens.append(token)
        letters += text[0]
    if not tokens:
        raise _date_error(fmt, "it is empty")
    dated = "y" in letters and (("d" in letters and ("M" in letters or "L" in letters)) or "D" in letters)
    normalise = None
    if any(t.emit is not None for t in tokens):
        kept = [t for t in tokens if t.emit is None]
        regex = "".join(f"({t.regex})" if t.emit is None else f"(?:{t.regex})" for t in tokens)
        template, group = "", 0
        for t in tokens:
            if t.emit is None:
                group += 1
                template += f"${group}"
            else:
                template += t.emit.replace("\\", "\\\\").replace("$", "\\$")
        normalise = (f"^{regex}$", template) if kept else None
    first = tokens[0].sample[:1]
    return DateSpec(
        regex="".join(f"(?:{t.regex})" if t.regex and "|" in t.regex else t.regex for t in tokens),
        kind="datetime" if dated else "undated",
        spark_format=_spark_format(tokens),
        normalise=normalise,
        zoned=bool(set(letters) & set("XxZz")),
        zone=zone,
        sample="".join(t.sample for t in tokens),
        first=DIGITS if first.isdigit() else UPPER if first.isupper() else first or None,
        pad_millis=pad_millis,
    )


def _spark_format(tokens: list[_DateToken]) -> str:
    """The Spark parse pattern of ``tokens``: letters as they are, each run of literals quoted once."""
    out, run = "", ""
    for t in tokens:
        if t.text is not None:
            run += t.text
        elif t.spark:
            out, run = out + (_spark_literal(run) if run else "") + t.spark, ""
    return out + (_spark_literal(run) if run else "")


def _split_zone(option: str) -> tuple[str, str | None]:
    """logback's ``{pattern, zone}`` option: the zone is the part after the last comma if it
    names a zone (``,SSS`` in ``HH:mm:ss,SSS`` does not). Quotes around the pattern go."""
    head, comma, tail = option.rpartition(",")
    zone = tail.strip()
    if comma and re.fullmatch(r"[A-Za-z]+(?:/[A-Za-z_+-]+)+|UTC|GMT|Z|(?:GMT|UTC)?[+-]\d\d?(?::?\d\d)?", zone):
        return head.strip().strip('"'), zone
    return option.strip().strip('"'), None


def date_to_utc(spec: DateSpec, ts_text: Column, tz: Column) -> Column:
    """UTC timestamp of a date's text per ``spec``: zone-less text is read in ``spec.zone`` or ``tz``."""
    if spec.kind == "epoch_s":
        return F.timestamp_micros(F.round(ts_text.try_cast("decimal(20,6)") * 1_000_000).cast("long"))
    if spec.kind == "epoch_ms":
        return F.timestamp_millis(ts_text.try_cast("long"))
    if spec.kind != "datetime":
        return F.lit(None).cast("timestamp")
    text = ts_text
    if spec.pad_millis:
        text = F.regexp_replace(F.regexp_replace(text, r"\.(\d)$", ".00$1"), r"\.(\d\d)$", ".0$1")
    if spec.normalise:
        text = F.regexp_replace(text, *spec.normalise)
    parsed = F.try_to_timestamp(text, F.lit(spec.spark_format))
    if spec.zoned:
        return parsed
    return F.to_utc_timestamp(parsed, F.lit(spec.zone) if spec.zone else tz)


# ---------------------------------------------------------------- pieces of a line


@dataclass(frozen=True)
class Piece:
    """One part of a line: a regex (no groups), the field it fills, what it may start with."""

    regex: str
    field: str | None = None
    first: str | None = None  # possible first characters; None: any
    empty: bool = False  # may match nothing
    sample: str = ""
    lazy: bool = False  # free text, bounded by the literal that follows it
    literal: str | None = None
    newline: bool = False
    levels: tuple[tuple[str, str], ...] = ()  # level text -> level name, where they differ
    date: DateSpec | None = None


def _rx(text: str) -> str:
    """``text`` as a regex matching itself, in both Python and Java syntax."""
    return "".join("\\" + ch if ch in ".^$*+?{}[]\\|()" else "\\t" if ch == "\t" else ch for ch in text)


def literal(text: str) -> Piece:
    return Piece(_rx(text), first=text[:1], sample=text, literal=text)


def free_text(field: str | None = None, sample: str = "") -> Piece:
    return Piece(FREE_TEXT, field=field, empty=True, sample=sample, lazy=True)


def date_piece(spec: DateSpec) -> Piece:
    return Piece(spec.regex, field="ts_text", first=spec.first, sample=spec.sample, date=spec)


JAVA_LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")
PYTHON_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def level_piece(names: Iterable[str], shown: dict[str, str] | None = None, keep: int | None = None,
                from_end: bool = True, lower: bool = False) -> Piece:
    """A level: ``shown`` relabels levels, ``keep`` truncates their text (``from_end``: keeps
    the first ``keep`` characters, as ``%.-1p``), ``lower`` lower-cases it. Text that differs
    from the level's name is mapped back in ``split``."""
    mapping: dict[str, str] = {}
    for level in names:
        text = (shown or {}).get(level, level)
        text = text.lower() if lower else text
        if keep is not None:
            text = text[:keep] if from_end else text[-keep:]
        mapping.setdefault(text, level)
    sample = next(text for text, level in mapping.items() if level == "INFO")
    if all(text == level for text, level in mapping.items()):
        return Piece(f"(?:{c.LEVELS})", field="level", first="TDINWEFSC", sample=sample)
    alternatives = sorted(mapping, key=len, reverse=True)
    return Piece(
        "(?:" + "|".join(_rx(text) for text in alternatives) + ")",
        field="level",
        first="".join(sorted({text[:1] for text in alternatives})),
        sample=sample,
        levels=tuple(sorted(mapping.items())),
    )


def _padded(pieces: list[Piece], left: bool, width: int) -> list[Piece]:
    """Pieces padded with spaces to ``width``: after them (``left``-justified) or before."""
    if not width or not pieces:
        return pieces
    pad = Piece(" *", first=" ", empty=True, sample=" " * (width - len("".join(p.sample for p in pieces))))
    return [*pieces, pad] if left else [pad, *pieces]


def _truncated(pieces: list[Piece], keep: int | None, from_end: bool) -> list[Piece]:
    """Samples cut as a maximum width cuts the text (regexes already allow cut names)."""
    if keep is None:
        return pieces
    cut = (lambda text: text[:keep]) if from_end else (lambda text: text[-keep:])
    return [p if p.literal is not None else replace(p, sample=cut(p.sample)) for p in pieces]


def loose(pieces: list[Piece]) -> list[Piece]:
    """Pieces whose text is rewritten (``%replace``, ``%equals``): one free-text piece that
    still fills the most useful field inside (message, level, logger or thread)."""
    fields = [p.field for p in pieces if p.field]
    for wanted in ("message", "level", "logger", "thread"):
        if wanted in fields:
            sample = next(p.sample for p in pieces if p.field == wanted)
            return [free_text(wanted, sample)]
    return [free_text(sample="".join(p.sample for p in pieces))]


# ---------------------------------------------------------------- Java PatternLayout


@dataclass(frozen=True)
class Modifier:
    left: bool = False
    width: int = 0
    keep: int | None = None
    from_end: bool = False  # ``.-N``: keep the first N characters


@dataclass
class Node:
    """A parsed conversion: ``word`` (``""`` for literal text or an anonymous ``%(..)`` group)."""

    word: str
    text: str = ""
    modifier: Modifier = field(default_factory=Modifier)
    options: list[str] = field(default_factory=list)
    children: list["Node"] | None = None


_MODIFIER = re.compile(r"(-?)(\d*)(?:\.(-?)(\d+))?")
_WORD = re.compile(r"[A-Za-z]+")

COLOURS = ("highlight", "style", "clr", "black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
           "gray", "boldRed", "boldGreen", "boldYellow", "boldBlue", "boldMagenta", "boldCyan", "boldWhite")
JAVA_WORDS: dict[str, tuple[str, ...]] = {
    "date": ("d", "date"),
    "level": ("p", "le", "level"),
    "logger": ("c", "lo", "logger"),
    "thread": ("t", "thread", "tn", "threadName"),
    "message": ("m", "msg", "message"),
    "newline": ("n",),
    "class": ("C", "class"),
    "method": ("M", "method"),
    "line": ("L", "line"),
    "file": ("F", "file"),
    "location": ("l", "location"),
    "number": ("pid", "processId", "r", "relative", "tid", "threadId", "T", "tp", "threadPriority",
               "sn", "sequenceNumber", "N", "nano"),
    "uuid": ("u", "uuid"),
    "text": ("X", "mdc", "MDC", "K", "map", "MAP", "x", "ndc", "NDC", "marker", "markerSimpleName",
             "property", "cn", "contextName", "kvp", "fqcn"),
    "throwable": ("ex", "exception", "throwable", "xEx", "xException", "xThrowable", "rEx", "rException",
                  "rThrowable", "rootException", "wEx", "wex", "nopex", "nopexception"),
    "colour": COLOURS,
    "group": ("enc", "encode", "maxLen", "maxLength"),
    "loose": ("replace", "equals", "equalsIgnoreCase", "notEmpty", "varsNotEmpty", "variablesNotEmpty"),
}
_KIND = {word: kind for kind, words in JAVA_WORDS.items() for word in words}
COMPOSITE = {"colour", "group", "loose"}


def _pattern_error(pattern: str, problem: str, fix: str | None = None) -> ForensicsError:
    return ForensicsError(f"Cannot read the layout pattern {pattern!r}: {problem}.", fix)


def _unknown_word(pattern: str, word: str) -> ForensicsError:
    supported = "; ".join(f"{kind} " + " ".join(f"%{w}" for w in words) for kind, words in JAVA_WORDS.items())
    return _pattern_error(pattern, f"unknown conversion word %{word}",
                          f"Supported conversion words: {supported}. %% is a percent sign.")


def _braced(pattern: str, i: int) -> tuple[str, int]:
    """The text inside the balanced braces opening at ``pattern[i]``, and the index after them."""
    depth, j = 0, i
    while j < len(pattern):
        depth += {"{": 1, "}": -1}.get(pattern[j], 0)
        if depth == 0:
            return pattern[i + 1:j], j + 1
        j += 1
    raise _pattern_error(pattern, f"the brace at position {i} is not closed")


def substitute_properties(pattern: str) -> str:
    """Replace ``${NAME:-default}`` by its default (logback / Spring Boot property syntax)."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("${", i):
            body, i = _braced(pattern, i + 1)
            name, sep, default = body.partition(":-")
            if not sep:
                raise _pattern_error(pattern, f"${{{name}}} is a property reference",
                                     "Put its value into the pattern (as your logs show it).")
            out += substitute_properties(default)
        else:
            out, i = out + pattern[i], i + 1
    return out


def parse_java(pattern: str, i: int = 0, closing: str | None = None) -> tuple[list[Node], int]:
    """Nodes of a PatternLayout from ``pattern[i]`` up to ``closing`` (``)`` in a composite)."""
    nodes: list[Node] = []
    while i < len(pattern):
        ch = pattern[i]
        if closing and ch == closing:
            return nodes, i
        if ch == "\\" and i + 1 < len(pattern) and pattern[i + 1] in "(){}%\\nt":
            escaped = pattern[i + 1]
            nodes.append(Node("n") if escaped == "n" else Node("", text="\t" if escaped == "t" else escaped))
            i += 2
        elif ch == "%" and pattern.startswith("%%", i):
            nodes.append(Node("", text="%"))
            i += 2
        elif ch == "%":
            node, i = _conversion(pattern, i + 1)
            nodes.append(node)
        else:
            nodes.append(Node("", text=ch))
            i += 1
    if closing:
        raise _pattern_error(pattern, "a parenthesis is not closed")
    return nodes, i


def _conversion(pattern: str, i: int) -> tuple[Node, int]:
    """The conversion after a ``%`` at ``pattern[i]``: modifier, word, options, children."""
    m = _MODIFIER.match(pattern, i)
    modifier = Modifier(left=m.group(1) == "-", width=int(m.group(2) or 0),
                        keep=int(m.group(4)) if m.group(4) else None, from_end=m.group(3) == "-")
    i = m.end()
    w = _WORD.match(pattern, i)
    word = w.group(0) if w else ""
    i = w.end() if w else i
    if word and word not in _KIND:
        raise _unknown_word(pattern, word)
    if not word and not pattern.startswith("(", i):
        raise _pattern_error(pattern, f"a % at position {i - 1} has no conversion word", "Write %% for a percent sign.")
    node = Node(word, modifier=modifier)
    if pattern.startswith("(", i) and (not word or _KIND[word] in COMPOSITE):
        node.children, i = parse_java(pattern, i + 1, ")")
        i += 1
    while pattern.startswith("{", i):
        option, i = _braced(pattern, i)
        node.options.append(option)
    if word and _KIND[word] in COMPOSITE and node.children is None:
        if not node.options:
            raise _pattern_error(pattern, f"%{word} needs a sub-pattern in (..) or {{..}}")
        node.children, _ = parse_java(node.options.pop(0))
    return node, i


def _java_level(node: Node) -> Piece:
    """``%level`` with log4j2's options: ``{length=1}``, ``{lowerCase=true}``, ``{WARN=Warning}``."""
    shown: dict[str, str] = {}
    keep, lower = node.modifier.keep, False
    for option in ",".join(node.options).split(","):
        key, _, value = (part.strip() for part in option.partition("="))
        if key == "length" and value.isdigit():
            keep = int(value)
        elif key == "lowerCase":
            lower = value.lower() == "true"
        elif key.upper() in JAVA_LEVELS and value:
            shown[key.upper()] = value
    from_end = node.modifier.from_end or (keep is not None and node.modifier.keep is None)
    return level_piece(JAVA_LEVELS, shown, keep, from_end, lower)


def _java_date(node: Node) -> Piece:
    option = node.options[0] if node.options else DEFAULT_DATE
    fmt, zone = _split_zone(option)
    if len(node.options) > 1 and node.options[1].strip():
        zone = node.options[1].strip()
    return date_piece(compile_date(fmt or DEFAULT_DATE, zone))


def _java_simple(kind: str, node: Node) -> list[Piece]:
    """Pieces of a conversion that is not composite."""
    if kind == "date":
        return [_java_date(node)]
    if kind == "level":
        return [_java_level(node)]
    if kind in ("logger", "class"):
        first = None if node.modifier.keep else UPPER + LOWER + "_$"
        return [Piece(NAME_CHARS, field=kind, first=first, sample=SAMPLE["logger"])]
    if kind == "thread":
        return [free_text("thread", SAMPLE["thread"])]
    if kind == "message":
        return [Piece(".*", field="message", empty=True, sample=SAMPLE["message"])]
    if kind == "newline":
        return [Piece("", newline=True)]
    if kind == "number":
        return [Piece(r"-?\d+", first=DIGITS + "-", sample="4242")]
    if kind == "line":
        return [Piece(r"(?:\d+|\?)", first=DIGITS + "?", sample="42")]
    if kind == "file":
        return [Piece(r"[^\s\x01:()]*", empty=True, sample=SAMPLE["file"])]
    if kind == "method":
        return [Piece(r"[^\s\x01()]*", empty=True, sample=SAMPLE["method"])]
    if kind == "location":
        return [Piece(r"[^\s\x01]*", empty=True,
                      sample=f"{SAMPLE['logger']}.{SAMPLE['method']}({SAMPLE['file']}:42)")]
    if kind == "uuid":
        return [Piece(r"[0-9a-fA-F-]{36}", first=DIGITS + "abcdefABCDEF", sample="0" * 8 + "-0000" * 3 + "-" + "0" * 12)]
    if kind == "throwable":
        return []
    return [free_text()]


def java_pieces(nodes: list[Node]) -> list[Piece]:
    """The pieces of parsed PatternLayout nodes, in line order."""
    pieces: list[Piece] = []
    for node in nodes:
        if not node.word and node.children is None:
            pieces.append(literal(node.text))
            continue
        kind = _KIND.get(node.word, "group")
        if node.children is not None:
            inner = java_pieces(node.children)
            if kind == "loose":
                inner = loose(_cut_at_newline(inner))
            elif kind == "colour":
                ansi = Piece(ANSI, first="\x1b", empty=True)
                inner = [ansi, *inner, ansi]
        else:
            inner = _java_simple(kind, node)
        mod = node.modifier
        pieces += _padded(_truncated(inner, mod.keep, mod.from_end), mod.left, mod.width)
    return pieces


# ---------------------------------------------------------------- Python logging


_PY_CONVERSION = re.compile(
    r"%\((?P<key>[^)]*)\)(?P<flags>[#0\- +]*)(?P<width>\d+)?(?:\.(?P<prec>\d+))?(?P<type>[diouxXeEfFgGcrsa])"
)
PYTHON_ATTRIBUTES = ("asctime", "created", "msecs", "relativeCreated", "levelname", "levelno", "name",
                     "threadName", "thread", "process", "processName", "taskName", "module", "funcName",
                     "filename", "pathname", "lineno", "message")
PYTHON_LEVEL_NUMBERS = {"10": "DEBUG", "20": "INFO", "30": "WARN", "40": "ERROR", "50": "FATAL"}
ASCTIME_DEFAULT = "yyyy-MM-dd HH:mm:ss,SSS"
"""logging's default ``asctime``: ``2021-03-01 10:00:00,515`` (``%Y-%m-%d %H:%M:%S`` + ``,msecs``)."""
STRFTIME = {"Y": "yyyy", "y": "yy", "m": "MM", "d": "dd", "H": "HH", "I": "hh", "M": "mm", "S": "ss",
            "b": "MMM", "h": "MMM", "B": "MMMM", "a": "EEE", "A": "EEEE", "p": "a", "j": "DDD", "z": "Z",
            "Z": "z", "F": "yyyy-MM-dd", "T": "HH:mm:ss"}


def strftime_to_java(datefmt: str) -> str:
    """A ``time.strftime`` format (logging's ``datefmt``) as a Java date pattern."""
    out, i = "", 0
    while i < len(datefmt):
        if datefmt[i] == "%" and i + 1 < len(datefmt):
            code = datefmt[i + 1]
            if code == "%":
                out += "'%'"
            elif code in STRFTIME:
                out += STRFTIME[code]
            else:
                raise ForensicsError(f"Cannot read the date format {datefmt!r}: %{code} is not supported.",
                                     f"Supported: {', '.join('%' + k for k in STRFTIME)}, %%.")
            i += 2
        else:
            ch = datefmt[i]
            out += ch if ch in " -:/.," else _spark_literal(ch)
            i += 1
    return out


def _py_piece(pattern: str, m: re.Match, datefmt: str | None) -> list[Piece]:
    key, kind = m.group("key"), m.group("type")
    if key == "asctime":
        return [date_piece(compile_date(strftime_to_java(datefmt) if datefmt else ASCTIME_DEFAULT))]
    if key == "created":
        float_ = kind in "fFeEgG"
        return [date_piece(DateSpec(r"\d{9,11}(?:\.\d+)?" if float_ else r"\d{9,11}", "epoch_s",
                                    sample="1710165737.418" if float_ else "1710165737"))]
    if key == "msecs":
        padded = "0" in m.group("flags") and m.group("width") == "3"
        return [Piece(r"\d{3}" if padded else r"\d{1,3}", field="msecs", first=DIGITS, sample="418")]
    if key == "levelname":
        prec = m.group("prec")
        return [level_piece(PYTHON_LEVELS, keep=int(prec) if prec else None)]
    if key == "levelno":
        return [Piece(r"\d+", field="level", first=DIGITS, sample="20", levels=tuple(PYTHON_LEVEL_NUMBERS.items()))]
    if key == "name":
        return [Piece(NAME_CHARS, field="logger", first=UPPER + LOWER + "_", sample="kafka.consumer.group")]
    if key == "threadName":
        return [free_text("thread", "MainThread")]
    if key in ("thread", "process", "lineno", "relativeCreated"):
        regex = r"-?\d+(?:\.\d+)?" if kind in "fFeEgG" else r"-?\d+"
        return [Piece(regex, field="thread_id" if key == "thread" else None, first=DIGITS + "-", sample="4242")]
    if key in ("module", "funcName", "filename"):
        return [Piece(r"[^\s\x01:]+", first=None, sample="consumer")]
    if key in ("processName", "taskName", "pathname"):
        return [free_text(sample="MainProcess")]
    if key == "message":
        return [Piece(".*", field="message", empty=True, sample=SAMPLE["message"])]
    raise _pattern_error(pattern, f"unknown logging attribute %({key})",
                         f"Supported attributes: {', '.join(PYTHON_ATTRIBUTES)}.")


def python_pieces(pattern: str, datefmt: str | None = None) -> list[Piece]:
    """The pieces of a ``logging`` format string, in line order."""
    pieces: list[Piece] = []
    i = 0
    for m in _PY_CONVERSION.finditer(pattern):
        pieces += _py_literals(pattern, pattern[i:m.start()])
        left, width = "-" in m.group("flags"), int(m.group("width") or 0)
        inner = _py_piece(pattern, m, datefmt)
        if "0" not in m.group("flags"):
            inner = _padded(inner, left, width)
        pieces += inner
        i = m.end()
    return pieces + _py_literals(pattern, pattern[i:])


def _py_literals(pattern: str, text: str) -> list[Piece]:
    if re.search(r"%(?!%)", text.replace("%%", "")):
        raise _pattern_error(pattern, f"{text!r} has a % that is not a %(name)s conversion", "Write %% for a percent sign.")
    return [literal(text.replace("%%", "%"))] if text else []


# ---------------------------------------------------------------- the layout


def _cut_at_newline(pieces: list[Piece]) -> list[Piece]:
    """The pieces of a record's first line: up to the first ``%n``."""
    for i, piece in enumerate(pieces):
        if piece.newline:
            return pieces[:i]
    return pieces


def _with_fallbacks(pieces: list[Piece]) -> list[Piece]:
    """The caller's class stands in for a missing logger, the thread id for a thread name."""
    fields = {p.field for p in pieces}
    out = []
    for p in pieces:
        stand_in = {"class": "logger", "thread_id": "thread"}.get(p.field or "")
        if stand_in:
            p = replace(p, field=stand_in if stand_in not in fields else None)
            fields.add(stand_in)
        out.append(p)
    return out


def _regex(pieces: list[Piece], named: set[str], lazy_message: bool) -> str:
    """The regex of ``pieces``; fields in ``named`` are captured (their first piece only)."""
    out = ""
    for i, p in enumerate(pieces):
        core = p.regex
        nxt = pieces[i + 1] if i + 1 < len(pieces) else None
        if p.lazy and nxt is not None and nxt.literal and not nxt.literal[0].isspace():
            core = rf"[^{_class_char(nxt.literal[0])}\x01]*"  # cannot pass the literal after it
        if p.field == "message":
            core = ".*?" if lazy_message else ".*"
        if p.field in named:
            named.discard(p.field)
            out += f"(?P<{p.field}>{core})"
        else:
            out += f"(?:{core})" if "|" in core else core
    return out


def _class_char(ch: str) -> str:
    return "\\" + ch if ch in "]\\^-[&" else ch


def first_chars(pieces: list[Piece]) -> str:
    """Characters a line may start with, or ``""`` when any character may start it."""
    chars = ""
    for p in pieces:
        if p.first is None:
            return ""
        chars += p.first
        if not p.empty:
            return "".join(sorted(set(chars)))
    return ""


@dataclass(frozen=True)
class PatternLayout:
    """A layout compiled from a user's pattern: the layout-module contract (see the package)."""

    NAME: str
    DESCRIPTION: str
    EXAMPLE: str
    FIRST_CHARS: str
    HEAD: str
    START: str
    TEMPLATE: str
    PATTERN: str
    FAMILY: str
    date: DateSpec | None = None
    levels: tuple[tuple[str, str], ...] = ()

    def sniff(self, sample_lines) -> bool:
        return c.sniff_regex(self.START, sample_lines)

    def split(self, value: Column) -> Column:
        parts = c.split_fields(value, self.HEAD, self.TEMPLATE)
        if not self.levels:
            return parts
        names = F.create_map(*[F.lit(x) for pair in self.levels for x in pair])
        level = F.coalesce(names[parts[1]], parts[1])
        return F.array(parts[0], level, parts[2], parts[3], parts[4], parts[5])

    def to_utc(self, ts_text: Column, tz: Column) -> Column:
        if self.date is None:
            return F.lit(None).cast("timestamp")
        return date_to_utc(self.date, ts_text, tz)


def family(pattern: str) -> str:
    """``python`` for ``%(name)s`` conversions, else ``java`` (logback / log4j PatternLayout)."""
    return "python" if _PY_CONVERSION.search(pattern) else "java"


_JAVA_CONVERSION = re.compile(r"%-?\d*(?:\.-?\d+)?([A-Za-z]+)")


def looks_like_layout_pattern(text: str) -> bool:
    """True for a layout pattern rather than a file name: a ``%(name)s`` conversion, or known
    PatternLayout words (two of them, or one with a space, brace or bracket in the text).
    Pure text test: a CLI should prefer an existing path of that name."""
    if _PY_CONVERSION.search(text):
        return True
    words = [m.group(1) for m in _JAVA_CONVERSION.finditer(text) if m.group(1) in _KIND]
    return len(words) >= 2 or (len(words) == 1 and any(ch in text for ch in " {[|("))


def compile_layout(pattern: str, name: str = "user", datefmt: str | None = None) -> PatternLayout:
    """A layout for lines written with ``pattern`` (PatternLayout or ``logging`` format).

    ``datefmt`` is Python logging's ``datefmt`` (strftime) for ``%(asctime)s``; without it
    asctime is logging's default. Raises ``ForensicsError`` for unknown conversions, or for a
    pattern with neither a date nor a message.
    """
    if not isinstance(pattern, str) or not pattern.strip():
        raise ForensicsError("The layout pattern is empty.", "Pass the pattern your logging configuration uses.")
    kind = family(pattern)
    if kind == "python":
        pieces = python_pieces(pattern, datefmt)
    else:
        pieces = java_pieces(parse_java(substitute_properties(pattern))[0])
    pieces = _merge_literals(_with_fallbacks(_cut_at_newline(pieces)))
    fields = [p.field for p in pieces if p.field]
    if "ts_text" not in fields and "message" not in fields:
        raise _pattern_error(pattern, "it has neither a date (%d, %(asctime)s) nor a message (%m, %(message)s)",
                             "Give the whole pattern of a record's first line, in PatternLayout (%d %p %c - %m%n) "
                             "or Python logging (%(asctime)s %(levelname)s %(message)s) syntax.")
    return _layout(pattern, name, kind, pieces, datefmt)


def _merge_literals(pieces: list[Piece]) -> list[Piece]:
    out: list[Piece] = []
    for p in pieces:
        if out and p.literal is not None and out[-1].literal is not None:
            p = literal(out.pop().literal + p.literal)
        out.append(p)
    return out


def _layout(pattern: str, name: str, kind: str, pieces: list[Piece], datefmt: str | None) -> PatternLayout:
    at = next((i for i, p in enumerate(pieces) if p.field == "message"), None)
    prefix, rest = (pieces, []) if at is None else (pieces[:at], pieces[at + 1:])
    named = {p.field for p in pieces if p.field and p.field != "thread_id"}
    date = next((p.date for p in pieces if p.date), None)
    msecs = date is not None and date.kind == "datetime" and "S" not in date.spark_format and "msecs" in named
    if not msecs:
        named.discard("msecs")
    body = _regex(prefix, named, False)
    if at is not None:  # fields after the message are optional: a long message has them on its last line
        body += _regex([pieces[at]], named, bool(rest))
        body += "(?:" + _regex(rest, named, False) + ")?" if rest else ""
    named_head = f"(?s)^{body}$"
    head, groups = c.java_pattern(named_head)
    numbers = {group: f"${number}" for group, number in groups}
    ts_text = numbers.get("ts_text", "")
    if msecs:  # asctime with a datefmt, then %(msecs)03d: one timestamp text, date '.' millis
        ts_text += "." + numbers["msecs"]
        padded = next(p.regex for p in pieces if p.field == "msecs") == r"\d{3}"
        date = compile_date(strftime_to_java(datefmt or "") + "'.'SSS", date.zone, pad_millis=not padded)
    fields = {f: numbers[f] for f in ("level", "logger", "thread", "message") if f in numbers}
    start = "^" + _regex(prefix, set(), False)
    example = "".join(p.sample for p in pieces)
    return PatternLayout(
        NAME=name,
        DESCRIPTION=f"User layout pattern ({'Python logging' if kind == 'python' else 'PatternLayout'}): {pattern}",
        EXAMPLE=example if re.match(named_head, example) else "",
        FIRST_CHARS=first_chars(pieces),
        HEAD=head,
        START=start,
        TEMPLATE=c.replacement(ts_text=ts_text, **fields),
        PATTERN=pattern,
        FAMILY=kind,
        date=date,
        levels=next((p.levels for p in pieces if p.field == "level" and p.levels), ()),
    )


__all__ = ["PatternLayout", "compile_layout", "compile_date", "looks_like_layout_pattern", "family"]
