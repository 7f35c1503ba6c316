"""Non-Java clients in the lab: librdkafka (confluent-kafka), kafka-python, aiokafka, KafkaJS and
franz-go, each logging in its own default layout, with a healthy control and the faults each can
show: a member killed with SIGKILL (the group waits out its session timeout; seed 002), partitions
added under auto.offset.reset=latest (seed 001), and records deleted under a stopped member's
committed offset (librdkafka's out-of-range reset).

The clients' environments and driver commands come from `lab.clients`; the producing side is the
Python producer (confluent-kafka), which re-reads partition counts every second.
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
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

from .. import truth
from ..broker import Broker
from ..clients import CLIENTS, Client, consumer_command, producer_command
from . import scenario

TOPIC = "orders"
GROUP = "orders-app"

VARIANTS = {
    # version as the run directory names it -> (client label in lab.clients, extra driver options)
    "librdkafka": {
        "2.16.2": ("librdkafka-2.16.2", {}),
        "2.16.2-logger": ("librdkafka-2.16.2", {"log": "logger"}),
        "2.16.2-logger-asctime": ("librdkafka-2.16.2", {"log": "logger", "log_format": "asctime"}),
    },
    "kafka-python": {
        "2.3.3": ("kafka-python-2.3.3", {}),
        "1.4.7": ("kafka-python-1.4.7", {}),
        "2.3.3-asctime": ("kafka-python-2.3.3", {"log_format": "asctime"}),
        "1.4.7-asctime": ("kafka-python-1.4.7", {"log_format": "asctime"}),
    },
    "aiokafka": {"0.14.0": ("aiokafka-0.14.0", {}), "0.14.0-asctime": ("aiokafka-0.14.0", {"log_format": "asctime"})},
    "kafkajs": {"2.2.4": ("kafkajs-2.2.4", {})},
    "franz-go": {"1.22.3": ("franz-go-1.22.3", {})},
}
"""Every (client, version) these scenarios run. A plain version logs in the client's default
layout; `-logger` hands librdkafka's lines to the application's Python logger (basicConfig's
default layout); `-asctime` is basicConfig with the logging cookbook's timed format, the layout a
team that keeps its logs usually sets."""

ALL = [(client, version) for client, versions in VARIANTS.items() for version in versions]
PLAIN = [(client, version) for client, version in ALL if "-" not in version]
TIMED = [(client, version) for client, version in ALL if version.endswith("-asctime")]

LOG_LEVEL = {"librdkafka": "DEBUG", "kafka-python": "INFO", "aiokafka": "INFO", "kafkajs": "DEBUG", "franz-go": "INFO"}
"""How each client's logging is turned on as a user debugging a rebalance does: librdkafka with
debug=cgrp,topic,fetch; the Python clients through basicConfig(level=INFO); KafkaJS at DEBUG (its
generation shows only there); franz-go's BasicLogger at INFO. (kafka-python 1.4.7 names no member
id at INFO: a gap the lab shows.)"""


def stamp() -> str:
    """A line the offset parsers read as the snapshot time of the dump below it."""
    return "# " + datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") + "\n"


class Member:
    """One consumer process; its stdout and stderr both go to `<run>/<name>/app.log`, appended
    across restarts, as an application started with `> app.log 2>&1` keeps them."""

    def __init__(self, command: list[str], env: dict[str, str], log: Path):
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            self.proc = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env={**os.environ, **env}, start_new_session=True
            )
        self.log = log

    def alive(self) -> bool:
        return self.proc.poll() is None

    def signal(self, number: int) -> None:
        if self.alive():
            os.killpg(self.proc.pid, number)

    def kill(self) -> None:
        """SIGKILL: no LeaveGroup, no final commit."""
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self, timeout: float = 30) -> None:
        """SIGTERM: the driver closes its client (final commit, LeaveGroup)."""
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise RuntimeError(f"{self.log.parent.name} did not close within {timeout:.0f} s") from None


class ClientLab:
    """`with ClientLab(run_dir, client, version) as lab:` a broker holding the topic, the run's
    members and producer; every process is ended and the broker stopped on exit."""

    def __init__(self, run_dir: Path, client: str, version: str, *, partitions: int = 4, **broker_overrides):
        label, self.options = VARIANTS[client][version]
        self.client: Client = CLIENTS[label]
        self.name, self.version = client, version
        self.run_dir = Path(run_dir)
        self.journal = self.run_dir / "journal"
        self.partitions = partitions
        self.broker = Broker(self.client.broker, self.run_dir, **broker_overrides)
        self.scratch = Path(tempfile.mkdtemp(prefix="forensics-lab-clients-"))
        self.members: dict[str, Member] = {}
        self.producers: list[subprocess.Popen] = []

    def __enter__(self) -> ClientLab:
        (self.run_dir / "offsets").mkdir(parents=True, exist_ok=True)
        self.journal.mkdir(parents=True, exist_ok=True)
        try:
            self.broker.start()
            self.broker.create_topic(TOPIC, self.partitions)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        for member in self.members.values():
            if member.alive():
                member.kill()
        for producer in self.producers:
            if producer.poll() is None:
                producer.kill()
                producer.wait()
        self.broker.stop()
        shutil.rmtree(self.scratch, ignore_errors=True)

    # -- processes ---------------------------------------------------------------------------

    def start(self, name: str, **settings) -> Member:
        """Start (or restart) member `name` of the group with the scenario's settings."""
        options = {
            "bootstrap": self.broker.bootstrap,
            "group": GROUP,
            "topic": [TOPIC],
            "member": name,
            "journal": str(self.journal),
            "log_level": LOG_LEVEL[self.name],
            **self.options,
            **settings,
        }
        command, env = consumer_command(self.client, **options)
        self.members[name] = Member(command, env, self.run_dir / name / "app.log")
        return self.members[name]

    def produce(self, count: int, rate: float) -> subprocess.Popen:
        """Start producing `count` records at `rate` a second (acks journaled)."""
        out = open(self.scratch / "producer.out", "ab")
        proc = subprocess.Popen(
            producer_command(self.broker.bootstrap, [TOPIC], self.journal, count, rate),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        out.close()
        self.producers.append(proc)
        return proc

    def wait_produced(self, proc: subprocess.Popen, timeout: float = 60) -> None:
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"producer still running after {timeout:.0f} s") from None
        if code != 0:
            raise RuntimeError(f"producer exited {code}: {(self.scratch / 'producer.out').read_text()[-1500:]}")

    def processed_keys(self) -> set[tuple]:
        keys = set()
        for path in self.journal.glob("processed-*.jsonl"):
            keys.update((r["topic"], r["partition"], r["offset"]) for r in truth.read_journal(path))
        return keys

    def wait_caught_up(self, timeout: float = 45, settle: float = 0.0, partitions: set[int] | None = None) -> None:
        """Until every acked record (of `partitions`) was processed by some member, then `settle` s."""
        deadline = time.monotonic() + timeout
        while True:
            wanted = {k for k in truth.produced(self.run_dir) if partitions is None or k[1] in partitions}
            missing = wanted - self.processed_keys()
            if not missing:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(missing)} of {len(wanted)} acked records unprocessed after {timeout:.0f} s{self._dead()}")
            time.sleep(0.2)
        time.sleep(settle)

    def stabilized(self) -> list[tuple[int, int]]:
        """(generation, members) of each time the coordinator stabilised the group (server.log)."""
        text = self.broker.server_log.read_text(errors="replace") if self.broker.server_log.exists() else ""
        return [
            (int(g), int(m))
            for g, m in re.findall(rf"Stabilized group {re.escape(GROUP)} generation (\d+)\D[^\n]*?with (\d+) members", text)
        ]

    def wait_stable(self, members: int, after: int = 0, timeout: float = 45, settle: float = 1.0) -> int:
        """Until the coordinator stabilises a generation above `after` with `members` members (its
        server.log), then `settle` s for the SyncGroup; that generation."""
        deadline = time.monotonic() + timeout
        while True:
            found = [g for g, m in self.stabilized() if g > after and m == members]
            if found:
                time.sleep(settle)
                return found[-1]
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"no generation above {after} with {members} members after {timeout:.0f} s: {self.stabilized()}{self._dead()}"
                )
            time.sleep(0.2)

    def _dead(self) -> str:
        dead = [name for name, m in self.members.items() if not m.alive()]
        text = ""
        for name in dead:
            tail = self.members[name].log.read_text(errors="replace").splitlines()[-12:]
            text += f"\n--- {name} exited {self.members[name].proc.returncode}:\n" + "\n".join(tail)
        return text

    # -- evidence and truth ------------------------------------------------------------------

    def dump_group(self) -> None:
        """`kafka-consumer-groups --describe` (offsets, then members) under a time stamp."""
        when = stamp()
        out, members = _parallel(
            lambda: self.broker.tool(
                "kafka-consumer-groups", "--bootstrap-server", "{bootstrap}", "--describe", "--group", GROUP, check=False
            ),
            lambda: self.broker.tool(
                "kafka-consumer-groups", "--bootstrap-server", "{bootstrap}", "--describe", "--group", GROUP, "--members", check=False
            ),
        )
        with open(self.run_dir / "offsets" / "consumer-groups.txt", "a") as handle:
            handle.write(when + out.rstrip("\n") + "\n\n" + members.rstrip("\n") + "\n\n")

    def dump_end_offsets(self) -> None:
        """GetOffsetShell: the topic's log start (`--time -2`) and log end (`--time -1`)."""
        when = stamp()
        outs = _parallel(
            *(
                lambda t=t: self.broker.tool("kafka-get-offsets", "--bootstrap-server", "{bootstrap}", "--topic", TOPIC, "--time", t)
                for t in ("-2", "-1")
            )
        )
        with open(self.run_dir / "offsets" / "get-offsets.txt", "a") as handle:
            handle.write("".join(when + out for out in outs))

    def dump_commits(self) -> None:
        """`kafka-dump-log --offsets-decoder` of `__consumer_offsets`: every commit, in order."""
        segments = sorted(self.broker.log_dir("__consumer_offsets", 0).glob("*.log"))
        if segments:
            out = self.broker.tool("kafka-dump-log", "--offsets-decoder", "--files", ",".join(map(str, segments)))
            (self.run_dir / "offsets" / "dump-log-consumer-offsets.txt").write_text(out)

    def generations(self) -> list[int]:
        """The generations the group coordinator stabilised the group at (its server.log)."""
        text = self.broker.server_log.read_text(errors="replace") if self.broker.server_log.exists() else ""
        return sorted({int(g) for g in re.findall(rf"Stabilized group {re.escape(GROUP)} generation (\d+)", text)})

    def finish(self, scenario_name: str, *, expect_findings=None, forbid_verdicts=None, **extra) -> dict:
        """Every member closed, final dumps taken, journals compacted, truth.json written."""
        for member in self.members.values():
            if member.alive():
                member.stop()
        _parallel(self.dump_group, self.dump_end_offsets, self.dump_commits)
        lost, duplicated = truth.lost_and_duplicated(self.run_dir)
        findings = expect_findings(lost, duplicated) if callable(expect_findings) else (expect_findings or [])
        return truth.write_truth(
            self.run_dir,
            scenario=scenario_name,
            client=self.name,
            version=self.version,
            expect_findings=findings,
            forbid_verdicts=forbid_verdicts or [],
            expect_rebalance_generations=self.generations(),
            broker_version=self.broker.version,
            client_version=self.client.version,
            **extra,
        )


