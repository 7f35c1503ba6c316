"""Consumer-group incidents (classic protocol, eager assignment): each function plays one
fault on its own group and records the findings it implies.

- ``reset_to_latest_gap`` (seed 001): a partition added while ``auto.offset.reset=latest``;
  the consumer finds no committed offset and starts at the log end: [log start, N) never read.
- ``out_of_range_reset``: retention deleted the segment under a lagging consumer's position X;
  ``earliest`` resets it to the new log start N > X: [X, N) never read.
- ``backward_commit`` (seed 003): a member that lost a partition commits it late, below the
  new owner's commit (a zombie commit).
- ``reprocessing``: a commit fails because the group is rebalancing; the new owner resumes from
  the older commit C: [C, P) processed twice (at-least-once).
- ``poll_timeout`` / ``session_timeout``: a member exceeds ``max.poll.interval.ms`` / has its
  session expired; its commit fails and the new owners reprocess [C, P).
- ``rebalance_storm``: a crash-looping member joins and leaves again and again.
- ``risky_config``: ``session.timeout.ms`` < 3 x ``heartbeat.interval.ms``.
- ``healthy``: a rolling restart with commits in the revocation callback: nothing to find.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .kafka import Kafka
from .logfile import Record
from .noise import Noise
from .world import Client, Finding, Group, Incident, Member

APPS = [
    ("orders-enricher", "com.acme.orders", ["OrderEnricher", "PricingClient", "OrderRepository"]),
    ("billing-worker", "io.billing.worker", ["InvoiceHandler", "LedgerWriter", "TaxService"]),
    ("shipment-tracker", "com.shipco.tracking", ["EventHandler", "CarrierClient", "StatusStore"]),
    ("fraud-scorer", "ai.riskops.scoring", ["ScoreService", "FeatureLookup", "RuleEngine"]),
    ("inventory-sync", "net.retail.inventory", ["StockUpdater", "WarehouseClient", "SkuCache"]),
    ("email-dispatcher", "com.notify.mail", ["Dispatcher", "TemplateRenderer", "SmtpGateway"]),
    ("clickstream-loader", "io.analytics.loader", ["SessionLoader", "S3Writer", "SchemaRegistryCache"]),
    ("payment-auditor", "com.fintech.audit", ["AuditConsumer", "ReportWriter", "AccountLookup"]),
    ("geo-indexer", "org.maps.indexer", ["TileIndexer", "GeoCoder", "IndexWriter"]),
    ("loyalty-points", "com.shop.loyalty", ["PointsCalculator", "MemberStore", "CampaignRules"]),
]
SERVICES = ["pricing-service", "customer-api", "tax-engine", "postgres-primary", "redis-cache", "search-cluster"]
STORES = ["postgres", "redis", "s3://exports", "elasticsearch", "cassandra"]
TOPIC_WORDS = ["events", "orders", "payments", "updates", "commands", "clicks", "records", "transactions"]


@dataclass
class Ctx:
    """What a story needs: the incident, its own random stream, version, layout, names, start time."""

    inc: Incident
    rng: object
    version: str
    layout: str
    tag: str
    t0: int
    app: tuple
    fixed: dict = field(default_factory=dict)

    @property
    def scale(self) -> int:
        return self.inc.scale

    def name(self, key: str, default: str) -> str:
        return self.fixed.get(key, default)


def domain(ctx: Ctx) -> str:
    return ctx.name("domain", f"{ctx.tag}.internal")


def brokers(ctx: Ctx) -> list[str]:
    return [f"kafka-{i}.{domain(ctx)}:9092 (id: {i} rack: null)" for i in (1, 2, 3)]


def coordinator(ctx: Ctx) -> str:
    c = ctx.rng.randint(1, 3)
    return f"kafka-{c}.{domain(ctx)}:9092 (id: {2147483647 - c} rack: null)"


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
            "[class org.apache.kafka.clients.consumer.RangeAssignor, class org.apache.kafka.clients.consumer.CooperativeStickyAssignor]")
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


def make_app(ctx: Ctx, hosts: int, partitions: int, topic: str | None = None, group_id: str | None = None,
             file: str = "app.log", gz_hosts: tuple = (), **settings) -> App:
    rng, inc = ctx.rng, ctx.inc
    app, package, classes = ctx.app
    k = Kafka(ctx.version)
    group_id = group_id or ctx.name("group", f"{app}-{ctx.tag}")
    topic = topic or ctx.name("topic", f"{app.split('-')[0]}-{rng.choice(TOPIC_WORDS)}-{ctx.tag}")
    client_id = f"consumer-{group_id}-1" if k.v.at_least("2.5") else "consumer-1"
    group = Group(k, group_id, [f"{topic}-{p}" for p in range(partitions)], coordinator(ctx), brokers(ctx),
                  rng.randint(3, 300), rng)
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


# -- stories ---------------------------------------------------------------------------------

def healthy(ctx: Ctx) -> None:
    """A rolling restart of one member: two clean rebalances, commits in the revocation callback."""
    a = make_app(ctx, hosts=ctx.rng.randint(2, 3), partitions=ctx.rng.randint(4, 12), auto_offset_reset="earliest")
    g = a.group
    t = boot(a)
    g.process(t, t + minutes(ctx, 3, 6), rate(ctx))
    t += minutes(ctx, 3, 6)
    m = a.members[-1]
    a.app_line(m, t - 5, "INFO", "received SIGTERM, shutting down consumer loop")
    t_left = a.leave(m, t)
    others = [x for x in a.members if x is not m]
    t = g.rebalance(t_left + 200, others, heartbeat_told=others)["end"]
    g.process(t, t + 40_000, rate(ctx))
    t += 40_000
    m.new_member_id()
    a.start(m, t)
    t = g.rebalance(t + 2500, a.members, heartbeat_told=others)["end"]
    g.process(t, t + minutes(ctx, 2, 5), rate(ctx))
    ctx.inc.notes.append(f"- `{g.group_id}`: healthy rolling restart of `{m.label}`: clean rebalances, no finding.")


def risky_config(ctx: Ctx) -> None:
    """session.timeout.ms 6000 with heartbeat.interval.ms 3000 (< 3 heartbeats per session); clean rebalance."""
    a = make_app(ctx, hosts=ctx.rng.randint(2, 3), partitions=ctx.rng.randint(4, 10),
                 auto_offset_reset="earliest", session_timeout_ms=6000, heartbeat_interval_ms=3000)
    g = a.group
    t = boot(a)
    g.process(t, t + minutes(ctx, 4, 8), rate(ctx))
    t += minutes(ctx, 4, 8)
    m = a.members[0]
    a.app_line(m, t - 5, "INFO", "deploying new version, shutting down")
    t_left = a.leave(m, t)
    others = a.members[1:]
    t = g.rebalance(t_left + 150, others, heartbeat_told=others)["end"]
    g.process(t, t + 30_000, rate(ctx))
    t += 30_000
    m.new_member_id()
    a.start(m, t)
    t = g.rebalance(t + 2200, a.members, heartbeat_told=others)["end"]
    g.process(t, t + minutes(ctx, 2, 4), rate(ctx))
    ctx.inc.faults.append({"fault": "risky_config", "group": g.group_id, "setting": "session.timeout.ms",
                           "session.timeout.ms": 6000, "heartbeat.interval.ms": 3000})
    ctx.inc.findings.append(Finding("risky_config", g.group_id, "expected", [a.config_lines[0]],
                                    classification="session.timeout.ms"))
    ctx.inc.notes.append(lambda: 
        f"- `{g.group_id}` ({len(a.members)} members): `session.timeout.ms = 6000` with `heartbeat.interval.ms = 3000` "
        f"in every `ConsumerConfig values:` block (first at `{a.config_lines[0].line}`); the rolling restart of "
        f"`{m.label}` rebalances cleanly.")


def reset_to_latest_gap(ctx: Ctx) -> None:
    """Seed 001: partition added under auto.offset.reset=latest; the producer writes to it first."""
    rng, inc = ctx.rng, ctx.inc
    topic = ctx.name("topic", f"{ctx.app[0].split('-')[0]}-{rng.choice(TOPIC_WORDS)}-{ctx.tag}")
    a = make_app(ctx, hosts=1, partitions=1, topic=topic, auto_offset_reset="latest", metadata_max_age_ms=300000)
    g, k = a.group, a.kafka
    m = a.members[0]
    producer_host = inc.host(ctx.name("producer_host", f"{ctx.app[0]}-producer-{ctx.tag}"), ctx.layout)
    producer = Client(producer_host, k, "[Producer clientId=producer-1] ")
    producer.plain(ctx.t0 - 2000, k.config("Producer", {
        "acks": "all" if k.v.at_least("3.0") else 1, "bootstrap.servers": a.settings["bootstrap.servers"],
        "client.id": "producer-1", "enable.idempotence": "true" if k.v.at_least("3.0") else "false",
        "metadata.max.age.ms": 300000}))
    for msg in k.banner():
        producer.plain(ctx.t0 - 1900, msg)
    inc.add_noise(producer_host, a.noise, 60, rng, thread="main")
    g.end[f"{topic}-0"] = rng.randint(10, 40) if "topic" in ctx.fixed else rng.randint(500, 20_000)
    g.committed[f"{topic}-0"] = g.end[f"{topic}-0"]
    t = boot(a)
    new_tp = f"{topic}-1"
    gap = ctx.fixed.get("gap", rng.randint(3, 40))
    t_split = t + minutes(ctx, 1, 3)
    a.app_line(m, t_split - 3000, "INFO", f"consumed up to {topic}-0 offset {g.end[f'{topic}-0']}")
    # The producer learns of the new partition first and writes offsets 0..gap-1 to it.
    producer_class = f"{a.noise.package}.Producer"
    g.partitions.append(new_tp)
    g.end[new_tp] = 0
    step = 1000
    for i in range(gap):
        producer.app(t_split + i * step, "INFO", producer_class, f"[ID={1000 + i}] sent. tp={new_tp}[offset={i}]")
        g.end[new_tp] += 1
    t_meta = t_split + gap * step + 200
    for msg in k.rejoin_metadata(f"{{{topic}=1}}", f"{{{topic}=2}}"):
        m.log(t_meta, msg)
    r = g.rebalance(t_meta + 20, [m], join_wait=250, reset="latest")
    producer.app(r["end"] + 500, "INFO", producer_class, f"[ID={1000 + gap}] sent. tp={new_tp}[offset={gap}]")
    a.app_line(m, r["end"] + 530, "INFO", f"[ID={1000 + gap}] received.")
    g.end[new_tp] += 1
    g.process(r["end"] + 1000, r["end"] + minutes(ctx, 1, 3), rate(ctx) / 4)
    no_committed = next(rec for rec in m.host.records if rec.msg.endswith(f"Found no committed offset for partition {new_tp}"))
    reset = r["starts"][new_tp]
    seek = [rec for rec in m.host.records if "Seeking to" in rec.msg and rec.msg.endswith(new_tp)]
    # kafka-dump-log of the new partition's first segment: the log starts at offset 0.
    lines = [f"Dumping /var/lib/kafka/data/{new_tp}/00000000000000000000.log", "Starting offset: 0"]
    for i in range(g.end[new_tp]):
        created = t_split + i * step if i < gap else r["end"] + 500
        lines.append(
            f"baseOffset: {i} lastOffset: {i} count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
            f"partitionLeaderEpoch: {g.epoch} isTransactional: false isControl: false position: {i * 80} "
            f"CreateTime: {created} size: 80 magic: 2 compresscodec: NONE crc: {rng.getrandbits(31)} isvalid: true")
    inc.dumps[f"dump-log-{new_tp}.txt"] = "\n".join(lines) + "\n"
    inc.faults.append({"fault": "reset_to_latest_gap", "member": m.label, "topic": topic, "partition": 1,
                       "records_before_consumer_saw_partition": gap})
    inc.findings.append(Finding("reset_to_latest_gap", g.group_id, "loss", [no_committed, *seek, reset], topic=topic,
                                partition=1, offset_from=0, offset_to=gap, exact=True))
    inc.findings.append(Finding("risky_config", g.group_id, "expected", [a.config_lines[0], no_committed], topic=topic,
                                classification="auto.offset.reset"))
    inc.notes.append(
        f"- `{g.group_id}`: `{topic}` grows from 1 to 2 partitions; the producer (`{producer_host.dir}`) writes "
        f"`{new_tp}` offsets 0-{gap - 1} before the consumer `{m.label}` refreshes its metadata; with "
        f"`auto.offset.reset = latest` it finds no committed offset and starts at {gap}: offsets [0, {gap}) are never "
        f"consumed. Dump `offsets/dump-log-{new_tp}.txt` shows the first batch at baseOffset 0.")


def out_of_range_reset(ctx: Ctx) -> None:
    """A lagging member's fetch position falls below the log start (retention); reset to earliest skips records."""
    rng, inc = ctx.rng, ctx.inc
    a = make_app(ctx, hosts=2, partitions=rng.randint(3, 8), auto_offset_reset="earliest")
    g, k = a.group, a.kafka
    t = boot(a)
    g.process(t, t + minutes(ctx, 2, 4), rate(ctx))
    t += minutes(ctx, 2, 4)
    m = a.members[-1]
    tp = m.owned[0]
    x = m.position[tp]
    a.app_line(m, t, "WARN", f"downstream {rng.choice(SERVICES)} unavailable, pausing consumption")
    stall = minutes(ctx, 8, 15)
    for other in g.members:
        if other is not m:
            for p in other.owned:
                g.end[p] += int(stall / 1000 * 3)
                other.position[p] = g.end[p]
                g.committed[p] = g.end[p]
    deleted = rng.randint(200, 5000) * ctx.scale
    n = x + deleted
    g.end[tp] = n + rng.randint(100, 3000)
    t += stall
    a.app_line(m, t - 10, "INFO", "downstream available again, resuming consumption")
    oor = m.log(t, k.out_of_range(tp, x, g.epoch, g.leader_of(tp)))
    for msg in k.seek_strategy("earliest", tp):
        m.log(t + 1, msg)
    reset = m.log(t + 3, k.reset(tp, n, g.epoch, g.leader_of(tp)))
    m.position[tp] = n
    for p in m.owned:
        if p != tp:
            m.position[p] = g.end[p]
    g.process(t + 100, t + minutes(ctx, 2, 4), rate(ctx))
    inc.faults.append({"fault": "out_of_range_reset", "member": m.label, "topic": a.topic, "partition": int(tp.rsplit("-", 1)[1]),
                       "position": x, "log_start_after_retention": n})
    inc.findings.append(Finding("out_of_range_reset", g.group_id, "loss", [oor, reset], topic=a.topic,
                                partition=int(tp.rsplit("-", 1)[1]), offset_from=x, offset_to=n, exact=True))
    inc.notes.append(lambda: 
        f"- `{g.group_id}`: `{m.label}` pauses on `{tp}` at offset {x}; retention deletes the segment meanwhile (log start "
        f"{n}); its next fetch is out of range (line {oor.line}) and `auto.offset.reset = earliest` resets it to {n} "
        f"(line {reset.line}): [{x}, {n}) never consumed.")


