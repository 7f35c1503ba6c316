"""Recovery plans: what to run after a loss or a duplication is found.

Pure functions on the analysis JSON (``forensics analyze --json``), no Spark: ``attach_recovery``
gives every finding a ``recovery`` object (None unless its verdict is ``loss`` or ``duplication``);
``reset_rows_by_group`` and ``csv_text`` make the ``--from-file`` CSV of each consumer group
(``forensics.report.recovery`` renders the plans: the report's "What to do now", and the files
``forensics plan`` writes). Nothing here runs a command.

Kafka behaviour the plans rely on (ConsumerGroupCommand, StreamsResetter, ConsoleConsumer):

- ``kafka-consumer-groups.sh --reset-offsets --from-file F``: F has no header and one
  ``topic,partition,offset`` line per partition (LF line ends) when one ``--group`` is given; no
  ``--topic`` scope is needed. ``--dry-run`` is the default, ``--execute`` applies. Only a group
  in state Empty or Dead can be reset ("Assignments can only be reset if the group ... is
  inactive"). An offset below the log start is set to the log start, one above the end to the end.
- ``kafka-console-consumer.sh --partition P --offset O --max-messages N`` reads one partition
  from an offset (``--offset`` needs ``--partition``); ``print.offset`` exists since 2.7.
  kcat: ``-C -p P -o O -c N -e``.
- ``kafka-streams-application-reset.sh --application-id A --input-topics T,..``: resets the
  input topics' committed offsets to the earliest, deletes the internal topics
  (``A-...-changelog`` / ``-repartition``), leaves output topics alone, refuses while the group
  has members; without ``--dry-run`` it acts. ``--bootstrap-server`` since 3.4 (before:
  ``--bootstrap-servers``). Local state is not cleaned: ``KafkaStreams#cleanUp()`` or delete
  ``state.dir/A``; a task's state is ``state.dir/A/<task id>``; ``state.dir`` defaults to
  ``/tmp/kafka-streams`` (``${java.io.tmpdir}/kafka-streams`` since 2.8).
"""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import dataclass
from datetime import datetime, timezone

from .contract import COMMITTED_KINDS, OUT_OF_RANGE, RESET

DAMAGE_VERDICTS = ("loss", "duplication")
RECONSUME, UNRECOVERABLE, DEDUPLICATE, RESTORE_STATE, MANUAL = (
    "reconsume", "unrecoverable", "deduplicate", "restore_state", "manual")
KINDS = (RECONSUME, UNRECOVERABLE, DEDUPLICATE, RESTORE_STATE, MANUAL)
"""``recovery.kind`` values, in the order ``plan.md`` lists them."""

BOOTSTRAP = '"$BOOTSTRAP_SERVERS"'
"""Every command names the brokers through this variable; plan.md sets it."""
LEGAL_NAME = re.compile(r"[A-Za-z0-9._-]{1,249}")
"""Kafka's legal topic names (and application ids, a prefix of internal topic names)."""
TASK_ID = re.compile(r"(?:__[A-Za-z0-9._-]+__)?\d+_\d+")
"""A Kafka Streams task id (``1_3``, named topologies ``__name__1_3``): one directory name."""
INTERNAL_TOPIC = re.compile(
    r".+-(?:changelog|repartition|subscription-registration-topic|subscription-response-topic)"
    r"|.+-KTABLE-FK-JOIN-SUBSCRIPTION-(?:REGISTRATION|RESPONSE)-\d+-topic"
)
"""Topic names kafka-streams-application-reset treats as internal (with the application-id prefix)."""
CSV_PREFIX = "reset-"
DEFAULT_STATE_DIR = "/tmp/kafka-streams (${java.io.tmpdir}/kafka-streams since Kafka Streams 2.8)"

FIELDS = (
    "kind", "summary", "group", "topic", "partition", "offset_from", "offset_to", "records", "exact",
    "window", "retention", "bootstrap_servers", "csv_file", "reset_rows", "replays_too", "keys", "streams",
    "steps", "caveats",
)
"""The fields of every ``recovery`` object (null where they do not apply): a stable contract."""


