"""Pure functions from the JSON result to small pandas tables (one per view)."""

from __future__ import annotations

from collections import Counter

import pandas as pd

from ..contract import UNKNOWN_DATE_ORDER
from .data import group_of, time_span, to_time

VERDICT_ORDER = ("loss", "duplication", "delay", "expected")
DAMAGE = ("loss", "duplication")


def where(finding: dict) -> str:
    """``topic-partition``, ``task T`` or the group: what a finding hit."""
    if finding.get("topic") is not None and finding.get("partition") is not None:
        return f"{finding['topic']}-{finding['partition']}"
    if finding.get("task"):
        return f"task {finding['task']}"
    return finding.get("topic") or f"group {finding.get('group')}"


def offset_range(finding: dict) -> str:
    """``[from, to)`` (half-open), with ``at most`` when the range is only a bound; ``unmeasured``
    (``from N`` where its start is known) when the logs prove the finding but not its range
    (``exact`` false, ``missing`` saying what would measure it)."""
    if finding.get("offset_from") is None or finding.get("offset_to") is None:
        if finding.get("exact") is False and finding.get("missing"):
            start = finding.get("offset_from")
            return "unmeasured" + (f" (from {start:,})" if start is not None else "")
        return ""
    bound = "" if finding.get("exact") else " (at most)"
    return f"[{finding['offset_from']:,}, {finding['offset_to']:,}){bound}"


def _unmeasured(finding: dict) -> bool:
    """The logs prove the finding's damage but not how many records (``exact`` false, no count)."""
    return finding.get("exact") is False and finding.get("records") is None


def damage_text(h: dict, which: str) -> str:
    """Records ``lost`` or ``duplicated`` of a ``headline``, as a reader should take them:
    ``1,234``, ``(at most)`` where a measured range is only a bound, and ``unmeasured in N
    findings`` where the logs prove damage but not its range (issue 85): never a bare 0 then."""
    count, unmeasured = h[f"records_{which}"], h.get(f"{which}_unmeasured") or 0
    measured = f"{count:,}{' (at most)' if h.get(f'{which}_is_bound') else ''}"
    if not unmeasured:
        return measured
    gap = f"unmeasured in {unmeasured} finding{'s' if unmeasured > 1 else ''}"
    return f"{measured}, and {gap}" if count or h.get(f"{which}_is_bound") else gap


def when(value) -> str:
    """A result time for people: ``2024-04-16 06:03:17.686 UTC``."""
    stamp = to_time(value)
    return "" if stamp is None else stamp.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"


def headline(result: dict) -> dict:
    """The numbers a reader wants first: findings per verdict, records lost and duplicated."""
    findings = result.get("findings") or []
    verdicts = Counter(f["verdict"] for f in findings)
    records = {v: sum(f.get("records") or 0 for f in findings if f["verdict"] == v) for v in DAMAGE}
    bounds = {v: any(f.get("exact") is False and f.get("records") is not None for f in findings if f["verdict"] == v) for v in DAMAGE}
    unmeasured = {v: sum(1 for f in findings if f["verdict"] == v and _unmeasured(f)) for v in DAMAGE}
    first, last = time_span(result)
    return {
        "findings": len(findings),
        "by_verdict": {v: verdicts.get(v, 0) for v in VERDICT_ORDER},
        "records_lost": records["loss"],
        "records_duplicated": records["duplication"],
        "lost_is_bound": bounds["loss"],
        "duplicated_is_bound": bounds["duplication"],
        "lost_unmeasured": unmeasured["loss"],
        "duplicated_unmeasured": unmeasured["duplication"],
        "rebalances": len(result.get("rebalances") or []),
        "groups": len({group_of(r) for r in result.get("rebalances") or []}),
        "first": when(first),
        "last": when(last),
    }


HINT_SHARE = 0.5
"""A file with more than this share of its lines not understood gets a ``--layout`` / ``--columns`` hint."""


def shape_text(entry: dict) -> str | None:
    """What was recognised in a log file, as ``forensics layouts`` says it: layouts with their
    record heads, wrappers peeled, the export read."""
    if entry.get("kind") != "log":
        return None
    layouts = ", ".join(f"{name} {n:,}" for name, n in sorted((entry.get("layouts") or {}).items(), key=lambda kv: -kv[1]))
    wrappers = ", ".join(sorted(entry.get("wrappers") or {}))
    parts = [f"heads: {layouts}" if layouts else "no record heads", f"wrapped: {wrappers}" if wrappers else None, entry.get("export")]
    return "; ".join(p for p in parts if p)


def first_record_text(entry: dict) -> str | None:
    """The first Kafka record of a file split into its fields (``line N: ts | level | ...``)."""
    head = entry.get("first_record")
    if not head:
        return None
    fields = [str(head[k]) for k in ("ts", "level", "thread", "logger") if head.get(k)]
    message = (head.get("message") or "").split("\n", 1)[0][:120]
    return f"line {head['line']} ({head.get('layout')}): " + " | ".join([*fields, message])


