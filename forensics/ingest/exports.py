"""Log-platform exports: recognise a download from a log platform and read one row per entry.

Analysts get production logs as downloads: Kibana Discover CSV, Splunk CSV or JSON results,
CloudWatch Logs Insights CSV/JSON, Datadog CSV, Grafana/Loki JSON or CSV, GCP Cloud Logging
JSON, Elasticsearch hits. ``sniff_export(head)`` tells such a file from an ordinary log file by
its first ``SNIFF_CHARS`` characters and maps its columns to the ``ROLES``;
``read_exports(spark, shapes)`` reads the exports with Spark into one row per entry with the
physical lines the entry spans; ``export_line_counts`` accounts for every physical line of each
file (entries' lines + lines outside any entry == lines of the file). Both run a fixed number of
Spark jobs however many exports an incident has.

Physical lines are those ``spark.read.text`` sees: a line ends at LF, CRLF or a lone CR.

Column names: for csv/tsv the header cell as written in the file; for JSON a dotted path from
the entry's root, a key that itself holds a dot written in double quotes:
``_source.host.name``, ``_source."log.level"``, ``labels."compute.googleapis.com/resource_name"``.
Matching of the usual names is case-insensitive and finds a dotted name nested or flattened.

How lines are numbered:

- csv/tsv: the file is read line by line (``read.read_lines``, split by split). RFC 4180 quotes
  (doubled inside a value) toggle, so a line with an odd number of ``"`` opens or closes a
  quoted value that runs over lines; the k-th such line opens one when k is odd. Those lines are
  few: Spark sorts them per file and pairs them into spans (``listed_spans``), and a join on
  buckets of lines gives each line its span. A line outside every span is a record; a span's lines,
  joined with LF, are one.
  Spark's ``from_csv`` splits each record into cells. The header is the first non-empty line
  (``ExportShape.header_line``); a value left open by a cut download runs to the last line. A
  quote inside an unquoted value, which RFC 4180 does not allow, would throw the pairing off.
- ndjson: one entry per non-blank physical line (``read.read_lines``).
- json_array: Spark parses the array (``from_json`` to ``array<string>``, ``posexplode``); the
  first and last physical line of each element come from a bounded driver-side scan of the
  text (see ``element_spans``), joined by position.
"""

from __future__ import annotations

import bisect
import csv
import io
import json
import os
import re
from dataclasses import dataclass
from functools import reduce
from typing import Mapping, Sequence

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from ..errors import ForensicsError
from ..layouts._common import ANY_TIMESTAMP, KAFKA_OPENINGS, KAFKAJS_NAMESPACE, LEVELS
from ..spark import rows_together
from .read import open_local, read_lines

ROLES = ("time", "host", "source", "level", "logger", "thread", "message")
KINDS = ("csv", "tsv", "ndjson", "json_array", "json_documents")
ARRAY_KINDS = ("json_array", "json_documents")
"""Kinds whose entries are placed on their lines by a scan of the text (``element_spans``), several
of them perhaps on one line: a JSON array, and JSON documents one after another, each over several
lines (pretty-printed records pasted one below the other)."""
OUTPUT_COLUMNS = ("line", "line_end", *ROLES, "truncated")
SNIFF_CHARS = 64 * 1024
"""How much of a file ``sniff_export`` wants to see (decoded text)."""
SAMPLES = 50
"""Entries of the head looked at to find the columns."""
MAX_ARRAY_CHARS = 256 * 1024 * 1024
"""A JSON array is scanned on the driver for its elements' lines; platforms cap such downloads
(10,000 entries and less), so a larger array is refused with a hint to convert it to NDJSON."""

NAMES: dict[str, tuple[str, ...]] = {
    "time": ("@timestamp", "_time", "timestamp", "time", "date", "datetime", "ts", "tsns", "timegenerated"),
    "host": (
        "kubernetes.pod.name",
        "k8s.pod.name",
        "resource.labels.pod_name",
        "pod",
        "pod_name",
        "podname",
        "host.name",
        "host.hostname",
        "hostname",
        "host",
        "@logstream",
        "instance",
        "labels.compute.googleapis.com/resource_name",
        "resource.labels.instance_id",
        "agent.hostname",
        "computer",
    ),
    "source": ("log.file.path", "source", "@log", "logname", "file", "filename", "path", "service", "sourcetype", "containername"),
    "level": ("log.level", "level", "severity", "status", "loglevel", "log_level", "levelname", "detected_level"),
    "logger": ("log.logger", "logger_name", "loggername", "logger", "logger.name"),
    "thread": ("process.thread.name", "thread_name", "threadname", "thread", "thread.name", "logger.thread_name"),
    "message": (
        "_raw",
        "@message",
        "line",
        "textpayload",
        "event.original",
        "message",
        "msg",
        "content",
        "log",
        "body",
        "logmessage",
        "logentry",
    ),
}
"""Role -> usual column names (lowercase), best first. A pod name is preferred to a host name: on
Kubernetes ``host.name`` is the node, shared by every client pod on it (Azure's ``Computer``,
the node, comes last). The column holding the raw original line (``_raw``, ``@message``,
``Line``, ``textPayload``) is preferred as message. Azure Monitor's Container insights tables:
``ContainerLogV2`` (``PodName``, ``ContainerName``, ``LogMessage``) and ``ContainerLog``
(``LogEntry``)."""

