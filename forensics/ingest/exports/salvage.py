"""Salvage: the entries of a JSON array or of JSON documents that a cut paste or download ended
inside, read as far as they go."""

from __future__ import annotations

import json

from .json_scan import JSON_TOKEN, line_at, skip_separator
from .shape import LINE_SPLIT


def cut_elements(text: str, kind: str = "json_array") -> list[tuple[int, int, str, bool]]:
    """(first line, last line, JSON text, cut) of each element of a JSON array cut before its end,
    or of each JSON document of ``text`` (``kind`` ``json_documents``): the complete ones, then
    the fields written whole in the one the cut ended (``_salvage``), if any, marked cut."""
    text = text.lstrip("\ufeff")
    breaks = [m.end() for m in LINE_SPLIT.finditer(text)]
    start = 0
    if kind == "json_array":
        start = text.index("[") + 1 if "[" in text else len(text)
    decoder = json.JSONDecoder()
    found, at = [], start
    while True:
        at = skip_separator(text, at)
        if at >= len(text) or text[at] == "]":
            return found
        try:
            value, end = decoder.raw_decode(text, at)
        except ValueError:
            break
        found.append((line_at(breaks, at), line_at(breaks, end - 1), json.dumps(value), False))
        at = end
    partial = _salvage(text[at:].rstrip())
    if partial is not None:
        found.append((line_at(breaks, at), line_at(breaks, len(text.rstrip()) - 1), json.dumps(partial), True))
    return found


def _salvage(text: str) -> dict | None:
    """The fields of a JSON object cut before its end that were written whole before the cut:
    the object closed after the last of them (None where not even one is whole)."""
    if not text.startswith("{"):
        return None
    depth, ends = 0, []
    for match in JSON_TOKEN.finditer(text):
        token = match.group()
        if token in ("{", "["):
            depth += 1
        elif token in ("}", "]"):
            depth -= 1
        if depth == 1 and token not in ("{", "\n", "\r", "\r\n"):
            ends.append(match.end())
    for end in reversed(ends[-64:]):
        try:
            value = json.loads(text[:end] + "}")
        except ValueError:
            continue
        return value if isinstance(value, dict) and value else None
    return None
