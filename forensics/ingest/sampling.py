"""Which recognisers the pass over every line needs, judged from samples of the inputs.

``records.recognise`` tries the wrappers (``wrappers``) and the ``generic`` fallback layout on
every line that no exact layout takes. In a large log of one exact layout that is most lines
(stack frames aside), and the two are a good part of the pass's cost. Before the pass, a few
windows of each local text file (the whole file when it is small) are read here in Python; when
no sampled line is wrapped, or none is in a layout only ``generic`` reads, the plan leaves that
recogniser out. A line the narrower plan misses is not lost: it is counted as ``unknown layout``
like any line in no layout, and ``forensics layouts`` shows it.
"""

from __future__ import annotations

import gzip
import operator
import os
import re
from dataclasses import dataclass
from datetime import datetime
from itertools import compress
from typing import Iterable

from .. import layouts
from . import wrappers

WHOLE_BYTES = 2 << 20
"""Files up to this size are read whole."""
HEAD_BYTES = 512 << 10
WINDOW_BYTES = 64 << 10
WINDOWS = 16
"""Larger files: their head, then ``WINDOWS`` windows spread evenly up to their end (gzip: the head only)."""


@dataclass(frozen=True)
class Recognisers:
    """What ``records.recognise`` tries after the exact layouts, and the exact layouts seen in
    the samples (None: not known, any may occur); ``prefixed``: the ``wrappers.PREFIXED``
    wrapper whose prefix every sampled line has, none being a record head as it is (then lines
    with that prefix are peeled before any layout is tried), else None; ``newest_first``: the
    paths whose lines run newest first (``runs_newest_first``); ``loggerless``: some record
    may be in a layout that names no logger, where only the words of a client's lines
    (``records.CLIENT_WORDS``) tell a Kafka line from the rest: no layout was seen, or one not of
    ``layouts.NAMED_LOGGERS``, a wrapper or the fallback is needed, or a ``log4j`` record names
    none (``names_no_logger``)."""

    wrappers: bool = True
    fallback: bool = True
    seen: frozenset[str] | None = None
    prefixed: str | None = None
    newest_first: frozenset[str] = frozenset()
    loggerless: bool = True
    wraps: tuple[tuple[str, int], ...] = ()
    """(path, width) of the files read whole whose lines were hard-wrapped at a terminal's width
    (``wrap_width``), at any width: ``records.wrap_widths`` tells only the common ones."""

    def table(self, table: dict) -> dict:
        """The layouts of ``table`` that lines of these inputs may be in, for the line-level first
        look (``records.kafka_lines``): the exact layouts seen in the samples, ``generic`` when
        the fallback is tried, all when wrappers are (their inner lines were not sampled). Not the
        anchor (``layouts.anchor``): lines only it reads are ingest's records, not the first look's."""
        if self.seen is None or self.wrappers:
            return table
        keep = self.seen | ({layouts.FALLBACK} if self.fallback else set())  # no anchor: ingest's floor
        return {name: layout for name, layout in table.items() if name in keep}


ALL = Recognisers()