_FIELD_GLUE = "\u0001"
_HEADER_CELL = re.compile(r"^['@A-Za-z_][\w@.:/()\[\]' -]{0,127}$")
_FORMULA_QUOTE = re.compile(r"^'(?=[=+\-@])")
_DIGITS = re.compile(r"^\s*\d+\s*$")
_LINE_SPLIT = re.compile(r"\r\n|\r|\n")
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]|\r\n|\r|\n|[^\s,:\[\]{}"]+', re.S)
_BEATS = ("filebeat", "elastic-agent", "winlogbeat", "journalbeat", "functionbeat")


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


# ----------------------------------------------------------------------------- --columns


def parse_columns_option(text: str) -> dict[str, str]:
    """``'time=@timestamp,host=host.name,message=_raw'`` -> ``{role: column}``.

    A column may be double-quoted (``host=labels."k8s-pod/name"`` keeps its quotes, a JSON
    path). Unknown roles, a pair without ``=``, an empty side or a repeated role raise a
    ``ForensicsError`` with the fix.
    """
    example = "Write ROLE=COLUMN pairs separated by commas, e.g. --columns time=@timestamp,host=host.name,message=_raw."
    pairs = [p.strip() for p in _split_outside_quotes(text or "", ",") if p.strip()]
    if not pairs:
        raise ForensicsError("--columns is empty.", example)
    mapping: dict[str, str] = {}
    for pair in pairs:
        role, sep, column = (part.strip() for part in pair.partition("="))
        role = role.lower()
        if not sep or not role or not column:
            raise ForensicsError(f"--columns: {pair!r} is not ROLE=COLUMN.", example)
        if role not in ROLES:
            raise ForensicsError(f"--columns: unknown role {role!r}.", f"Roles are {', '.join(ROLES)}.")
        if role in mapping:
            raise ForensicsError(f"--columns names the role {role!r} twice.", "Give each role once.")
        mapping[role] = column
    return mapping


def _split_outside_quotes(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` where it is not inside double quotes."""
    parts, current, quoted = [], [], False
    for char in text:
        if char == '"':
            quoted = not quoted
        if char == sep and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


# ----------------------------------------------------------------------------- sniffing


def sniff_export(head: str, columns: dict[str, str] | None = None) -> ExportShape | None:
    """The export shape of a file from its first ~64 KiB of text, or None for an ordinary log
    file (log4j, logback, JSON lines of an application with no platform envelope, librdkafka).

    ``columns`` (role -> column, see ``parse_columns_option``) overrides or adds roles; with it a
    CSV/TSV header holding the named columns is an export even without any usual name, JSON
    entries are one even without a platform's envelope, and a header or JSON entry lacking a
    named column raises a ``ForensicsError`` naming what is there. A file whose first line is
    no header (a log4j or logback file) stays None: give ``columns`` for files meant as exports.
    """
    text = head.lstrip("\ufeff")
    body = text.lstrip()
    if not body:
        return None
    if body[0] == "[":
        return _sniff_array(body, columns)
    if body[0] == "{":
        return _sniff_ndjson(body, columns)
    return _sniff_delimited(text, columns)


def _sniff_delimited(text: str, columns: dict[str, str] | None) -> ExportShape | None:
    """CSV/TSV: a header row of column names, the usual names (or ``columns``) among them; else
    rows without a header, read by what their cells hold (``_sniff_headerless``)."""
    sep = _delimiter(_first_line(text))
    records = _csv_records(text, sep)
    if not records:
        return None
    if not _header_like(records[0], records[1:], text):
        return _sniff_headerless(text, sep, records, columns)
    header = records[0]
    names = [_clean_name(cell) for cell in header]
    platform = _csv_platform(set(names))
    roles = _csv_roles(header, names, records[1:-1] if len(records) > 2 else records[1:])
    if columns:
        roles.update(_csv_overrides(header, names, columns))
    elif platform is None and not roles.keys() & {"time", "host", "level"}:
        return None
    if "message" not in roles:
        return _no_message(columns, header)
    leading_breaks = _LINE_SPLIT.findall(text[: len(text) - len(text.lstrip("\r\n"))])
    return ExportShape("tsv" if sep == "\t" else "csv", platform, roles, tuple(header), 1 + len(leading_breaks))


def _sniff_headerless(text: str, sep: str, records: list[list[str]], columns: dict[str, str] | None) -> ExportShape | None:
    """CSV/TSV rows with no header row (a platform's rows copied without it): every row of the
    head as wide as the first, its cells quoted (or tab-separated), and the columns told by their
    values (``_roles_by_values``): a time in every row, and a column of Kafka text. Columns are
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
        or all(_TIME_VALUE.match(row[0]) and not row[1][:1].isdigit() for row in rows)
    )
    header = tuple(str(i) for i in range(1, width + 1))
    roles = _roles_by_values(header, rows)
    if columns:
        roles.update(_csv_overrides(list(header), list(header), columns))
    elif not quoted or width < 3 or "time" not in roles:
        return None
    if "message" not in roles:
        return _no_message(columns, header)
    return ExportShape("tsv" if sep == "\t" else "csv", None, roles, header, 0)


def _complete_records(records: list[list[str]], text: str) -> list[list[str]]:
    """The records of a head whose last record may be cut by the head's end: that one left out
    where others are there."""
    if len(records) > 1 and not text.rstrip(" ").endswith(("\n", "\r")):
        return records[:-1]
    return records


_KAFKA_TEXT = re.compile(
    rf"{KAFKA_OPENINGS}|org\.apache\.kafka|o\.a\.k\.|rdkafka|kafkajs|\[thrd:|{KAFKAJS_NAMESPACE}|"
    r"\b(?:Setting (?:offset|newly assigned partitions)|(?:Revoke|Adding newly|Lost) (?:previously )?assigned partitions|"
    r"(?:Successfully )?joined (?:the )?group|(?:Discovered|Found) group coordinator|Heartbeat failed|Attempt to heartbeat)\b"
)
"""Text only a Kafka client or broker writes: a log-context prefix, a Kafka class, a client's
name or namespace, the group protocol's steps in their clients' words. The column whose values
hold it most is a structured record's message."""
_TIME_VALUE = re.compile(rf"^\s*(?:{ANY_TIMESTAMP})\s*$")
_LEVEL_VALUE = re.compile(rf"^\s*(?:{LEVELS}|WARNI?|ERR|DBG|TRC|FINE|CONFIG)\s*$", re.IGNORECASE)
_HOST_VALUE = re.compile(r"^[A-Za-z0-9][\w.-]{0,252}$")


def _roles_by_values(names: Sequence[str], rows: list[list]) -> dict[str, str]:
    """Role -> column of ``rows`` (lists of cell values, by position in ``names``) told by what
    the values hold: the message the column with the most values holding Kafka text (the longer
    on a tie), the time a column whose every value is a time, the level one of levels, the host
    the first other column of one-word names (one with dots, dashes or digits first: a pod or
    a host rather than an application's name)."""

    def values(at: int) -> list[str]:
        return [str(row[at]) for row in rows if at < len(row) and row[at] is not None and str(row[at]).strip()]

    columns = {name: values(at) for at, name in enumerate(names)}
    columns = {name: vals for name, vals in columns.items() if vals}
    roles: dict[str, str] = {}
    scored = [(sum(bool(_KAFKA_TEXT.search(v)) for v in vals), sum(map(len, vals)) / len(vals), name) for name, vals in columns.items()]
    best = max(scored, key=lambda s: (s[0], s[1]), default=None)
    if best and best[0] > 0:
        roles["message"] = best[2]
    for name, vals in columns.items():
        if name in roles.values():
            continue
        if "time" not in roles and all(_TIME_VALUE.match(v) for v in vals):
            roles["time"] = name
        elif "level" not in roles and all(_LEVEL_VALUE.match(v) for v in vals):
            roles["level"] = name
    hosts = [
        name for name, vals in columns.items() if name not in roles.values() and all(_HOST_VALUE.match(v) and not v.isdigit() for v in vals)
    ]
    if hosts:
        roles["host"] = next((n for n in hosts if all(re.search(r"[.\d-]", v) for v in columns[n])), hosts[0])
    return roles


def _first_line(text: str) -> str:
    return _LINE_SPLIT.split(text.lstrip("\r\n"), 1)[0]


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


def _clean_name(cell: str) -> str:
    """A header cell as matched: lowercase, without Kibana's formula-escaping quote or the zone
    the Azure portal names after a time column (``TimeGenerated [UTC]``, ``[Local Time]``)."""
    return _AZURE_ZONE.sub("", _FORMULA_QUOTE.sub("", cell.strip())).lower()


_AZURE_ZONE = re.compile(r" \[(?:UTC|Local Time)\]$", re.IGNORECASE)
UTC_SUFFIX = " [UTC]"
"""The Azure portal's CSV export names a time column shown in UTC so; its times then carry no zone."""


def _csv_platform(names: set[str]) -> str | None:
    """The platform whose export has these (lowercase) column names, else None."""
    if names & {"@message", "@logstream", "@log"}:
        return "cloudwatch"
    if "_raw" in names or ("_time" in names and names & {"sourcetype", "_serial", "splunk_server", "_indextime"}):
        return "splunk"
    if names & {"textpayload", "insertid", "logname"} or any(n.startswith(("jsonpayload.", "resource.labels.")) for n in names):
        return "gcp"
    if "tsns" in names or ("line" in names and names & {"time", "date"} and not names & {"message", "msg", "_raw"}):
        return "loki"
    if names & {"@timestamp", "_index"} or any(n.startswith(("host.", "log.", "kubernetes.", "agent.", "ecs.")) for n in names):
        return "kibana"
    if "service" in names and names & {"status", "content", "date"}:
        return "datadog"
    if "timegenerated" in names and names & {"logmessage", "logentry", "_resourceid", "tenantid"}:
        return "azure"
    return None


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
        wanted = _clean_name(column.strip('"'))
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


def _no_message(columns: dict[str, str] | None, available) -> None:
    """Without a message column a file is no export, unless the user named columns: then say so."""
    if columns:
        raise ForensicsError(
            "--columns gives no message column and none of the usual ones (_raw, @message, Line, textPayload, message, msg) is there.",
            f"Add message=<column>; columns available: {', '.join(list(available)[:60])}.",
        )
    return None


def _sniff_ndjson(body: str, columns: dict[str, str] | None) -> ExportShape | None:
    """NDJSON: one entry per line inside a platform's envelope (or ``columns`` given)."""
    objects = _ndjson_samples(body)
    if not objects:
        return _sniff_documents(body, columns)
    envelope = _envelope(objects[0])
    if envelope is None and not columns:
        return None
    return _json_shape("ndjson", objects, envelope, columns)


def _sniff_documents(body: str, columns: dict[str, str] | None) -> ExportShape | None:
    """JSON objects one after another, each over several lines (records pasted pretty-printed):
    read as one document each where a field holds their message (by its name or its Kafka text).
    A JSON log line per line is the ``json_lines`` layout's, not this."""
    objects, end = _documents(body, SAMPLES)
    if not objects or not all(isinstance(o, dict) for o in objects) or "\n" not in body[:end].strip():
        return None  # a JSON line, damaged after its object (a stray brace), is the json_lines layout's
    one_line = [o for o in _LINE_SPLIT.split(body[:end]) if o.strip().startswith("{") and o.strip().endswith("}")]
    if one_line:
        return None
    envelope = _envelope(objects[0])
    roles = _json_roles(objects, (envelope or (None, ("",)))[1])
    if not columns and not ({"message", "time"} <= roles.keys() and _holds_kafka_text(objects, roles["message"])):
        return None  # records of a log hold a time and Kafka's text; other JSON documents (test labels, results) are none
    return _json_shape("json_documents", objects, envelope, columns)


def _documents(text: str, limit: int | None = None) -> tuple[list, int]:
    """The complete JSON values at the top level of ``text`` one after another (up to ``limit``),
    and where the last of them ends."""
    decoder = json.JSONDecoder()
    values, at, end = [], 0, 0
    while limit is None or len(values) < limit:
        at = _skip_separator(text, at)
        if at >= len(text):
            break
        try:
            value, at = decoder.raw_decode(text, at)
        except ValueError:
            break
        values.append(value)
        end = at
    return values, end


def _ndjson_samples(body: str) -> list[dict]:
    """The JSON objects on the head's first lines; empty when the first is none."""
    lines = [line for line in _LINE_SPLIT.split(body) if line.strip()]
    objects: list[dict] = []
    for number, line in enumerate(lines[: SAMPLES + 1]):
        try:
            value = json.loads(line)
        except ValueError:
            if number == 0:
                return []
            break  # the head's last line, cut short, or a line that is no JSON
        if not isinstance(value, dict):
            return objects if number else []
        objects.append(value)
    return objects


def _sniff_array(body: str, columns: dict[str, str] | None) -> ExportShape | None:
    """A JSON array of entries (objects); no ordinary log file is one."""
    items = _array_samples(body)
    if not items or not isinstance(items[0], dict):
        return None
    objects = [item for item in items if isinstance(item, dict)]
    return _json_shape("json_array", objects, _envelope(objects[0]), columns)


def _array_samples(body: str) -> list:
    """The first elements of the JSON array that ``body`` opens, as far as the head holds them."""
    decoder = json.JSONDecoder()
    items, at = [], 1
    while len(items) < SAMPLES:
        at = _skip_separator(body, at)
        if at >= len(body) or body[at] == "]":
            break
        try:
            value, at = decoder.raw_decode(body, at)
        except ValueError:
            break
        items.append(value)
    return items


def _skip_separator(text: str, at: int) -> int:
    """Index after white space, one comma and white space from ``at``."""
    while at < len(text) and text[at].isspace():
        at += 1
    if at < len(text) and text[at] == ",":
        at += 1
    while at < len(text) and text[at].isspace():
        at += 1
    return at


def _envelope(entry: dict) -> tuple[str, tuple[str, ...]] | None:
    """(platform, prefixes under which the entry's fields live) of a platform's JSON entry."""
    keys = {k.lower(): k for k in entry}

    def value(name: str):
        return entry.get(keys.get(name, ""))

    if isinstance(value("_source"), dict) and keys.keys() & {"_index", "_id"}:
        return "elasticsearch", ("_source",)
    if isinstance(value("result"), dict) and "preview" in keys:
        return "splunk", ("result",)
    if keys.keys() & {"insertid", "logname"} and keys.keys() & {"textpayload", "jsonpayload", "protopayload"}:
        return "gcp", ("", "jsonpayload")
    if keys.keys() & {"@message", "@logstream"}:
        return "cloudwatch", ("",)
    if isinstance(value("line"), str) and (isinstance(value("labels"), dict) or isinstance(value("fields"), dict)):
        return "loki", ("", "labels", "fields")
    if isinstance(value("attributes"), dict) and value("type") == "log":
        return "datadog", ("attributes", "attributes.attributes")
    if isinstance(value("content"), dict) and "id" in keys:
        return "datadog", ("content", "content.attributes")
    if _is_beats_event(entry):
        return "elasticsearch", ("",)
    return None


def _is_beats_event(entry: dict) -> bool:
    """A Filebeat / Elastic Agent event: ``@timestamp`` and ``message`` next to the shipper's own
    fields (``agent.type``, ``input.type``, ``log.file.path``), which an application's ECS JSON
    log line does not have."""

    def found(path: str) -> bool:
        return _lookup(entry, path.split(".")) is not None

    agent = _lookup(entry, ["agent", "type"])
    shipper = (agent is not None and str(agent[1]).lower() in _BEATS) or found("input.type") or found("log.file.path")
    return shipper and found("@timestamp") and found("message")


def _json_shape(kind: str, objects: list[dict], envelope, columns: dict[str, str] | None) -> ExportShape | None:
    """The shape of JSON entries: usual names under the envelope's prefixes, then ``columns``."""
    platform, prefixes = envelope or (None, ("",))
    roles = _json_roles(objects, prefixes)
    seen = _keys_seen(objects)
    if columns:
        roles.update(_json_overrides(objects, prefixes, columns, seen))
    if "message" not in roles:
        return _no_message(columns, seen)
    return ExportShape(kind, platform, roles, seen)


def _json_roles(objects: list[dict], prefixes: tuple[str, ...]) -> dict[str, str]:
    """Role -> dotted path of the first usual name found (with a scalar value) in the samples;
    roles no usual name gives, and a message whose values hold no Kafka text where another
    field's do, told by what the fields hold at any depth (``_roles_by_values``)."""
    roles: dict[str, str] = {}
    for role, candidates in NAMES.items():
        path = _first_path(objects, [f"{p}.{c}" if p else c for c in candidates for p in prefixes], strings=role == "message")
        if path is not None:
            roles[role] = path
    paths = [path for path in _scalar_paths(objects) if _under(path, prefixes)]
    rows = [[_value_at(entry, path) for path in paths] for entry in objects]
    by_values = _roles_by_values(paths, rows)
    named_message = roles.get("message")
    if "message" in by_values and (named_message is None or not _holds_kafka_text(objects, named_message)):
        roles["message"] = by_values["message"]
    for role in ("time", "level", "host"):
        if role not in roles and role in by_values and by_values[role] not in roles.values():
            roles[role] = by_values[role]
    return roles


def _scalar_paths(objects: list[dict], limit: int = 200) -> list[str]:
    """Dotted paths of the string and number leaves of the samples, in first-seen order."""
    seen: dict[str, None] = {}
    for entry in objects:
        for keys in _leaves(entry, []):
            hit = _lookup(entry, [k.lower() for k in keys])
            if hit is not None and _scalar(hit[1], False):
                seen.setdefault(format_path(keys))
            if len(seen) >= limit:
                return list(seen)
    return list(seen)


def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    keys = [k.lower() for k in parse_path(path)]
    return any(not p or keys[: len(p.split("."))] == p.split(".") for p in prefixes)


def _value_at(entry: dict, path: str):
    hit = _lookup(entry, [k.lower() for k in parse_path(path)])
    return hit[1] if hit is not None and _scalar(hit[1], False) else None


def _holds_kafka_text(objects: list[dict], path: str) -> bool:
    return any(isinstance(v, str) and _KAFKA_TEXT.search(v) for v in (_value_at(o, path) for o in objects))


def _first_path(objects: list[dict], candidates: list[str], strings: bool = False) -> str | None:
    """The first candidate (dotted, lowercase) that resolves to a scalar in any sample."""
    for candidate in candidates:
        names = candidate.split(".")
        for entry in objects:
            hit = _lookup(entry, names)
            if hit is not None and _scalar(hit[1], strings):
                return format_path(hit[0])
    return None


def _scalar(value, strings: bool) -> bool:
    if strings:
        return isinstance(value, str)
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _lookup(entry, names: list[str]) -> tuple[list[str], object] | None:
    """(actual keys, value) of lowercase key segments ``names``, each step nested or flattened
    (``host.name`` finds ``{"host": {"name": ..}}`` and ``{"host.name": ..}``)."""
    if not names:
        return [], entry
    if not isinstance(entry, dict):
        return None
    keys = {k.lower(): k for k in entry}
    for cut in range(len(names), 0, -1):
        key = keys.get(".".join(names[:cut]))
        if key is not None:
            rest = _lookup(entry[key], names[cut:])
            if rest is not None:
                return [key, *rest[0]], rest[1]
    return None


def _json_overrides(objects: list[dict], prefixes, columns: dict[str, str], seen: tuple[str, ...]) -> dict[str, str]:
    """Role -> path for each ``columns`` entry, from the root or under the envelope's prefix."""
    found, missing = {}, []
    for role, column in columns.items():
        names = [n.lower() for n in parse_path(column)]
        candidates = [".".join(filter(None, (p, *names))) for p in ("", *prefixes)]
        path = _first_path(objects, candidates) or _first_any(objects, candidates)
        if path is None:
            missing.append(f"{role}={column}")
        else:
            found[role] = path
    if missing:
        raise ForensicsError(
            f"--columns {', '.join(missing)}: no such field in the export's entries.", f"Fields seen: {', '.join(seen[:60])}."
        )
    return found


def _first_any(objects: list[dict], candidates: list[str]) -> str | None:
    """The first candidate present in any sample, whatever its value."""
    for candidate in candidates:
        for entry in objects:
            hit = _lookup(entry, candidate.split("."))
            if hit is not None:
                return format_path(hit[0])
    return None


def _keys_seen(objects: list[dict], limit: int = 400) -> tuple[str, ...]:
    """Dotted paths of the leaves in the samples, in first-seen order."""
    seen: dict[str, None] = {}
    for entry in objects:
        for path in _leaves(entry, []):
            seen.setdefault(format_path(path))
            if len(seen) >= limit:
                return tuple(seen)
    return tuple(seen)


def _leaves(value, path: list[str]):
    if isinstance(value, dict) and value:
        for key, inner in value.items():
            yield from _leaves(inner, [*path, key])
    elif path:
        yield path


def format_path(keys: list[str]) -> str:
    """Keys -> dotted path; a key holding a dot or a quote is double-quoted."""
    return ".".join(f'"{k}"' if ("." in k or '"' in k or not k) else k for k in keys)


def parse_path(path: str) -> list[str]:
    """Dotted path -> keys (``labels."k8s-pod/app"`` -> ``["labels", "k8s-pod/app"]``)."""
    return [part[1:-1] if len(part) >= 2 and part[0] == part[-1] == '"' else part for part in _split_outside_quotes(path, ".")]


# ----------------------------------------------------------------------------- reading


def read_exports(spark: SparkSession, shapes: Mapping[str, ExportShape]) -> DataFrame:
    """One row per entry of each export, ``shapes`` mapping its path (a path or URI as Spark
    reads it; a local name starting with ``.`` or ``_`` must be staged first, see
    ``read.readable_paths``) to its shape: ``uri`` (that path), ``line``, ``line_end`` (long,
    physical 1-based lines where the entry starts and ends) and the ``ROLES`` (string, null where
    the export has no such column). Rows come in any order.

    However many exports there are, the rows' plan holds one table of the quoted values that
    run over lines of all the csv/tsv (``listed_spans``), which Spark builds by one job when
    the rows are read; this runs a job only for a csv/tsv larger than a split
    (``read.read_lines``' count of its splits). A JSON array's elements are placed on their
    lines by a scan of its text in the driver (``element_spans``)."""
    for shape in shapes.values():
        _check_shape(shape)
    delimited = {
        path: read_lines(spark, [path], {path: _local_size(path)}) for path, shape in shapes.items() if shape.kind in ("csv", "tsv")
    }
    listed = listed_spans(list(delimited.values())) if delimited else None
    numbers = {path: number for number, path in enumerate(delimited)}
    parts = []
    for path, shape in shapes.items():
        if shape.kind in ("csv", "tsv"):
            rows = _read_delimited(delimited[path], shape, listed, numbers[path])
        else:
            rows = {"ndjson": _read_ndjson, "json_array": _read_json_array, "json_documents": _read_json_array}[shape.kind](
                spark, path, shape
            )
        parts.append(rows.select(F.lit(path).alias("uri"), *OUTPUT_COLUMNS))
    return reduce(DataFrame.unionByName, parts)


def read_export(spark: SparkSession, path: str, shape: ExportShape) -> DataFrame:
    """``read_exports`` of the one export at ``path``, without its ``uri``."""
    return read_exports(spark, {path: shape}).drop("uri")


def export_line_counts(spark: SparkSession, shapes: Mapping[str, ExportShape], rows: DataFrame) -> dict[str, ExportLines]:
    """The line accounting of each export at the paths of ``shapes``, whose entries ``rows``
    are (``read_exports``' rows, or any with their ``uri``, ``line`` and ``line_end``): one
    Spark job however many exports there are. Where ``rows`` has a boolean ``joined`` column
    (entries joined to the entry before them, ``records.with_continuing_entries``), its count
    too, as ``ExportLines.joined``."""
    physical = reduce(DataFrame.unionByName, [spark.read.text(path).select(F.lit(path).alias("uri")) for path in shapes])
    arrays = [path for path, shape in shapes.items() if shape.kind in ARRAY_KINDS]  # elements may share lines: count the lines they cover
    covered = rows.where(F.col("uri").isin(*arrays)).select("uri", F.explode(F.sequence("line", "line_end")).alias("l")).distinct()
    joined = F.count_if(F.col("joined")) if "joined" in rows.columns else F.lit(0)
    truncated = F.count_if(F.col("truncated")) if "truncated" in rows.columns else F.lit(0)
    lines, entries, *shared = rows_together(
        [
            physical.groupBy("uri").count(),
            rows.groupBy("uri").agg(
                F.count(F.lit(1)).alias("n"),
                F.sum(F.col("line_end") - F.col("line") + 1).alias("span"),
                joined.alias("joined"),
                truncated.alias("truncated"),
            ),
            *([covered.groupBy("uri").count()] if arrays else []),
        ]
    )
    physical_lines = {row["uri"]: row["count"] for row in lines}
    of_entries = {row["uri"]: row for row in entries}
    covered_lines = {row["uri"]: row["count"] for rows_of in shared for row in rows_of}
    counts = {}
    for path in shapes:
        stats = of_entries.get(path)
        n, span, joined_n, cut = (stats["n"], stats["span"] or 0, stats["joined"], stats["truncated"]) if stats else (0, 0, 0, 0)
        covering = covered_lines.get(path, 0) if path in arrays else span
        total = physical_lines.get(path, 0)
        counts[path] = ExportLines(lines=total, entries=n, entry_lines=covering, outside=total - covering, joined=joined_n, truncated=cut)
    return counts


def export_line_count(spark: SparkSession, path: str, shape: ExportShape, rows: DataFrame | None = None) -> ExportLines:
    """``export_line_counts`` of the one export at ``path``; ``rows`` is ``read_export``'s
    result (else read again)."""
    rows = read_export(spark, path, shape) if rows is None else rows
    return export_line_counts(spark, {path: shape}, rows.select(F.lit(path).alias("uri"), "*"))[path]


def _check_shape(shape: ExportShape) -> None:
    if shape.kind not in KINDS:
        raise ForensicsError(f"Unknown export kind {shape.kind!r}.", f"Use one of {', '.join(KINDS)}.")
    unknown = set(shape.columns) - set(ROLES)
    if unknown or "message" not in shape.columns:
        raise ForensicsError(
            f"Export columns {sorted(shape.columns)} need a message role and only roles of {', '.join(ROLES)}.",
            "Build the shape with sniff_export.",
        )


def _null() -> Column:
    return F.lit(None).cast("string")


def _local_size(path: str) -> int | None:
    return os.path.getsize(path) if os.path.isfile(path) else None


QUOTE_BUCKET_LINES = 64
"""Lines per bucket of the join that finds the quoted span around a line: a span of n lines is
listed under n/64 + 2 buckets at most, and a line is compared with the spans of its bucket only."""


def _read_delimited(lines: DataFrame, shape: ExportShape, listed: DataFrame, number: int) -> DataFrame:
    """The rows of a csv/tsv file, whose ``lines`` are ``read.read_lines``' rows, placed on
    their physical lines (see the module's docstring); ``listed``: the quoted values that run
    over lines (``listed_spans``), the file's under its ``number``. The same table of spans is
    in the plan of every file: one broadcast for all."""
    inside = (_bucket_key(F.lit(number), _bucket(lines["line"])) == listed["key"]) & lines["line"].between(listed["start"], listed["end"])
    spanned = lines.join(F.broadcast(listed), inside, "left").select("line", "value", "start", "end")
    alone = spanned.where(F.col("start").isNull()).select("line", F.col("line").alias("line_end"), F.col("value").alias("text"))
    in_order = F.array_sort(F.collect_list(F.struct("line", "value")))
    parts = spanned.where(F.col("start").isNotNull()).groupBy("start", "end").agg(in_order.alias("parts"))
    # a span's first line taken from its parts, not its grouping key: a filter on the key would be
    # pushed into the table of spans, and each file's two branches would broadcast it apart
    joined = parts.select(
        F.col("parts")[0]["line"].alias("line"),
        F.col("end").alias("line_end"),
        F.array_join(F.transform("parts", lambda part: part["value"]), "\n").alias("text"),
    )
    records = alone.unionByName(joined).where(F.col("line") != shape.header_line)
    cells = [f"_c{i}" for i in range(len(shape.header))]
    options = {"sep": "\t" if shape.kind == "tsv" else ",", "quote": '"', "escape": '"', "mode": "PERMISSIVE"}
    schema = ", ".join(f"{c} string" for c in cells)
    parsed = records.select("line", "line_end", F.from_csv("text", schema, options).alias("cells")).select("line", "line_end", "cells.*")
    blank = F.coalesce(F.trim(F.concat_ws(_FIELD_GLUE, *cells)), F.lit("")) == ""
    return parsed.where(~blank).select(
        "line", "line_end", *[_cell(shape, cells, role).alias(role) for role in ROLES], F.lit(False).alias("truncated")
    )


def _bucket(line: Column) -> Column:
    return (line / QUOTE_BUCKET_LINES).cast("long")


def listed_spans(files: Sequence[DataFrame]) -> DataFrame:
    """The quoted values that run over several lines (the module's docstring) of each csv/tsv
    of ``files`` (their ``read.read_lines`` rows), each listed under every bucket of
    ``QUOTE_BUCKET_LINES`` lines it reaches into, by ``key`` (``_bucket_key`` of the file's
    number in ``files`` and the bucket), ``start`` and ``end`` (its first and last line): a join
    on the key compares a line with the spans of its bucket only. Built by Spark where the join
    needs it (a broadcast: one job for all files): per file, the lines with an odd number of
    quotes, which are few, sorted into one array, and its last line, where a value left open by
    a cut download ends; the k-th such line opens a value when k is odd."""
    odd = F.when(_occurrences(F.col("value"), '"') % 2 == 1, F.col("line"))
    lines = reduce(
        DataFrame.unionByName, [rows.select(F.lit(number).alias("number"), "line", odd.alias("odd")) for number, rows in enumerate(files)]
    )
    toggles = lines.groupBy("number").agg(F.array_sort(F.collect_list("odd")).alias("t"), F.max("line").alias("last"))
    t = F.col("t")
    openers = F.filter(F.sequence(F.lit(0), F.size(t), F.lit(2)), lambda k: k < F.size(t))

    def span(k: Column) -> Column:  # the k-th toggle opens a value, the next (or the file's last line) closes it
        return F.struct(F.get(t, k).alias("start"), F.coalesce(F.get(t, k + 1), F.col("last")).alias("end"))

    spans = toggles.select("number", F.explode(F.transform(openers, span)).alias("span")).select("number", "span.*")
    buckets = spans.select("number", "start", "end", F.explode(F.sequence(_bucket(F.col("start")), _bucket(F.col("end")))).alias("bucket"))
    return buckets.select(_bucket_key(F.col("number"), F.col("bucket")).alias("key"), "start", "end")


_FILE_KEYS = 1 << 40
"""Bucket keys per file in ``listed_spans``: more buckets than any file has lines."""


def _bucket_key(number: Column, bucket: Column) -> Column:
    """The key of ``bucket`` of the file numbered ``number`` (``listed_spans``): one long, which
    a hash join compares faster than a file name and a bucket."""
    return number.cast("long") * _FILE_KEYS + bucket


def _occurrences(text: Column, char: str) -> Column:
    """How often ``char`` (one byte in UTF-8) occurs in ``text``: byte lengths, which Spark
    knows without counting characters."""
    return F.octet_length(text) - F.octet_length(F.replace(text, F.lit(char), F.lit("")))


def _cell(shape: ExportShape, cells: list[str], role: str) -> Column:
    """The column of ``role`` among the positional ``cells`` (first header cell of that name)."""
    name = shape.columns.get(role)
    if name is None or name not in shape.header:
        return _null()
    cell = F.col(cells[shape.header.index(name)])
    return F.concat(cell, F.lit(" UTC")) if role == "time" and name.upper().endswith(UTC_SUFFIX.upper()) else cell


def json_path(path: str) -> str:
    """Dotted path -> Spark JSON path (``host."a.b"`` -> ``$['host']['a.b']``)."""
    keys = parse_path(path)
    if any("'" in key for key in keys):
        raise ForensicsError(
            f"JSON field {path!r} holds a single quote, which Spark's JSON paths cannot name.", "Rename the field or convert the export."
        )
    return "$" + "".join(f"['{key}']" for key in keys)


def _json_fields(value: Column, shape: ExportShape) -> list[Column]:
    """The ``ROLES`` of JSON entries in ``value``."""
    return [(F.get_json_object(value, json_path(shape.columns[role])) if role in shape.columns else _null()).alias(role) for role in ROLES]


def _read_ndjson(spark: SparkSession, path: str, shape: ExportShape) -> DataFrame:
    """One entry per non-blank line; a line that is no JSON object keeps its text as message. A
    line cut before its end (``truncated``) gives the fields written whole before the cut
    (``_salvaged``)."""
    lines = read_lines(spark, [path], {path: _local_size(path)}).where(F.col("value").rlike(r"\S"))
    value = F.col("value")
    opens = value.rlike(r"^\s*\{")
    truncated = opens & F.get_json_object(value, "$").isNull()
    fields = [
        F.coalesce(field, F.when(truncated, _salvaged(value, shape.columns.get(role)))).alias(role)
        for role, field in zip(ROLES, _json_fields(value, shape), strict=True)
    ]
    message = F.coalesce(
        F.get_json_object(value, json_path(shape.columns["message"])),
        F.when(truncated, _salvaged(value, shape.columns["message"])),
        F.when(~opens, value),
    )
    fields[-1] = message.alias("message")
    return lines.select(F.col("line"), F.col("line").alias("line_end"), *fields, truncated.alias("truncated"))


def _salvaged(value: Column, path: str | None) -> Column:
    """The value of the top-level field ``path`` in the text of a JSON object cut before its end,
    where the field was written whole before the cut (a string decoded, a number as written)."""
    keys = parse_path(path) if path else []
    if len(keys) != 1:
        return _null()
    written = F.regexp_extract(value, r'"' + re.escape(json.dumps(keys[0])[1:-1]) + r'"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*)', 1)
    decoded = F.from_json(F.concat(F.lit("["), written, F.lit("]")), "array<string>")[0]
    return F.when(written != "", decoded)


def _read_json_array(spark: SparkSession, path: str, shape: ExportShape) -> DataFrame:
    """Elements parsed by Spark, placed on their lines by ``element_spans`` (a scan of the text
    in the driver: Spark has no way to tell where an element starts inside a whole-file string,
    and platforms cap such downloads; ``MAX_ARRAY_CHARS`` bounds it). Exports are local files."""
    size = _local_size(path) or 0
    if size > MAX_ARRAY_CHARS:
        raise ForensicsError(
            f"{path} is a JSON array of {size} bytes, too large to place its entries on their lines.",
            "Convert it to one entry per line, e.g. jq -c '.[]' in.json > out.ndjson, and read that.",
        )
    with open_local(path, "rt", encoding="utf-8", errors="replace", newline="") as handle:
        text = handle.read()
    spans, closed = _scan(text)
    if shape.kind == "json_array" and closed:
        whole = spark.read.text(path, wholetext=True).select(F.regexp_replace("value", "^\ufeff", "").alias("value"))
        elements = whole.select(F.posexplode(F.from_json("value", "array<string>")).alias("pos", "entry"))
        where = spark.createDataFrame([(i, a, b) for i, (a, b) in enumerate(spans)], "pos int, line long, line_end long")
        return elements.join(where, "pos", "left").select(
            "line", "line_end", *_json_fields(F.col("entry"), shape), F.lit(False).alias("truncated")
        )
    entries = spark.createDataFrame(cut_elements(text, shape.kind), "line long, line_end long, entry string, truncated boolean")
    return entries.select("line", "line_end", *_json_fields(F.col("entry"), shape), "truncated")


def cut_elements(text: str, kind: str = "json_array") -> list[tuple[int, int, str, bool]]:
    """(first line, last line, JSON text, cut) of each element of a JSON array cut before its end,
    or of each JSON document of ``text`` (``kind`` ``json_documents``): the complete ones, then
    the fields written whole in the one the cut ended (``_salvage``), if any, marked cut."""
    text = text.lstrip("\ufeff")
    breaks = [m.end() for m in _LINE_SPLIT.finditer(text)]
    start = 0
    if kind == "json_array":
        start = text.index("[") + 1 if "[" in text else len(text)
    decoder = json.JSONDecoder()
    found, at = [], start
    while True:
        at = _skip_separator(text, at)
        if at >= len(text) or text[at] == "]":
            return found
        try:
            value, end = decoder.raw_decode(text, at)
        except ValueError:
            break
        found.append((_line_at(breaks, at), _line_at(breaks, end - 1), json.dumps(value), False))
        at = end
    partial = _salvage(text[at:].rstrip())
    if partial is not None:
        found.append((_line_at(breaks, at), _line_at(breaks, len(text.rstrip()) - 1), json.dumps(partial), True))
    return found


def _line_at(breaks: list[int], offset: int) -> int:
    """The physical line (1-based) of the character at ``offset``, ``breaks`` the offsets just
    after each line break."""
    return bisect.bisect_right(breaks, offset) + 1


def _salvage(text: str) -> dict | None:
    """The fields of a JSON object cut before its end that were written whole before the cut:
    the object closed after the last of them (None where not even one is whole)."""
    if not text.startswith("{"):
        return None
    depth, ends = 0, []
    for match in _JSON_TOKEN.finditer(text):
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


def element_spans(text: str) -> list[tuple[int, int]]:
    """(first, last) physical line of each element of the top-level JSON array in ``text``.

    A regex walks the strings, brackets, scalars and line breaks (LF, CRLF, lone CR); an element
    starts where the depth rises from 1 (inside the array) and ends where it falls back to 1.
    """
    return _scan(text)[0]


def _scan(text: str) -> tuple[list[tuple[int, int]], bool]:
    """``element_spans`` of ``text``, and whether its array is closed (a paste may cut it)."""
    line, depth, start, spans, closed = 1, 0, 1, [], False
    for match in _JSON_TOKEN.finditer(text.lstrip("\ufeff")):
        token = match.group()
        if token in ("\r\n", "\r", "\n"):
            line += 1
            continue
        first = line
        if token[0] == '"':
            line += len(_LINE_SPLIT.findall(token))
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