def layout_hint(entry: dict) -> str | None:
    """A hint to name the layout (or an export's columns) when most of a file is not understood,
    when its Kafka lines were read by their text alone (``layouts.anchor``) with no time, or the
    order of its ``dd/MM/yyyy`` dates, which none of them shows (``date_order``)."""
    if entry.get("date_order") == UNKNOWN_DATE_ORDER and entry.get("unparsed"):
        return (
            "its dates between slashes never pass 12, so day and month cannot be told apart: name the layout, "
            "e.g. --layout '%d{dd/MM/yyyy HH:mm:ss.SSS} [%thread] %-5level %logger - %msg' (or MM/dd/yyyy)"
        )
    if entry.get("kind") == "log" and entry.get("lines") and (entry.get("unparsed") or 0) > HINT_SHARE * entry["lines"]:
        return "most lines not understood: name the layout (--layout PATTERN) or an export's columns (--columns time=..,message=..)"
    if (
        entry.get("kind") == "log"
        and not entry.get("layout")
        and entry.get("records")
        and (entry.get("undated_records") or 0) >= entry["records"]
    ):
        return "its Kafka lines were read by their text, but no time in them was understood: name the layout (--layout PATTERN)"
    return None


def inputs_table(result: dict) -> pd.DataFrame:
    rows = [
        {
            "file": e.get("path"),
            "host": e.get("host"),
            "kind": e.get("kind"),
            "layout": e.get("layout"),
            "lines": e.get("lines"),
            "records": e.get("records"),
            "unparsed": e.get("unparsed"),
            "time zone": None if e.get("kind") != "log" else f"{e.get('tz')}{' (assumed)' if e.get('tz_assumed') else ''}",
            "problem": e.get("problem") or layout_hint(e),
            "recognised": shape_text(e),
            "first Kafka record": first_record_text(e),
        }
        for e in result.get("inputs") or []
    ]
    columns = ["file", "host", "kind", "layout", "lines", "records", "unparsed", "time zone", "problem", "recognised", "first Kafka record"]
    frame = pd.DataFrame(rows, columns=columns)
    frame = frame.astype({"lines": "Int64", "records": "Int64", "unparsed": "Int64"})
    return frame.sort_values("problem", key=lambda c: c.notna(), kind="stable").reset_index(drop=True)


def accounting_table(result: dict) -> pd.DataFrame:
    acc = result.get("accounting") or {}
    total = acc.get("lines") or 0
    labels = (
        ("records", "Kafka records"),
        ("continuations", "continuation lines (stack traces, wrapped text)"),
        ("irrelevant", "records of other loggers"),
        ("unparsed", "lines not understood"),
    )
    rows = [
        {"bucket": label, "lines": acc.get(key, 0), "share": f"{100.0 * acc.get(key, 0) / total:.1f} %" if total else ""}
        for key, label in labels
    ]
    rows.append({"bucket": "total lines read", "lines": total, "share": "100 %" if total else ""})
    rows += [{"bucket": f"unparsed: {reason}", "lines": n, "share": ""} for reason, n in (acc.get("unparsed_by_reason") or {}).items()]
    rows.append({"bucket": "typed Kafka events", "lines": acc.get("events", 0), "share": ""})
    rows.append({"bucket": "Kafka lines the catalogue does not know", "lines": acc.get("unrecognised_kafka", 0), "share": ""})
    return pd.DataFrame(rows, columns=["bucket", "lines", "share"]).astype({"lines": "Int64"})


def clock_table(result: dict) -> pd.DataFrame:
    rows = [
        {
            "host": c.get("host"),
            "reference": c.get("reference"),
            "offset ms": c.get("offset_ms"),
            "± ms": c.get("uncertainty_ms"),
            "generations compared": c.get("samples"),
            "corrected": c.get("corrected"),
        }
        for c in result.get("clock_skew") or []
    ]
    frame = pd.DataFrame(rows, columns=["host", "reference", "offset ms", "± ms", "generations compared", "corrected"])
    return frame.astype({"offset ms": "Int64", "± ms": "Int64", "generations compared": "Int64"})


