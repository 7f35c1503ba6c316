"""The log text of cited evidence lines, read in Python from the files (plain or ``.gz``).

Only the cited lines are kept; a file is read once up to its last cited line. Line numbers
are 1-based physical lines ending at LF, CRLF or a lone CR, as ingest counts them (Python's
universal newlines split the same way).
"""

from __future__ import annotations

import gzip
import io
import os
from collections import OrderedDict
from typing import Iterable

MAX_LINE_CHARS = 2000


def cited_lines(evidence: Iterable[dict], base_dir: str | None = None) -> dict[tuple[str, int], str | None]:
    """``{(file, line): text}`` for evidence entries ``[{file, line}]``; text None if unreadable."""
    wanted: dict[str, set[int]] = {}
    for entry in evidence or ():
        if entry and entry.get("file") and entry.get("line") is not None:
            wanted.setdefault(entry["file"], set()).add(int(entry["line"]))
    found: dict[tuple[str, int], str | None] = {}
    for file, numbers in wanted.items():
        texts = _read_lines(_resolve(file, base_dir), frozenset(numbers))
        found.update({(file, n): texts.get(n) for n in numbers})
    return found


def _resolve(file: str, base_dir: str | None) -> str:
    if file.startswith("file:"):
        file = file[5:].lstrip("/") and "/" + file[5:].lstrip("/")
    if base_dir and not os.path.isabs(file):
        return os.path.join(base_dir, file)
    return file


FILES_KEPT = 256
"""Files whose cited lines are kept (``_read``), the least recently used dropped first."""
_read: OrderedDict[tuple[str, int], tuple[frozenset[int], dict[int, str]]] = OrderedDict()
"""(path, mtime) -> every line number asked of that version of the file so far, and the text
of those that exist."""


def _read_lines(path: str, numbers: frozenset[int]) -> dict[int, str]:
    """The text of the lines ``numbers`` of ``path`` (and of others asked before). A file is
    read again only for a line not asked before, then for all asked so far: views that show a
    subset of the lines one call read (``Incident`` reads all it cites at once) cost no read."""
    try:
        key = (path, os.stat(path).st_mtime_ns)
    except OSError:
        return {}
    asked, texts = _read.pop(key, (frozenset(), {}))
    if not numbers <= asked:
        asked |= numbers
        texts = _lines_of(path, asked)
    _read[key] = (asked, texts)
    while len(_read) > FILES_KEPT:
        _read.popitem(last=False)
    return texts


def _lines_of(path: str, numbers: frozenset[int]) -> dict[int, str]:
    last = max(numbers)
    found: dict[int, str] = {}
    try:
        with open(path, "rb") as raw:
            gz = raw.read(2) == b"\x1f\x8b"
        binary = gzip.open(path, "rb") if gz else open(path, "rb")
        with io.TextIOWrapper(binary, encoding="utf-8", errors="replace", newline=None) as text:
            for number, line in enumerate(text, start=1):
                if number in numbers:
                    found[number] = line.rstrip("\n")[:MAX_LINE_CHARS]
                if number >= last:
                    break
    except (OSError, EOFError, gzip.BadGzipFile):
        pass  # a damaged .gz keeps what was read before the damage
    return found
