"""The Kafka commands of the recovery plans, as steps; every name read from the logs is
shell-quoted, and only legal topic names reach a ``--from-file`` CSV.

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


def quoted(value) -> str:
    return shlex.quote(str(value))


def topic_partition(finding: dict) -> str:
    return f"{finding['topic']}-{finding['partition']}"


def plan_step(step: str, title: str, command: str | None = None, note: str = "", host: str | None = None, optional: bool = False) -> dict:
    return {"step": step, "title": title, "command": command, "host": host, "note": note, "optional": optional}


def csv_file_name(group: str) -> str:
    """``reset-<group>.csv``; a group id with characters unsafe in a file name gets a hash suffix."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", str(group))[:100]
    if safe == str(group):
        return f"{CSV_PREFIX}{safe}.csv"
    return f"{CSV_PREFIX}{safe}-{hashlib.sha256(str(group).encode()).hexdigest()[:8]}.csv"


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
            command = (
                command.split("  # ", 1)[0]
                + f"  # group {quoted(finding['group'])}: partition {number} of 50 (offsets.topic.num.partitions)"
            )
        steps.append(
            plan_step(
                f"measure_{i + 1}",
                "Measure the range before any reset" if i == 0 else "Or measure it with",
                command,
                f"Shows {gap.get('what')}." if i == 0 else "",
            )
        )
    return steps


def read_range_steps(finding: dict, why: str, optional: bool) -> list[dict]:
    """kafka-console-consumer and kcat reading exactly [from, to) of the partition (by count)."""
    topic, partition, start, count = (
        quoted(finding["topic"]),
        finding["partition"],
        finding["offset_from"],
        finding["offset_to"] - finding["offset_from"],
    )
    console = (
        f"kafka-console-consumer.sh --bootstrap-server {BOOTSTRAP} --topic {topic} --partition {partition} --offset {start} "
        f"--max-messages {count} --property print.offset=true --property print.timestamp=true --property print.key=true"
    )
    kcat = f"kcat -C -b {BOOTSTRAP} -t {topic} -p {partition} -o {start} -c {count} -e -f '%o %T %k\\n'"
    counted = (
        "--max-messages counts records, not offsets: with transaction markers or compacted gaps it reads past "
        f"offset {finding['offset_to'] - 1}, so stop at the printed offsets; print.offset needs Kafka 2.7+."
    )
    return [
        plan_step(
            "read_range",
            f"Read {topic_partition(finding)} [{start}, {finding['offset_to']}) with kafka-console-consumer",
            console,
            f"{why} {counted}",
            optional=optional,
        ),
        plan_step(
            "read_range_kcat", "The same with kcat", kcat, "-c counts records too; -f prints offset, timestamp and key.", optional=optional
        ),
    ]


def check_log_start_step(finding: dict) -> dict:
    command = f"kafka-get-offsets.sh --bootstrap-server {BOOTSTRAP} --topic {quoted(finding['topic'])} --partitions {finding['partition']} --time -2"
    return plan_step(
        "check_log_start",
        f"Check the log start of {topic_partition(finding)}",
        command,
        "Prints topic:partition:earliest offset; records below it are deleted. Before Kafka 3.0: "
        "kafka-run-class.sh kafka.tools.GetOffsetShell --broker-list ... with the same options.",
    )