def needed_recognisers(paths: Iterable[str], table: dict = layouts.LAYOUTS) -> Recognisers:
    """The recognisers the lines of local files ``paths`` need (all of them when a path is not a
    local regular file: a URI or a directory cannot be sampled here).

    Each regex runs over all sampled lines of a file at once (``map``), not each line through
    every regex in turn: a Python loop over the lines would add its own steps, no small part of
    the sampling's time, to the regexes' work (docs/performance.md)."""
    exact = _exact_heads(table)
    fallback = layouts.LAYOUTS[layouts.FALLBACK]
    generic = re.compile(fallback.START)
    wrapped = needs_fallback = sampled = unnamed = False
    prefixed = set(wrappers.PREFIXED)
    seen: set[str] = set()
    newest_first = set()
    wraps = []
    for path in paths:
        if not os.path.isfile(path):
            return ALL
        lines = sample_lines(path)
        if not lines:
            continue
        sampled = True
        width = wrap_width(lines) if os.path.getsize(path) <= WHOLE_BYTES and not path.endswith(".gz") else None
        if width:
            wraps.append((path, width))
        in_wrapper = any_wrapped(lines)
        if in_wrapper and runs_newest_first(lines):  # its lines are a wrapper's
            newest_first.add(path)
        wrapped = wrapped or in_wrapper
        heads = {name: [True] * len(lines) if regex is None else list(map(regex.match, lines)) for name, regex in exact.items()}
        seen |= {name for name, column in heads.items() if any(column)}
        headed = list(map(any, zip(*heads.values()))) if heads else [False] * len(lines)
        headless = list(compress(lines, map(operator.not_, headed)))
        needs_fallback = needs_fallback or any(line[:1] in fallback.FIRST_CHARS and generic.match(line) for line in headless)
        none_headed = len(headless) == len(lines)
        prefixed = {name for name in prefixed if none_headed and all(map(_PREFIXES[name].match, lines))}
        unnamed = unnamed or names_no_logger(lines, heads.get(layouts.log4j.NAME, []), headed)
    prefix = next((name for name in wrappers.PREFIXED if name in prefixed), None)  # a CRI line is in kubectl's shape too
    return Recognisers(
        wrappers=wrapped,
        fallback=needs_fallback,
        seen=frozenset(seen),
        prefixed=prefix if sampled else None,
        newest_first=frozenset(newest_first),
        loggerless=wrapped or needs_fallback or unnamed or not seen or not seen <= {*layouts.NAMED_LOGGERS, layouts.log4j.NAME},
        wraps=tuple(wraps),
    )


WRAP_MIN_LINES = 5
"""As ``records.WRAP_MIN_LINES``: lines exactly as wide as the widest that tell a file hard-wrapped."""
MIN_WRAP_WIDTH = 40
_ANSI = re.compile(wrappers.ANSI)


def wrap_width(lines: list[str]) -> int | None:
    """The width at which a terminal hard-wrapped ``lines`` (a whole file), at any width: at least
    ``WRAP_MIN_LINES`` of them exactly as wide as the widest (colour codes not counted, as
    ``records.recognise`` counts a line's width), else None."""
    widths = [len(_ANSI.sub("", line)) if "\x1b" in line else len(line) for line in lines]
    widest = max(widths, default=0)
    return widest if widest >= MIN_WRAP_WIDTH and widths.count(widest) >= WRAP_MIN_LINES else None


def names_no_logger(lines: list[str], log4j_heads: list, headed: list[bool]) -> bool:
    """Whether sampled ``lines`` (``log4j_heads``: true, a match, where a line is a ``log4j``
    head; ``headed``: where it is a head in any exact layout) show a ``log4j`` record of one
    line that names no logger (``log4j.NAMED_LOGGER``): a line followed by another head, as a
    multi-line record's first line names its logger only on its last."""
    return any(
        head and next_headed and not _LOG4J_NAMED_LOGGER.match(line) for line, head, next_headed in zip(lines, log4j_heads, headed[1:])
    )


def runs_newest_first(lines: list[str]) -> bool:
    """Whether sampled ``lines`` list a log platform's entries newest first, as Grafana's
    download of Loki's lines and ``logcli query`` do by default (``wrappers``' ``grafana``,
    ``logcli``): from the first wrapped line on every line is wrapped, each physical line an entry
    of its own (so a record's lines are in reverse too, its continuation lines above its head),
    and the first line's time is after the last's."""
    for name, instant in ENTRY_TIMES.items():
        wrapped = [(i, m) for i, m in enumerate(map(_WRAPPER_REGEXES[name].match, lines)) if m]
        if len(wrapped) >= 2 and len(wrapped) == len(lines) - wrapped[0][0]:
            first, last = instant(wrapped[0][1]), instant(wrapped[-1][1])
            return first[0] > last[0] if first[0] is not None and last[0] is not None else first[1] > last[1]
    return False


