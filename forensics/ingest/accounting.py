"""The accounting of every line, per input and in total (``records + continuations + irrelevant +
unparsed == lines``), with samples of the unparsed lines, the Kafka lines not read, and hosts
whose files overlap in time."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from pyspark.sql import DataFrame

from .. import contract as c
from .. import schema as s
from .records import FOLDS

SAMPLE_CHARS = 500
"""Characters of a line kept as a sample: an unparsed line, a file's first record's message."""
SAMPLES_PER_REASON = 5
"""Unparsed lines sampled per file and reason (the first of them)."""


@dataclass
class Ingested:
    """What ingest produced: inputs, the line accounting, the records and unparsed samples."""

    inputs: list[dict]
    accounting: dict
    records: DataFrame
    unparsed_samples: list[dict] = field(default_factory=list)
    host_overlaps: list[dict] = field(default_factory=list)


def per_file_counts(facts, counts, folded_rows, by_uri) -> dict[str, dict]:
    """Input path -> {lines, buckets Counter, reasons Counter, layouts Counter, undated}."""
    out: dict[str, dict] = defaultdict(
        lambda: {
            "lines": 0,
            "buckets": Counter(),
            "reasons": Counter(),
            "layouts": Counter(),
            "wrappers": Counter(),
            "undated": 0,
            "not_read": 0,
        }
    )
    exports = {row["uri"] for row in facts if row.get("export")}
    for row in facts:
        entry = out[by_uri[row["uri"]].path]
        entry["lines"] += row["lines"]
        entry["buckets"].update(row.get("buckets", {}))
        if row["layout"] is not None:
            entry["layouts"][row["layout"]] += row["lines"]
        if row["wrapper"] is not None and not row.get("export"):
            entry["wrappers"][row["wrapper"]] += row["lines"]
    for row in counts:
        entry = out[by_uri[row["uri"]].path]
        entry["buckets"][row["bucket"]] += row["count"]
        if row["uri"] in exports and row[s.LAYOUT] is not None:  # an export's entries: each one head
            entry["layouts"][row[s.LAYOUT]] += row["count"]
            entry["wrappers"]["export"] += row["count"]
        if row["reason"]:
            entry["reasons"][row["reason"]] += row["count"]
        if row["undated"] and row["bucket"] == s.RECORDS:
            entry["undated"] += row["count"]
        if row["pasted"] and row["uri"] not in exports:
            entry["layouts"]["message_only"] += row["count"]
        if row["not_read"]:
            entry["not_read"] += row["not_read"]
            entry["first_not_read"] = min(filter(None, (entry.get("first_not_read"), row["first_not_read"])))
        if row["bucket"] == s.RECORDS and row["first_ts"] is not None:
            entry["first_ts"] = min(filter(None, (entry.get("first_ts"), row["first_ts"])))
            entry["last_ts"] = max(filter(None, (entry.get("last_ts"), row["last_ts"])))
    for row in folded_rows:
        bucket, reason = FOLDS[row["k"]]
        entry = out[by_uri[row["uri"]].path]
        if bucket == s.CONTINUATIONS and not entry["layouts"]:
            bucket, reason = s.UNPARSED, s.UNKNOWN_LAYOUT  # stack frames in a file with no records
        entry["buckets"][bucket] += row["n"]
        if reason:
            entry["reasons"][reason] += row["n"]
    return out


def listed_samples(samples, folded_rows, by_uri) -> list[dict]:
    found = [{"file": by_uri[r["uri"]].path, "line": r["line"], "reason": r["reason"], "text": r["text"]} for r in samples]
    for row in folded_rows:
        bucket, reason = FOLDS[row["k"]]
        if bucket == s.UNPARSED:
            found.append({"file": by_uri[row["uri"]].path, "line": row["line"], "reason": reason, "text": row["text"]})
    return sorted(found, key=lambda x: (x["file"], x["line"]))


def summarised(files, per_file, gz_problems, records, samples) -> Ingested:
    inputs, totals, reasons = [], Counter(), Counter()
    for file in files:
        entry = per_file.get(file.path)
        layouts = entry["layouts"] if entry else Counter()
        buckets = entry["buckets"] if entry else Counter()
        problem = file.problem or gz_problems.get(file.path)
        inputs.append(
            {
                "path": file.path,
                "host": file.host,
                "layout": layouts.most_common(1)[0][0] if layouts else None,
                "layouts": dict(layouts),
                "wrappers": dict(entry["wrappers"]) if entry else {},
                "export": entry.get("export") if entry else None,
                "lines": entry["lines"] if entry else 0,
                **{bucket: buckets.get(bucket, 0) for bucket in s.BUCKETS},
                "tz": file.tz,
                "tz_assumed": not file.tz_given,
                "undated_records": entry["undated"] if entry else 0,
                "date_order": entry.get("date_order") if entry else None,
                "first_ts": iso_time(entry.get("first_ts")) if entry else None,
                "first_record": entry.get("head") if entry else None,
                "last_ts": iso_time(entry.get("last_ts")) if entry else None,
                "problem": problem,
                "duplicate_of": file.duplicate_of,
                KAFKA_NOT_READ: entry["not_read"] if entry else 0,
                "kafka_not_read_line": entry.get("first_not_read") if entry else None,
            }
        )
        if entry:
            totals["lines"] += entry["lines"]
            totals.update(buckets)
            reasons.update(entry["reasons"])
            totals[KAFKA_NOT_READ] += entry["not_read"]
    accounting = {
        "lines": totals["lines"],
        **{bucket: totals[bucket] for bucket in s.BUCKETS},
        "unparsed_by_reason": dict(sorted(reasons.items())),
        "files": len(files),
        "files_with_problems": sum(1 for i in inputs if i["problem"]),
        "duplicate_files": sum(1 for i in inputs if i["duplicate_of"]),
        KAFKA_NOT_READ: totals[KAFKA_NOT_READ],
    }
    if sum(accounting[b] for b in s.BUCKETS) != accounting["lines"]:
        raise AssertionError(f"line accounting does not add up: {accounting}")
    return Ingested(inputs, accounting, records, samples, host_overlaps(inputs))


KAFKA_NOT_READ = "kafka_not_read"
"""Per input and in the accounting: lines that carry a Kafka mark (``layouts.anchor.MARK``, no
stack-trace text) and are in no Kafka record (another logger's record, its continuation, or
unparsed): counted, never silent (issue 86). ``kafka_not_read_line``: the first of a file's."""