def group_reset_steps(group: str, csv_file: str, hosts: list[str]) -> list[dict]:
    """Describe, stop, check inactive, dry-run, execute, restart, verify: a ``--from-file`` reset."""
    base = f"kafka-consumer-groups.sh --bootstrap-server {BOOTSTRAP} --group {quoted(group)}"
    reset = f"{base} --reset-offsets --from-file {quoted(csv_file)}"
    where = f" ({', '.join(hosts)} in the logs)" if hosts else ""
    return [
        plan_step(
            "describe",
            f"Describe group {group}",
            f"kafka-consumer-groups.sh --bootstrap-server {BOOTSTRAP} --describe --group {quoted(group)}",
            "Keep this output: CURRENT-OFFSET per partition is where the group stands before the reset.",
        ),
        plan_step(
            "stop",
            f"Stop every consumer of group {group}{where}",
            None,
            'A reset needs the group inactive; Kafka refuses it otherwise ("Assignments can only be reset if the group ... is inactive").',
        ),
        plan_step(
            "check_inactive",
            f"Check that group {group} is Empty",
            f"kafka-consumer-groups.sh --bootstrap-server {BOOTSTRAP} --describe --group {quoted(group)} --state",
            "STATE must be Empty (or Dead).",
        ),
        plan_step(
            "dry_run",
            f"Dry-run the reset from {csv_file}",
            f"{reset} --dry-run",
            "Prints NEW-OFFSET per partition and changes nothing; a NEW-OFFSET above the CSV's offset means the log start passed it.",
        ),
        plan_step("execute", f"Execute the reset from {csv_file}", f"{reset} --execute", "Commits the CSV's offsets for the group."),
        plan_step(
            "restart", f"Start the consumers of group {group} again", None, "They resume from the reset offsets and re-consume the ranges."
        ),
        plan_step(
            "verify",
            f"Verify group {group} moved past the ranges",
            f"kafka-consumer-groups.sh --bootstrap-server {BOOTSTRAP} --describe --group {quoted(group)}",
            "CURRENT-OFFSET passes each range's end; then check the downstream outputs of the window.",
        ),
    ]


def _task_dir_command(streams: dict) -> str | None:
    """``rm -rf`` of exactly one task directory, or None when a name read from the logs is not a
    plain directory name (never a path built from untrusted text)."""
    app, task = str(streams["application_id"]), str(streams["task"])
    if not LEGAL_NAME.fullmatch(app) or app in (".", "..") or not TASK_ID.fullmatch(task):
        return None
    base = quoted(streams["state_dir"]) if streams["state_dir"] else '"$STATE_DIR"'
    return f"rm -rf -- {base}/{quoted(app)}/{quoted(task)}"


def restore_steps(streams: dict) -> list[dict]:
    """Stop the instance, remove the task's state directory, restart, check the restore."""
    host, task, changelog = streams["host"], streams["task"], f"{streams['changelog_topic']}-{streams['changelog_partition']}"
    unset = "" if streams["state_dir"] else f" STATE_DIR is the instance's state.dir (not in the logs; default {DEFAULT_STATE_DIR})."
    remove = _task_dir_command(streams)
    return [
        plan_step(
            "stop_instance",
            f"Stop the Kafka Streams instance on {host}",
            None,
            "Every thread of the instance: the state directory is the instance's.",
            host=host,
        ),
        plan_step(
            "remove_task_state",
            f"Remove task {task}'s state directory",
            remove,
            ("Only this task's stores; the other tasks keep their state." + unset)
            if remove
            else "The application id or task id read from the logs is not a plain directory name: remove the task's directory by hand.",
            host=host,
        ),
        plan_step(
            "restart_instance",
            f"Start the instance on {host} again",
            None,
            f"Task {task} finds no local state and restores {changelog} from the changelog before it processes.",
            host=host,
        ),
        plan_step(
            "verify_restore",
            f"Check the restore of {changelog}",
            None,
            'Its log shows the restore finishing (2.6+: "Finished restoring changelog ... with a total number of N records") before the task '
            "runs; `forensics analyze` on the new logs lists it under restores with restore_completed true.",
            host=host,
        ),
    ]


def app_reset_steps(app: str, inputs: list[str]) -> list[dict]:
    """kafka-streams-application-reset: dry-run, reset, clean local state (to reprocess everything)."""
    topics = f" --input-topics {quoted(','.join(inputs))}" if inputs else " --input-topics <input topics>"
    command = f"kafka-streams-application-reset.sh --bootstrap-server {BOOTSTRAP} --application-id {quoted(app)}{topics}"
    return [
        plan_step(
            "app_reset_dry_run",
            f"To reprocess the whole application {app}: dry-run the reset tool",
            f"{command} --dry-run",
            "With every instance stopped. It would reset the input topics' committed offsets to the earliest and delete the internal "
            "topics (changelogs, repartition topics); output topics stay as they are. Before Kafka 3.4 the option is --bootstrap-servers.",
            optional=True,
        ),
        plan_step(
            "app_reset", "Run the reset tool", command, "It refuses while the group has members (--force removes them).", optional=True
        ),
        plan_step(
            "clean_local_state",
            "Clean every instance's local state before restarting",
            None,
            f"KafkaStreams#cleanUp() before start(), or delete the directory {app} under state.dir on each instance; else the stores are wrong.",
            optional=True,
        ),
    ]
