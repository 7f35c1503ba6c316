"""Load an incident (analyse once, or read a saved result) and narrow it to a group / window.

Everything here works on the small JSON result (``forensics.analyze.analyze``); Spark runs only
inside ``analyse`` and only when no ``analysis_json`` is given.
"""

from __future__ import annotations

import json
import os
from typing import Iterable, Sequence

import pandas as pd

from ..errors import ForensicsError
from ..redact import redactor_for

TIME_KEYS = {
    "rebalances": ("start", "end"),
    "ownership": ("from", "to"),
    "restores": ("opened_ts", "running_ts"),
    "commits": ("ts", "ts"),
    "findings": ("start", "end"),
}
"""Per list in the result: the fields holding each entry's time span (for the window filter)."""

_session = None


def shared_session(master: str | None = None, small_work: bool = False):
    """One warm SparkSession per process, reused by every ``load_incident`` call; a local one
    maps the class archive of ``forensics warm-up``, and runs on the quick JIT tier if the
    analysis that starts it is of a small incident (``small_work``; ``spark.local_jvm_options``)."""
    global _session
    if _session is None:
        from ..spark import get_session, local_jvm_options, resolve_master

        master = resolve_master(master)
        _session = get_session(master, jvm_options=local_jvm_options(master, small_work))
    return _session


def analyse(
    paths: Sequence[str], offsets: Sequence[str] = (), tz: str = "UTC", spark=None, layout: str | None = None, columns=None, inputs=None
) -> dict:
    """Run ``forensics.analyze.analyze`` on the shared (or given) session; return its JSON result.
    ``inputs``: ``paths`` and ``offsets`` already routed (``ingest.route_inputs``), else routed
    here, before the shared session starts (its JVM options depend on their size)."""
    from ..analyze import analyze, is_small_incident
    from ..ingest import route_inputs
    from ..offsets import sniff_file

    if not paths and not offsets:
        raise ForensicsError("Nothing to analyse.", "Give log paths, offset dumps, or analysis_json.")
    if inputs is None:
        inputs = route_inputs(paths, offsets, sniff_file, tz=tz)
    spark = spark or shared_session(small_work=is_small_incident(inputs.files))
    result = analyze(spark, layout=layout, columns=columns, inputs=inputs)
    return json.loads(json.dumps(result, default=str))  # exactly what `--json` writes


def read_result(path: str) -> dict:
    """A result saved by ``forensics analyze --json`` (or ``forensics report``)."""
    try:
        with open(path, encoding="utf-8") as handle:
            result = json.load(handle)
    except FileNotFoundError:
        raise ForensicsError(
            f"analysis_json {path!r} does not exist.", "Give the JSON written by `forensics analyze --json FILE`."
        ) from None
    except json.JSONDecodeError as exc:
        raise ForensicsError(
            f"analysis_json {path!r} is not JSON ({exc.msg}, line {exc.lineno}).", "Re-run `forensics analyze --json FILE`."
        ) from None
    if not isinstance(result, dict) or "findings" not in result or "inputs" not in result:
        raise ForensicsError(
            f"analysis_json {path!r} is not a forensics result.", "Give the JSON written by `forensics analyze --json FILE`."
        )
    return result


def group_of(entry: dict):
    """The consumer group of any result entry (``group`` in most lists, ``group_id`` in some)."""
    return entry.get("group", entry.get("group_id"))


def to_time(value) -> pd.Timestamp | None:
    """An ISO 8601 string (or None) as a UTC Timestamp."""
    if value is None or value == "":
        return None
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def check_window(window) -> tuple[pd.Timestamp | None, pd.Timestamp | None] | None:
    """``(start, end)`` ISO strings (either may be None) as Timestamps; None for no window."""
    if window is None:
        return None
    if isinstance(window, str) or len(window) != 2:
        raise ForensicsError(f"window {window!r} is not a pair.", 'Give window=("2024-04-16T06:00:00Z", "2024-04-16T07:00:00Z") or None.')
    try:
        start, end = (to_time(w) for w in window)
    except (ValueError, TypeError) as exc:
        raise ForensicsError(
            f"window {window!r} holds a time that cannot be read ({exc}).", "Use ISO 8601 times such as 2024-04-16T06:00:00Z."
        ) from None
    if start is not None and end is not None and end < start:
        raise ForensicsError(f"window {window!r} ends before it starts.", "Swap the two times.")
    return start, end