def _parallel(*calls):
    """The results of `calls` run at once (each Kafka CLI tool is a JVM start of its own)."""
    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return [future.result() for future in [pool.submit(call) for call in calls]]


def ranges_as_findings(ranges: list[dict], detector: str, verdict: str) -> list[dict]:
    """Partial findings (`--json` vocabulary) naming each truth range exactly."""
    return [
        {
            "detector": detector,
            "verdict": verdict,
            "topic": r["topic"],
            "partition": r["partition"],
            "offset_from": r["from"],
            "offset_to": r["to"],
        }
        for r in ranges
    ]


# ---------------------------------------------------------------------------------------- scenarios
FAST = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 1000, "auto_commit_interval_ms": 1000}
"""Group settings that keep a run short: the broker's minimum session timeout, a commit a second."""


@scenario("clients_scale_out", PLAIN + [("librdkafka", "2.16.2-logger")])
def scale_out(run_dir: Path, client: str, version: str) -> dict:
    """Healthy control: one member, then a second and a third join while records flow, then all
    three close; every record processed once (rebalances with nothing lost)."""
    with ClientLab(run_dir, client, version) as lab:
        lab.start("c1", **FAST)
        generation = lab.wait_stable(1)
        producer = lab.produce(400, 50)
        time.sleep(2)
        lab.start("c2", **FAST)
        generation = lab.wait_stable(2, generation)
        time.sleep(1)
        lab.start("c3", **FAST)
        lab.wait_stable(3, generation)
        lab.wait_produced(producer)
        lab.wait_caught_up(settle=2.5)
        lab.dump_group()
        return lab.finish(
            "clients_scale_out",
            forbid_verdicts=["loss", "duplication"],
            notes="c1 alone, c2 and c3 join while 400 records flow; closed with SIGTERM",
        )