# --- facts the rest of the result holds -------------------------------------------------------

@dataclass(frozen=True)
class Facts:
    """What the result says beyond the findings, keyed for the plans."""

    commits: dict       # (group, topic, partition) -> committed offsets seen, oldest first: {offset, at, evidence}
    log_starts: dict    # (topic, partition) -> log starts known: {offset, at, evidence, source}
    out_of_range: dict  # (topic, partition) -> positions found out of range: {offset, at, evidence}
    settings: dict      # group or application id -> {host: settings of its clients' config blocks}
    topics: dict        # group -> topics its members owned
    hosts: dict         # group -> hosts of its members
    dump_files: frozenset


def _time(value) -> datetime | None:
    """An ISO 8601 result time (``...Z``) as an aware datetime, for ordering."""
    if not value:
        return None
    try:
        stamp = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def _point(commit: dict, source: str | None = None) -> dict:
    """An offset the logs or dumps show at a time, with the line that shows it."""
    evidence = {"file": commit.get("source_file"), "line": commit.get("line")} if commit.get("line") is not None else None
    point = {"offset": commit.get("offset"), "at": commit.get("ts"), "evidence": evidence}
    return {**point, "source": source} if source else point


def _partition_of(entry: dict) -> tuple:
    return entry.get("topic"), entry.get("partition")


def _grouped(entries, key, value=lambda e: e) -> dict:
    grouped: dict = {}
    for entry in entries:
        grouped.setdefault(key(entry), []).append(value(entry))
    return grouped


def _in_time_order(commits: list[dict]) -> list[dict]:
    undated = datetime.min.replace(tzinfo=timezone.utc)
    return sorted(commits, key=lambda c: _time(c.get("ts")) or undated)


def _settings_by_owner(config: list[dict]) -> dict:
    settings: dict = {}
    for block in config:
        owner = block.get("group_id") or block.get("application_id")
        settings.setdefault(owner, {}).setdefault(block.get("host"), {}).update(block.get("settings") or {})
    return settings


FACT_KINDS = (*COMMITTED_KINDS, RESET, OUT_OF_RANGE)
"""The kinds of ``commits`` rows ``facts_of`` reads."""
FACT_FIELDS = ("group_id", "topic", "partition", "ts", "kind", "offset", "strategy", "source_file", "line")
"""The fields of a ``commits`` row ``facts_of`` reads."""
FACT_SETTINGS = ("bootstrap.servers", "state.dir", "processing.guarantee")
"""The client settings the plans read from the ``config`` table."""


def facts_of(result: dict) -> Facts:
    """Commits, known log starts, out-of-range positions, settings and members, from ``result``."""
    commits = _in_time_order(result.get("commits") or [])
    earliest = [c for c in commits if c.get("kind") == RESET and str(c.get("strategy") or "").lower() == "earliest"]
    owned = _grouped(result.get("ownership") or [], lambda o: o.get("group"))
    return Facts(
        commits=_grouped([c for c in commits if c.get("kind") in COMMITTED_KINDS],
                         lambda c: (c.get("group_id"), *_partition_of(c)), _point),
        log_starts=_grouped(earliest, _partition_of, lambda c: _point(c, "the consumer's reset to the earliest offset")),
        out_of_range=_grouped([c for c in commits if c.get("kind") == OUT_OF_RANGE], _partition_of, _point),
        settings=_settings_by_owner(result.get("config") or []),
        topics={g: sorted({o.get("topic") for o in rows if o.get("topic")}) for g, rows in owned.items()},
        hosts={g: sorted({o.get("host") for o in rows if o.get("host")}) for g, rows in owned.items()},
        dump_files=frozenset(e.get("path") for e in result.get("inputs") or [] if e.get("kind") == "offsets"),
    )


