"""Dates of a layout pattern: a Java date pattern, a named format (``ISO8601``, ``ABSOLUTE``..)
or an epoch, as a regex, a Spark parse pattern and a sample; and their text read as UTC."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as F

from ...errors import ForensicsError
from .pieces import DIGITS, UPPER, Piece, regex_literal


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
EPOCH_DATES = {
    "UNIX": DateSpec(r"\d{9,11}", "epoch_s", sample="1710165737"),
    "UNIX_MILLIS": DateSpec(r"\d{12,14}", "epoch_ms", sample="1710165737418"),
}
DEFAULT_DATE = NAMED_DATES["DEFAULT"]
"""``%d`` alone: the same text in logback (ISO8601), log4j 1 (ISO8601) and log4j2 (DEFAULT)."""
FLEX_T = ("ISO8601",)
"""log4j2 writes ``T`` for ``%d{ISO8601}``, logback and log4j 1 a space: both are read."""

_NUMBER_SAMPLES = {"y": "2024", "M": "03", "d": "11", "D": "071", "H": "14", "k": "14", "K": "02", "h": "02", "m": "02", "s": "17"}
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
        return _DateToken(
            r"\d{2}" if count == 2 else r"\d{4}", "yy" if count == 2 else "yyyy", sample="24" if count == 2 else "2024", numeric=True
        )
    if letter in "Sn":
        n = min(count, 9)
        return _DateToken(rf"\d{{{n}}}", "S" * n, sample="418".ljust(n, "0")[:n], numeric=True)
    if letter == "D":
        return _DateToken(r"\d{1,3}" if count < 3 else r"\d{3}", "D" * min(count, 3), sample="71" if count < 3 else "071", numeric=True)
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
        return _DateToken(r"[A-Z][a-z]{2}" if count < 4 else r"[A-Z][a-z]+", "", emit="", sample="Mon" if count < 4 else "Monday")
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


def spark_literal(text: str) -> str:
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
            tokens.append(
                _DateToken("[ T]", "", emit=" ", sample="T", text=" ")
                if flexible
                else _DateToken(regex_literal(text), "", sample=text, text=text)
            )
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
            out, run = out + (spark_literal(run) if run else "") + t.spark, ""
    return out + (spark_literal(run) if run else "")


def split_zone(option: str) -> tuple[str, str | None]:
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


def date_piece(spec: DateSpec) -> Piece:
    return Piece(spec.regex, field="ts_text", first=spec.first, sample=spec.sample, date=spec)
