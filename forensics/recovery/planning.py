"""The recovery object of each finding (re-consume, unrecoverable, de-duplicate, restore
state or manual), and of the whole result: ``attach_recovery``, the reset rows and their CSV."""

from __future__ import annotations

from .commands import (
    INTERNAL_TOPIC,
    LEGAL_NAME,
    app_reset_steps,
    check_log_start_step,
    csv_file_name,
    group_reset_steps,
    measure_steps,
    plan_step,
    read_range_steps,
    restore_steps,
    topic_partition,
)
from .facts import Facts, bootstrap_servers, facts_of, partition_of, setting, time_of

DAMAGE_VERDICTS = ("loss", "duplication")
RECONSUME, UNRECOVERABLE, DEDUPLICATE, RESTORE_STATE, MANUAL = ("reconsume", "unrecoverable", "deduplicate", "restore_state", "manual")
KINDS = (RECONSUME, UNRECOVERABLE, DEDUPLICATE, RESTORE_STATE, MANUAL)
"""``recovery.kind`` values, in the order ``plan.md`` lists them."""

FIELDS = (
    "kind",
    "summary",
    "group",
    "topic",
    "partition",
    "offset_from",
    "offset_to",
    "records",
    "exact",
    "window",
    "retention",
    "bootstrap_servers",
    "csv_file",
    "reset_rows",
    "replays_too",
    "keys",
    "streams",
    "steps",
    "caveats",
)
"""The fields of every ``recovery`` object (null where they do not apply): a stable contract."""


def _has_range(finding: dict) -> bool:
    fields = ("group", "topic", "partition", "offset_from", "offset_to")
    return all(finding.get(f) is not None for f in fields) and finding["offset_to"] > finding["offset_from"]


def _blank(finding: dict, kind: str, summary: str, window: dict | None, facts: Facts) -> dict:
    recovery = dict.fromkeys(FIELDS)
    recovery.update(
        {
            "kind": kind,
            "summary": summary,
            "window": window,
            "reset_rows": [],
            "keys": list(finding.get("keys") or []),
            "steps": [],
            "caveats": [],
            "bootstrap_servers": bootstrap_servers(facts, finding.get("group")),
            **{f: finding.get(f) for f in ("group", "topic", "partition", "offset_from", "offset_to", "records", "exact")},
        }
    )
    return recovery


def recovery_for(finding: dict, facts: Facts) -> dict | None:
    """The recovery plan of one finding: None unless its verdict is ``loss`` or ``duplication``."""
    if finding.get("verdict") not in DAMAGE_VERDICTS:
        return None
    if not _has_range(finding) and finding.get("missing"):
        return _unmeasured(finding, facts)
    if not _has_range(finding):
        return _manual(finding, facts, "The finding names no complete offset range (group, topic, partition, [from, to)).")
    if not LEGAL_NAME.fullmatch(str(finding["topic"])):
        return _manual(finding, facts, f"The topic name {finding['topic']!r} read from the logs is not a legal Kafka topic name.")
    if finding["verdict"] == "duplication":
        return _deduplicate(finding, facts)
    if finding.get("task") and str(finding["topic"]).endswith("-changelog"):
        return _restore_state(finding, facts)
    return _reconsume(finding, facts)


def _manual(finding: dict, facts: Facts, reason: str) -> dict:
    recovery = _blank(finding, MANUAL, f"No command can be derived: {reason}", None, facts)
    recovery["caveats"] = [reason + " Read the finding's explanation and evidence and plan the recovery by hand."]
    return recovery


def _unmeasured(finding: dict, facts: Facts) -> dict:
    """An unmeasured finding (``exact`` false, ``missing``): measure the range first, then plan."""
    what = (finding.get("missing") or {}).get("what") or "the range"
    recovery = _blank(finding, MANUAL, f"Measure the range first: {what}. No reset before it is known.", None, facts)
    recovery["steps"] = [
        *measure_steps(finding),
        plan_step(
            "plan",
            "Plan the recovery from the measured range",
            None,
            "With [from, to) known, re-consume (loss) or de-duplicate (duplication) exactly that range; `forensics plan` "
            "does it when the offset dumps are given with --offsets.",
        ),
    ]
    recovery["caveats"] = [
        "The logs prove the finding but not its range: a reset planned without measuring it could skip or replay the wrong records."
    ]
    return recovery


