"""Kafka Streams incidents.

- ``skipped_restore`` (seed 000, KAFKA-7672, Streams 1.1-2.1 under EOS): a task reassigned to a
  thread that once restored its changelog finds no checkpoint, resets the changelog to 0 and
  goes RUNNING without restoring: the store's state [0, end) is lost.
- ``redundant_restore`` (seed 000, the same-instance checkpoint race): a task moves between two
  threads of one instance; the new thread reads the checkpoint before the old one wrote it and
  restores the whole changelog again.
- ``fenced``: under exactly-once a thread that missed a rebalance is fenced (TaskMigrated).
- ``healthy_streams``: a rolling restart with complete restores: nothing to find.
"""

from __future__ import annotations

from .context import Ctx
from .streams_app import StreamsApp, Thread, coop_round, coop_shutdown
from .world import Client, Finding


def _names(ctx: Ctx, default_app: str) -> tuple[str, str, str, str]:
    app_id = ctx.name("app_id", f"{default_app}-{ctx.tag}")
    source = ctx.name("source", f"{app_id}-input")
    repartition = ctx.name("repartition", f"{app_id}-store1-repartition")
    return app_id, source, repartition, ctx.name("store", "store1")


def skipped_restore(ctx: Ctx) -> None:
    """KAFKA-7672 as reported: generation 323, StreamThread-1 gives up 0_5 and gets 1_1; no checkpoint,
    changelog reset to 0, RUNNING without restoring."""
    rng, inc = ctx.rng, ctx.inc
    app_id, source, repartition, store = _names(ctx, ctx.app[0])
    app = StreamsApp(ctx, app_id, source, 6, repartition, store, 2, eos=True)
    k, g = app.kafka, app.group
    tight = k.v.within("2.0-2.1")
    h1 = inc.host(ctx.name("host1", f"{app_id.lower()}-1"), ctx.layout)
    h2 = inc.host(ctx.name("host2", f"{app_id.lower()}-3"), ctx.layout, ctx.fixed.get("host2_file", "app.log"))
    (a1,) = app.add_instance(h1, 1, tight)
    (b1,) = app.add_instance(h2, 1, tight)
    g.generation = ctx.fixed.get("generation", rng.randint(30, 400)) - 2
    t = ctx.t0
    app.start(h1.dir, t)
    app.start(h2.dir, t + rng.randint(200, 900))
    app.eager_boot(t + 1200, {a1: ["0_5"], b1: ["1_1"]})
    t += minutes_ms(ctx, 6, 8)
    t_down = app.shutdown(h2.dir, t - 8000)
    lost_task = "1_1"
    changelog = app.changelog_of(lost_task)
    end = app.changelog_end[lost_task]
    evidence: dict = {}

    def hook(ts: int, new: list[str]) -> int:
        ts += rng.randint(300, 900)
        evidence["missing"] = a1.tlog(ts, k.checkpoint_missing_eos(lost_task, store, changelog), tight=True)
        evidence["reset"] = a1.restore.log(ts, k.reset(changelog, 0))
        return ts

    app.eager_round(t_down + 4000, [a1], {a1: [lost_task]}, hooks={a1: hook}, join_wait=42_000)
    running = [r for r in h1.records if r.msg.endswith("State transition from PARTITIONS_ASSIGNED to RUNNING")][-1]
    inst = app.instances[h1.dir]
    inst["client"].app(
        running.ts + 400,
        "ERROR",
        f"{app.noise.package}.{app.noise.classes[0]}",
        "lookup failed for tenant 77: no state for key tenant-77",
        (
            f"{app.noise.package}.TenantNotFound: tenant 77",
            f"\tat {app.noise.package}.Tenants.get(Tenants.java:52)",
            f"\tat {app.noise.package}.{app.noise.classes[0]}.process({app.noise.classes[0]}.java:140)",
            "\tat org.apache.kafka.streams.processor.internals.ProcessorNode.process(ProcessorNode.java:115)",
        ),
    )
    inc.dumps[f"get-offsets-{app.changelog}.txt"] = "".join(f"{app.changelog}:{p}:{app.changelog_end[f'1_{p}']}\n" for p in range(2))
    inc.faults.append(
        {
            "fault": "skipped_restore",
            "member": f"{h1.dir}/{a1.consumer.client_id}",
            "task": lost_task,
            "changelog": changelog,
            "generation": g.generation,
            "changelog_end_offset": end,
        }
    )
    inc.findings.append(
        Finding(
            "skipped_restore",
            app_id,
            "loss",
            [evidence["missing"], evidence["reset"], running],
            topic=app.changelog,
            partition=1,
            task=lost_task,
            offset_from=0,
            offset_to=end,
            exact=True,
        )
    )
    inc.findings.append(Finding("risky_config", app_id, "expected", [app.config_lines[0]], classification="processing.guarantee"))
    inc.notes.append(
        lambda: (
            f"- `{app_id}` (Kafka Streams {ctx.version}, `processing.guarantee = exactly_once`): `{h2.dir}` owned task "
            f"{lost_task} and shuts down cleanly; at generation {g.generation} `{a1.name}` on `{h1.dir}` gives up task 0_5 "
            f"and gets {lost_task}; it finds no checkpoint (line {evidence['missing'].line}), its restore consumer resets "
            f"`{changelog}` to offset 0 (line {evidence['reset'].line}) and the thread goes RUNNING (line {running.line}) "
            f"without restoring: the {end} records of the changelog (end offset from `offsets/get-offsets-{app.changelog}.txt`) "
            f"are missing from the store."
        )
    )


