"""What a log-platform export looks like (``ExportShape``) and the accounting of its lines (``ExportLines``).

Physical lines are those ``spark.read.text`` sees: a line ends at LF, CRLF or a lone CR."""

from __future__ import annotations

import re
from dataclasses import dataclass

ROLES = ("time", "host", "source", "level", "logger", "thread", "message")
KINDS = ("csv", "tsv", "ndjson", "json_array", "json_documents")
ARRAY_KINDS = ("json_array", "json_documents")
"""Kinds whose entries are placed on their lines by a scan of the text (``element_spans``), several
of them perhaps on one line: a JSON array, and JSON documents one after another, each over several
lines (pretty-printed records pasted one below the other)."""
OUTPUT_COLUMNS = ("line", "line_end", *ROLES, "truncated")

LINE_SPLIT = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class ExportShape:
    """What a log-platform export looks like: its kind, platform and where each role is."""

    kind: str
    platform: str | None
    columns: dict[str, str]
    header: tuple[str, ...]
    header_line: int = 1
    """csv/tsv: the physical line of the header (empty lines may come before it)."""


@dataclass(frozen=True)
class ExportLines:
    """The line accounting of one export: ``entry_lines + outside == lines``.

    ``entry_lines`` are the physical lines holding (part of) an entry; ``outside`` the others:
    the header, blank lines, blank records, a JSON array's own brackets. For csv/tsv/ndjson the
    entries do not share lines, so ``entry_lines`` is the sum of ``line_end - line + 1``.
    """

    lines: int
    entries: int
    entry_lines: int
    outside: int
    joined: int = 0
    """Entries joined to the entry before them (``records.with_continuing_entries``), where counted."""
    truncated: int = 0
    """Entries a cut paste or download ended inside, read as far as they go, where counted."""