def _overlaps(entry: dict, keys: tuple[str, str], window) -> bool:
    start, end = window
    first, last = to_time(entry.get(keys[0])), to_time(entry.get(keys[1]))
    first = first or last
    last = last or first
    if first is None:
        return True  # undated entries stay: the window cannot rule them out
    return (end is None or first <= end) and (start is None or last >= start)


def _partition_hit(entry: dict, topic, partition) -> bool:
    if topic is not None and entry.get("topic") not in (None, topic):
        return False
    return partition is None or entry.get("partition") in (None, partition)


def select(
    result: dict,
    group: str | None = None,
    window=None,
    topic: str | None = None,
    partition: int | None = None,
    detectors: Iterable[str] | None = None,
) -> dict:
    """``result`` narrowed to ``group``, a time ``window``, a ``topic``/``partition`` and
    ``detectors`` (each None for all). Inputs, accounting and clock skew stay whole."""
    span = check_window(window)
    wanted = None if detectors is None else set(detectors)
    narrowed = dict(result)
    for key, keys in TIME_KEYS.items():
        kept = []
        for entry in result.get(key) or []:
            if group is not None and group_of(entry) != group:
                continue
            if span is not None and not _overlaps(entry, keys, span):
                continue
            if key != "rebalances" and not _partition_hit(entry, topic, partition):
                continue
            if key == "findings" and wanted is not None and entry["detector"] not in wanted:
                continue
            kept.append(entry)
        narrowed[key] = kept
    if group is not None:
        narrowed["config"] = [
            c for c in result.get("config") or [] if c.get("group_id") in (group, None) or c.get("application_id") == group
        ]
    return narrowed


def groups(result: dict) -> list[str]:
    """Every consumer group in the result, sorted."""
    found = {group_of(e) for key in TIME_KEYS for e in result.get(key) or []}
    return sorted(g for g in found if g)


def _dated(result: dict) -> tuple[list, pd.Series]:
    """The group (``group_of``) and the time of each time of every dated entry (``TIME_KEYS``),
    each read as ``to_time`` reads it, by one vectorised parse, not one by one. ``mixed``: a
    time without an offset is UTC even beside times with one (pandas' ``ISO8601`` reads it in
    the offset of the time before it)."""
    owners, texts = [], []
    for key, keys in TIME_KEYS.items():
        for entry in result.get(key) or []:
            for k in keys:
                if (value := entry.get(k)) is not None and value != "":
                    owners.append(group_of(entry))
                    texts.append(value)
    return owners, pd.to_datetime(pd.Series(texts, dtype=object), utc=True, format="mixed")


def time_span(result: dict) -> tuple[pd.Timestamp | None, pd.Timestamp | None]:
    """First and last time of any dated entry."""
    _, stamps = _dated(result)
    return (stamps.min(), stamps.max()) if len(stamps) else (None, None)


def spans_by_group(result: dict) -> dict:
    """Group (``group_of``) -> ``time_span`` of that group's own entries, all found in one pass
    (a group's own end of logs, where its last partition ownership ends)."""
    spans: dict = {}
    for group, stamp in zip(*_dated(result)):
        first, last = spans.get(group, (stamp, stamp))
        spans[group] = (min(first, stamp), max(last, stamp))
    return spans


# --- redaction -------------------------------------------------------------------------------

REDACT_KEY_ENV = "FORENSICS_REDACT_KEY"
"""Key of the pseudonyms: the same key gives the same pseudonyms in every report (else random)."""


def redact_with(result: dict, topics: bool = False, key: str | None = None):
    """``(redacted result, redactor)``: hosts, IPs, client / member / instance / group ids, file
    paths and (``topics``) topic names replaced by keyed pseudonyms everywhere
    (``forensics.redact``), the log text samples dropped, and what was masked recorded under
    ``redaction``. A result already redacted is returned as it is, with no redactor."""
    if result.get("redacted"):
        return result, None
    key = key or os.environ.get(REDACT_KEY_ENV)
    redactor = redactor_for(result, key, topics)
    cleaned = redactor.apply(result)
    for name in ("unparsed_samples", "unrecognised_kafka_samples"):
        cleaned[name] = [{**e, "text": "(redacted)"} for e in cleaned.get(name) or []]
    cleaned["redacted"] = True
    cleaned["redaction"] = {"masked": redactor.summary(), "topics": topics, "keyed": bool(key)}
    return cleaned, redactor


def redact(result: dict, topics: bool = False) -> dict:
    """The result with its identifiers pseudonymised (see ``redact_with``)."""
    return redact_with(result, topics)[0]
