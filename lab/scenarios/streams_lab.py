"""The Kafka Streams lab's harness: one run's broker and Streams instances (one process each
running `lab/drivers/java/streams/StreamsDriver.java`, a count per key into a RocksDB store with a
changelog), the Streams versions and rebalance protocols it runs (`VARIANTS`), and the journals it
turns into the truth, and what the broker's log says of the group. The scenarios driving it are in
`streams.py`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .. import maven, truth
from ..broker import Broker
from .common import stamp

DRIVER = Path(__file__).resolve().parent.parent / "drivers" / "java" / "streams"
CLIENT = "kafka-streams"
APP = "wordcounts"
INPUT = "events"
OUTPUT = "counted"
PARTITIONS = 4
KEYS = 16
CHANGELOG = f"{APP}-counts-changelog"


@dataclass(frozen=True)
class Variant:
    """One Streams version on one broker with one rebalance protocol; `name` names the run dir."""

    name: str
    streams: str
    broker: str
    protocol: str  # "classic" or "streams" (KIP-1071)

    @property
    def major(self) -> int:
        return int(self.streams.split(".")[0])


VARIANTS = {
    v.name: v
    for v in (
        Variant("3.9.2", "3.9.2", "3.9.2", "classic"),
        Variant("4.4.0", "4.4.0", "4.4.0", "classic"),
        Variant("4.4.0-streams-protocol", "4.4.0", "4.4.0", "streams"),
    )
}


def streams_jars(version: str) -> list[Path]:
    """Kafka Streams and the log binding its distribution ships: reload4j up to 3.9, log4j2 from 4.0."""
    if int(version.split(".")[0]) >= 4:
        extra = ["org.apache.logging.log4j:log4j-slf4j-impl:2.24.3", "org.apache.logging.log4j:log4j-core:2.24.3"]
    else:
        extra = ["org.slf4j:slf4j-reload4j:1.7.36"]
    return maven.jars([f"org.apache.kafka:kafka-streams:{version}", *extra])


LAYOUT = "%d{yyyy-MM-dd HH:mm:ss,SSS} %-5p [%t] %c - %m%n"
"""The application's layout: date, level, thread, logger, message (logback's usual order)."""


def _log_config(path: Path, log_file: Path, major: int) -> tuple[Path, str]:
    if major >= 4:
        path.write_text(
            "appender.file.type=File\nappender.file.name=file\n"
            f"appender.file.fileName={log_file}\nappender.file.append=true\n"
            f"appender.file.layout.type=PatternLayout\nappender.file.layout.pattern={LAYOUT}\n"
            "rootLogger.level=INFO\nrootLogger.appenderRef.file.ref=file\n"
        )
        return path, f"-Dlog4j2.configurationFile={path}"
    path.write_text(
        "log4j.rootLogger=INFO, file\nlog4j.appender.file=org.apache.log4j.FileAppender\n"
        f"log4j.appender.file.File={log_file}\nlog4j.appender.file.Append=true\n"
        f"log4j.appender.file.layout=org.apache.log4j.PatternLayout\nlog4j.appender.file.layout.ConversionPattern={LAYOUT}\n"
    )
    return path, f"-Dlog4j.configuration=file:{path}"


def broker_overrides(variant: Variant) -> dict:
    """Short session timeouts so a killed instance leaves the group in seconds, on either protocol."""
    if variant.protocol == "streams":
        return {
            "properties": {
                "group.streams.min.session.timeout.ms": "6000",
                "group.streams.session.timeout.ms": "6000",
                "group.streams.min.heartbeat.interval.ms": "1000",
                "group.streams.heartbeat.interval.ms": "2000",
            }
        }
    return {}


class StreamsLab:
    """One run: the broker, the Streams instances (one process each) and the run directory."""

    def __init__(self, run_dir: Path, variant: Variant, broker: Broker, guarantee: str, standbys: int = 0):
        self.run_dir = Path(run_dir)
        self.variant = variant
        self.broker = broker
        self.guarantee = guarantee
        self.standbys = standbys
        # state dirs and control files outside /tmp (Streams warns about state in a temp dir)
        scratch = maven.cache_dir() / "scratch"
        scratch.mkdir(parents=True, exist_ok=True)
        self.work = Path(tempfile.mkdtemp(prefix="streams-", dir=scratch))
        self.journal = self.run_dir / "journal"
        self.journal.mkdir(parents=True, exist_ok=True)
        jars = streams_jars(variant.streams)
        self.classpath = maven.classpath([maven.javac_build(DRIVER, jars), *jars])
        self.procs: dict[str, subprocess.Popen] = {}
        self.helper: subprocess.Popen | None = None
        self.produced = 0
        self.expired: list[str] = []
        """Instances the fault leaves to the coordinator's session expiry, in order."""

    # ------------------------------------------------------------------ processes
    def _java(self, *args: str, log_flag: str | None = None) -> list[str]:
        flags = ["-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
        if log_flag:
            flags.append(log_flag)
        return ["java", *flags, "-cp", self.classpath, "StreamsDriver", *args]

    def _tool_log(self) -> str:
        path = self.work / ("tool-log4j2.properties" if self.variant.major >= 4 else "tool-log4j.properties")
        if self.variant.major >= 4:
            path.write_text("rootLogger.level=WARN\n")
            return f"-Dlog4j2.configurationFile={path}"
        path.write_text(
            "log4j.rootLogger=WARN, err\nlog4j.appender.err=org.apache.log4j.ConsoleAppender\n"
            "log4j.appender.err.Target=System.err\nlog4j.appender.err.layout=org.apache.log4j.SimpleLayout\n"
        )
        return f"-Dlog4j.configuration=file:{path}"

    def setup_topics(self) -> None:
        self.broker.create_topic(INPUT, PARTITIONS)
        self.broker.create_topic(OUTPUT, PARTITIONS)
        if self.variant.protocol == "streams" and self.standbys:
            # under KIP-1071 the group, not the client, decides the standby count
            self.broker.tool(
                "kafka-configs",
                "--bootstrap-server",
                self.broker.bootstrap,
                "--alter",
                "--entity-type",
                "groups",
                "--entity-name",
                APP,
                "--add-config",
                f"streams.num.standby.replicas={self.standbys}",
            )

    def start(self, instance: str, threads: int = 1) -> None:
        """Start (or restart) one instance; its log appends to `<run>/<instance>/app.log`."""
        log_dir = self.run_dir / instance
        log_dir.mkdir(parents=True, exist_ok=True)
        _, flag = _log_config(self.work / f"{instance}-log.properties", log_dir / "app.log", self.variant.major)
        args = [
            "run",
            f"instance={instance}",
            f"application.id={APP}",
            f"bootstrap={self.broker.bootstrap}",
            f"input={INPUT}",
            f"output={OUTPUT}",
            f"state.dir={self.work / 'state' / instance}",
            f"control={self.work / 'control'}",
            f"journal={self.journal}",
            f"processing.guarantee={self.guarantee}",
            f"num.standby.replicas={self.standbys}",
            f"num.stream.threads={threads}",
            "streams.commit.interval.ms=1000",
        ]
        if self.variant.protocol == "streams":
            args.append("streams.group.protocol=streams")
        else:
            args += ["streams.consumer.session.timeout.ms=6000", "streams.consumer.heartbeat.interval.ms=2000"]
        (self.work / "control").mkdir(parents=True, exist_ok=True)
        (self.work / "control" / f"{instance}.state").unlink(missing_ok=True)
        out = open(self.work / f"{instance}.stdout", "a")
        self.procs[instance] = subprocess.Popen(
            self._java(*args, log_flag=flag), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        out.close()

    def wait_gone(self, instance: str, timeout: float = 30) -> None:
        """Until the coordinator has let `instance` go (expired its session, or seen it leave),
        so what follows does not race its departure."""
        deadline = time.monotonic() + timeout
        while instance not in session_expiries(self.broker.server_log) + streams_group_leaves(self.broker.server_log):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the coordinator did not let {instance} go within {timeout:.0f} s")
            time.sleep(0.3)

    def command(self, instance: str, command: str, timeout: float = 60) -> str:
        """Ask a running instance to `remove-thread` or `add-thread`; the thread it named."""
        result = self.work / "control" / f"{instance}.result"
        result.unlink(missing_ok=True)
        path = self.work / "control" / f"{instance}.command"
        path.with_suffix(".tmp").write_text(command + "\n")
        path.with_suffix(".tmp").replace(path)
        deadline = time.monotonic() + timeout
        while not result.exists():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{instance} did not carry out {command} within {timeout:.0f} s")
            time.sleep(0.2)
        return result.read_text().strip()

    def state(self, instance: str) -> str:
        path = self.work / "control" / f"{instance}.state"
        return path.read_text().strip() if path.exists() else ""

    def wait_state(self, instances, state: str = "RUNNING", timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        for instance in instances:
            while self.state(instance) != state:
                proc = self.procs.get(instance)
                if proc is not None and proc.poll() is not None:
                    raise RuntimeError(f"{instance} exited with {proc.returncode}: {self._tail(instance)}")
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"{instance} not {state} within {timeout:.0f} s (is {self.state(instance)!r}): {self._tail(instance)}"
                    )
                time.sleep(0.2)

    def _tail(self, instance: str) -> str:
        text = ""
        for path in (self.work / f"{instance}.stdout", self.run_dir / instance / "app.log"):
            if path.exists():
                text += "\n".join(path.read_text(errors="replace").splitlines()[-15:]) + "\n"
        return text

    def kill(self, instance: str) -> None:
        """SIGKILL: no shutdown hook, no clean close, no checkpoint written; the coordinator
        expires the instance's session."""
        proc = self.procs.pop(instance)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        self.expired.append(instance)

    def freeze(self, instance: str) -> None:
        """SIGSTOP: every thread of the instance stops, heartbeats and open transactions included,
        as in a long GC pause; the coordinator expires it after the session timeout."""
        os.killpg(self.procs[instance].pid, signal.SIGSTOP)

    def thaw(self, instance: str) -> None:
        """SIGCONT: the instance goes on where it stopped, unaware of the time that passed."""
        os.killpg(self.procs[instance].pid, signal.SIGCONT)

    def stop(self, instance: str, timeout: float = 60, final: bool = False) -> None:
        """SIGTERM: the driver's shutdown hook closes Streams cleanly (checkpoints written).
        On the classic protocol Streams' close does not leave the group (its consumers do not
        send LeaveGroup), so the coordinator expires the session; a KIP-1071 streams group
        member leaves on close."""
        if not final and self.variant.protocol == "classic":
            self.expired.append(instance)
        proc = self.procs.pop(instance)
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise RuntimeError(f"{instance} did not close within {timeout:.0f} s") from None

    def close(self) -> None:
        helper = self.helper
        if helper is not None:
            helper.stdin.close()
            try:
                helper.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(helper.pid, signal.SIGKILL)
                helper.wait()
        for instance in list(self.procs):
            proc = self.procs.pop(instance)
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        shutil.rmtree(self.work, ignore_errors=True)

    def task_dir(self, instance: str, task: str) -> Path:
        return self.work / "state" / instance / APP / task

    def task_dirs(self, instance: str) -> list[Path]:
        root = self.work / "state" / instance / APP
        return sorted(p for p in root.iterdir() if re.fullmatch(r"\d+_\d+", p.name)) if root.exists() else []

    # ------------------------------------------------------------------ records
    def _helper(self, command: str, timeout: float = 120) -> None:
        """One command to the run's helper JVM (`StreamsDriver serve`: producing and dumping)."""
        if self.helper is None:
            self.helper = subprocess.Popen(
                self._java("serve", f"bootstrap={self.broker.bootstrap}", log_flag=self._tool_log()),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=open(self.work / "helper.stderr", "w"),
                text=True,
                start_new_session=True,
            )
        self.helper.stdin.write(command + "\n")
        self.helper.stdin.flush()
        answer = self.helper.stdout.readline().strip()
        if answer != "ok":
            raise RuntimeError(f"{command.split()[0]} failed: {answer or 'the helper exited'}")

    def produce(self, count: int, pause_ms: int = 0) -> None:
        """Produce `count` keyed records (acked offsets go to journal/produced.jsonl)."""
        self._helper(f"produce topic={INPUT} count={count} first={self.produced} keys={KEYS} pause.ms={pause_ms} journal={self.journal}")
        self.produced += count

    def attempted(self) -> set[tuple[str, int, int]]:
        seen = set()
        for path in self.journal.glob("attempts-*.jsonl"):
            for record in truth.read_journal(path):
                seen.add((record["topic"], record["partition"], record["offset"]))
        return seen

    def wait_processed(self, timeout: float = 60, settle: float = 1.5) -> None:
        """Until every acked record has been processed, then `settle` seconds for a commit."""
        want = set(truth.produced(self.run_dir))
        deadline = time.monotonic() + timeout
        while not want <= self.attempted():
            if time.monotonic() > deadline:
                missing = len(want - self.attempted())
                raise RuntimeError(f"{missing} of {len(want)} records not processed within {timeout:.0f} s")
            time.sleep(0.3)
        time.sleep(settle)

    # ------------------------------------------------------------------ evidence and truth
    def dump_offsets(self) -> None:
        """The real CLI dumps the toolkit reads, each after a time stamp: GetOffsetShell of the
        input and the changelog (log start and end), and the group's `--describe` (consumer groups
        on the classic protocol; `kafka-streams-groups` for a KIP-1071 streams group)."""
        offsets = self.run_dir / "offsets"
        offsets.mkdir(exist_ok=True)
        with open(offsets / "get-offsets.txt", "a") as handle:
            for topic in (INPUT, CHANGELOG):
                for when in ("-2", "-1"):
                    handle.write(
                        stamp()
                        + self.broker.tool("kafka-get-offsets", "--bootstrap-server", "{bootstrap}", "--topic", topic, "--time", when)
                    )
        if self.variant.protocol == "classic":
            name, main = "consumer-groups.txt", "kafka-consumer-groups"
        else:
            name, main = "streams-groups.txt", "org.apache.kafka.tools.streams.StreamsGroupCommand"
        out = self.broker.tool(main, "--bootstrap-server", "{bootstrap}", "--describe", "--group", APP, check=False)
        members = self.broker.tool(main, "--bootstrap-server", "{bootstrap}", "--describe", "--group", APP, "--members", check=False)
        with open(offsets / name, "a") as handle:
            handle.write(stamp() + out.rstrip("\n") + "\n\n" + members.rstrip("\n") + "\n\n")

    def effective(self) -> list[dict]:
        """The journal records that took effect: the output topic read with read_committed."""
        out = self.work / "committed.jsonl"
        out.unlink(missing_ok=True)
        self._helper(f"dump topic={OUTPUT} out={out}")
        return [json.loads(line) for line in out.read_text().splitlines() if line.strip()] if out.exists() else []

    def effective_complete(self, timeout: float = 60) -> list[dict]:
        """The effective records once every acked record is among them (under exactly-once the
        last transactions may still be committing when the attempts are all in)."""
        want = set(truth.produced(self.run_dir))
        deadline = time.monotonic() + timeout
        while True:
            records = self.effective()
            missing = want - {(r["topic"], r["partition"], r["offset"]) for r in records}
            if not missing:
                return records
            if time.monotonic() > deadline:
                raise RuntimeError(f"{len(missing)} acked records did not take effect within {timeout:.0f} s")
            time.sleep(1)

    def write_journals(self, records: list[dict]) -> list[dict]:
        """processed-<thread>.jsonl from the effective records; returns the count chains' breaks
        (a record whose count before is not the count after the key's previous effective record:
        the store lost or invented state) and per key its records, final count and breaks."""
        by_member = defaultdict(list)
        by_key = defaultdict(list)
        for record in records:
            member = record["member"].split("/", 1)[1]
            by_member[member].append(
                {
                    "member": member,
                    "generation": None,
                    "topic": record["topic"],
                    "partition": record["partition"],
                    "offset": record["offset"],
                    "task": record["task"],
                }
            )
            by_key[record["key"]].append(record)
        for member, entries in by_member.items():
            with open(self.journal / f"processed-{member}.jsonl", "w") as handle:
                for entry in entries:
                    handle.write(json.dumps(entry) + "\n")
        breaks, summary = [], []
        for key in sorted(by_key, key=lambda k: int(k[1:])):
            chain = by_key[key]
            previous = 0
            key_breaks = []
            for record in chain:
                if record["before"] != previous:
                    key_breaks.append(
                        {
                            "key": key,
                            "topic": record["topic"],
                            "partition": record["partition"],
                            "offset": record["offset"],
                            "member": record["member"],
                            "expected_before": previous,
                            "before": record["before"],
                        }
                    )
                previous = record["after"]
            breaks.extend(key_breaks)
            summary.append({"key": key, "records": len(chain), "final_count": previous, "breaks": len(key_breaks)})
        return breaks, summary

    def attempts_compacted(self) -> None:
        """Attempts keep member, task and offset only, so they compact into ranges."""
        for path in self.journal.glob("attempts-*.jsonl"):
            rows = [{k: r[k] for k in ("member", "task", "topic", "partition", "offset")} for r in truth.read_journal(path)]
            path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def session_expiries(server_log: Path, before: datetime | None = None) -> list[str]:
    """The instances whose group membership the coordinator expired, as it logged them: classic
    "removing member <client-id>-<uuid> on heartbeat expiration", KIP-1071 "Streams member <id>
    fenced from the group because the member session expired" (its client id from the member's
    metadata line); only lines stamped before `before`, if given (the members closed at the end
    of a run may expire while the broker shuts down)."""
    text = server_log.read_text(errors="replace") if server_log.exists() else ""
    if before is not None:
        stamp_of = lambda line: line[1:24] if re.match(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\]", line) else None
        limit = before.strftime("%Y-%m-%d %H:%M:%S,%f")[:23]
        kept, keep = [], True
        for line in text.splitlines():
            stamp_text = stamp_of(line)
            if stamp_text is not None:
                keep = stamp_text < limit
            if keep:
                kept.append(line)
        text = "\n".join(kept)
    clients = dict(re.findall(r"StreamsGroupMember\[memberId=([^,\]]+),.*?clientId=([^,\]]+)", text))
    expired = re.findall(r"removing member (\S+?)-[0-9a-f-]{36} on heartbeat expiration", text)
    expired += [
        clients.get(m, m)
        for m in re.findall(
            r"\[GroupId " + APP + r"\] (?:Streams member|Member) (\S+) fenced from the "
            r"group because the member session expired",
            text,
        )
    ]
    return sorted({re.sub(r"-StreamThread-\d+-consumer$", "", client) for client in expired})


def streams_group_leaves(server_log: Path) -> list[str]:
    """The instances whose member left the KIP-1071 streams group ("Member M left the streams group.")."""
    text = server_log.read_text(errors="replace") if server_log.exists() else ""
    clients = dict(re.findall(r"StreamsGroupMember\[memberId=([^,\]]+),.*?clientId=([^,\]]+)", text))
    left = [clients.get(m, m) for m in re.findall(r"\[GroupId " + APP + r"\]\[MemberId \S+\] Member (\S+) left the streams group", text)]
    return sorted({re.sub(r"-StreamThread-\d+-consumer$", "", client) for client in left})


def broker_generations(server_log: Path) -> list[int]:
    """The generations the coordinator stabilized (classic), or the group epochs it moved members'
    assignments to (KIP-1071: epochs bumped while the topology's internal topics were still missing
    assign nothing and are not counted)."""
    text = server_log.read_text(errors="replace") if server_log.exists() else ""
    found = set()
    for pattern in (
        rf"Stabilized group {APP} generation (\d+)",
        rf"\[GroupId {APP}\]\[MemberId [^\]]*\] Member's new assignment state: epoch=(\d+)",
    ):
        found.update(int(m) for m in re.findall(pattern, text))
    return sorted(found)