def backward_commit(ctx: Ctx) -> None:
    """Seed 003: c1 loses p1 to c2, c2 commits 7, then c1's late commit 5 moves the committed offset back."""
    rng, inc = ctx.rng, ctx.inc
    a = make_app(ctx, hosts=2, partitions=ctx.fixed.get("partitions", rng.randint(2, 6)), auto_offset_reset="earliest")
    g, k = a.group, a.kafka
    c1, c2 = a.members
    p1 = f"{a.topic}-1"
    base = ctx.fixed.get("base", rng.randint(200, 9000))
    g.end[p1] = g.committed[p1] = base - ctx.fixed.get("base_step", rng.randint(1, 3))
    t = boot(a, [c1])
    span = minutes(ctx, 2, 4)
    g.process(t, t + span, rate(ctx), commit_lines=True, idle=(p1,))
    t += span
    g.end[p1] = base
    c1.position[p1] = base
    g.committed[p1] = base
    c1.log(t - 2000, k.committed(base, p1))
    late = ctx.fixed.get("late", base + rng.randint(1, 40))
    ahead = ctx.fixed.get("ahead", late + rng.randint(2, 60))
    a.app_line(c1, t - 500, "DEBUG", f"{p1} offset {base} handed to worker pool (in-flight up to {late - 1})")
    a.start(c2, t)
    assignment = {c1: [tp for tp in g.partitions if tp != p1], c2: [p1]}
    # c1 commits only what completed in order (its in-flight p1 records are not done yet).
    r = g.rebalance(t + 2000, [c1, c2], assignment=assignment, revoking=[c1], heartbeat_told=[c1])
    t = r["end"]
    g.end[p1] = ahead + rng.randint(0, 20)
    ahead_line = c2.log(t + 4000, k.committed(ahead, p1))
    g.committed[p1] = ahead
    a.app_line(c1, t + 4100, "INFO", f"worker pool drained: {p1} up to offset {late - 1} done")
    zombie = c1.log(t + 4180, k.committed(late, p1))
    g.committed[p1] = late
    c2.position[p1] = ahead
    t += 5000
    g.process(t, t + minutes(ctx, 1, 3), rate(ctx))
    inc.faults.append({"fault": "backward_commit", "member": c1.label, "topic": a.topic, "partition": 1,
                       "late_commit": late, "previous_commit": ahead, "new_owner": c2.label})
    inc.findings.append(Finding("backward_commit", g.group_id, "duplication", [ahead_line, zombie], topic=a.topic, partition=1,
                                offset_from=late, offset_to=ahead, classification="zombie", exact=True))
    inc.notes.append(lambda: 
        f"- `{g.group_id}`: `{c2.label}` joins and takes `{p1}` from `{c1.label}`; it commits {ahead} (line "
        f"{ahead_line.line}), then `{c1.label}`, no longer the owner, commits its late offset {late} (line "
        f"{zombie.line}): the committed offset goes back by {ahead - late}.")