def _setting(facts: Facts, group, key: str, host=None):
    """A client setting of ``group`` (from ``host``'s config block first)."""
    per_host = facts.settings.get(group) or {}
    for settings in ([per_host.get(host)] if host in per_host else []) + list(per_host.values()):
        if settings and settings.get(key) not in (None, "", "null"):
            return settings[key]
    return None


def bootstrap_servers(facts: Facts, group) -> str | None:
    """``bootstrap.servers`` of the group's clients as the CLI takes it (``a:9092,b:9092``)."""
    value = _setting(facts, group, "bootstrap.servers")
    return ",".join(part.strip() for part in value.strip("[]").split(",") if part.strip()) if value else None


# --- the recovery object of one finding ------------------------------------------------------

def _q(value) -> str:
    return shlex.quote(str(value))


def _tp(finding: dict) -> str:
    return f"{finding['topic']}-{finding['partition']}"


def _step(step: str, title: str, command: str | None = None, note: str = "", host: str | None = None, optional: bool = False) -> dict:
    return {"step": step, "title": title, "command": command, "host": host, "note": note, "optional": optional}


def csv_file_name(group: str) -> str:
    """``reset-<group>.csv``; a group id with characters unsafe in a file name gets a hash suffix."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", str(group))[:100]
    if safe == str(group):
        return f"{CSV_PREFIX}{safe}.csv"
    return f"{CSV_PREFIX}{safe}-{hashlib.sha256(str(group).encode()).hexdigest()[:8]}.csv"


def _has_range(finding: dict) -> bool:
    fields = ("group", "topic", "partition", "offset_from", "offset_to")
    return all(finding.get(f) is not None for f in fields) and finding["offset_to"] > finding["offset_from"]


def _blank(finding: dict, kind: str, summary: str, window: dict | None, facts: Facts) -> dict:
    recovery = dict.fromkeys(FIELDS)
    recovery.update({
        "kind": kind, "summary": summary, "window": window, "reset_rows": [], "keys": list(finding.get("keys") or []),
        "steps": [], "caveats": [], "bootstrap_servers": bootstrap_servers(facts, finding.get("group")),
        **{f: finding.get(f) for f in ("group", "topic", "partition", "offset_from", "offset_to", "records", "exact")},
    })
    return recovery


def offsets_partition(group: str, partitions: int = 50) -> int:
    """The ``__consumer_offsets`` partition holding ``group``'s commits: Kafka's
    ``Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions`` (Java's String hashCode over
    UTF-16 code units, 32-bit; ``Utils.abs`` maps Integer.MIN_VALUE to 0)."""
    h = 0
    for unit in str(group).encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    signed = h - (1 << 32) if h & 0x80000000 else h
    return (0 if signed == -(1 << 31) else abs(signed)) % partitions


OFFSETS_PARTITION_PLACEHOLDER = "__consumer_offsets-<N>"


def measure_steps(finding: dict) -> list[dict]:
    """The commands of an unmeasured finding's ``missing``, to run before any reset: what they
    show completes its range (the ``__consumer_offsets`` partition named where the group is)."""
    gap = finding.get("missing") or {}
    steps = []
    for i, command in enumerate(gap.get("commands") or []):
        if finding.get("group") and OFFSETS_PARTITION_PLACEHOLDER in command:
            number = offsets_partition(finding["group"])
            command = command.replace(OFFSETS_PARTITION_PLACEHOLDER, f"__consumer_offsets-{number}")
            command = command.split("  # ", 1)[0] + f"  # group {_q(finding['group'])}: partition {number} of 50 (offsets.topic.num.partitions)"
        steps.append(_step(f"measure_{i + 1}", "Measure the range before any reset" if i == 0 else "Or measure it with", command,
                           f"Shows {gap.get('what')}." if i == 0 else ""))
    return steps


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
        _step("plan", "Plan the recovery from the measured range", None,
              "With [from, to) known, re-consume (loss) or de-duplicate (duplication) exactly that range; `forensics plan` "
              "does it when the offset dumps are given with --offsets."),
    ]
    recovery["caveats"] = ["The logs prove the finding but not its range: a reset planned without measuring it could skip or replay the wrong records."]
    return recovery


def _read_range_steps(finding: dict, why: str, optional: bool) -> list[dict]:
    """kafka-console-consumer and kcat reading exactly [from, to) of the partition (by count)."""
    topic, partition, start, count = _q(finding["topic"]), finding["partition"], finding["offset_from"], finding["offset_to"] - finding["offset_from"]
    console = (f"kafka-console-consumer.sh --bootstrap-server {BOOTSTRAP} --topic {topic} --partition {partition} --offset {start} "
               f"--max-messages {count} --property print.offset=true --property print.timestamp=true --property print.key=true")
    kcat = f"kcat -C -b {BOOTSTRAP} -t {topic} -p {partition} -o {start} -c {count} -e -f '%o %T %k\\n'"
    counted = ("--max-messages counts records, not offsets: with transaction markers or compacted gaps it reads past "
               f"offset {finding['offset_to'] - 1}, so stop at the printed offsets; print.offset needs Kafka 2.7+.")
    return [
        _step("read_range", f"Read {_tp(finding)} [{start}, {finding['offset_to']}) with kafka-console-consumer", console, f"{why} {counted}", optional=optional),
        _step("read_range_kcat", "The same with kcat", kcat, "-c counts records too; -f prints offset, timestamp and key.", optional=optional),
    ]


def _check_log_start_step(finding: dict) -> dict:
    command = f"kafka-get-offsets.sh --bootstrap-server {BOOTSTRAP} --topic {_q(finding['topic'])} --partitions {finding['partition']} --time -2"
    return _step("check_log_start", f"Check the log start of {_tp(finding)}", command,
                 "Prints topic:partition:earliest offset; records below it are deleted. Before Kafka 3.0: "
                 "kafka-run-class.sh kafka.tools.GetOffsetShell --broker-list ... with the same options.")


def _known_log_start(finding: dict, facts: Facts) -> dict | None:
    """The highest log start known for the partition: a consumer's reset to the earliest offset,
    or the kafka-dump-log dump that made the finding's range exact (``reset_to_latest_gap``), or
    that ends a committed offset below the log start (``phantom_lag``)."""
    known = list(facts.log_starts.get(_partition_of(finding)) or [])
    dumped = [e for e in finding.get("evidence") or [] if e and e.get("file") in facts.dump_files]
    if finding.get("detector") == "reset_to_latest_gap" and finding.get("exact") and dumped:
        known.append({"offset": finding["offset_from"], "at": None, "evidence": dumped[-1], "source": "the kafka-dump-log dump"})
    if finding.get("detector") == "phantom_lag" and dumped:  # the range ends at the dumped log start
        known.append({"offset": finding["offset_to"], "at": None, "evidence": dumped[-1], "source": "the kafka-dump-log dump"})
    known = [k for k in known if k.get("offset") is not None]
    return max(known, key=lambda k: k["offset"]) if known else None


def _out_of_range_start(finding: dict, facts: Facts) -> dict | None:
    """The range's first offset found out of range (below the log start, as it was reset forward)."""
    hits = [p for p in facts.out_of_range.get(_partition_of(finding)) or [] if p.get("offset") == finding["offset_from"]]
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
    low, high, tp = finding["offset_from"], finding["offset_to"], _tp(finding)
    known = _known_log_start(finding, facts)
    fact = known or _out_of_range_start(finding, facts) or {}
    start = fact.get("offset")
    status = _retention_status(low, high, start, bool(fact) and start is None)
    shown = f"The log start of {tp} was {start}" + (f" at {fact['at']}" if fact.get("at") else "") + f" ({fact.get('source')})"
    note = {
        "deleted": f"{shown}: the whole range was already deleted by retention; no reset can bring it back.",
        "partly_deleted": f"{shown}: [{low}, {start}) was already deleted; Kafka sets a reset below the log start to the log start."
        if start is not None else f"Offset {low} of {tp} was out of range at {fact.get('at')}: it was already below the log start "
        "(deleted by retention, or truncated); only what is at or above the current log start can be re-consumed.",
        "oldest_retained": f"{shown}: the range starts at the oldest record kept, the next that retention deletes; re-consume soon.",
        "retained": f"{shown}: the range was still kept then; retention may have advanced since.",
        "unknown": f"The offset dumps do not show the log start of {tp}: records below it may already be deleted by retention.",
    }[status]
    return {"status": status, "log_start": start, "at": fact.get("at"), "evidence": fact.get("evidence"), "source": fact.get("source"), "note": note}