def _known_log_start(finding: dict, facts: Facts) -> dict | None:
    """The highest log start known for the partition: a consumer's reset to the earliest offset,
    or the kafka-dump-log dump that made the finding's range exact (``reset_to_latest_gap``), or
    that ends a committed offset below the log start (``phantom_lag``)."""
    known = list(facts.log_starts.get(partition_of(finding)) or [])
    dumped = [e for e in finding.get("evidence") or [] if e and e.get("file") in facts.dump_files]
    if finding.get("detector") == "reset_to_latest_gap" and finding.get("exact") and dumped:
        known.append({"offset": finding["offset_from"], "at": None, "evidence": dumped[-1], "source": "the kafka-dump-log dump"})
    if finding.get("detector") == "phantom_lag" and dumped:  # the range ends at the dumped log start
        known.append({"offset": finding["offset_to"], "at": None, "evidence": dumped[-1], "source": "the kafka-dump-log dump"})
    known = [k for k in known if k.get("offset") is not None]
    return max(known, key=lambda k: k["offset"]) if known else None


def _out_of_range_start(finding: dict, facts: Facts) -> dict | None:
    """The range's first offset found out of range (below the log start, as it was reset forward)."""
    hits = [p for p in facts.out_of_range.get(partition_of(finding)) or [] if p.get("offset") == finding["offset_from"]]
    return {**hits[0], "offset": None, "source": "the consumer's out-of-range position"} if hits else None


def _retention_status(low: int, high: int, start: int | None, out_of_range: bool) -> str:
    if start is not None and start >= high:
        return "deleted"
    if (start is not None and start > low) or out_of_range:
        return "partly_deleted"
    if start is not None:
        return "oldest_retained" if start == low else "retained"
    return "unknown"


def retention(finding: dict, facts: Facts) -> dict:
    """Whether retention already deleted (part of) the lost range, from the log starts the result
    shows: ``deleted``, ``partly_deleted``, ``oldest_retained``, ``retained`` or ``unknown``."""
    low, high, tp = finding["offset_from"], finding["offset_to"], topic_partition(finding)
    known = _known_log_start(finding, facts)
    fact = known or _out_of_range_start(finding, facts) or {}
    start = fact.get("offset")
    status = _retention_status(low, high, start, bool(fact) and start is None)
    shown = f"The log start of {tp} was {start}" + (f" at {fact['at']}" if fact.get("at") else "") + f" ({fact.get('source')})"
    note = {
        "deleted": f"{shown}: the whole range was already deleted by retention; no reset can bring it back.",
        "partly_deleted": f"{shown}: [{low}, {start}) was already deleted; Kafka sets a reset below the log start to the log start."
        if start is not None
        else f"Offset {low} of {tp} was out of range at {fact.get('at')}: it was already below the log start "
        "(deleted by retention, or truncated); only what is at or above the current log start can be re-consumed.",
        "oldest_retained": f"{shown}: the range starts at the oldest record kept, the next that retention deletes; re-consume soon.",
        "retained": f"{shown}: the range was still kept then; retention may have advanced since.",
        "unknown": f"The offset dumps do not show the log start of {tp}: records below it may already be deleted by retention.",
    }[status]
    return {
        "status": status,
        "log_start": start,
        "at": fact.get("at"),
        "evidence": fact.get("evidence"),
        "source": fact.get("source"),
        "note": note,
    }


def _commits_seen(finding: dict, facts: Facts) -> list[dict]:
    return facts.commits.get((finding["group"], finding["topic"], finding["partition"])) or []


def _first_commit_past(finding: dict, facts: Facts, after, offset: int) -> dict | None:
    """The group's first commit of the partition at ``offset`` or beyond, after time ``after``."""
    limit = time_of(after)
    return next(
        (
            c
            for c in _commits_seen(finding, facts)
            if (c.get("offset") or 0) >= offset and (limit is None or (time_of(c["at"]) or limit) > limit)
        ),
        None,
    )