def minutes_ms(ctx: Ctx, low: float, high: float) -> int:
    return int(ctx.rng.uniform(low, high) * 60_000 * ctx.scale)


def redundant_restore(ctx: Ctx) -> None:
    """The same-instance checkpoint race: task moves StreamThread-1 -> StreamThread-2 of one instance;
    the new thread finds no checkpoint and restores the changelog from 0 again."""
    rng, inc = ctx.rng, ctx.inc
    app_id, source, repartition, store = _names(ctx, ctx.app[0])
    app = StreamsApp(ctx, app_id, source, 4, repartition, store, 4, eos=True)
    k = app.kafka
    tight = k.v.within("2.0-2.1")
    h1 = inc.host(ctx.name("host1", f"{app_id.lower()}-1"), ctx.layout)
    h2 = inc.host(ctx.name("host2", f"{app_id.lower()}-2"), ctx.layout)
    t1, t2 = app.add_instance(h1, 2, tight)
    t = ctx.t0
    app.start(h1.dir, t)
    first = {t1: ["0_0", "0_2", "1_0", "1_2"], t2: ["0_1", "0_3", "1_1", "1_3"]}

    def catch_up(th):
        def hook(ts, new):
            for task in [x for x in new if x.startswith("1_")]:
                cl = app.changelog_of(task)
                endo = app.changelog_end[task]
                start = endo - rng.randint(0, 40)
                th.restore.log(ts + 5, k.reset(cl, start))
                th.tlog(ts + 6, k.restoring_partition(cl, start, endo))
                if k.v.below("1.2"):
                    th.tlog(ts + 30, k.completed_restoring(cl, start, endo))
                ts += 40
            return ts

        return hook

    app.eager_boot(t + 1500, first, hooks={t1: catch_up(t1), t2: catch_up(t2)})
    t += minutes_ms(ctx, 5, 8)
    (n1,) = app.add_instance(h2, 1, tight)
    app.start(h2.dir, t)
    moved = "1_2"
    changelog = app.changelog_of(moved)
    end = app.changelog_end[moved]
    evidence: dict = {}

    def hook_t2(ts: int, new: list[str]) -> int:
        ts += rng.randint(200, 500)
        evidence["missing"] = t2.tlog(ts, k.checkpoint_missing_eos(moved, store, changelog), tight=True)
        t2.tlog(ts + 1, k.reinitializing(moved))
        t2.restore.log(ts + 2, k.reset(changelog, 0))
        t2.tlog(ts + 3, k.to_restoring(moved))
        evidence["start"] = t2.tlog(ts + 5, k.restoring_partition(changelog, 0, end))
        ts += 5 + end // 40
        evidence["done"] = t2.tlog(ts, k.completed_restoring(changelog, 0, end))
        t2.tlog(ts + 2, k.to_running(moved))
        return ts + 3

    assignment = {t1: ["0_0", "1_0"], t2: ["0_1", "1_1", "1_2", "1_3"], n1: ["0_2", "0_3"]}
    # n1 joins first (new instance): its lines only show the join, then everyone rebalances.
    out = app.eager_round(t + 2500, [t1, t2, n1], assignment, hooks={t2: hook_t2}, join_wait=350)
    closed = out["revocations"][t1]
    inc.faults.append(
        {
            "fault": "redundant_restore",
            "member": f"{h1.dir}/{t2.consumer.client_id}",
            "task": moved,
            "previous_thread": t1.name,
            "changelog": changelog,
            "records_restored": end,
        }
    )
    inc.findings.append(
        Finding(
            "redundant_restore",
            app_id,
            "delay",
            [closed, evidence["missing"], evidence["start"], evidence["done"]],
            topic=app.changelog,
            partition=int(moved.split("_")[1]),
            task=moved,
            offset_from=0,
            offset_to=end,
            exact=True,
        )
    )
    if k.v.within("1.1-2.1"):
        inc.findings.append(Finding("risky_config", app_id, "expected", [app.config_lines[0]], classification="processing.guarantee"))
    inc.notes.append(
        lambda: (
            f"- `{app_id}` (Kafka Streams {ctx.version}, exactly-once, 2 threads on `{h1.dir}`): `{h2.dir}` joins; in the "
            f"rebalance task {moved} moves from `{t1.name}` (suspended, line {closed.line}) to `{t2.name}` on the same host; "
            f"the new thread finds no checkpoint {evidence['missing'].ts - closed.ts} ms later (line "
            f"{evidence['missing'].line}) and restores `{changelog}` from 0 to {end} (lines {evidence['start'].line}-"
            f"{evidence['done'].line}): a needless full restore (delay), nothing lost."
        )
    )