def _in_flight(a: App, m: Member, partitions: list[str]) -> dict[str, int]:
    """Offsets P the member has processed beyond the committed offsets C of ``partitions``."""
    g, rng = a.group, a.ctx.rng
    done = {}
    for tp in partitions:
        done[tp] = g.committed[tp] + rng.randint(20, 400) * a.ctx.scale
        g.end[tp] = max(g.end[tp], done[tp] + rng.randint(0, 50))
        m.position[tp] = done[tp]
    return done


def _fail_commits(a: App, m: Member, ts: int, done: dict[str, int], error: str) -> dict[str, Record]:
    """The member's commit of its processed offsets fails (one ``Offset commit failed`` line per partition)."""
    k, rng = a.kafka, a.ctx.rng
    lines = {tp: m.log(ts + j, k.commit_failed(tp, p, error)) for j, (tp, p) in enumerate(done.items())}
    cls = a.noise.classes[0]
    a.app_line(m, ts + len(done) + 2, "ERROR", "commit of processed offsets failed, records will be redelivered", (
        "org.apache.kafka.clients.consumer.CommitFailedException: Commit cannot be completed since the group has already "
        "rebalanced and assigned the partitions to another member.",
        f"\tat {a.noise.package}.{cls}.commit({cls}.java:{rng.randint(40, 300)})",
        f"\tat {a.noise.package}.{cls}.run({cls}.java:{rng.randint(40, 300)})",
        "\tat java.base/java.lang.Thread.run(Thread.java:829)"))
    return lines