def _reconsume(finding: dict, facts: Facts) -> dict:
    kept = retention(finding, facts)
    window = {
        "from": finding.get("start"),
        "to": finding.get("end"),
        "basis": "when the group skipped the range: downstream outputs of these records are missing from then on "
        "(the records' own timestamps: read the range)",
    }
    if kept["status"] == "deleted":
        return _unrecoverable(finding, facts, kept, window)
    group, low, high = finding["group"], finding["offset_from"], finding["offset_to"]
    recovery = _blank(
        finding,
        RECONSUME,
        f"Re-consume {topic_partition(finding)} [{low}, {high}) ({high - low} records) in group {group}: "
        f"reset its offset to {low} from {csv_file_name(group)}, with the group stopped.",
        window,
        facts,
    )
    seen = _commits_seen(finding, facts)
    last = seen[-1] if seen else None
    recovery.update(
        {
            "retention": kept,
            "csv_file": csv_file_name(group),
            "reset_rows": [{"group": group, "topic": finding["topic"], "partition": finding["partition"], "offset": low}],
            "replays_too": {"offset_from": high, "offset_to": last["offset"], "as_of": last["at"]}
            if ((last or {}).get("offset") or 0) > high
            else None,
            "steps": [
                *measure_steps(finding),  # a bound with ``missing``: measure it before the reset
                check_log_start_step(finding),
                *group_reset_steps(group, csv_file_name(group), facts.hosts.get(group) or []),
                *read_range_steps(
                    finding, "Instead of moving the group: read exactly the range and replay it through the processing path.", True
                ),
            ],
            "caveats": _reconsume_caveats(finding, kept),
        }
    )
    return recovery


def _reconsume_caveats(finding: dict, kept: dict) -> list[str]:
    caveats = [
        f"The reset makes the group re-consume from {finding['offset_from']} up to its committed offset at the time: records from "
        f"{finding['offset_to']} on are processed a second time; downstream must tolerate them, or replay exactly the range "
        "(read_range) instead of resetting the group.",
        kept["note"],
    ]
    if finding.get("exact") is False:
        caveats.append(
            f"[{finding['offset_from']}, {finding['offset_to']}) is an upper bound: the range really starts at the log start of "
            "the time, not shown here; Kafka sets the reset to the current log start when that is higher."
        )
    return caveats


def _unrecoverable(finding: dict, facts: Facts, kept: dict, window: dict) -> dict:
    recovery = _blank(
        finding,
        UNRECOVERABLE,
        f"Records [{finding['offset_from']}, {finding['offset_to']}) of {topic_partition(finding)} are no longer in Kafka: "
        "recover them from their source (the producers' system of record, a backup or a mirror).",
        window,
        facts,
    )
    recovery.update(
        {
            "retention": kept,
            "steps": [
                check_log_start_step(finding),
                plan_step(
                    "recover_from_source",
                    "Re-produce or re-derive the records from their source",
                    None,
                    "No consumer group reset can bring deleted records back; a reset below the log start is set to the log start.",
                ),
            ],
            "caveats": [kept["note"]],
        }
    )
    return recovery


def _deduplicate(finding: dict, facts: Facts) -> dict:
    low, high, group = finding["offset_from"], finding["offset_to"], finding["group"]
    caught_up = _first_commit_past(finding, facts, finding.get("end") or finding.get("start"), high)
    window = {
        "from": finding.get("start"),
        "to": caught_up["at"] if caught_up else None,
        "basis": f"from the rewind until group {group} committed past {high} again"
        + ("" if caught_up else " (not seen in the logs: the window is open)"),
    }
    recovery = _blank(
        finding,
        DEDUPLICATE,
        f"Downstream of group {group}: de-duplicate the outputs of {topic_partition(finding)} records [{low}, {high}) "
        f"({high - low} records), processed twice.",
        window,
        facts,
    )
    recovery["steps"] = [
        *read_range_steps(finding, "Lists the offsets, timestamps and keys of the records processed twice.", False),
        plan_step(
            "deduplicate",
            "De-duplicate downstream",
            None,
            f"Outputs of {topic_partition(finding)} [{low}, {high}) written in the window exist twice: drop the second copy by the record keys "
            "(or by topic-partition-offset where the outputs carry it).",
        ),
    ]
    recovery["caveats"] = [] if recovery["keys"] else ["The logs do not show the records' keys: read them with the read_range command."]
    if finding.get("missing"):
        recovery["steps"].extend({**step, "optional": True} for step in measure_steps(finding))
    return recovery


