"""A Kafka Streams application: instances (hosts) with StreamThreads, each with its main and
restore consumers, tasks of two sub-topologies; and the rebalance and shutdown of a 2.6+ app
(cooperative rebalancing, task lifecycle lines)."""

from __future__ import annotations

from .context import SERVICES, STORES, Ctx, brokers, coordinator, domain
from .kafka import Kafka
from .logfile import Record
from .noise import Noise
from .world import Client, Group, Member, det_uuid

STREAMS_APPS = [
    ("SessionAggregator", "com.acme.sessions", ["SessionProcessor", "SessionStore", "Punctuator"]),
    ("LedgerBalances", "io.ledger.streams", ["BalanceAggregator", "LedgerTopology", "Metrics"]),
    ("ClickEnricher", "ai.web.enrich", ["EnrichProcessor", "ProfileLookup", "TopologyBuilder"]),
    ("StockLevels", "net.retail.stock", ["StockAggregator", "ReorderRules", "Topology"]),
    ("FraudWindows", "com.riskops.windows", ["WindowedCounter", "AlertSink", "Topology"]),
]


class Thread:
    """One StreamThread: its main consumer (the group member), restore consumer and thread logger."""

    def __init__(self, app: StreamsApp, host, n: int, tight: bool = False):
        k = app.kafka
        self.app, self.host = app, host
        self.name = f"{app.client_prefix}-StreamThread-{n}"
        self.consumer = Member(host, k, f"{self.name}-consumer", app.app_id, app.rng, thread=self.name)
        self.restore = Client(host, k, f"[Consumer clientId={self.name}-restore-consumer, groupId=]" + ("" if tight else " "), self.name)
        self.log = Client(host, k, f"stream-thread [{self.name}] ", self.name)
        self.tight = tight
        self.tasks: list[str] = []

    def tlog(self, ts: int, msg, tight: bool = False) -> Record:
        """A thread line; 2.0/2.1 print some without the space after the prefix."""
        return self.log.log(ts, msg, prefix=f"stream-thread [{self.name}]" + ("" if (tight and self.tight) else " "))

    def task_log(self, ts: int, task: str, msg) -> Record:
        return self.log.log(ts, msg, prefix=f"stream-thread [{self.name}] task [{task}] ")