def _reprocessing_findings(a: App, committed: dict[str, int], done: dict[str, int], failed: dict, starts: dict) -> None:
    for tp, p in done.items():
        a.ctx.inc.findings.append(Finding("reprocessing", a.group.group_id, "expected", [failed[tp], starts[tp]], topic=a.topic,
                                          partition=int(tp.rsplit("-", 1)[1]), offset_from=committed[tp], offset_to=p,
                                          exact=True))


def reprocessing(ctx: Ctx) -> None:
    """A member's commit fails while the group rebalances (a new member joins); the partition moves
    and the new owner resumes from the older commit."""
    rng, inc = ctx.rng, ctx.inc
    a = make_app(ctx, hosts=3, partitions=rng.randint(6, 12), auto_offset_reset="earliest")
    g, k = a.group, a.kafka
    A, B, C = a.members
    t = boot(a, [A, B])
    g.process(t, t + minutes(ctx, 2, 5), rate(ctx))
    t += minutes(ctx, 2, 5)
    new = g.range_assignment([A, B, C])
    moving = [tp for tp in B.owned if tp not in new[B]][:2]
    if not moving:
        raise AssertionError("reprocessing needs a partition that moves")
    committed = {tp: g.committed[tp] for tp in moving}
    a.app_line(B, t - 800, "INFO", f"polled {rng.randint(300, 500)} records from {', '.join(moving)}, processing")
    done = _in_flight(a, B, moving)
    a.start(C, t)
    t_reb = t + 2000
    B.log(t_reb + 400, k.rebalancing_heartbeat())
    failed = _fail_commits(a, B, t_reb + 900, done, "The group is rebalancing, so a rejoin is needed.")
    # The app commits after each batch only; its revocation callback commits nothing.
    r = g.rebalance(t_reb + 1000, [A, B, C], assignment=new, revoking=[A, B], heartbeat_told=[A], silent=(B,))
    t = r["end"]
    g.process(t, t + minutes(ctx, 2, 4), rate(ctx))
    _reprocessing_findings(a, committed, done, failed, r["starts"])
    inc.faults.append({"fault": "reprocessing", "member": B.label, "partitions": moving, "failed_commits": done,
                       "committed": committed})
    starts = r["starts"]
    inc.notes.append(lambda: (
        f"- `{g.group_id}`: `{C.label}` joins; while the group rebalances `{B.label}` tries to commit its processed batch "
        f"and fails ({', '.join(f'{tp} at {done[tp]} (line {failed[tp].line})' for tp in moving)}); its revocation "
        f"callback commits nothing; the partitions move and their new owners resume from the older commits "
        f"({', '.join(f'{tp} at {committed[tp]} (line {starts[tp].line})' for tp in moving)})."))