def healthy_streams(ctx: Ctx) -> None:
    """A rolling restart of a 2.6+ Streams app with complete restores: nothing to find."""
    rng, inc = ctx.rng, ctx.inc
    app_id, source, repartition, store = _names(ctx, ctx.app[0])
    app = StreamsApp(ctx, app_id, source, 4, repartition, store, 4, eos=False)
    k = app.kafka
    h1 = inc.host(ctx.name("host1", f"{app_id.lower()}-a"), ctx.layout)
    h2 = inc.host(ctx.name("host2", f"{app_id.lower()}-b"), ctx.layout)
    (a,) = app.add_instance(h1, 1)
    (b,) = app.add_instance(h2, 1)
    checkpoints: dict[tuple, int] = {}
    restores: list = []

    def restore(th: Thread, ts: int, task: str) -> int:
        cl, end = app.changelog_of(task), app.changelog_end[task]
        start = checkpoints.get((th.host.dir, task))
        if start is None:
            th.task_log(ts, task, k.checkpoint_not_found(store, cl))
            th.tlog(ts + 3, k.start_restoring(cl, None, end))
            start = 0
        else:
            th.task_log(ts, task, k.checkpoint_loaded(store, start, cl))
            th.tlog(ts + 3, k.start_restoring(cl, start, end))
        ts += 3 + max(5, (end - start) // 50)
        th.tlog(ts, k.finished_restoring(cl, store, end - start))
        restores.append((th.host.dir, task, start, end))
        return ts + 1

    t = ctx.t0
    app.start(h1.dir, t, consumer_block=True)
    app.start(h2.dir, t + rng.randint(300, 900), consumer_block=True)
    for task, end in app.changelog_end.items():
        owner = h1.dir if task in ("1_0", "1_1") else h2.dir
        checkpoints[(owner, task)] = end - rng.randint(0, 30)
    t = coop_round(
        app, t + 2000, [a, b], {a: ["0_0", "0_1", "1_0", "1_1"], b: ["0_2", "0_3", "1_2", "1_3"]}, restore=restore, join_wait=3000
    )
    t += minutes_ms(ctx, 4, 7)
    for task in app.changelog_end:
        app.changelog_end[task] += rng.randint(100, 2000)
    t = coop_shutdown(app, h2.dir, t)
    for task in ("1_2", "1_3"):
        checkpoints[(h2.dir, task)] = app.changelog_end[task]
    t = coop_round(app, t + 300, [a], {a: list(app.tasks)}, told=[a], restore=restore)
    t += minutes_ms(ctx, 1, 2)
    for task in app.changelog_end:
        app.changelog_end[task] += rng.randint(100, 900)
    b.consumer.new_member_id()
    app.start(h2.dir, t, consumer_block=True)
    keep = ["0_0", "0_1", "1_0", "1_1"]
    t = coop_round(app, t + 2500, [a, b], {a: keep, b: []}, told=[a], restore=restore)
    t = coop_round(app, t + 200, [a, b], {a: keep, b: ["0_2", "0_3", "1_2", "1_3"]}, restore=restore)
    for host in (h1, h2):
        Client(host, k, "").app(
            t + minutes_ms(ctx, 2, 3), "INFO", f"{app.noise.package}.{app.noise.classes[0]}", "all stores serving, lag 0"
        )
    inc.notes.append(
        f"- `{app_id}` (Kafka Streams {ctx.version}, at-least-once, `auto.offset.reset = earliest`): `{h2.dir}` restarts; "
        f"`{h1.dir}` takes its tasks and restores their changelogs completely, then gives them back (cooperative "
        f"rebalances, generations {app.group.generation - 3}-{app.group.generation}); every restore finishes: no finding."
    )


def fenced(ctx: Ctx) -> None:
    """Exactly-once Streams (2.6+): a thread stalls, misses a rebalance and is fenced when it resumes."""
    rng, inc = ctx.rng, ctx.inc
    app_id, source, repartition, store = _names(ctx, ctx.app[0])
    app = StreamsApp(ctx, app_id, source, 4, repartition, store, 0, eos=True)
    k = app.kafka
    hosts = [inc.host(ctx.name(f"host{i}", f"{app_id.lower()}-{i}"), ctx.layout) for i in (1, 2, 3)]
    a, b, c = (app.add_instance(h, 1)[0] for h in hosts)
    t = ctx.t0
    app.start(hosts[0].dir, t, consumer_block=True)
    app.start(hosts[1].dir, t + 400, consumer_block=True)
    t = coop_round(app, t + 2000, [a, b], {a: ["0_0", "0_1"], b: ["0_2", "0_3"]}, join_wait=3000)
    t += minutes_ms(ctx, 3, 6)
    old_gen, old_id = app.group.generation, b.consumer.member_id
    b.log.app(t, "WARN", f"{app.noise.package}.{app.noise.classes[0]}", f"GC pause of {rng.randint(320, 400)} s observed (old gen full)")
    app.start(hosts[2].dir, t + 1000, consumer_block=True)
    t = coop_round(app, t + 3000, [a, c], {a: ["0_0", "0_1"], c: ["0_2", "0_3"]}, told=[a], join_wait=300_000)
    t += 60_000
    b.consumer.log(t, k.commit_failed_generation(old_gen, old_id, "stream", "The coordinator is not aware of this member."))
    line = b.tlog(t + 3, k.thread_fenced())
    b.tlog(t + 4, k.partitions_lost(app.task_partitions(b.tasks), b.tasks))
    for task in b.tasks:
        b.task_log(t + 6, task, k.closed_clean())
    for i, msg in enumerate(k.lost(app.task_partitions(b.tasks))):
        b.consumer.log(t + 8 + i, msg)
    b.tasks = []
    b.consumer.new_member_id()
    t = coop_round(app, t + 50, [a, b, c], {a: ["0_0"], b: [], c: ["0_2", "0_3"]}, told=[a, c])
    t = coop_round(app, t + 200, [a, b, c], {a: ["0_0"], b: ["0_1"], c: ["0_2", "0_3"]})
    inc.faults.append(
        {"fault": "fenced", "member": f"{hosts[1].dir}/{b.consumer.client_id}", "generation": old_gen, "kind": "task migrated"}
    )
    inc.findings.append(Finding("fenced", app_id, "delay", [line], classification="task migrated"))
    inc.notes.append(
        lambda: (
            f"- `{app_id}` (Kafka Streams {ctx.version}, `exactly_once_v2`): `{b.name}` on `{hosts[1].dir}` stalls in a GC "
            f"pause; `{hosts[2].dir}` joins and the group moves on to generation {old_gen + 1} without it; when it resumes "
            f"its commit fails and it is fenced (line {line.line}), gives its tasks up as lost and rejoins. Exactly-once: "
            f"nothing lost or duplicated."
        )
    )
