"""The pieces a layout pattern's line is made of: one regex each, the field it fills, the
characters it may start with and a sample of its text (from which ``EXAMPLE`` is written)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Iterable

from ...errors import ForensicsError
from .. import _common as c

if TYPE_CHECKING:
    from .dates import DateSpec

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


def regex_literal(text: str) -> str:
    """``text`` as a regex matching itself, in both Python and Java syntax."""
    return "".join("\\" + ch if ch in ".^$*+?{}[]\\|()" else "\\t" if ch == "\t" else ch for ch in text)


def literal(text: str) -> Piece:
    return Piece(regex_literal(text), first=text[:1], sample=text, literal=text)


def free_text(field: str | None = None, sample: str = "") -> Piece:
    return Piece(FREE_TEXT, field=field, empty=True, sample=sample, lazy=True)


JAVA_LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")
PYTHON_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def level_piece(
    names: Iterable[str], shown: dict[str, str] | None = None, keep: int | None = None, from_end: bool = True, lower: bool = False
) -> Piece:
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
        "(?:" + "|".join(regex_literal(text) for text in alternatives) + ")",
        field="level",
        first="".join(sorted({text[:1] for text in alternatives})),
        sample=sample,
        levels=tuple(sorted(mapping.items())),
    )


def padded(pieces: list[Piece], left: bool, width: int) -> list[Piece]:
    """Pieces padded with spaces to ``width``: after them (``left``-justified) or before."""
    if not width or not pieces:
        return pieces
    pad = Piece(" *", first=" ", empty=True, sample=" " * (width - len("".join(p.sample for p in pieces))))
    return [*pieces, pad] if left else [pad, *pieces]


def truncated(pieces: list[Piece], keep: int | None, from_end: bool) -> list[Piece]:
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


def cut_at_newline(pieces: list[Piece]) -> list[Piece]:
    """The pieces of a record's first line: up to the first ``%n``."""
    for i, piece in enumerate(pieces):
        if piece.newline:
            return pieces[:i]
    return pieces


def pattern_error(pattern: str, problem: str, fix: str | None = None) -> ForensicsError:
    return ForensicsError(f"Cannot read the layout pattern {pattern!r}: {problem}.", fix)