class StreamsApp:
    """A Kafka Streams application: instances (hosts) with threads, tasks of two sub-topologies."""

    def __init__(self, ctx: Ctx, app_id: str, source: str, source_parts: int, repartition: str, store: str, stateful_parts: int, eos: bool):
        self.ctx, self.rng, self.app_id = ctx, ctx.rng, app_id
        self.kafka = Kafka(ctx.version)
        self.source, self.repartition, self.store = source, repartition, store
        self.changelog = f"{app_id}-{store}-changelog"
        self.eos = eos
        self.client_prefix = ctx.fixed.get("client_prefix", app_id)
        self.tasks = [f"0_{p}" for p in range(source_parts)] + [f"1_{p}" for p in range(stateful_parts)]
        parts = [f"{source}-{p}" for p in range(source_parts)] + [f"{repartition}-{p}" for p in range(stateful_parts)]
        self.group = Group(self.kafka, app_id, parts, coordinator(ctx), brokers(ctx), ctx.rng.randint(5, 400), ctx.rng, protocol="stream")
        self.changelog_end = {t: ctx.rng.randint(5_000, 60_000) * ctx.scale for t in self.tasks if t.startswith("1_")}
        self.instances: dict[str, dict] = {}
        self.config_lines: list[Record] = []
        _, package, classes = ctx.app
        self.noise = Noise(package, classes, SERVICES, STORES)

    def partition_of(self, task: str) -> str:
        sub, p = task.split("_")
        return f"{self.source if sub == '0' else self.repartition}-{p}"

    def changelog_of(self, task: str) -> str:
        return f"{self.changelog}-{task.split('_')[1]}"

    def add_instance(self, host, threads: int, tight: bool = False) -> list[Thread]:
        ts = [Thread(self, host, n + 1, tight) for n in range(threads)]
        self.instances[host.dir] = {
            "host": host,
            "threads": ts,
            "client": Client(host, self.kafka, f"stream-client [{self.client_prefix}-{det_uuid(self.rng)}] "),
        }
        self.ctx.inc.add_noise(host, self.noise, 120, self.rng, thread=f"{self.client_prefix}-StreamThread-1")
        return ts

    def settings(self, threads: int) -> dict:
        k = self.kafka
        guarantee = ("exactly_once_v2" if k.v.at_least("3.0") else "exactly_once") if self.eos else "at_least_once"
        return {
            "application.id": self.app_id,
            "bootstrap.servers": "[" + ", ".join(f"kafka-{i}.{domain(self.ctx)}:9092" for i in (1, 2, 3)) + "]",
            "commit.interval.ms": 100 if self.eos else 30000,
            "num.standby.replicas": 0,
            "num.stream.threads": threads,
            "processing.guarantee": guarantee,
            "state.dir": "/var/lib/kafka-streams",
        }

    def start(self, host_dir: str, ts: int, consumer_block: bool = False) -> None:
        inst = self.instances[host_dir]
        k, threads = self.kafka, inst["threads"]
        block = Client(inst["host"], k, "").plain(ts, k.config("Streams", self.settings(len(threads))))
        self.config_lines.append(block)
        for msg in k.banner() + k.streams_version():
            Client(inst["host"], k, "").plain(ts + 5, msg)
        if consumer_block:
            for th in threads:
                block = th.consumer.plain(
                    ts + 20,
                    k.config(
                        "Consumer",
                        {
                            "auto.offset.reset": "earliest",
                            "client.id": th.consumer.client_id,
                            "enable.auto.commit": "false",
                            "group.id": self.app_id,
                            "heartbeat.interval.ms": 3000,
                            "isolation.level": "read_committed" if self.eos else "read_uncommitted",
                            "max.poll.interval.ms": 300000,
                            "session.timeout.ms": 45000 if k.v.at_least("3.0") else 10000,
                        },
                    ),
                )
                self.config_lines.append(block)
        inst["client"].log(ts + 30, k.client_state("CREATED", "REBALANCING"))
        for i, th in enumerate(threads):
            th.tlog(ts + 32 + i, k.thread_state("CREATED", "STARTING" if k.v.at_least("2.6") else "RUNNING"))
            th.consumer.log(
                ts + 40 + i, k.subscribed([self.source, self.repartition]) if k.v.at_least("2.6") else k.discovered(self.group.coordinator)
            )
            if k.v.at_least("2.6"):
                th.consumer.log(ts + 45 + i, k.discovered(self.group.coordinator))

    def all_threads(self) -> list[Thread]:
        return [th for inst in self.instances.values() for th in inst["threads"]]

    def task_partitions(self, tasks: list[str]) -> list[str]:
        return [self.partition_of(t) for t in tasks]

    # -- eager rebalance of Streams 1.x/2.0 (INFO lines as in the KAFKA-7672 report) ------------
    def eager_round(self, t: int, threads: list[Thread], assignment: dict[Thread, list[str]], hooks=None, join_wait: int = 400) -> dict:
        """Every participating thread revokes all (suspending its tasks), rejoins, gets ``assignment``.
        ``hooks[thread](ts, new_tasks)`` logs what happens between assignment and RUNNING and returns the time."""
        k, g, rng = self.kafka, self.group, self.rng
        g.generation += 1
        gen = g.generation
        out: dict = {"revocations": {}}
        told = set()
        for i, th in enumerate(threads):
            ts = t + 2 * i
            c = th.consumer
            c.log(ts, k.revoked(self.task_partitions(th.tasks)))
            th.tlog(ts, k.thread_state("RUNNING", "PARTITIONS_REVOKED"))
            inst = self.instances[th.host.dir]
            if inst["client"] not in told:
                told.add(inst["client"])
                inst["client"].log(ts + 1, k.client_state("RUNNING", "REBALANCING"))
            out["revocations"][th] = th.tlog(ts + 3 + rng.randint(0, 9), k.revocation_took(rng.randint(3, 40), th.tasks))
            c.log(ts + 20, k.joining())
        t_join = t + join_wait + rng.randint(0, 60)
        for i, th in enumerate(threads):
            tj = t_join + i
            th.consumer.log(tj, k.joined(gen, th.consumer.member_id, "stream"))
            new = assignment[th]
            th.consumer.log(tj, k.assigned(self.task_partitions(new)))
            th.tlog(tj, k.thread_state("PARTITIONS_REVOKED", "PARTITIONS_ASSIGNED"))
            ts = tj
            if self.eos:
                for task in new:
                    th.tlog(ts, k.producer_for_task(task))
                    Client(
                        th.host, k, f"[Producer clientId={th.name}-{task}-producer, transactionalId={self.app_id}-{task}] ", th.name
                    ).log(ts + 40, k.producer_id(rng.randint(1000, 90000), rng.randint(0, 30)))
                    ts += 40
            ts += rng.randint(80, 400)
            th.tlog(ts, k.assignment_took(ts - tj, new, th.tasks))
            previous, th.tasks = th.tasks, list(new)
            if hooks and th in hooks:
                ts = hooks[th](ts, [x for x in new if x not in previous])
            th.tlog(ts + rng.randint(100, 300), k.thread_state("PARTITIONS_ASSIGNED", "RUNNING"), tight=True)
        for inst in self.instances.values():
            if inst["client"] in told:
                inst["client"].log(t_join + 1500, k.client_state("REBALANCING", "RUNNING"))
        return out

    def eager_boot(self, t: int, assignment: dict[Thread, list[str]], hooks=None) -> None:
        """First generation in the logs: threads (re)join with nothing to revoke."""
        k, g = self.kafka, self.group
        g.generation += 1
        for i, th in enumerate(assignment):
            th.consumer.log(t + i, k.revoked([]))
            th.tlog(t + i, k.thread_state("RUNNING", "PARTITIONS_REVOKED"))
            th.consumer.log(t + 2 + i, k.joining())
        t_join = t + 2500
        for i, th in enumerate(assignment):
            tj = t_join + i * 3
            th.consumer.log(tj, k.joined(g.generation, th.consumer.member_id, "stream"))
            th.consumer.log(tj, k.assigned(self.task_partitions(assignment[th])))
            th.tlog(tj, k.thread_state("PARTITIONS_REVOKED", "PARTITIONS_ASSIGNED"))
            ts = tj
            if self.eos:
                for task in assignment[th]:
                    th.tlog(ts, k.producer_for_task(task))
                    ts += 30
            ts += self.rng.randint(100, 400)
            th.tlog(ts, k.assignment_took(ts - tj, assignment[th], []))
            th.tasks = list(assignment[th])
            if hooks and th in hooks:
                ts = hooks[th](ts, th.tasks)
            th.tlog(ts + 200, k.thread_state("PARTITIONS_ASSIGNED", "RUNNING"), tight=True)
        for inst in self.instances.values():
            inst["client"].log(t_join + 1500, k.client_state("REBALANCING", "RUNNING"))

    def shutdown(self, host_dir: str, ts: int) -> int:
        """Clean shutdown of an instance (1.x/2.0 wording): threads leave the group and die."""
        k, inst = self.kafka, self.instances[host_dir]
        inst["client"].log(ts, k.client_state("RUNNING", "PENDING_SHUTDOWN"))
        for i, th in enumerate(inst["threads"]):
            th.tlog(ts + 5 + i, k.thread_state("RUNNING", "PENDING_SHUTDOWN"))
            th.consumer.log(ts + 3000 + i, k.leave(th.consumer.member_id, self.group.coordinator))
            th.tlog(ts + 3600 + i, k.thread_state("PENDING_SHUTDOWN", "DEAD"))
            th.tasks = []
        inst["client"].log(ts + 3700, k.client_state("PENDING_SHUTDOWN", "NOT_RUNNING"))
        return ts + 3700


