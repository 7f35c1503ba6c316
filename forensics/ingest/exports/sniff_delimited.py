"""Sniffing CSV/TSV exports: a header of column names, or rows without one read by their cells."""

from __future__ import annotations

import csv
import io
import re

from ...errors import ForensicsError
from .platforms import NAMES, clean_name, csv_platform
from .roles import SAMPLES, TIME_VALUE, no_message, roles_by_values
from .shape import LINE_SPLIT, ExportShape

_HEADER_CELL = re.compile(r"^['@A-Za-z_][\w@.:/()\[\]' -]{0,127}$")

_DIGITS = re.compile(r"^\s*\d+\s*$")


def delimited_shape(text: str, columns: dict[str, str] | None) -> ExportShape | None:
    """CSV/TSV: a header row of column names, the usual names (or ``columns``) among them; else
    rows without a header, read by what their cells hold (``_sniff_headerless``)."""
    sep = _delimiter(_first_line(text))
    records = _csv_records(text, sep)
    if not records:
        return None
    if not _header_like(records[0], records[1:], text):
        return _sniff_headerless(text, sep, records, columns)
    header = records[0]
    names = [clean_name(cell) for cell in header]
    platform = csv_platform(set(names))
    roles = _csv_roles(header, names, records[1:-1] if len(records) > 2 else records[1:])
    if columns:
        roles.update(_csv_overrides(header, names, columns))
    elif platform is None and not roles.keys() & {"time", "host", "level"}:
        return None
    if "message" not in roles:
        return no_message(columns, header)
    leading_breaks = LINE_SPLIT.findall(text[: len(text) - len(text.lstrip("\r\n"))])
    return ExportShape("tsv" if sep == "\t" else "csv", platform, roles, tuple(header), 1 + len(leading_breaks))


def _sniff_headerless(text: str, sep: str, records: list[list[str]], columns: dict[str, str] | None) -> ExportShape | None:
    """CSV/TSV rows with no header row (a platform's rows copied without it): every row of the
    head as wide as the first, its cells quoted (or tab-separated), and the columns told by their
    values (``roles_by_values``): a time in every row, and a column of Kafka text. Columns are
    named by position, ``1`` the first, which ``--columns time=1,message=4`` names. An ordinary
    log line is none: its first cell is not quoted, and its commas cut rows of any width; where
    every row opens with a whole time cell (an export writes no quotes it does not need), that
    time's comma is no fraction's (``14:02:17,118``: the next cell opens with a digit)."""
    rows = _complete_records(records, text)
    width = len(rows[0]) if rows else 0
    if width < 2 or any(len(row) != width for row in rows):
        return None
    quoted = (
        text.lstrip("\ufeff\r\n").startswith('"')
        or sep == "\t"
        or all(TIME_VALUE.match(row[0]) and not row[1][:1].isdigit() for row in rows)
    )
    header = tuple(str(i) for i in range(1, width + 1))
    roles = roles_by_values(header, rows)
    if columns:
        roles.update(_csv_overrides(list(header), list(header), columns))
    elif not quoted or width < 3 or "time" not in roles:
        return None
    if "message" not in roles:
        return no_message(columns, header)
    return ExportShape("tsv" if sep == "\t" else "csv", None, roles, header, 0)


def _complete_records(records: list[list[str]], text: str) -> list[list[str]]:
    """The records of a head whose last record may be cut by the head's end: that one left out
    where others are there."""
    if len(records) > 1 and not text.rstrip(" ").endswith(("\n", "\r")):
        return records[:-1]
    return records


def _first_line(text: str) -> str:
    return LINE_SPLIT.split(text.lstrip("\r\n"), 1)[0]


def _delimiter(line: str) -> str:
    """Tab when the line has more tab-separated cells than comma-separated ones, else comma."""
    by_tab, by_comma = _cell_count(line, "\t"), _cell_count(line, ",")
    return "\t" if by_tab >= 2 and by_tab > by_comma else ","


def _cell_count(line: str, sep: str) -> int:
    records = _csv_records(line, sep)
    return len(records[0]) if records else 0


def _csv_records(text: str, sep: str) -> list[list[str]]:
    """The first records of ``text`` (RFC 4180 quoting); a record cut by the head's end may be
    among them, partial."""
    reader = csv.reader(io.StringIO(text.lstrip("\r\n"), newline=""), delimiter=sep, quotechar='"', doublequote=True)
    records: list[list[str]] = []
    try:
        for record in reader:
            if record:
                records.append(record)
            if len(records) > SAMPLES + 1:
                break
    except csv.Error:
        pass
    return records


def _header_like(header: list[str], rest: list[list[str]], text: str) -> bool:
    """Two or more cells that all look like column names, and the first data record (when the
    head surely holds all of it) has as many cells."""
    if len(header) < 2 or not all(_HEADER_CELL.match(cell) and cell == cell.strip() for cell in header):
        return False
    complete = len(rest) > 1 or (len(rest) == 1 and text.rstrip(" ").endswith(("\n", "\r")))
    return not complete or len(rest[0]) == len(header)


def _csv_roles(header: list[str], names: list[str], samples: list[list[str]]) -> dict[str, str]:
    """Role -> header cell, by the usual names; a message column of bare numbers is skipped."""
    roles: dict[str, str] = {}
    for role, candidates in NAMES.items():
        for candidate in candidates:
            if candidate in names:
                at = names.index(candidate)
                if role == "message" and _all_numbers(samples, at):
                    continue
                roles[role] = header[at]
                break
    return roles


def _all_numbers(samples: list[list[str]], at: int) -> bool:
    values = [r[at] for r in samples if len(r) > at and r[at]]
    return bool(values) and all(_DIGITS.match(v) for v in values)


def _csv_overrides(header: list[str], names: list[str], columns: dict[str, str]) -> dict[str, str]:
    """Role -> header cell for each ``columns`` entry; a missing column is an error."""
    found, missing = {}, []
    for role, column in columns.items():
        wanted = clean_name(column.strip('"'))
        if wanted in names:
            found[role] = header[names.index(wanted)]
        elif _DIGITS.match(column) and 1 <= int(column) <= len(header):
            found[role] = header[int(column) - 1]  # by position, 1 the first column
        else:
            missing.append(f"{role}={column}")
    if missing:
        raise ForensicsError(
            f"--columns {', '.join(missing)}: the export's header has no such column.",
            f"Columns available: {', '.join(header)} (or name them by position, 1 to {len(header)}).",
        )
    return found
