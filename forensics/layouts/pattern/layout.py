"""The compiled layout: a pattern's pieces joined into the head regex, the split template and
the first-character gate of the layout-module contract (``forensics.layouts``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from pyspark.sql import Column
from pyspark.sql import functions as F

from ...errors import ForensicsError
from .. import _common as c
from .dates import DateSpec, compile_date, date_to_utc
from .java import WORD_KINDS, java_pieces, parse_java, substitute_properties
from .pieces import Piece, cut_at_newline, literal, pattern_error
from .python import PY_CONVERSION, python_pieces, strftime_to_java


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
    return "python" if PY_CONVERSION.search(pattern) else "java"


_JAVA_CONVERSION = re.compile(r"%-?\d*(?:\.-?\d+)?([A-Za-z]+)")


def looks_like_layout_pattern(text: str) -> bool:
    """True for a layout pattern rather than a file name: a ``%(name)s`` conversion, or known
    PatternLayout words (two of them, or one with a space, brace or bracket in the text).
    Pure text test: a CLI should prefer an existing path of that name."""
    if PY_CONVERSION.search(text):
        return True
    words = [m.group(1) for m in _JAVA_CONVERSION.finditer(text) if m.group(1) in WORD_KINDS]
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
    pieces = _merge_literals(_with_fallbacks(cut_at_newline(pieces)))
    fields = [p.field for p in pieces if p.field]
    if "ts_text" not in fields and "message" not in fields:
        raise pattern_error(
            pattern,
            "it has neither a date (%d, %(asctime)s) nor a message (%m, %(message)s)",
            "Give the whole pattern of a record's first line, in PatternLayout (%d %p %c - %m%n) "
            "or Python logging (%(asctime)s %(levelname)s %(message)s) syntax.",
        )
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
    prefix, rest = (pieces, []) if at is None else (pieces[:at], pieces[at + 1 :])
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
