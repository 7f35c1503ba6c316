"""The Java consumer's incident classes, with real clients of 2.8, 3.9 and 4.4 (classic and KIP-848).

Small timeouts (session 6 s, max.poll.interval 5-10 s) keep each run well under a minute.
"""

from __future__ import annotations

import re
import signal
import time

from . import scenario
from .common import Lab, ranges_as_findings

CLIENT = "java-consumer"
DAMAGE = ["loss", "duplication"]


def _start(lab: Lab, names, **settings):
    members = [lab.consumer(name, **settings).start() for name in names]
    for member in members:
        member.wait_status(r"^assigned gen=\d+ \[.+\]|^assigned gen=\d+ \[\] now \[.+\]", timeout=60)
    return members


def _settle(lab: Lab, members, seconds: float = 1.0) -> None:
    """Until every acked record is processed, then a moment for the last commits."""
    lab.wait_caught_up()
    time.sleep(seconds)


def _scale_out(lab: Lab, settings: dict, name: str, **finish):
    """c1 alone under load, then c2 and c3 join; each join waited for, 200 more records each."""
    (c1,) = _start(lab, ["c1"], **settings)
    producer = lab.producer(count=100000, rate=100).start()
    lab.wait_produced(200)
    for i, member in enumerate(("c2", "c3")):
        _join_under_load(lab, producer, lab.consumer(member, **settings).start())
        producer.command("pause")  # the dump's JVM start is slow on a busy machine: no records meanwhile
        lab.dump_group(members=i == 1)
        producer.command("resume")
        lab.wait_produced(lab.produced_count() + 200)
    producer.command("stop")
    producer.proc.wait(timeout=30)
    _settle(lab, [c1], 2.5)
    return lab.finish(name, **finish)


