"""Zombies and churn with the Java clients: two transactional producers sharing one
`transactional.id` (the older one fenced), a commit landing after its member lost the
partition (a worker's late commitAsync; a standalone assign()+commitSync), a rebalance storm,
and a scale-in control.
"""

from __future__ import annotations

import json
import time

from .. import javaclients, truth
from . import scenario
from .common import Lab, ranges_as_findings
from .java_consumer import CLIENT, DAMAGE, _partition_moved_on, _pause, _settle, _start

OUTPUT = "orders-out"
FEW_FETCHES = dict(prop_fetch_min_bytes=100000, prop_fetch_max_wait_ms=1000)
"""A fetch answers once a second: fewer, larger batches, so fewer commits in the dumps."""


def _attempted(lab: Lab) -> set[tuple]:
    seen = set()
    for path in (lab.run_dir / "journal").glob("attempts-*.jsonl"):
        seen.update((r["topic"], r["partition"], r["offset"]) for r in truth.read_journal(path))
    return seen


def _wait_attempted(lab: Lab, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not set(truth.produced(lab.run_dir)) <= _attempted(lab):
        if time.monotonic() > deadline:
            raise TimeoutError(f"acked records not attempted within {timeout:.0f} s")
        time.sleep(0.2)


def _effective_journals(lab: Lab) -> int:
    """journal/processed-<member>.jsonl from `orders-out` read with read_committed: only the
    attempts whose transaction committed took effect (KIP-98). Returns the records read."""
    records = javaclients.dump_committed(lab.version, lab.broker.bootstrap, OUTPUT, lab.scratch / "committed.jsonl")
    by_member: dict[str, list[dict]] = {}
    for record in records:
        by_member.setdefault(record["member"], []).append(record)
    for member, entries in by_member.items():
        with open(lab.run_dir / "journal" / f"processed-{member}.jsonl", "w") as handle:
            handle.writelines(json.dumps(e) + "\n" for e in entries)
    return len(records)


@scenario("transactional_fencing", [(CLIENT, "4.4.0"), (CLIENT, "3.9.2")])
def transactional_fencing(run_dir, client, version):
    """Consume-transform-produce under exactly-once: t1 stalls 12 s inside an open transaction
    (past max.poll.interval.ms, 6 s); t2 starts with the same transactional.id, its
    initTransactions bumps the producer epoch and aborts t1's transaction, and it takes the
    partitions from the last committed transaction. t1 wakes, is fenced (ProducerFencedException
    or InvalidProducerEpochException) and shuts down. What took effect (read_committed) is each
    record once: nothing lost, nothing twice."""
    with Lab(run_dir, client, version, partitions=2, transaction_state_log_num_partitions=1) as lab:
        lab.broker.create_topic(OUTPUT, 2)
        settings = dict(transactional_id="orders-app-tx", max_poll_ms=6000, delay_ms=10)
        t1 = lab.transactor("t1", OUTPUT, **settings).start()
        t1.wait_status(r"^assigned gen=\d+ \[.+\]", timeout=60)
        producer = lab.producer(count=100000, rate=30).start()
        lab.wait_produced(120)
        _wait_attempted(lab)
        t1.command("sleep 12000")
        t1.wait_status(r"^stalling", timeout=30)
        t2 = lab.transactor("t2", OUTPUT, **settings).start()
        t2.wait_status(r"^assigned gen=\d+ \[.+\]", timeout=60)
        lab.dump_group()
        t1.wait_status(r"^fenced|^closed", timeout=40)
        lab.wait_produced(lab.produced_count() + 100)
        producer.command("stop")
        producer.proc.wait(timeout=30)
        _wait_attempted(lab)
        time.sleep(1.5)
        lab.stop_all()
        effective = _effective_journals(lab)
        fenced = [s for s in t1.statuses() if s.startswith("fenced")]
        return lab.finish(
            "transactional_fencing",
            forbid_verdicts=DAMAGE,
            expect_findings=[{"detector": "fenced", "classification": "producer"}, {"detector": "poll_timeout"}],
            notes=f"t1 {fenced[0] if fenced else 'not fenced'}; {effective} records read back with read_committed",
            output_topic=OUTPUT,
        )


@scenario("late_async_commit", [(CLIENT, "4.4.0"), (CLIENT, "3.9.2")])
def late_async_commit(run_dir, client, version):
    """c1 processes on a worker thread and commitAsync()s what the worker finished; its worker
    stalls 8 s on a record of orders-1, c2 joins and takes orders-1 from c1's last commit, and
    c1's revocation (eager) does not wait for the batches in hand. When the worker wakes it
    processes them, records c2 processes too, and c1 commits their offsets late, behind c2's
    commit; c2's next commit moves the offset forward again. c1 also fetches orders-0 again from
    its last commit, below what its worker had finished. Both ranges are processed twice."""
    with Lab(run_dir, client, version, partitions=2) as lab:
        (c1,) = _start(lab, ["c1"], commit="worker", delay_ms=5, debug_commits=True, **FEW_FETCHES)
        producer = lab.producer(count=100000, rate=25).start()
        lab.wait_produced(150)
        _pause(lab, producer)
        producer.command("resume")
        c1.command("sleep 8000 1")
        c1.wait_status(r"^stalling", timeout=30)
        before = len(c1.statuses())
        c2 = lab.consumer("c2", commit="sync", revoke_commit="false", debug_commits=True, **FEW_FETCHES).start()
        c2.wait_status(r"^assigned gen=\d+ \[.+\]", timeout=30)
        lab.dump_group()
        c1.wait_status(r"^async-committed .*orders-1", after=before, timeout=30)
        time.sleep(2)  # c2 goes on committing orders-1 past c1's late commit
        lab.dump_group()
        c2.stop()
        c1.wait_status(r"now \[orders-0, orders-1\]|now \[orders-1, orders-0\]", timeout=30)
        time.sleep(2)
        producer.command("stop")
        producer.proc.wait(timeout=30)
        _settle(lab, [c1], 2)
        return lab.finish(
            "late_async_commit", forbid_verdicts=["loss"], expect_findings=[{"detector": "backward_commit", "classification": "zombie"}]
        )


@scenario("zombie_commit_assign", [(CLIENT, "4.4.0"), (CLIENT, "3.9.2")])
def zombie_commit_assign(run_dir, client, version):
    """Seed 003 through assign(): c1's processed offsets, revoked partition included, committed
    by a standalone consumer of the same group.id (assign() + commitSync, no membership) after c2
    took a partition and committed further. The group is not empty, so the coordinator refuses a
    commit from no member (UNKNOWN_MEMBER_ID; the Java client raises CommitFailedException) and
    nothing moves back. (c1 then commits the partition it owns, and both leave.)"""
    with Lab(run_dir, client, version, partitions=2) as lab:
        c1, c2, producer = _partition_moved_on(lab, dump_on_join=False)
        before = len(c1.statuses())
        c1.command("commit-assign")
        answer = c1.wait_status(r"^committed .*}$|^commit-failed", after=before)
        lab.dump_group()
        producer.command("resume")
        time.sleep(2)
        producer.command("stop")
        producer.proc.wait(timeout=30)
        _settle(lab, [c1, c2])
        before = len(c1.statuses())
        c1.command("commit-owned")  # what c1 owns, so the leaves at the end replay nothing
        c1.wait_status(r"^committed |^commit-failed", after=before)
        refused = answer.startswith("commit-failed")
        return lab.finish(
            "zombie_commit_assign",
            forbid_verdicts=DAMAGE if refused else ["loss"],
            expect_findings=lambda lost, dup: ranges_as_findings(dup, "backward_commit", "duplication"),
            notes=f"the assign()+commitSync answer: {answer[:300]}",
        )


@scenario("rebalance_storm", [(CLIENT, "3.9.2")])
def rebalance_storm(run_dir, client, version):
    """c1 and c2 stay; c3 is started and stopped five times (a crash-looping deployment), each
    start and each clean leave a rebalance of the classic protocol: ten rebalances in about a
    minute. commitSync after each batch and on revocation: nothing lost, nothing twice."""
    with Lab(run_dir, client, version, partitions=3) as lab:
        settings = dict(commit="sync", assignor="range", delay_ms=5, **FEW_FETCHES)
        members = _start(lab, ["c1", "c2"], **settings)
        producer = lab.producer(count=100000, rate=10).start()
        lab.wait_produced(50)
        c3 = lab.consumer("c3", **settings)
        for _ in range(5):
            before = len(c3.statuses())
            c3.start()
            c3.wait_status(r"^assigned gen=\d+ \[.+\]", after=before, timeout=60)
            time.sleep(1.5)
            after = len(members[0].statuses())
            c3.stop()
            members[0].wait_status(r"^assigned gen=\d+ .* now \[.+, .+\]", after=after, timeout=30)
            time.sleep(1)
        lab.dump_group(members=True)
        producer.command("stop")
        producer.proc.wait(timeout=30)
        _settle(lab, members, 2)
        return lab.finish("rebalance_storm", forbid_verdicts=DAMAGE, expect_findings=[{"detector": "rebalance_storm"}])


@scenario("healthy_scale_in", [(CLIENT, "4.4.0")])
def healthy_scale_in(run_dir, client, version):
    """A control: three members (cooperative-sticky; commitSync after each batch and of the
    revoked partitions), then c3 and c2 close one after the other under load and c1 takes their
    partitions from their last commits. Nothing lost, nothing twice."""
    with Lab(run_dir, client, version, partitions=4) as lab:
        settings = dict(commit="sync", assignor="cooperative-sticky", delay_ms=5, session_ms=20000, **FEW_FETCHES)
        c1, c2, c3 = _start(lab, ["c1", "c2", "c3"], **settings)
        producer = lab.producer(count=100000, rate=30).start()
        lab.wait_produced(100)
        for leaving in (c3, c2):
            before = len(c1.statuses())
            leaving.stop()
            c1.wait_status(r"^assigned gen=\d+ ", after=before, timeout=30)
            lab.dump_group(members=True)
            lab.wait_produced(lab.produced_count() + 100)
        producer.command("stop")
        producer.proc.wait(timeout=30)
        _settle(lab, [c1], 2)
        return lab.finish("healthy_scale_in", forbid_verdicts=DAMAGE)