def coop_round(
    app: StreamsApp, t: int, threads: list[Thread], assignment: dict[Thread, list[str]], told=(), restore=None, join_wait: int = 500
) -> int:
    """One rebalance of a 2.6+ Streams app: revoke only what moves away (suspend, close), join,
    sync, add the new partitions; new stateful tasks restore via ``restore(th, ts, task)``."""
    k, g, rng = app.kafka, app.group, app.rng
    g.generation += 1
    gen = g.generation
    for i, th in enumerate(threads):
        ts = t + 3 * i + rng.randint(0, 5)
        c = th.consumer
        if th in told:
            c.log(ts, k.rebalancing_heartbeat())
        gone = [x for x in th.tasks if x not in assignment[th]]
        if gone:
            c.log(ts + 2, k.revoked(app.task_partitions(gone)))
            for j, task in enumerate(gone):
                th.task_log(ts + 3 + j, task, k.suspended())
                th.task_log(ts + 4 + j, task, k.closed_clean())
            th.tasks = [x for x in th.tasks if x not in gone]
        c.log(ts + 10, k.joining())
    t_join = t + join_wait + rng.randint(0, 50)
    leader = sorted(threads, key=lambda th: th.consumer.member_id)[0]
    end = t_join
    for i, th in enumerate(threads):
        tj, c = t_join + i, th.consumer
        c.log(tj, k.joined(gen, c.member_id, "stream"))
        if th is leader:
            c.log(tj + 5, k.finished_assignment(gen, {x.consumer.member_id: app.task_partitions(assignment[x]) for x in threads}))
        for msg in k.synced(gen, c.member_id, "stream"):
            c.log(tj + 12, msg)
        added = [x for x in assignment[th] if x not in th.tasks]
        for msg in k.notifying(app.task_partitions(assignment[th])):
            c.log(tj + 13, msg)
        c.log(tj + 14, k.assigned(app.task_partitions(added)))
        if not added:
            continue
        for j, tp in enumerate(app.task_partitions(added)):
            g.committed.setdefault(tp, rng.randint(1000, 90000))
            c.log(tj + 16 + j, k.set_committed(tp, g.committed[tp], g.epoch, g.leader_of(tp)))
        th.tlog(tj + 20, k.thread_state("RUNNING", "PARTITIONS_ASSIGNED"))
        th.tlog(tj + 21, k.new_assignment(added))
        ts = tj + 30
        restored = []
        for task in added:
            th.task_log(ts, task, k.task_initialized())
            if task.startswith("1_") and restore:
                ts = restore(th, ts + 2, task)
                restored.append(task)
            th.task_log(ts + 3, task, k.restored_ready())
            ts += 5
        for msg in k.restoration_took(ts - tj, restored or added):
            th.tlog(ts, msg)
        th.tlog(ts + 2, k.thread_state("PARTITIONS_ASSIGNED", "RUNNING"))
        th.tasks = th.tasks + added
        end = max(end, ts + 2)
    return end + 100


def coop_shutdown(app: StreamsApp, host_dir: str, ts: int) -> int:
    k, inst = app.kafka, app.instances[host_dir]
    inst["client"].log(ts, k.client_state("RUNNING", "PENDING_SHUTDOWN"))
    for th in inst["threads"]:
        th.tlog(ts + 2, k.thread_state("RUNNING", "PENDING_SHUTDOWN"))
        for j, task in enumerate(th.tasks):
            th.task_log(ts + 10 + j, task, k.suspended())
            th.task_log(ts + 11 + j, task, k.closed_clean())
        th.consumer.log(ts + 40, k.revoked(app.task_partitions(th.tasks)))
        th.consumer.log(ts + 60, k.leave(th.consumer.member_id, app.group.coordinator, "the consumer is being closed"))
        th.tlog(ts + 80, k.thread_state("PENDING_SHUTDOWN", "DEAD"))
        th.tasks = []
    inst["client"].log(ts + 90, k.client_state("PENDING_SHUTDOWN", "NOT_RUNNING"))
    return ts + 90
