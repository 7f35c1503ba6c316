"""What the commands print: the plain-text summary of an analysis, its findings, and what
``forensics layouts`` recognised in each file."""

from __future__ import annotations

from collections import Counter
from typing import Iterable


def format_summary(result: dict) -> str:
    """Plain-text accounting summary: what was read and where every line went."""
    acc = result["accounting"]
    lines = [f"Analysed {acc['files']} file(s), {acc['lines']:,} lines:"]
    for bucket, label in (
        ("records", "Kafka records"),
        ("continuations", "continuation lines (stack traces, wrapped text)"),
        ("irrelevant", "records of other loggers"),
        ("unparsed", "lines not understood"),
    ):
        share = 100.0 * acc[bucket] / acc["lines"] if acc["lines"] else 0.0
        lines.append(f"  {acc[bucket]:>12,}  {share:5.1f} %  {label}")
    if "events" in acc:
        lines.append(
            f"  {'':>12}           {acc['events']:,} typed events, {acc['unrecognised_kafka']:,} Kafka lines the catalogue does not know"
        )
    for reason, count in acc["unparsed_by_reason"].items():
        lines.append(f"  {'':>12}           {count:,} {reason}")
    offsets = result.get("offsets") or {}
    if offsets.get("rows"):
        kinds = ", ".join(f"{n:,} {kind}" for kind, n in offsets["by_kind"].items())
        lines.append(f"Offset dumps: {offsets['rows']:,} rows ({kinds}), {len(offsets['snapshots'])} snapshot time(s)")
    skewed = [c for c in result.get("clock_skew", []) if c.get("corrected")]
    for clock in skewed:
        lines.append(
            f"Clock of {clock['host']} corrected by {-clock['offset_ms']:+,} ms (+/- {clock['uncertainty_ms']} ms, "
            f"reference {clock['reference']}, {clock['samples']} generation(s))"
        )
    rebalances = [
        f"  {rebalance['group']} generation {rebalance['generation']}: {rebalance['start'] or 'start not logged'}, stopped "
        f"{'?' if rebalance['duration_ms'] is None else format(rebalance['duration_ms'], ',') + ' ms'}, "
        f"{len(rebalance['members'])} member(s), {len(rebalance['moved_partitions'])} partition(s) moved; {rebalance['trigger']}"
        for rebalance in result.get("rebalances") or []
    ]
    lines.extend(["Rebalances:", *rebalances] if rebalances else [])
    lines.extend(format_findings(result.get("findings", [])))
    lines.append("Inputs:")
    for entry in result["inputs"]:
        if entry.get("kind") == "log":
            zone = f"{entry['tz']}{' (assumed)' if entry['tz_assumed'] else ''}"
            lines.append(
                f"  {entry['host']:<16} {entry['layout'] or 'unknown layout':<12} {entry['lines']:>10,} lines"
                f"  {entry['records']:>8,} records  tz {zone}  {entry['path']}"
            )
        else:
            lines.append(f"  {entry['host']:<16} {'offset dump':<12} {entry['path']}")
        if entry.get("problem"):
            lines.append(f"      problem: {entry['problem']}")
        if entry.get("duplicate_of"):
            lines.append(f"      same content as {entry['duplicate_of']}: read once")
    return "\n".join(lines)


def format_findings(findings: Iterable[dict]) -> list[str]:
    """One line per finding, verdict first: what was hit, where, and the range affected."""
    findings = list(findings)
    if not findings:
        return ["Findings: none"]
    verdicts = Counter(f["verdict"] for f in findings)
    lines = [f"Findings: {len(findings)} (" + ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items())) + ")"]
    for finding in findings:
        where = " ".join(
            part
            for part in (
                finding["group"],
                f"{finding['topic']}-{finding['partition']}"
                if finding["topic"] is not None and finding["partition"] is not None
                else finding["topic"],
                f"task {finding['task']}" if finding["task"] else None,
                finding["classification"],
            )
            if part
        )
        span = ""
        if finding["offset_from"] is not None and finding["offset_to"] is not None:
            bound = "" if finding["exact"] else " at most"
            span = f"  offsets [{finding['offset_from']:,}, {finding['offset_to']:,}){bound} {finding['records']:,} records"
        lines.append(f"  {finding['verdict'].upper():<12} {finding['detector']:<20} {where}{span}")
    return lines


def format_layouts(inputs: list[dict]) -> str:
    """What ``forensics layouts`` prints per file: the shape detected (layouts, wrappers, export),
    its first Kafka record's head split into fields, the lines in each bucket, and a hint when
    most of the file is not understood (the report's "Files read" table says the same)."""
    from ..ingest import not_read_text
    from ..report.tables import first_record_text, layout_hint, shape_text

    lines: list[str] = []
    for entry in inputs:
        if entry.get("kind", "log") != "log":
            continue
        lines.append(f"{entry['path']}  (host {entry['host']})")
        if entry.get("problem") or entry.get("duplicate_of"):
            lines.append(f"  {entry.get('problem') or 'same content as ' + entry['duplicate_of'] + ': read once'}")
            continue
        lines.append(f"  layout: {entry['layout'] or 'unknown layout'}; {shape_text({'kind': 'log', **entry})}")
        head = first_record_text(entry)
        if head:
            lines.append(f"  first Kafka record, {head}")
        buckets = " + ".join(f"{entry[b]:,} {b}" for b in ("records", "continuations", "irrelevant", "unparsed"))
        lines.append(f"  lines: {entry['lines']:,} = {buckets}")
        hint = layout_hint({"kind": "log", **entry})
        if hint:
            lines.append(f"  hint: {hint}")
        not_read = not_read_text(entry)
        if not_read:
            lines.append(f"  {not_read}")
    return "\n".join(lines)


def format_findings_headline(headline: dict) -> str:
    """``Findings: 3 (1 loss, ...); records lost N, processed twice M`` (``damage_text``: with
    the findings whose range is unmeasured)."""
    from ..report.tables import damage_text  # pandas: loaded once a report is written, not for --help

    verdicts = ", ".join(f"{n} {v}" for v, n in headline["by_verdict"].items() if n) or "none"
    lost, twice = damage_text(headline, "lost"), damage_text(headline, "duplicated")
    return f"Findings: {headline['findings']} ({verdicts}); records lost {lost}, processed twice {twice}"
