"""Consumer-group incidents of members dropping out (classic protocol, eager assignment): each
function plays one fault on its own group and records the findings it implies.

- ``reprocessing``: a commit fails because the group is rebalancing; the new owner resumes from
  the older commit C: [C, P) processed twice (at-least-once).
- ``poll_timeout`` / ``session_timeout``: a member exceeds ``max.poll.interval.ms`` / has its
  session expired; its commit fails and the new owners reprocess [C, P).
- ``rebalance_storm``: a crash-looping member joins and leaves again and again.
"""

from __future__ import annotations

from .consumer_app import App, boot, make_app, minutes, rate
from .context import SERVICES, STORES, Ctx
from .logfile import Record
from .world import Finding, Member


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
    a.app_line(
        m,
        ts + len(done) + 2,
        "ERROR",
        "commit of processed offsets failed, records will be redelivered",
        (
            "org.apache.kafka.clients.consumer.CommitFailedException: Commit cannot be completed since the group has already "
            "rebalanced and assigned the partitions to another member.",
            f"\tat {a.noise.package}.{cls}.commit({cls}.java:{rng.randint(40, 300)})",
            f"\tat {a.noise.package}.{cls}.run({cls}.java:{rng.randint(40, 300)})",
            "\tat java.base/java.lang.Thread.run(Thread.java:829)",
        ),
    )
    return lines


def _reprocessing_findings(a: App, committed: dict[str, int], done: dict[str, int], failed: dict, starts: dict) -> None:
    for tp, p in done.items():
        a.ctx.inc.findings.append(
            Finding(
                "reprocessing",
                a.group.group_id,
                "expected",
                [failed[tp], starts[tp]],
                topic=a.topic,
                partition=int(tp.rsplit("-", 1)[1]),
                offset_from=committed[tp],
                offset_to=p,
                exact=True,
            )
        )


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
    inc.faults.append({"fault": "reprocessing", "member": B.label, "partitions": moving, "failed_commits": done, "committed": committed})
    starts = r["starts"]
    inc.notes.append(
        lambda: (
            f"- `{g.group_id}`: `{C.label}` joins; while the group rebalances `{B.label}` tries to commit its processed batch "
            f"and fails ({', '.join(f'{tp} at {done[tp]} (line {failed[tp].line})' for tp in moving)}); its revocation "
            f"callback commits nothing; the partitions move and their new owners resume from the older commits "
            f"({', '.join(f'{tp} at {committed[tp]} (line {starts[tp].line})' for tp in moving)})."
        )
    )


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
    inc.faults.append(
        {
            "fault": kind,
            "member": x.label,
            "partitions": moving,
            setting: int(a.settings[setting]),
            "failed_commits": done,
            "committed": committed,
        }
    )
    what = (
        "exceeds `max.poll.interval.ms = 120000` (poll-timeout line %d)"
        if kind == "poll_timeout"
        else "stalls in a GC pause; the broker expires its session (heartbeat UNKNOWN_MEMBER_ID line %d)"
    )
    inc.notes.append(
        lambda: (
            f"- `{g.group_id}`: `{x.label}` {what % evidence.line}; the others rebalance and take {', '.join(moving)} from the older "
            f"commits; its commit of the processed offsets then fails ({', '.join(f'{tp} at {done[tp]}' for tp in moving)}): "
            f"[C, P) of each is processed twice; it rejoins."
        )
    )


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
        a.app_line(
            crashy,
            t,
            "ERROR",
            "startup check failed: schema version mismatch, exiting",
            (
                f"java.lang.IllegalStateException: expected schema v{rng.randint(3, 9)} but registry has a newer version",
                f"\tat {a.noise.package}.{a.noise.classes[0]}.checkSchema({a.noise.classes[0]}.java:{rng.randint(40, 200)})",
                f"\tat {a.noise.package}.Main.main(Main.java:{rng.randint(20, 80)})",
            ),
        )
        t = a.leave(crashy, t + 50)
        r = g.rebalance(t + 150, stable, heartbeat_told=stable)
        t = r["end"] + rng.randint(8_000, 20_000)
        g.process(r["end"], t, rate(ctx))
    g.process(t, t + minutes(ctx, 2, 4), rate(ctx))
    last_gen = g.generation
    inc.faults.append({"fault": "rebalance_storm", "member": crashy.label, "restarts": cycles, "generations": [first_gen, last_gen]})
    inc.findings.append(Finding("rebalance_storm", g.group_id, "delay", []))
    inc.notes.append(
        f"- `{g.group_id}`: `{crashy.label}` crash-loops {cycles} times (join, fail a startup check, leave cleanly "
        f"after committing): generations {first_gen}-{last_gen}, {last_gen - first_gen + 1} rebalances in a few minutes; "
        f"nothing is lost or reprocessed."
    )
