"""The simulated world of one incident: hosts and their log files, Kafka clients, a consumer
group run by the classic (eager) protocol, the ground-truth findings and the offset dumps.

A ``Group`` holds each partition's log end and committed offset; ``rebalance`` plays one
generation change on every member's log the way the Java client logs it (revocation and the
commit in the revocation callback, JoinGroup, SyncGroup, the new assignment, and each new
partition's start position: the committed offset, or the ``auto.offset.reset`` policy).
"""

from __future__ import annotations

import hashlib
import random
import uuid
from dataclasses import dataclass, field

from .kafka import Kafka, Msg
from .logfile import HostLog, Record
from .noise import Noise


def det_uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def incident_tag(seed: int) -> str:
    """A short token unique to the seed: it keeps the names of incidents written side by side apart."""
    return hashlib.sha256(f"incident-{seed}".encode()).hexdigest()[:6]


@dataclass
class Finding:
    detector: str
    group: str
    verdict: str
    evidence: list[Record]
    topic: str | None = None
    partition: int | None = None
    task: str | None = None
    offset_from: int | None = None
    offset_to: int | None = None
    classification: str | None = None
    exact: bool | None = None

    def to_json(self, path_of: dict[int, str]) -> dict:
        records = None if self.offset_from is None or self.offset_to is None else self.offset_to - self.offset_from
        return {
            "detector": self.detector,
            "group": self.group,
            "topic": self.topic,
            "partition": self.partition,
            "task": self.task,
            "offset_from": self.offset_from,
            "offset_to": self.offset_to,
            "records": records,
            "verdict": self.verdict,
            "classification": self.classification,
            "exact": self.exact,
            "evidence": [{"file": path_of[id(r)], "line": r.line} for r in self.evidence],
        }

    def sort_key(self):
        def k(value):
            return (value is not None, value if value is not None else 0)

        return (self.detector, self.group, k(self.topic), k(self.partition), k(self.task), k(self.offset_from))


@dataclass
class Incident:
    """Everything one incident writes: host logs, offset dumps, faults, findings, notes."""

    seed: int
    scale: int = 1
    hosts: list[HostLog] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    faults: list[dict] = field(default_factory=list)
    dumps: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    noise: list[tuple] = field(default_factory=list)

    def host(self, name: str, layout: str, file: str = "app.log") -> HostLog:
        if any(h.dir == name for h in self.hosts):
            raise ValueError(f"host directory {name!r} used twice")
        host = HostLog(name, file, layout)
        self.hosts.append(host)
        return host

    def add_noise(self, host: HostLog, noise: Noise, count: int, rng: random.Random, thread: str = "worker-1") -> None:
        """Noise over the host's own time span, added when the story is complete."""
        self.noise.append((host, noise, count, rng, thread))

    def finish_noise(self) -> None:
        for host, noise, count, rng, thread in self.noise:
            times = [r.ts for r in host.records]
            noise.fill(host, min(times) + 1, max(times) + 60_000, count * self.scale, rng, thread)
        self.noise.clear()


class Client:
    """One Kafka client (or Streams thread) writing to a host's log with its log-context prefix."""

    def __init__(self, host: HostLog, kafka: Kafka, prefix: str, thread: str = "main"):
        self.host, self.kafka, self.prefix, self.thread = host, kafka, prefix, thread

    def log(self, ts: int, msg: Msg, prefix: str | None = None) -> Record:
        level, logger, text = msg
        pre = self.prefix if prefix is None else prefix
        return self.host.add(Record(ts, level, logger, pre + text, self.thread, kafka=True))

    def plain(self, ts: int, msg: Msg) -> Record:
        return self.log(ts, msg, prefix="")

    def app(self, ts: int, level: str, logger: str, text: str, stack: tuple[str, ...] = ()) -> Record:
        return self.host.add(Record(ts, level, logger, text, self.thread, stack))


def consumer_prefix(client_id: str, group_id: str, instance_id: str | None = None) -> str:
    instance = f"instanceId={instance_id}, " if instance_id else ""
    return f"[Consumer {instance}clientId={client_id}, groupId={group_id}] "


class Member(Client):
    """A consumer of a group: its member id, owned partitions and positions."""

    def __init__(
        self, host: HostLog, kafka: Kafka, client_id: str, group_id: str, rng: random.Random, thread: str = "main", name: str | None = None
    ):
        super().__init__(host, kafka, consumer_prefix(client_id, group_id), thread)
        self.client_id, self.group_id, self.rng = client_id, group_id, rng
        self.name = name or host.dir
        self.member_id = ""
        self.new_member_id()
        self.owned: list[str] = []
        self.position: dict[str, int] = {}

    def new_member_id(self) -> str:
        self.member_id = f"{self.client_id}-{det_uuid(self.rng)}"
        return self.member_id

    @property
    def label(self) -> str:
        return f"{self.host.dir}/{self.client_id}"


