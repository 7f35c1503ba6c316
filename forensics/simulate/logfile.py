"""One host's log file: records in time order, rendered in a real layout with line numbers.

Layouts: Kafka's default log4j ``[%d] %p %m (%c)%n`` (a multi-line message carries the logger
on its last physical line, exceptions follow), logback ``%d %-5level %logger - %msg%n`` (the
KAFKA-7672 report's form; optionally with ``[%thread]``) and JSON lines (logstash fields, the
stack trace in ``stack_trace``). Rendering numbers every record's first physical line, which is
what ``EXPECTED.json`` evidence names.
"""

from __future__ import annotations

import gzip
import io
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

LAYOUTS = ("log4j", "logback", "logback_thread", "json_lines")


@dataclass
class Record:
    """One log record: ``msg`` may span lines; ``stack`` lines follow it (an exception)."""

    ts: int  # epoch milliseconds
    level: str
    logger: str
    msg: str
    thread: str = "main"
    stack: tuple[str, ...] = ()
    kafka: bool = False
    seq: int = 0
    line: int = 0  # 1-based first physical line, set by render()


def _stamp(ts: int, sep: str = " ") -> str:
    t = datetime.fromtimestamp(ts / 1000, tz=timezone.utc)
    return t.strftime(f"%Y-%m-%d{sep}%H:%M:%S") + f",{ts % 1000:03d}"


def render_record(record: Record, layout: str) -> list[str]:
    """The physical lines of one record in ``layout``."""
    if layout == "json_lines":
        t = datetime.fromtimestamp(record.ts / 1000, tz=timezone.utc)
        obj = {
            "@timestamp": t.strftime("%Y-%m-%dT%H:%M:%S") + f".{record.ts % 1000:03d}Z",
            "level": record.level,
            "thread_name": record.thread,
            "logger_name": record.logger,
            "message": record.msg,
        }
        if record.stack:
            obj["stack_trace"] = "\n".join(record.stack)
        return [json.dumps(obj, ensure_ascii=False)]
    lines = record.msg.split("\n")
    if layout == "log4j":
        lines[0] = f"[{_stamp(record.ts)}] {record.level} {lines[0]}"
        lines[-1] = f"{lines[-1]} ({record.logger})"
    elif layout == "logback":
        lines[0] = f"{_stamp(record.ts)} {record.level:<5} {record.logger:<58} - {lines[0]}"
    elif layout == "logback_thread":
        lines[0] = f"{_stamp(record.ts)} [{record.thread}] {record.level:<5} {record.logger} - {lines[0]}"
    else:
        raise ValueError(f"unknown layout {layout!r}")
    return lines + list(record.stack)


@dataclass
class HostLog:
    """The log file of one host (``<dir>/<file>``), filled in any order, rendered by time."""

    dir: str
    file: str
    layout: str
    records: list[Record] = field(default_factory=list)

    @property
    def path(self) -> str:
        return f"{self.dir}/{self.file}"

    def add(self, record: Record) -> Record:
        record.seq = len(self.records)
        self.records.append(record)
        return record

    def render(self) -> list[str]:
        """All physical lines; sets each record's ``line``."""
        out: list[str] = []
        for record in sorted(self.records, key=lambda r: (r.ts, r.seq)):
            record.line = len(out) + 1
            out.extend(render_record(record, self.layout))
        return out

    def write(self, root: Path) -> int:
        """Write the file under ``root`` (gzip without a timestamp: byte-identical reruns)."""
        lines = self.render()
        data = ("\n".join(lines) + "\n").encode("utf-8")
        target = root / self.dir / self.file
        target.parent.mkdir(parents=True, exist_ok=True)
        if self.file.endswith(".gz"):
            buffer = io.BytesIO()
            with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as gz:
                gz.write(data)
            data = buffer.getvalue()
        target.write_bytes(data)
        return len(lines)