def _commits_seen(finding: dict, facts: Facts) -> list[dict]:
    return facts.commits.get((finding["group"], finding["topic"], finding["partition"])) or []


def _first_commit_past(finding: dict, facts: Facts, after, offset: int) -> dict | None:
    """The group's first commit of the partition at ``offset`` or beyond, after time ``after``."""
    limit = _time(after)
    return next((c for c in _commits_seen(finding, facts)
                 if (c.get("offset") or 0) >= offset and (limit is None or (_time(c["at"]) or limit) > limit)), None)


def _reconsume(finding: dict, facts: Facts) -> dict:
    kept = retention(finding, facts)
    window = {"from": finding.get("start"), "to": finding.get("end"),
              "basis": "when the group skipped the range: downstream outputs of these records are missing from then on "
                       "(the records' own timestamps: read the range)"}
    if kept["status"] == "deleted":
        return _unrecoverable(finding, facts, kept, window)
    group, low, high = finding["group"], finding["offset_from"], finding["offset_to"]
    recovery = _blank(finding, RECONSUME, f"Re-consume {_tp(finding)} [{low}, {high}) ({high - low} records) in group {group}: "
                      f"reset its offset to {low} from {csv_file_name(group)}, with the group stopped.", window, facts)
    seen = _commits_seen(finding, facts)
    last = seen[-1] if seen else None
    recovery.update({
        "retention": kept, "csv_file": csv_file_name(group),
        "reset_rows": [{"group": group, "topic": finding["topic"], "partition": finding["partition"], "offset": low}],
        "replays_too": {"offset_from": high, "offset_to": last["offset"], "as_of": last["at"]} if ((last or {}).get("offset") or 0) > high else None,
        "steps": [_check_log_start_step(finding), *group_reset_steps(group, csv_file_name(group), facts.hosts.get(group) or []),
                  *_read_range_steps(finding, "Instead of moving the group: read exactly the range and replay it through the processing path.", True)],
        "caveats": _reconsume_caveats(finding, kept),
    })
    return recovery