class Group:
    """A consumer group on the classic protocol with eager (range) assignment."""

    def __init__(
        self,
        kafka: Kafka,
        group_id: str,
        partitions: list[str],
        coordinator: str,
        brokers: list[str],
        generation: int,
        rng: random.Random,
        protocol: str = "range",
    ):
        self.kafka, self.group_id, self.partitions = kafka, group_id, partitions
        self.coordinator, self.brokers, self.generation, self.rng, self.protocol = coordinator, brokers, generation, rng, protocol
        self.members: list[Member] = []
        self.end: dict[str, int] = {}
        self.committed: dict[str, int] = {}
        self.epoch = rng.randint(1, 9)
        self.commit_lines: list[Record] = []

    def leader_of(self, tp: str) -> str:
        return self.brokers[int(tp.rsplit("-", 1)[1]) % len(self.brokers)]

    def range_assignment(self, members: list[Member]) -> dict[Member, list[str]]:
        """RangeAssignor over the members sorted by member id, per topic."""
        ordered = sorted(members, key=lambda m: m.member_id)
        result: dict[Member, list[str]] = {m: [] for m in ordered}
        topics: dict[str, list[str]] = {}
        for tp in self.partitions:
            topics.setdefault(tp.rsplit("-", 1)[0], []).append(tp)
        for tps in topics.values():
            tps = sorted(tps, key=lambda tp: int(tp.rsplit("-", 1)[1]))
            per, extra = divmod(len(tps), len(ordered))
            start = 0
            for i, m in enumerate(ordered):
                n = per + (1 if i < extra else 0)
                result[m].extend(tps[start : start + n])
                start += n
        return result

    def process(self, start: int, end: int, rate: float, commit_lines: bool = False, idle: tuple = ()) -> None:
        """Producers append ``rate`` records/s per partition; owners keep up and (optionally)
        log their periodic commits (DEBUG ``Committed offset``) at the end."""
        seconds = (end - start) / 1000
        for tp in self.partitions:
            if tp not in idle:
                self.end[tp] = self.end.get(tp, 0) + max(1, int(rate * seconds * self.rng.uniform(0.6, 1.4)))
        for m in self.members:
            for i, tp in enumerate(o for o in m.owned if o not in idle):
                m.position[tp] = self.end[tp]
                if commit_lines:
                    self.commit_lines.append(m.log(end - 40 + i, self.kafka.committed(self.end[tp], tp)))
                    self.committed[tp] = self.end[tp]
                else:
                    self.committed[tp] = self.end[tp]

    def start_position(self, m: Member, ts: int, tp: str, reset: str = "latest") -> Record:
        """The new owner's start position: the committed offset, else the reset policy."""
        k = self.kafka
        if tp in self.committed:
            m.position[tp] = self.committed[tp]
            return m.log(ts, k.set_committed(tp, self.committed[tp], self.epoch, self.leader_of(tp)))
        m.log(ts, k.no_committed(tp))
        for msg in k.seek_strategy(reset, tp):
            m.log(ts, msg)
        offset = self.end.get(tp, 0) if reset == "latest" else 0
        m.position[tp] = offset
        return m.log(ts + 1, k.reset(tp, offset, self.epoch, self.leader_of(tp)))

    def rebalance(
        self,
        t: int,
        members: list[Member],
        assignment: dict[Member, list[str]] | None = None,
        revoking: list[Member] | None = None,
        commit_on_revoke: bool = True,
        join_wait: int = 300,
        heartbeat_told: list[Member] | None = None,
        reset: str = "latest",
        silent: tuple = (),
    ) -> dict:
        """One eager rebalance into the next generation: returns ``{"end": ts, "starts": {tp: Record}, "commits": {tp: Record}}``.

        ``revoking``: members that give up their partitions first (default: every member);
        ``silent``: revoking members whose callback commits nothing; ``heartbeat_told``: members
        that learn of the rebalance from a heartbeat.
        """
        k = self.kafka
        self.generation += 1
        gen = self.generation
        assignment = assignment or self.range_assignment(members)
        revoking = list(revoking if revoking is not None else members)
        told = heartbeat_told if heartbeat_told is not None else []
        commits: dict[str, Record] = {}
        starts: dict[str, Record] = {}
        for i, m in enumerate(members):
            ts = t + 3 * i + self.rng.randint(0, 4)
            if m in told:
                m.log(ts, k.rebalancing_heartbeat())
                ts += 2
            if m in revoking and (m.owned or k.v.below("2.4")):
                m.log(ts, k.revoked(list(m.owned)))
                for j, tp in enumerate(m.owned):
                    if commit_on_revoke and m not in silent:
                        self.committed[tp] = m.position.get(tp, self.committed.get(tp, 0))
                        commits[tp] = m.log(ts + 3 + j, k.committed(self.committed[tp], tp))
                m.owned = []
                ts += 5 + len(commits)
            m.log(ts + 2, k.joining())
        t_join = t + join_wait + self.rng.randint(0, 40)
        leader = sorted(members, key=lambda m: m.member_id)[0]
        for i, m in enumerate(members):
            tj = t_join + i
            m.log(tj, k.joined(gen, m.member_id, self.protocol))
            if m is leader:
                m.log(tj + 3, k.finished_assignment(gen, {x.member_id: assignment[x] for x in assignment}))
            for msg in k.synced(gen, m.member_id, self.protocol):
                m.log(tj + 14, msg)
            new = assignment.get(m, [])
            for msg in k.notifying(new):
                m.log(tj + 15, msg)
            m.log(tj + 16, k.assigned(new))
            for j, tp in enumerate(new):
                starts[tp] = self.start_position(m, tj + 20 + 2 * j, tp, reset)
            m.owned = list(new)
        self.members = list(members)
        return {"end": t_join + 40 + 2 * len(self.partitions), "starts": starts, "commits": commits}
