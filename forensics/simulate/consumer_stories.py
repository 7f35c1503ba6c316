"""Consumer-group incidents of offsets and settings (classic protocol, eager assignment): each
function plays one fault on its own group and records the findings it implies.

- ``reset_to_latest_gap`` (seed 001): a partition added while ``auto.offset.reset=latest``;
  the consumer finds no committed offset and starts at the log end: [log start, N) never read.
- ``out_of_range_reset``: retention deleted the segment under a lagging consumer's position X;
  ``earliest`` resets it to the new log start N > X: [X, N) never read.
- ``backward_commit`` (seed 003): a member that lost a partition commits it late, below the
  new owner's commit (a zombie commit).
- ``risky_config``: ``session.timeout.ms`` < 3 x ``heartbeat.interval.ms``.
- ``healthy``: a rolling restart with commits in the revocation callback: nothing to find.
"""

from __future__ import annotations

from .consumer_app import boot, make_app, minutes, rate
from .context import SERVICES, TOPIC_WORDS, Ctx
from .world import Client, Finding


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
    a = make_app(
        ctx,
        hosts=ctx.rng.randint(2, 3),
        partitions=ctx.rng.randint(4, 10),
        auto_offset_reset="earliest",
        session_timeout_ms=6000,
        heartbeat_interval_ms=3000,
    )
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
    ctx.inc.faults.append(
        {
            "fault": "risky_config",
            "group": g.group_id,
            "setting": "session.timeout.ms",
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 3000,
        }
    )
    ctx.inc.findings.append(Finding("risky_config", g.group_id, "expected", [a.config_lines[0]], classification="session.timeout.ms"))
    ctx.inc.notes.append(
        lambda: (
            f"- `{g.group_id}` ({len(a.members)} members): `session.timeout.ms = 6000` with `heartbeat.interval.ms = 3000` "
            f"in every `ConsumerConfig values:` block (first at `{a.config_lines[0].line}`); the rolling restart of "
            f"`{m.label}` rebalances cleanly."
        )
    )


def reset_to_latest_gap(ctx: Ctx) -> None:
    """Seed 001: partition added under auto.offset.reset=latest; the producer writes to it first."""
    rng, inc = ctx.rng, ctx.inc
    topic = ctx.name("topic", f"{ctx.app[0].split('-')[0]}-{rng.choice(TOPIC_WORDS)}-{ctx.tag}")
    a = make_app(ctx, hosts=1, partitions=1, topic=topic, auto_offset_reset="latest", metadata_max_age_ms=300000)
    g, k = a.group, a.kafka
    m = a.members[0]
    producer_host = inc.host(ctx.name("producer_host", f"{ctx.app[0]}-producer-{ctx.tag}"), ctx.layout)
    producer = Client(producer_host, k, "[Producer clientId=producer-1] ")
    producer.plain(
        ctx.t0 - 2000,
        k.config(
            "Producer",
            {
                "acks": "all" if k.v.at_least("3.0") else 1,
                "bootstrap.servers": a.settings["bootstrap.servers"],
                "client.id": "producer-1",
                "enable.idempotence": "true" if k.v.at_least("3.0") else "false",
                "metadata.max.age.ms": 300000,
            },
        ),
    )
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
            f"CreateTime: {created} size: 80 magic: 2 compresscodec: NONE crc: {rng.getrandbits(31)} isvalid: true"
        )
    inc.dumps[f"dump-log-{new_tp}.txt"] = "\n".join(lines) + "\n"
    inc.faults.append(
        {"fault": "reset_to_latest_gap", "member": m.label, "topic": topic, "partition": 1, "records_before_consumer_saw_partition": gap}
    )
    inc.findings.append(
        Finding(
            "reset_to_latest_gap",
            g.group_id,
            "loss",
            [no_committed, *seek, reset],
            topic=topic,
            partition=1,
            offset_from=0,
            offset_to=gap,
            exact=True,
        )
    )
    inc.findings.append(
        Finding("risky_config", g.group_id, "expected", [a.config_lines[0], no_committed], topic=topic, classification="auto.offset.reset")
    )
    inc.notes.append(
        f"- `{g.group_id}`: `{topic}` grows from 1 to 2 partitions; the producer (`{producer_host.dir}`) writes "
        f"`{new_tp}` offsets 0-{gap - 1} before the consumer `{m.label}` refreshes its metadata; with "
        f"`auto.offset.reset = latest` it finds no committed offset and starts at {gap}: offsets [0, {gap}) are never "
        f"consumed. Dump `offsets/dump-log-{new_tp}.txt` shows the first batch at baseOffset 0."
    )


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
    inc.faults.append(
        {
            "fault": "out_of_range_reset",
            "member": m.label,
            "topic": a.topic,
            "partition": int(tp.rsplit("-", 1)[1]),
            "position": x,
            "log_start_after_retention": n,
        }
    )
    inc.findings.append(
        Finding(
            "out_of_range_reset",
            g.group_id,
            "loss",
            [oor, reset],
            topic=a.topic,
            partition=int(tp.rsplit("-", 1)[1]),
            offset_from=x,
            offset_to=n,
            exact=True,
        )
    )
    inc.notes.append(
        lambda: (
            f"- `{g.group_id}`: `{m.label}` pauses on `{tp}` at offset {x}; retention deletes the segment meanwhile (log start "
            f"{n}); its next fetch is out of range (line {oor.line}) and `auto.offset.reset = earliest` resets it to {n} "
            f"(line {reset.line}): [{x}, {n}) never consumed."
        )
    )


def backward_commit(ctx: Ctx) -> None:
    """Seed 003: c1 loses p1 to c2, c2 commits 7, then c1's late commit 5 moves the committed offset back.
    c2 resumed from c1's last commit (4), so [4, 7) is duplicated: [4, 5) by both, [5, 7) replayed."""
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
    t, resumed = r["end"], r["starts"][p1]  # c2 resumes p1 from base: c1's worker still holds [base, late)
    g.end[p1] = ahead + rng.randint(0, 20)
    ahead_line = c2.log(t + 4000, k.committed(ahead, p1))
    g.committed[p1] = ahead
    a.app_line(c1, t + 4100, "INFO", f"worker pool drained: {p1} up to offset {late - 1} done")
    zombie = c1.log(t + 4180, k.committed(late, p1))
    g.committed[p1] = late
    c2.position[p1] = ahead
    t += 5000
    g.process(t, t + minutes(ctx, 1, 3), rate(ctx))
    inc.faults.append(
        {
            "fault": "backward_commit",
            "member": c1.label,
            "topic": a.topic,
            "partition": 1,
            "late_commit": late,
            "previous_commit": ahead,
            "new_owner": c2.label,
        }
    )
    inc.findings.append(
        Finding(
            "backward_commit",
            g.group_id,
            "duplication",
            [resumed, ahead_line, zombie],
            topic=a.topic,
            partition=1,
            offset_from=base,
            offset_to=ahead,
            classification="zombie",
            exact=True,
        )
    )
    inc.notes.append(
        lambda: (
            f"- `{g.group_id}`: `{c2.label}` joins and takes `{p1}` from `{c1.label}`; it commits {ahead} (line "
            f"{ahead_line.line}), then `{c1.label}`, no longer the owner, commits its late offset {late} (line "
            f"{zombie.line}): the committed offset goes back by {ahead - late}. c2 had resumed from {base} (line "
            f"{resumed.line}), so [{base}, {late}) was processed by both, and [{late}, {ahead}) is processed again."
        )
    )