def findings_table(result: dict) -> pd.DataFrame:
    """One row per finding, damage first (loss, duplication, delay, expected), numbered as ``finding(i)``."""
    rows = [
        {
            "#": i,
            "verdict": f["verdict"],
            "severity": f.get("severity"),
            "detector": f["detector"],
            "group": f.get("group"),
            "where": where(f),
            "offsets": offset_range(f),
            "records": f.get("records"),
            "classification": f.get("classification"),
            "member": f.get("member"),
            "start": when(f.get("start")),
            "explanation": f.get("explanation"),
        }
        for i, f in enumerate(result.get("findings") or [])
    ]
    columns = [
        "#",
        "verdict",
        "severity",
        "detector",
        "group",
        "where",
        "offsets",
        "records",
        "classification",
        "member",
        "start",
        "explanation",
    ]
    frame = pd.DataFrame(rows, columns=columns).astype({"records": "Int64"})
    if frame.empty:
        return frame
    order = {v: i for i, v in enumerate(VERDICT_ORDER)}
    return frame.sort_values(["verdict", "#"], key=lambda c: c.map(order) if c.name == "verdict" else c, kind="stable").reset_index(
        drop=True
    )


def verdict_table(result: dict) -> pd.DataFrame:
    """The lost and duplicated offset ranges, one per row."""
    frame = findings_table(result)
    if frame.empty:
        return frame[["#", "verdict", "group", "where", "offsets", "records", "detector", "classification", "start"]]
    damage = frame[frame["verdict"].isin(DAMAGE)]
    return damage[["#", "verdict", "group", "where", "offsets", "records", "detector", "classification", "start"]].reset_index(drop=True)


def rebalance_table(result: dict) -> pd.DataFrame:
    rows = [
        {
            "group": r.get("group"),
            "generation": r.get("generation"),
            "start": when(r.get("start")),
            "stopped ms": r.get("duration_ms"),
            "trigger": r.get("trigger"),
            "protocol": r.get("protocol_type") or r.get("protocol"),
            "members": len(r.get("members") or []),
            "joined": r.get("members_joined") or [],
            "left": r.get("members_left") or [],
            "partitions moved": len(r.get("moved_partitions") or []),
            "evidence": _at(r.get("evidence")),
        }
        for r in result.get("rebalances") or []
    ]
    columns = [
        "group",
        "generation",
        "start",
        "stopped ms",
        "trigger",
        "protocol",
        "members",
        "joined",
        "left",
        "partitions moved",
        "evidence",
    ]
    return pd.DataFrame(rows, columns=columns).astype({"stopped ms": "Int64"})


MOVE_COLUMNS = ("partition", "from", "to")


def moves(rebalance: dict) -> list[dict]:
    """The partitions one rebalance moved, ``topic-p: from -> to``, as rows of ``MOVE_COLUMNS``."""
    rows = []
    for move in rebalance.get("moved_partitions") or []:
        partition, _, change = str(move).partition(": ")
        before, _, after = change.partition(" -> ")
        rows.append({"partition": partition, "from": before, "to": after})
    return rows


def moves_table(rebalance: dict) -> pd.DataFrame:
    """``moves`` as a table."""
    return pd.DataFrame(moves(rebalance), columns=list(MOVE_COLUMNS))


def unparsed_table(result: dict) -> pd.DataFrame:
    rows = [
        {"kind": "unparsed", "file": e.get("file"), "line": e.get("line"), "reason": e.get("reason"), "text": e.get("text")}
        for e in result.get("unparsed_samples") or []
    ]
    rows += [
        {"kind": "unrecognised Kafka line", "file": e.get("file"), "line": e.get("line"), "reason": e.get("logger"), "text": e.get("text")}
        for e in result.get("unrecognised_kafka_samples") or []
    ]
    return pd.DataFrame(rows, columns=["kind", "file", "line", "reason", "text"])


def restores_table(result: dict) -> pd.DataFrame:
    rows = [
        {
            "group": group_of(r),
            "host": r.get("host"),
            "thread": r.get("thread"),
            "task": r.get("task"),
            "changelog": r.get("changelog"),
            "status": restore_status(r),
            "checkpoint": r.get("checkpoint_found"),
            "store wiped": r.get("store_wiped"),
            "restored": r.get("records_restored"),
            "opened": when(r.get("opened_ts")),
            "running": when(r.get("running_ts")),
        }
        for r in result.get("restores") or []
    ]
    return pd.DataFrame(
        rows,
        columns=["group", "host", "thread", "task", "changelog", "status", "checkpoint", "store wiped", "restored", "opened", "running"],
    ).astype({"restored": "Int64"})


def restore_status(restore: dict) -> str:
    """``standby`` (a standby replica, which never restores), ``RUNNING without restore`` (state
    lost), ``restored``, ``restore unfinished`` or ``no restore``."""
    if restore.get("standby"):
        return "standby"
    reset = restore.get("store_wiped") or restore.get("reset_offset") is not None
    if reset and not restore.get("restore_completed"):
        return "RUNNING without restore"
    if restore.get("restore_completed") or restore.get("records_restored"):
        return "restored"
    if restore.get("restore_from") is not None:
        return "restore unfinished"
    return "no restore"


def _at(evidence) -> str:
    if not evidence or not evidence.get("file"):
        return ""
    return f"{evidence['file']}:{evidence.get('line')}"
