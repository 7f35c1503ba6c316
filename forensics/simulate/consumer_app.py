"""A consumer application on the classic protocol: its group, members, noise vocabulary and
logged settings, started and formed into the first generation the logs show."""

from __future__ import annotations

from dataclasses import dataclass, field

from .context import SERVICES, STORES, TOPIC_WORDS, Ctx, brokers, coordinator, domain
from .kafka import Kafka
from .logfile import Record
from .noise import Noise
from .world import Group, Member


def consumer_settings(ctx: Ctx, client_id: str, group_id: str, **overrides) -> dict:
    v = Kafka(ctx.version).v
    settings = {
        "auto.commit.interval.ms": 5000,
        "auto.offset.reset": "latest",
        "bootstrap.servers": "[" + ", ".join(f"kafka-{i}.{domain(ctx)}:9092" for i in (1, 2, 3)) + "]",
        "client.id": client_id,
        "enable.auto.commit": "false",
        "fetch.max.wait.ms": 500,
        "group.id": group_id,
        "heartbeat.interval.ms": 3000,
        "isolation.level": "read_uncommitted",
        "key.deserializer": "class org.apache.kafka.common.serialization.StringDeserializer",
        "max.poll.interval.ms": 300000,
        "max.poll.records": 500,
        "metadata.max.age.ms": 300000,
        "partition.assignment.strategy": "[class org.apache.kafka.clients.consumer.RangeAssignor]",
        "session.timeout.ms": 45000 if v.at_least("3.0") else 10000,
        "value.deserializer": "class org.apache.kafka.common.serialization.StringDeserializer",
    }
    if v.at_least("2.3"):
        settings["group.instance.id"] = "null"
    if v.at_least("3.0"):
        settings["partition.assignment.strategy"] = (
            "[class org.apache.kafka.clients.consumer.RangeAssignor, class org.apache.kafka.clients.consumer.CooperativeStickyAssignor]"
        )
    settings.update({k.replace("_", "."): v for k, v in overrides.items()})
    return settings


@dataclass
class App:
    """A consumer application: its group, members, noise vocabulary and settings."""

    ctx: Ctx
    kafka: Kafka
    group: Group
    members: list[Member]
    topic: str
    noise: Noise
    settings: dict
    config_lines: list[Record] = field(default_factory=list)

    def start(self, m: Member, ts: int) -> Record:
        """Client start: ``ConsumerConfig values:`` block, version banner, subscription, coordinator."""
        k = self.kafka
        block = m.plain(ts, k.config("Consumer", {**self.settings, "client.id": m.client_id}))
        self.config_lines.append(block)
        for msg in k.banner():
            m.plain(ts + 95, msg)
        m.log(ts + 110, k.subscribed([self.topic]))
        m.log(ts + 400 + self.ctx.rng.randint(0, 200), k.discovered(self.group.coordinator))
        return block

    def leave(self, m: Member, ts: int, reason: str = "the consumer is being closed") -> int:
        """Clean shutdown: revoke (commit in the callback), LeaveGroup."""
        k, g = self.kafka, self.group
        m.log(ts, k.revoked(list(m.owned)))
        for j, tp in enumerate(m.owned):
            g.committed[tp] = m.position.get(tp, g.committed.get(tp, 0))
            m.log(ts + 2 + j, k.committed(g.committed[tp], tp))
        m.owned = []
        m.log(ts + 10 + len(g.partitions), k.leave(m.member_id, g.coordinator, reason))
        return ts + 20 + len(g.partitions)

    def app_line(self, m: Member, ts: int, level: str, text: str, stack: tuple = ()) -> Record:
        return m.app(ts, level, f"{self.noise.package}.{self.noise.classes[0]}", text, stack)


def make_app(
    ctx: Ctx,
    hosts: int,
    partitions: int,
    topic: str | None = None,
    group_id: str | None = None,
    file: str = "app.log",
    gz_hosts: tuple = (),
    **settings,
) -> App:
    rng, inc = ctx.rng, ctx.inc
    app, package, classes = ctx.app
    k = Kafka(ctx.version)
    group_id = group_id or ctx.name("group", f"{app}-{ctx.tag}")
    topic = topic or ctx.name("topic", f"{app.split('-')[0]}-{rng.choice(TOPIC_WORDS)}-{ctx.tag}")
    client_id = f"consumer-{group_id}-1" if k.v.at_least("2.5") else "consumer-1"
    group = Group(k, group_id, [f"{topic}-{p}" for p in range(partitions)], coordinator(ctx), brokers(ctx), rng.randint(3, 300), rng)
    for tp in group.partitions:
        group.end[tp] = rng.randint(2_000, 90_000)
        group.committed[tp] = group.end[tp]
    members = []
    for i in range(hosts):
        name = ctx.name(f"host{i + 1}", f"{app}-{ctx.tag}-{i + 1}")
        host = inc.host(name, ctx.layout, file + (".gz" if i in gz_hosts else ""))
        members.append(Member(host, k, client_id, group_id, rng))
    noise = Noise(package, classes, SERVICES, STORES)
    result = App(ctx, k, group, members, topic, noise, consumer_settings(ctx, client_id, group_id, **settings))
    for m in members:
        inc.add_noise(m.host, noise, 120, rng, thread="main")
    return result


def boot(a: App, members: list[Member] | None = None) -> int:
    """All members start and form the first generation in the logs; returns the time after it."""
    members = members or a.members
    t = a.ctx.t0
    for i, m in enumerate(members):
        a.start(m, t + i * a.ctx.rng.randint(150, 900))
    r = a.group.rebalance(t + 1500 + 900 * len(members), members, revoking=[], join_wait=3000)
    return r["end"]


def minutes(ctx: Ctx, low: float, high: float) -> int:
    return int(ctx.rng.uniform(low, high) * 60_000 * ctx.scale)


def rate(ctx: Ctx) -> float:
    return ctx.rng.uniform(2, 12)