def _reconsume_caveats(finding: dict, kept: dict) -> list[str]:
    caveats = [f"The reset makes the group re-consume from {finding['offset_from']} up to its committed offset at the time: records from "
               f"{finding['offset_to']} on are processed a second time; downstream must tolerate them, or replay exactly the range "
               "(read_range) instead of resetting the group.", kept["note"]]
    if finding.get("exact") is False:
        caveats.append(f"[{finding['offset_from']}, {finding['offset_to']}) is an upper bound: the range really starts at the log start of "
                       "the time, not shown here; Kafka sets the reset to the current log start when that is higher.")
    return caveats


def group_reset_steps(group: str, csv_file: str, hosts: list[str]) -> list[dict]:
    """Describe, stop, check inactive, dry-run, execute, restart, verify: a ``--from-file`` reset."""
    base = f"kafka-consumer-groups.sh --bootstrap-server {BOOTSTRAP} --group {_q(group)}"
    reset = f"{base} --reset-offsets --from-file {_q(csv_file)}"
    where = f" ({', '.join(hosts)} in the logs)" if hosts else ""
    return [
        _step("describe", f"Describe group {group}", f"kafka-consumer-groups.sh --bootstrap-server {BOOTSTRAP} --describe --group {_q(group)}",
              "Keep this output: CURRENT-OFFSET per partition is where the group stands before the reset."),
        _step("stop", f"Stop every consumer of group {group}{where}", None,
              "A reset needs the group inactive; Kafka refuses it otherwise (\"Assignments can only be reset if the group ... is inactive\")."),
        _step("check_inactive", f"Check that group {group} is Empty",
              f"kafka-consumer-groups.sh --bootstrap-server {BOOTSTRAP} --describe --group {_q(group)} --state", "STATE must be Empty (or Dead)."),
        _step("dry_run", f"Dry-run the reset from {csv_file}", f"{reset} --dry-run",
              "Prints NEW-OFFSET per partition and changes nothing; a NEW-OFFSET above the CSV's offset means the log start passed it."),
        _step("execute", f"Execute the reset from {csv_file}", f"{reset} --execute", "Commits the CSV's offsets for the group."),
        _step("restart", f"Start the consumers of group {group} again", None, "They resume from the reset offsets and re-consume the ranges."),
        _step("verify", f"Verify group {group} moved past the ranges",
              f"kafka-consumer-groups.sh --bootstrap-server {BOOTSTRAP} --describe --group {_q(group)}",
              "CURRENT-OFFSET passes each range's end; then check the downstream outputs of the window."),
    ]