def _stalled_member_story(ctx: Ctx, kind: str) -> None:
    rng, inc = ctx.rng, ctx.inc
    overrides = {"auto_offset_reset": "earliest"}
    if kind == "poll_timeout":
        overrides["max_poll_interval_ms"] = 120000
    a = make_app(ctx, hosts=rng.randint(2, 3), partitions=rng.randint(4, 10), **overrides)
    g, k = a.group, a.kafka
    t = boot(a)
    g.process(t, t + minutes(ctx, 2, 5), rate(ctx))
    t += minutes(ctx, 2, 5)
    x = a.members[-1]
    others = [m for m in a.members if m is not x]
    moving = list(x.owned)
    committed = {tp: g.committed[tp] for tp in moving}
    old_member_id, old_gen = x.member_id, g.generation
    if kind == "poll_timeout":
        a.app_line(x, t, "INFO", f"fetched 500 records, enriching via {rng.choice(SERVICES)}")
        done = _in_flight(a, x, moving)
        t_out = t + 120_000 + rng.randint(5, 900)
        evidence = [x.log(t_out + i, msg) for i, msg in enumerate(k.poll_timeout(x.member_id, g.coordinator))][0]
        for msg in k.generation_reset("consumer pro-actively leaving the group"):
            x.log(t_out + 5, msg)
        t_reb = t_out + 200
    else:
        a.app_line(x, t, "INFO", f"fetched 500 records, writing to {rng.choice(STORES)}")
        done = _in_flight(a, x, moving)
        a.app_line(x, t + 50, "WARN", f"GC pause of {rng.randint(50, 90)} s observed (old gen full)")
        t_reb = t + int(a.settings["session.timeout.ms"]) + rng.randint(100, 900)
    r = g.rebalance(t_reb, others, heartbeat_told=others, assignment=g.range_assignment(others))
    t = r["end"] + rng.randint(20_000, 40_000)
    g.process(r["end"], t, rate(ctx))
    if kind == "session_timeout":
        evidence = x.log(t, k.heartbeat_unknown_member(old_gen, old_member_id, g.protocol))
        for msg in k.generation_reset("encountered UNKNOWN_MEMBER_ID from HEARTBEAT response"):
            x.log(t + 1, msg)
        t += 300
    else:
        a.app_line(x, t - 20, "INFO", f"batch of 500 records processed in {t - t_out + 120_000} ms")
    failed = _fail_commits(a, x, t + 5, done, "The coordinator is not aware of this member.")
    t += 40
    for i, msg in enumerate(k.lost(moving)):
        x.log(t + i, msg)
    x.owned = []
    x.new_member_id()
    r2 = g.rebalance(t + 30, a.members, heartbeat_told=others, revoking=others)
    g.process(r2["end"], r2["end"] + minutes(ctx, 1, 3), rate(ctx))
    _reprocessing_findings(a, committed, done, failed, r["starts"])
    inc.findings.append(Finding(kind, g.group_id, "delay", [evidence]))
    setting = "max.poll.interval.ms" if kind == "poll_timeout" else "session.timeout.ms"
    inc.faults.append({"fault": kind, "member": x.label, "partitions": moving, setting: int(a.settings[setting]),
                       "failed_commits": done, "committed": committed})
    what = ("exceeds `max.poll.interval.ms = 120000` (poll-timeout line %d)" if kind == "poll_timeout"
            else "stalls in a GC pause; the broker expires its session (heartbeat UNKNOWN_MEMBER_ID line %d)")
    inc.notes.append(lambda: (
        f"- `{g.group_id}`: `{x.label}` {what % evidence.line}; the others rebalance and take {', '.join(moving)} from the older "
        f"commits; its commit of the processed offsets then fails ({', '.join(f'{tp} at {done[tp]}' for tp in moving)}): "
        f"[C, P) of each is processed twice; it rejoins."))


