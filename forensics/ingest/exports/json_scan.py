"""JSON text scanned in the driver: the separators between values, and the physical lines of a
JSON array's elements."""

from __future__ import annotations

import bisect
import re

from .shape import LINE_SPLIT

JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]|\r\n|\r|\n|[^\s,:\[\]{}"]+', re.S)


def skip_separator(text: str, at: int) -> int:
    """Index after white space, one comma and white space from ``at``."""
    while at < len(text) and text[at].isspace():
        at += 1
    if at < len(text) and text[at] == ",":
        at += 1
    while at < len(text) and text[at].isspace():
        at += 1
    return at


def line_at(breaks: list[int], offset: int) -> int:
    """The physical line (1-based) of the character at ``offset``, ``breaks`` the offsets just
    after each line break."""
    return bisect.bisect_right(breaks, offset) + 1


def element_spans(text: str) -> list[tuple[int, int]]:
    """(first, last) physical line of each element of the top-level JSON array in ``text``.

    A regex walks the strings, brackets, scalars and line breaks (LF, CRLF, lone CR); an element
    starts where the depth rises from 1 (inside the array) and ends where it falls back to 1.
    """
    return scan_array(text)[0]


def scan_array(text: str) -> tuple[list[tuple[int, int]], bool]:
    """``element_spans`` of ``text``, and whether its array is closed (a paste may cut it)."""
    line, depth, start, spans, closed = 1, 0, 1, [], False
    for match in JSON_TOKEN.finditer(text.lstrip("\ufeff")):
        token = match.group()
        if token in ("\r\n", "\r", "\n"):
            line += 1
            continue
        first = line
        if token[0] == '"':
            line += len(LINE_SPLIT.findall(token))
        if token in ("[", "{"):
            depth += 1
            start = first if depth == 2 else start
        elif token in ("]", "}"):
            depth -= 1
            if depth == 1:
                spans.append((start, line))
            closed = depth == 0
        elif depth == 1:
            spans.append((first, line))
    return spans, closed