def _unrecoverable(finding: dict, facts: Facts, kept: dict, window: dict) -> dict:
    recovery = _blank(finding, UNRECOVERABLE, f"Records [{finding['offset_from']}, {finding['offset_to']}) of {_tp(finding)} are no longer in Kafka: "
                      "recover them from their source (the producers' system of record, a backup or a mirror).", window, facts)
    recovery.update({
        "retention": kept,
        "steps": [_check_log_start_step(finding), _step("recover_from_source", "Re-produce or re-derive the records from their source", None,
                                                        "No consumer group reset can bring deleted records back; a reset below the log start is set to the log start.")],
        "caveats": [kept["note"]],
    })
    return recovery


def _deduplicate(finding: dict, facts: Facts) -> dict:
    low, high, group = finding["offset_from"], finding["offset_to"], finding["group"]
    caught_up = _first_commit_past(finding, facts, finding.get("end") or finding.get("start"), high)
    window = {"from": finding.get("start"), "to": caught_up["at"] if caught_up else None,
              "basis": f"from the rewind until group {group} committed past {high} again"
                       + ("" if caught_up else " (not seen in the logs: the window is open)")}
    recovery = _blank(finding, DEDUPLICATE, f"Downstream of group {group}: de-duplicate the outputs of {_tp(finding)} records [{low}, {high}) "
                      f"({high - low} records), processed twice.", window, facts)
    recovery["steps"] = [
        *_read_range_steps(finding, "Lists the offsets, timestamps and keys of the records processed twice.", False),
        _step("deduplicate", "De-duplicate downstream", None,
              f"Outputs of {_tp(finding)} [{low}, {high}) written in the window exist twice: drop the second copy by the record keys "
              "(or by topic-partition-offset where the outputs carry it)."),
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
    state_dir = _setting(facts, app, "state.dir", host)
    inputs = input_topics(facts, app)
    streams = {"application_id": app, "host": host, "thread": finding.get("member"), "task": task, "changelog_topic": finding["topic"],
               "changelog_partition": finding["partition"], "restore_from": low, "restore_to": high, "state_dir": state_dir,
               "task_dir": f"{state_dir or '<state.dir>'}/{app}/{task}", "input_topics": inputs,
               "processing_guarantee": _setting(facts, app, "processing.guarantee", host)}
    window = {"from": finding.get("end") or finding.get("start"), "to": None,
              "basis": f"task {task} ran without these state records from then until its store is rebuilt"}
    recovery = _blank(finding, RESTORE_STATE, f"Rebuild task {task}'s state on {host}: remove its state directory so it restores "
                      f"{_tp(finding)} [{low}, {high}) from the changelog.", window, facts)
    recovery.update({"streams": streams, "steps": restore_steps(streams) + app_reset_steps(app, inputs), "caveats": _restore_caveats(streams, finding)})
    return recovery


def _task_dir_command(streams: dict) -> str | None:
    """``rm -rf`` of exactly one task directory, or None when a name read from the logs is not a
    plain directory name (never a path built from untrusted text)."""
    app, task = str(streams["application_id"]), str(streams["task"])
    if not LEGAL_NAME.fullmatch(app) or app in (".", "..") or not TASK_ID.fullmatch(task):
        return None
    base = _q(streams["state_dir"]) if streams["state_dir"] else '"$STATE_DIR"'
    return f"rm -rf -- {base}/{_q(app)}/{_q(task)}"


def restore_steps(streams: dict) -> list[dict]:
    """Stop the instance, remove the task's state directory, restart, check the restore."""
    host, task, changelog = streams["host"], streams["task"], f"{streams['changelog_topic']}-{streams['changelog_partition']}"
    unset = "" if streams["state_dir"] else f" STATE_DIR is the instance's state.dir (not in the logs; default {DEFAULT_STATE_DIR})."
    remove = _task_dir_command(streams)
    return [
        _step("stop_instance", f"Stop the Kafka Streams instance on {host}", None, "Every thread of the instance: the state directory is the instance's.", host=host),
        _step("remove_task_state", f"Remove task {task}'s state directory", remove,
              ("Only this task's stores; the other tasks keep their state." + unset) if remove
              else "The application id or task id read from the logs is not a plain directory name: remove the task's directory by hand.", host=host),
        _step("restart_instance", f"Start the instance on {host} again", None,
              f"Task {task} finds no local state and restores {changelog} from the changelog before it processes.", host=host),
        _step("verify_restore", f"Check the restore of {changelog}", None,
              "Its log shows the restore finishing (2.6+: \"Finished restoring changelog ... with a total number of N records\") before the task "
              "runs; `forensics analyze` on the new logs lists it under restores with restore_completed true.", host=host),
    ]


def app_reset_steps(app: str, inputs: list[str]) -> list[dict]:
    """kafka-streams-application-reset: dry-run, reset, clean local state (to reprocess everything)."""
    topics = f" --input-topics {_q(','.join(inputs))}" if inputs else " --input-topics <input topics>"
    command = f"kafka-streams-application-reset.sh --bootstrap-server {BOOTSTRAP} --application-id {_q(app)}{topics}"
    return [
        _step("app_reset_dry_run", f"To reprocess the whole application {app}: dry-run the reset tool", f"{command} --dry-run",
              "With every instance stopped. It would reset the input topics' committed offsets to the earliest and delete the internal "
              "topics (changelogs, repartition topics); output topics stay as they are. Before Kafka 3.4 the option is --bootstrap-servers.",
              optional=True),
        _step("app_reset", "Run the reset tool", command, "It refuses while the group has members (--force removes them).", optional=True),
        _step("clean_local_state", "Clean every instance's local state before restarting", None,
              f"KafkaStreams#cleanUp() before start(), or delete the directory {app} under state.dir on each instance; else the stores are wrong.",
              optional=True),
    ]


def _restore_caveats(streams: dict, finding: dict) -> list[str]:
    caveats = [f"The outputs task {streams['task']} produced since {finding.get('end') or finding.get('start')} came from a store missing these "
               "records: re-derive them (for the whole application: the optional kafka-streams-application-reset steps, which reprocess "
               "all input and write every output again)."]
    if str(streams.get("processing_guarantee") or "").startswith("exactly_once"):
        caveats.append("Under exactly_once, Kafka Streams before 2.2.0 can skip the restore again on the next reassignment (KAFKA-7672): upgrade first.")
    return caveats


# --- the whole result --------------------------------------------------------------------------

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


__all__ = ["FIELDS", "KINDS", "attach_recovery", "csv_file_name", "csv_text", "facts_of", "plan_items",
           "recovery_for", "reset_rows_by_group", "retention"]