def input_topics(facts: Facts, application_id: str) -> list[str]:
    """The topics the application's members owned that kafka-streams-application-reset does not treat as internal."""
    prefix = f"{application_id}-"
    return [t for t in facts.topics.get(application_id) or [] if t and not (t.startswith(prefix) and INTERNAL_TOPIC.fullmatch(t))]


def _restore_state(finding: dict, facts: Facts) -> dict:
    app, task, host, low, high = finding["group"], finding["task"], finding.get("host"), finding["offset_from"], finding["offset_to"]
    state_dir = setting(facts, app, "state.dir", host)
    inputs = input_topics(facts, app)
    streams = {
        "application_id": app,
        "host": host,
        "thread": finding.get("member"),
        "task": task,
        "changelog_topic": finding["topic"],
        "changelog_partition": finding["partition"],
        "restore_from": low,
        "restore_to": high,
        "state_dir": state_dir,
        "task_dir": f"{state_dir or '<state.dir>'}/{app}/{task}",
        "input_topics": inputs,
        "processing_guarantee": setting(facts, app, "processing.guarantee", host),
    }
    window = {
        "from": finding.get("end") or finding.get("start"),
        "to": None,
        "basis": f"task {task} ran without these state records from then until its store is rebuilt",
    }
    recovery = _blank(
        finding,
        RESTORE_STATE,
        f"Rebuild task {task}'s state on {host}: remove its state directory so it restores "
        f"{topic_partition(finding)} [{low}, {high}) from the changelog.",
        window,
        facts,
    )
    recovery.update(
        {"streams": streams, "steps": restore_steps(streams) + app_reset_steps(app, inputs), "caveats": _restore_caveats(streams, finding)}
    )
    return recovery


def _restore_caveats(streams: dict, finding: dict) -> list[str]:
    caveats = [
        f"The outputs task {streams['task']} produced since {finding.get('end') or finding.get('start')} came from a store missing these "
        "records: re-derive them (for the whole application: the optional kafka-streams-application-reset steps, which reprocess "
        "all input and write every output again)."
    ]
    if str(streams.get("processing_guarantee") or "").startswith("exactly_once"):
        caveats.append(
            "Under exactly_once, Kafka Streams before 2.2.0 can skip the restore again on the next reassignment (KAFKA-7672): upgrade first."
        )
    return caveats


def attach_recovery(result: dict, facts: Facts | None = None) -> dict:
    """``result`` (not modified) with a ``recovery`` field on every finding (see ``FIELDS``), from
    ``facts`` (default: ``facts_of(result)``)."""
    facts = facts_of(result) if facts is None else facts
    return {**result, "findings": [{**f, "recovery": recovery_for(f, facts)} for f in result.get("findings") or []]}


def plan_items(result: dict) -> list[tuple[int, dict, dict]]:
    """``(finding number, finding, recovery)`` of every loss and duplication; the recovery is
    computed when the result predates it."""
    findings = result.get("findings") or []
    if any(f.get("verdict") in DAMAGE_VERDICTS and "recovery" not in f for f in findings):
        findings = attach_recovery(result)["findings"]
    return [(i, f, f["recovery"]) for i, f in enumerate(findings) if f.get("recovery")]


def reset_rows_by_group(result: dict) -> dict[str, list[dict]]:
    """Per group, one ``--from-file`` row per partition: the lowest offset any of its lost ranges
    starts at (Kafka keeps one offset per partition), sorted by topic and partition."""
    lowest: dict = {}
    for _, _, recovery in plan_items(result):
        for row in recovery.get("reset_rows") or []:
            key = (row["group"], row["topic"], row["partition"])
            lowest[key] = min(row["offset"], lowest.get(key, row["offset"]))
    grouped: dict = {}
    for (group, topic, partition), offset in sorted(lowest.items()):
        grouped.setdefault(group, []).append({"topic": topic, "partition": partition, "offset": offset})
    return grouped


def csv_text(rows: list[dict]) -> str:
    """The ``--from-file`` CSV of one group: ``topic,partition,offset`` lines, no header, LF."""
    for row in rows:
        if not LEGAL_NAME.fullmatch(str(row["topic"])) or not isinstance(row["partition"], int) or not isinstance(row["offset"], int):
            raise ValueError(f"not a --from-file row: {row!r}")
    return "".join(f"{row['topic']},{row['partition']},{row['offset']}\n" for row in rows)
