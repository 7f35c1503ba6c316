"""The log text of cited evidence lines, read in Python from the files (plain or ``.gz``).

Only the cited lines are kept; a file is read once up to its last cited line. Line numbers
are 1-based physical lines ending at LF, CRLF or a lone CR, as ingest counts them (Python's
universal newlines split the same way).
"""

from __future__ import annotations

import gzip
import io
import os
from functools import lru_cache
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


def _read_lines(path: str, numbers: frozenset[int]) -> dict[int, str]:
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError:
        return {}
    return _read_lines_cached(path, stamp, numbers)


@lru_cache(maxsize=256)
def _read_lines_cached(path: str, _stamp: int, numbers: frozenset[int]) -> dict[int, str]:
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