def not_read_text(entry: dict) -> str | None:
    """What ``forensics layouts`` and the report say of an input whose Kafka lines were not all
    read: how many, the first, and the best hint (a layout pattern, or an export's columns).
    Where a known layout read every line, those lines are in other loggers' records (a broker's
    ``KafkaConfig`` block naming Kafka classes): a layout pattern would not help, and none is hinted."""
    count = entry.get(KAFKA_NOT_READ) or 0
    if not count:
        return None
    said = f"{count:,} line{'s' if count != 1 else ''} look like Kafka but were not read (first: line {entry.get('kafka_not_read_line')})"
    if entry.get("export"):
        return f"{said}; try --columns time=..,message=.."
    if entry.get("layouts") and not entry.get(s.UNPARSED):
        return f"{said}; they are in other loggers' records (a config block naming Kafka classes, say), not in an unknown layout"
    return f"{said}; try --layout PATTERN"


def iso_time(ts) -> str | None:
    return c.in_utc(ts).isoformat(sep=" ") if ts is not None else None


def host_overlaps(inputs: list[dict]) -> list[dict]:
    """Hosts whose files' record times overlap: two inputs named as one host (by directory,
    file name or ``--host``) that are two writers, not one log and its rotations."""
    by_host: dict[str, list[dict]] = defaultdict(list)
    for entry in inputs:
        if entry["first_ts"] is not None:
            by_host[entry["host"]].append(entry)
    overlaps = []
    for host, entries in sorted(by_host.items()):
        entries.sort(key=lambda e: e["first_ts"])
        latest = entries[0]  # of the files so far, the one that ends last
        for later in entries[1:]:
            if later["first_ts"] < latest["last_ts"]:
                overlaps.append(
                    {
                        "host": host,
                        "files": [latest["path"], later["path"]],
                        "from": later["first_ts"],
                        "to": min(latest["last_ts"], later["last_ts"]),
                    }
                )
            latest = max(latest, later, key=lambda e: e["last_ts"])
    return overlaps