@scenario("clients_kill_session_timeout", ALL)
def kill_session_timeout(run_dir: Path, client: str, version: str) -> dict:
    """Fault: c1 is killed with SIGKILL between two auto-commits; the group waits out its session
    timeout (6 s) before c2 takes c1's partitions from their last commit: what c1 processed after
    it is processed again (duplicated), nothing lost."""
    with ClientLab(run_dir, client, version) as lab:
        settings = {**FAST, "auto_commit_interval_ms": 5000}
        lab.start("c1", **settings)
        lab.start("c2", **settings)
        lab.wait_stable(2)
        producer = lab.produce(500, 50)
        time.sleep(4)
        lab.members["c1"].kill()
        lab.wait_produced(producer)
        lab.wait_caught_up(settle=2.5)
        return lab.finish(
            "clients_kill_session_timeout",
            expect_findings=lambda lost, dup: ranges_as_findings(dup, "reprocessing", "expected"),
            notes="c1 SIGKILLed about 4 s into production (auto-commit every 5 s, session timeout 6 s)",
        )


@scenario("clients_partitions_added_latest", PLAIN + [("kafka-python", "2.3.3-asctime"), ("aiokafka", "0.14.0-asctime")])
def partitions_added_latest(run_dir: Path, client: str, version: str) -> dict:
    """Fault (seed 001): the topic grows from 2 to 4 partitions while records flow; the producer
    sees the new partitions within a second, the members only at their next metadata refresh
    (5 s), and then start them at the log end (auto.offset.reset=latest): what was produced to
    them in between is never consumed."""
    with ClientLab(run_dir, client, version, partitions=2) as lab:
        settings = {**FAST, "offset_reset": "latest", "metadata_max_age_ms": 5000}
        lab.start("c1", **settings)
        lab.start("c2", **settings)
        lab.wait_stable(2)
        lab.wait_produced(lab.produce(180, 60))
        lab.broker.tool("kafka-topics", "--bootstrap-server", "{bootstrap}", "--alter", "--topic", TOPIC, "--partitions", "4")
        # a producer started after the alteration writes to all four partitions at once, while the
        # members learn of them only at their next metadata refresh (however slow the tool was)
        lab.wait_produced(lab.produce(420, 60))
        lab.wait_caught_up(settle=2.5, partitions={0, 1})
        time.sleep(3)
        lab.dump_group()
        return lab.finish(
            "clients_partitions_added_latest",
            expect_findings=lambda lost, dup: ranges_as_findings(lost, "reset_to_latest_gap", "loss"),
            notes="180 records to 2 partitions, 2 -> 4 partitions, 420 more records at 60/s; members' metadata max age 5 s, offset reset latest",
        )