def _join_under_load(lab: Lab, producer, member, records: int = 150, timeout: float = 180) -> None:
    """Until `member` has its first partitions, records flowing meanwhile; on a slow machine the
    producer pauses after `records` more, so the run's size does not grow with the join's time."""
    target = lab.produced_count() + records
    paused = False
    deadline = time.monotonic() + timeout
    while not any(re.search(r"now \[.+\]", line) for line in member.statuses()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{member.name} got no partition within {timeout:.0f} s")
        if not paused and lab.produced_count() >= target:
            producer.command("pause")
            paused = True
        time.sleep(0.1)
    if paused:
        producer.command("resume")


@scenario("healthy_scale_out", [(CLIENT, "4.4.0"), (CLIENT, "2.8.2")])
def healthy_scale_out(run_dir, client, version):
    """A control: one member, then two more join under load (cooperative-sticky; commitSync after
    each batch and of the revoked partitions in onPartitionsRevoked). Nothing lost, nothing twice."""
    with Lab(run_dir, client, version, partitions=4) as lab:
        # a session long enough that a starved machine's late heartbeat does not expire a member
        settings = dict(commit="sync", assignor="cooperative-sticky", delay_ms=5, session_ms=20000)
        return _scale_out(lab, settings, "healthy_scale_out", forbid_verdicts=DAMAGE)


@scenario("cooperative_auto_commit_scale_out", [(CLIENT, "4.4.0")])
def cooperative_auto_commit_scale_out(run_dir, client, version):
    """The same scale-out with auto-commit: the classic consumer commits when the rebalance starts
    (onJoinPrepare) but keeps returning records of partitions it still owns while the cooperative
    rebalance goes on, and does not commit them again before revoking: the new owner resumes from
    the older commit and processes those records a second time."""
    with Lab(run_dir, client, version, partitions=4) as lab:
        settings = dict(commit="auto", assignor="cooperative-sticky", delay_ms=5, prop_auto_commit_interval_ms=1000, debug_commits=True)
        return _scale_out(
            lab,
            settings,
            "cooperative_auto_commit_scale_out",
            forbid_verdicts=["loss"],
            expect_findings=lambda lost, dup: ranges_as_findings(dup, "reprocessing", "expected"),
        )


@scenario("healthy_rolling_restart", [(CLIENT, "3.9.2")])
def healthy_rolling_restart(run_dir, client, version):
    """A control: three members (eager range, commitSync after each batch and on revocation)
    restarted one after another under load. Every rebalance, nothing lost or processed twice."""
    with Lab(run_dir, client, version, partitions=3) as lab:
        settings = dict(commit="sync", assignor="range", delay_ms=5)
        members = _start(lab, ["c1", "c2", "c3"], **settings)
        producer = lab.producer(count=1500, rate=100).start()
        lab.wait_produced(200)
        for member in members:
            member.stop()
            time.sleep(1)
            before = len(member.statuses())
            member.start()
            member.wait_status(r"^assigned gen=\d+ \[.+\]", after=before)
            lab.dump_group()
        producer.proc.wait(timeout=60)
        _settle(lab, members)
        return lab.finish("healthy_rolling_restart", forbid_verdicts=DAMAGE)


@scenario("partitions_added_latest", [(CLIENT, "4.4.0"), (CLIENT, "2.8.2")])
def partitions_added_latest(run_dir, client, version):
    """Seed 001: a partition added while producing, the group on auto.offset.reset=latest. The
    producer's metadata (1 s) learns of it long before the consumer's (8 s); the consumer, with
    no committed offset, starts the new partition at its log end: its first records are lost."""
    with Lab(run_dir, client, version, partitions=1) as lab:
        (c1,) = _start(lab, ["c1"], commit="sync", reset="latest", prop_metadata_max_age_ms=8000)
        producer = lab.producer(count=100000, rate=50, prop_metadata_max_age_ms=1000).start()
        lab.wait_produced(100)
        lab.broker.tool("kafka-topics", "--bootstrap-server", "{bootstrap}", "--alter", "--topic", lab.topic, "--partitions", "2")
        before = len(c1.statuses())
        c1.wait_status(r"now \[.*-1\b", after=before, timeout=30)
        lab.dump_group()
        lab.wait_produced(lab.produced_count() + 100)
        producer.command("stop")
        producer.proc.wait(timeout=30)
        time.sleep(3)  # the lost records are never processed: nothing to wait for
        return lab.finish(
            "partitions_added_latest",
            forbid_verdicts=["duplication"],
            expect_findings=lambda lost, dup: ranges_as_findings(lost, "reset_to_latest_gap", "loss"),
        )


def _owner_of(member, partition_suffix: str) -> bool:
    assigned = [s for s in member.statuses() if s.startswith("assigned")]
    return bool(assigned) and partition_suffix in assigned[-1].split(" now ")[-1]


@scenario("zombie_commit", [(CLIENT, "4.4.0"), (CLIENT, "3.9.2")])
def zombie_commit(run_dir, client, version):
    """Seed 003: c1 commits late (commitSync of everything it ever processed, revoked partitions
    included) after c2 took one of its partitions and committed further: the committed offset
    goes backwards, and the owner after c2 processes [c1's offset, c2's offset) again."""
    with Lab(run_dir, client, version, partitions=2) as lab:
        c1, c2, producer = _partition_moved_on(lab, dump_on_join=True)
        c1.command("commit")  # the zombie: c1 still holds its offset of the partition c2 now owns
        c1.wait_status(r"^committed .*}$|^commit-failed", after=len(c1.statuses()))
        lab.dump_group()
        c2.stop()  # c1 takes the partition back and resumes from its own stale commit, not c2's
        c1.wait_status(r"now \[orders-0, orders-1\]|now \[orders-1, orders-0\]", timeout=30)
        time.sleep(2)
        producer.command("stop")
        producer.proc.wait(timeout=30)
        _settle(lab, [c1])
        c1.command("commit")
        time.sleep(1)
        return lab.finish(
            "zombie_commit",
            forbid_verdicts=["loss"],
            expect_findings=lambda lost, dup: ranges_as_findings(dup, "backward_commit", "duplication"),
        )


def _partition_moved_on(lab: Lab, dump_on_join: bool):
    """Seed 003's setting: c1 commits only on the lab's `commit` command, of everything it ever
    processed (deferred); once it has committed, c2 joins and takes one of its partitions, records
    flow 4 s and c2 commits further. Returns (c1, c2, producer), the producer paused and every
    acked record processed; the group dumped after c2's join (`dump_on_join`) and at the end."""
    (c1,) = _start(lab, ["c1"], commit="deferred", debug_commits=True)
    producer = lab.producer(count=100000, rate=50).start()
    lab.wait_produced(150)
    _pause(lab, producer)
    c1.command("commit")
    c1.wait_status(r"^committed ")
    # c2 commits after each batch but not on revocation, as many applications do
    c2 = lab.consumer("c2", commit="sync", revoke_commit="false", debug_commits=True).start()
    c2.wait_status(r"^assigned gen=\d+ \[.+\]")
    c1.wait_status(r"^assigned gen=[2-9]")
    if dump_on_join:
        lab.dump_group()
    producer.command("resume")
    time.sleep(4)
    _pause(lab, producer)
    lab.dump_group()
    return c1, c2, producer


def _pause(lab: Lab, producer) -> None:
    """Pause the producer and wait until everything acked is processed."""
    producer.command("pause")
    time.sleep(0.5)
    lab.wait_caught_up()
    time.sleep(0.5)


@scenario("poll_timeout", [(CLIENT, "4.4.0"), (CLIENT, "2.8.2")])
def poll_timeout(run_dir, client, version):
    """A handler stalls past max.poll.interval.ms (5 s): the heartbeat thread leaves the group, c2
    takes the partition from the last commit, and c1 finishes its batch, fails to commit and
    rejoins: the records it processed after the stall are processed twice."""
    with Lab(run_dir, client, version, partitions=2) as lab:
        settings = dict(commit="sync", max_poll_ms=5000, max_poll_records=20, delay_ms=20, debug_commits=True)
        c1, c2 = _start(lab, ["c1", "c2"], **settings)
        producer = lab.producer(count=1200, rate=60).start()
        lab.wait_produced(200)
        c1.command("sleep 8000")
        c1.wait_status(r"^stalled", timeout=30)
        c1.wait_status(r"^assigned gen=", after=len(c1.statuses()) - 1, timeout=30)
        lab.dump_group()
        producer.proc.wait(timeout=60)
        _settle(lab, [c1, c2], 2)
        return lab.finish(
            "poll_timeout",
            forbid_verdicts=["loss"],
            expect_findings=lambda lost, dup: ranges_as_findings(dup, "reprocessing", "expected") + [{"detector": "poll_timeout"}],
        )


@scenario("session_timeout", [(CLIENT, "3.9.2")])
def session_timeout(run_dir, client, version):
    """c1 frozen (SIGSTOP) for 10 s, past session.timeout.ms (6 s): the coordinator expires it and
    c2 takes its partitions from the last commit; on SIGCONT c1 finishes its batch, its commit
    fails, it rejoins. What it processed after the thaw is processed twice."""
    with Lab(run_dir, client, version, partitions=2) as lab:
        settings = dict(commit="sync", max_poll_records=20, delay_ms=20, debug_commits=True)
        c1, c2 = _start(lab, ["c1", "c2"], **settings)
        producer = lab.producer(count=1200, rate=60).start()
        lab.wait_produced(200)
        c1.signal(signal.SIGSTOP)
        time.sleep(10)
        lab.dump_group()
        before = len(c1.statuses())
        c1.signal(signal.SIGCONT)
        c1.wait_status(r"^assigned gen=", after=before, timeout=30)
        producer.proc.wait(timeout=60)
        _settle(lab, [c1, c2], 2)
        return lab.finish(
            "session_timeout",
            forbid_verdicts=["loss"],
            expect_findings=lambda lost, dup: ranges_as_findings(dup, "reprocessing", "expected") + [{"detector": "session_timeout"}],
        )


@scenario("static_member_bounce", [(CLIENT, "4.4.0")])
def static_member_bounce(run_dir, client, version):
    """Static membership (group.instance.id): c1 restarted within session.timeout.ms (10 s) gets
    its partitions back with no rebalance; restarted after 14 s it was expired and the group
    rebalanced twice. commitSync after each batch: nothing lost, nothing twice."""
    with Lab(run_dir, client, version, partitions=2) as lab:
        settings = dict(commit="sync", session_ms=10000, delay_ms=5)
        c1 = lab.consumer("c1", instance="host-a", **settings).start()
        c2 = lab.consumer("c2", instance="host-b", **settings).start()
        for member in (c1, c2):
            member.wait_status(r"^assigned gen=\d+ \[.+\]")
        producer = lab.producer(count=2000, rate=60).start()
        lab.wait_produced(150)
        for pause in (2, 14):
            c1.stop()
            time.sleep(pause)
            lab.dump_group()
            before = len(c1.statuses())
            c1.start()
            c1.wait_status(r"^assigned gen=\d+ \[.+\]", after=before, timeout=40)
            lab.wait_produced(lab.produced_count() + 100)
        producer.command("stop")
        producer.proc.wait(timeout=30)
        _settle(lab, [c1, c2])
        return lab.finish("static_member_bounce", forbid_verdicts=DAMAGE)


@scenario("kill9_no_leave", [(CLIENT, "3.9.2")])
def kill9_no_leave(run_dir, client, version):
    """c1 killed with SIGKILL: no LeaveGroup, so the group waits session.timeout.ms (6 s) before
    c2 takes its partitions, from the last auto-commit: what c1 processed after it (up to the
    1 s auto-commit interval) is processed twice, and no log line says how far c1 had got."""
    with Lab(run_dir, client, version, partitions=2) as lab:
        settings = dict(commit="auto", delay_ms=10, prop_auto_commit_interval_ms=1000, debug_commits=True)
        c1, c2 = _start(lab, ["c1", "c2"], **settings)
        producer = lab.producer(count=1200, rate=60).start()
        lab.wait_produced(250)
        c1.kill()
        before = len(c2.statuses())
        c2.wait_status(r"now \[orders-0, orders-1\]|now \[orders-1, orders-0\]", after=before, timeout=30)
        lab.dump_group()
        producer.proc.wait(timeout=60)
        _settle(lab, [c2], 2)
        return lab.finish(
            "kill9_no_leave",
            forbid_verdicts=["loss"],
            expect_findings=lambda lost, dup: ranges_as_findings(dup, "reprocessing", "expected"),
        )


def _out_of_range(run_dir, client, version, reset: str, name: str):
    with Lab(run_dir, client, version, partitions=1) as lab:
        # a slow member that fetches little at a time, so its position is behind the deletion
        (c1,) = _start(
            lab,
            ["c1"],
            commit="sync",
            reset=reset,
            delay_ms=40,
            max_poll_records=10,
            prop_max_partition_fetch_bytes=1024,
            prop_fetch_max_bytes=1024,
        )
        producer = lab.producer(count=600, rate=200).start()
        producer.proc.wait(timeout=60)
        time.sleep(1)
        end = lab.produced_count()
        lab.dump_group()
        lab.dump_end_offsets()
        # the handler stalls (no fetch) while the records 100 past its position are deleted; the
        # stall (20 s) also outlasts max.poll.interval.ms (10 s): the member leaves the group,
        # rejoins, and resumes from its committed offset, which is now out of range
        c1.command("sleep 20000")
        c1.wait_status(r"^stalling", timeout=30)
        position = max(offset for _, _, offset in lab.processed_keys()) + 1
        cut = min(end - 50, position + 100)
        lab.broker.tool("kafka-delete-records", "--bootstrap-server", "{bootstrap}", "--offset-json-file", _offsets_file(lab, cut))
        lab.dump_end_offsets()
        c1.wait_status(r"^stalled", timeout=40)
        producer2 = lab.producer(name="producer", count=100, rate=100).start()
        producer2.proc.wait(timeout=60)
        if reset == "latest":
            time.sleep(5)
        else:  # what the member had not reached below the new log start is never processed
            lab.wait_caught_up(from_offset=cut)
            time.sleep(1)
        return lab.finish(
            name,
            forbid_verdicts=["duplication"],
            expect_findings=lambda lost, dup: ranges_as_findings(lost, "out_of_range_reset", "loss"),
            notes=f"c1 stalled at offset {position}; records deleted up to {cut} of {end}; 100 more produced",
        )


def _offsets_file(lab: Lab, offset: int) -> str:
    import json

    path = lab.scratch / "delete-records.json"
    path.write_text(json.dumps({"partitions": [{"topic": lab.topic, "partition": 0, "offset": offset}], "version": 1}))
    return str(path)


@scenario("out_of_range_earliest", [(CLIENT, "4.4.0")])
def out_of_range_earliest(run_dir, client, version):
    """deleteRecords past a slow member's position while it stalls past max.poll.interval.ms: it
    rejoins, its fetch from the committed offset is out of range and resets to the new log start
    (earliest): the deleted records it had not reached are lost."""
    return _out_of_range(run_dir, client, version, "earliest", "out_of_range_earliest")


@scenario("out_of_range_latest", [(CLIENT, "3.9.2")])
def out_of_range_latest(run_dir, client, version):
    """The same with auto.offset.reset=latest: the reset jumps to the log end, skipping also the
    records still retained after the deletion point."""
    return _out_of_range(run_dir, client, version, "latest", "out_of_range_latest")


@scenario("kip848_scale_out", [(CLIENT, "4.4.0")])
def kip848_scale_out(run_dir, client, version):
    """A control on the KIP-848 protocol (group.protocol=consumer; the broker assigns, members
    reconcile incrementally): one member, two more join under load, commitSync after each batch
    and on revocation. Nothing lost, nothing twice."""
    with Lab(run_dir, client, version, partitions=4) as lab:
        settings = dict(commit="sync", protocol="consumer", delay_ms=5)
        return _scale_out(lab, settings, "kip848_scale_out", forbid_verdicts=DAMAGE, generations=False)
