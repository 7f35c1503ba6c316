"""Python-side reading of generated bundles: records per layout, and catalogue matching (``re`` only)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

from forensics.catalogue import catalogue_entries
from forensics.simulate.versions import in_range

ENTRIES = catalogue_entries()
PREFIX = (
    r"^(?:\[(?:Consumer|ShareConsumer|Producer|AdminClient) [^\]]*\] ?|stream-client \[[^\]]*\] ?|"
    r"(?:global-)?stream-thread \[[^\]]*\] ?(?:(?:task|stream-task|standby-task) \[[^\]]*\] ?)?|"
    r"state-updater \[[^\]]*\] ?|(?:task|stream-task|standby-task) \[[^\]]*\] ?)*"
)
LOG4J = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] (TRACE|DEBUG|INFO|WARN|ERROR) ")
LOGBACK = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) (?:\[([^\]]*)\] )?(TRACE|DEBUG|INFO|WARN|ERROR) +([\w.$]+) +- ")


def read_lines(path: Path) -> list[str]:
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    return data.decode("utf-8").split("\n")[:-1]


def records(path: Path) -> list[dict]:
    """Records (first line number, level, logger, message) of a generated log file, any layout."""
    lines = read_lines(path)
    out: list[dict] = []
    for n, line in enumerate(lines, 1):
        if line.startswith("{"):
            obj = json.loads(line)
            out.append({"line": n, "level": obj["level"], "logger": obj["logger_name"], "message": obj["message"]})
            continue
        m = LOG4J.match(line)
        if m:
            out.append({"line": n, "level": m.group(2), "logger": None, "message": line[m.end() :], "layout": "log4j"})
            continue
        m = LOGBACK.match(line)
        if m:
            out.append({"line": n, "level": m.group(3), "logger": m.group(4), "message": line[m.end() :]})
            continue
        if out:
            out[-1]["message"] += "\n" + line
    for r in out:
        if r.get("layout") == "log4j":
            m = re.search(r" \(([\w.$]+)\)$", r["message"])
            if m:
                r["logger"], r["message"] = m.group(1), r["message"][: m.start()]
            del r["layout"]
        if r["logger"] and r["logger"].startswith("org.apache.kafka") and "\n" in r["message"]:
            pass
    return out


def kafka_records(path: Path) -> list[dict]:
    return [r for r in records(path) if r["logger"] and r["logger"].startswith("org.apache.kafka.")]


def strip_trace(message: str) -> str:
    """Kafka records carry no stack trace in generated logs; app continuation lines belong to app records."""
    return message


def matching_templates(record: dict, version: str) -> list[str]:
    """Ids of the catalogue templates valid for ``version`` whose logger and pattern match ``record``."""
    body = re.sub(PREFIX, "", record["message"], count=1)
    simple = record["logger"].rsplit(".", 1)[-1]
    ids = []
    for entry in ENTRIES:
        if simple not in entry["loggers"] or not in_range(version, str(entry["versions"])):
            continue
        pattern = entry["pattern"]
        multiline = any(h in pattern for h in ("\\n", "\\s\\S", "\\S\\s", "\\t"))
        target = body if multiline else body.split("\n", 1)[0]
        if re.match(pattern, target):
            ids.append(entry["id"])
    return ids