@scenario("clients_delete_records_out_of_range", [("librdkafka", "2.16.2")])
def delete_records_out_of_range(run_dir: Path, client: str, version: str) -> dict:
    """Fault: c1 is stopped (its offsets committed) and records beyond its commit are deleted
    (kafka-delete-records) before it starts again: its committed offset is below the log start,
    the fetch fails out of range and auto.offset.reset=earliest moves it to the new log start;
    the deleted records it never processed are lost."""
    with ClientLab(run_dir, client, version, partitions=2) as lab:
        lab.start("c1", **FAST)
        lab.wait_stable(1)
        lab.wait_produced(lab.produce(200, 100))
        lab.wait_caught_up(settle=2.0)
        lab.members["c1"].stop()
        lab.dump_group()
        lab.wait_produced(lab.produce(200, 200))
        ends = {}
        for line in lab.broker.tool("kafka-get-offsets", "--bootstrap-server", "{bootstrap}", "--topic", TOPIC, "--time", "-1").split():
            topic, partition, end = line.rsplit(":", 2)
            ends[int(partition)] = int(end)
        # delete up to 60 records short of each partition's end: the rest is still there to consume
        spec = {"partitions": [{"topic": TOPIC, "partition": p, "offset": end - 60} for p, end in sorted(ends.items())]}
        spec_file = lab.scratch / "delete.json"
        spec_file.write_text(json.dumps(spec))
        lab.broker.tool("kafka-delete-records", "--bootstrap-server", "{bootstrap}", "--offset-json-file", str(spec_file))
        lab.dump_end_offsets()
        lab.start("c1", **FAST)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            got = {(t, p) for t, p, o in lab.processed_keys() if o >= ends[p] - 1}
            if len(got) == len(ends):
                break
            time.sleep(0.3)
        time.sleep(2)
        return lab.finish(
            "clients_delete_records_out_of_range",
            expect_findings=lambda lost, dup: ranges_as_findings(lost, "out_of_range_reset", "loss"),
            notes="c1 closed after 200 records; 200 more produced; records deleted up to 60 short of each end; c1 restarted",
        )