def _grafana_instant(match: re.Match) -> tuple[int | None, str]:
    """The epoch milliseconds where given (group 1), and the time's text (group 2), which the
    lines of one download write in one form."""
    return (int(match[1]) if match[1] else None, match[2])


def _iso_instant(match: re.Match) -> tuple[float | None, str]:
    """An RFC 3339 time with its zone (group 1) as a POSIX time: logcli's zone may change at DST."""
    text = match[1].replace("Z", "+00:00").replace(",", ".")
    try:
        return (datetime.fromisoformat(text).timestamp(), text)
    except ValueError:
        return (None, text)


ENTRY_TIMES = {"grafana": _grafana_instant, "logcli": _iso_instant}
"""Wrappers whose files list entries, each physical line one, maybe newest first -> the time of
a line's match, (a number, else None; its text), compared by number where both have one."""


def any_wrapped(lines: list[str]) -> bool:
    """True where one of ``lines`` may be wrapped (``wrappers.WRAPPERS``): an envelope or pasted
    JSON record (``{``, ``"``), an ANSI code, or a prefix one of the wrapper regexes reads, also
    behind indentation (``records.recognise`` tries wrappers on indented lines too)."""
    indented = [line.lstrip(" ") for line in lines if line.startswith(" ")]  # a wrapper a paste indented
    return (
        any(map(_OPENS_JSON, lines))
        or "\x1b" in "".join(lines)
        or any(any(map(regex.match, lines)) or any(map(regex.match, indented)) for regex in _WRAPPER_REGEXES.values())
    )


_OPENS_JSON = re.compile(r'[{"]').match
_WRAPPER_REGEXES = {name: re.compile(regex) for name, (regex, *_) in wrappers.SHAPES.items()}
_LOG4J_NAMED_LOGGER = re.compile(layouts.log4j.NAMED_LOGGER)
_PREFIXES = {name: _WRAPPER_REGEXES[name] for name in wrappers.PREFIXED}


def _exact_heads(table: dict) -> dict[str, re.Pattern | None]:
    """Exact layout -> a Python regex of its heads (None where it has none that compiles in
    Python, as a user's pattern may: such a layout counts as seen on every line)."""
    heads: dict[str, re.Pattern | None] = {}
    for name, layout in table.items():
        if name == layouts.FALLBACK or not (hasattr(layout, "head") or hasattr(layout, "HEAD")):
            continue  # message_only is never recognised from a line by itself
        pattern = _JSON_HEAD if name == "json_lines" else getattr(layout, "START", None) or getattr(layout, "HEAD", None)
        try:
            heads[name] = re.compile(pattern) if isinstance(pattern, str) else None
        except re.error:
            heads[name] = None
    return heads


_JSON_HEAD = r"\s*\{"
"""A JSON record's line (``json_lines`` tells its heads by parsing, not by a regex)."""


def sample_lines(path: str) -> list[str]:
    """Lines of ``path``: all of a small file, else its head and windows spread to its end
    (the partial lines at a window's edges dropped); a gzip file's decompressed head."""
    if path.endswith(".gz"):
        try:
            with gzip.open(path, "rb") as handle:
                return _lines(handle.read(HEAD_BYTES), whole=False, first=True)
        except (OSError, EOFError):
            return []
    size = os.path.getsize(path)
    with open(path, "rb") as handle:
        if size <= WHOLE_BYTES:
            return _lines(handle.read(), whole=True, first=True)
        lines = _lines(handle.read(HEAD_BYTES), whole=False, first=True)
        step = (size - HEAD_BYTES) // WINDOWS
        for i in range(1, WINDOWS + 1):
            handle.seek((size if i == WINDOWS else HEAD_BYTES + i * step) - WINDOW_BYTES)
            lines += _lines(handle.read(WINDOW_BYTES), whole=i == WINDOWS, first=False)
        return lines


def _lines(data: bytes, whole: bool, first: bool) -> list[str]:
    lines = data.decode("utf-8", errors="replace").splitlines()
    return lines[(0 if first else 1) : (None if whole else -1)]