def poll_timeout(ctx: Ctx) -> None:
    _stalled_member_story(ctx, "poll_timeout")


def session_timeout(ctx: Ctx) -> None:
    _stalled_member_story(ctx, "session_timeout")


def rebalance_storm(ctx: Ctx) -> None:
    """A crash-looping member: starts, joins, fails a startup check, leaves cleanly; again and again."""
    rng, inc = ctx.rng, ctx.inc
    a = make_app(ctx, hosts=3, partitions=rng.randint(6, 12), gz_hosts=(2,), auto_offset_reset="earliest")
    g = a.group
    stable, crashy = a.members[:2], a.members[2]
    t = boot(a, stable)
    g.process(t, t + minutes(ctx, 3, 6), rate(ctx))
    t += minutes(ctx, 3, 6)
    first_gen = g.generation + 1
    cycles = rng.randint(6, 7)
    for _ in range(cycles):
        crashy.new_member_id()
        a.start(crashy, t)
        r = g.rebalance(t + 2500, [*stable, crashy], heartbeat_told=stable, revoking=stable)
        t = r["end"]
        g.process(t, t + 12_000, rate(ctx))
        t += 12_000
        a.app_line(crashy, t, "ERROR", "startup check failed: schema version mismatch, exiting", (
            f"java.lang.IllegalStateException: expected schema v{rng.randint(3, 9)} but registry has a newer version",
            f"\tat {a.noise.package}.{a.noise.classes[0]}.checkSchema({a.noise.classes[0]}.java:{rng.randint(40, 200)})",
            f"\tat {a.noise.package}.Main.main(Main.java:{rng.randint(20, 80)})"))
        t = a.leave(crashy, t + 50)
        r = g.rebalance(t + 150, stable, heartbeat_told=stable)
        t = r["end"] + rng.randint(8_000, 20_000)
        g.process(r["end"], t, rate(ctx))
    g.process(t, t + minutes(ctx, 2, 4), rate(ctx))
    last_gen = g.generation
    inc.faults.append({"fault": "rebalance_storm", "member": crashy.label, "restarts": cycles,
                       "generations": [first_gen, last_gen]})
    inc.findings.append(Finding("rebalance_storm", g.group_id, "delay", []))
    inc.notes.append(
        f"- `{g.group_id}`: `{crashy.label}` crash-loops {cycles} times (join, fail a startup check, leave cleanly "
        f"after committing): generations {first_gen}-{last_gen}, {last_gen - first_gen + 1} rebalances in a few minutes; "
        f"nothing is lost or reprocessed.")