@scenario(
    "clients_poll_timeout",
    [("librdkafka", "2.16.2"), ("kafka-python", "2.3.3-asctime"), ("aiokafka", "0.14.0-asctime"), ("kafka-python", "2.3.3")],
)
def poll_timeout(run_dir: Path, client: str, version: str) -> dict:
    """Fault (seed 002): c1's handler stalls 11 s on one record, past max.poll.interval.ms (7 s),
    while its heartbeats go on: the client leaves the group on its own (librdkafka's MAXPOLL,
    kafka-python's heartbeat thread), c2 takes c1's partitions from their last commit, and c1
    rejoins when it polls again."""
    with ClientLab(run_dir, client, version) as lab:
        settings = {**FAST, "max_poll_interval_ms": 7000}
        lab.start("c1", **settings, slow_after=150, slow_ms=11000)
        lab.start("c2", **settings)
        lab.wait_stable(2)
        producer = lab.produce(600, 40)
        lab.wait_produced(producer)
        lab.wait_caught_up(settle=2.5)
        return lab.finish(
            "clients_poll_timeout",
            expect_findings=lambda lost, dup: [{"detector": "poll_timeout"}] + ranges_as_findings(dup, "reprocessing", "expected"),
            notes="c1 stalls 11 s after its 150th record; max.poll.interval.ms 7 s, session timeout 6 s",
        )
