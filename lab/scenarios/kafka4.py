"""Incident classes of Kafka 4.x (issue 85) with a real 4.4.0 broker and Java consumer: a
committed offset below the log start after retention (phantom lag), and a describe dump taken
while a classic group rebalances (KAFKA-21648)."""

from __future__ import annotations

import re
import time

from . import scenario
from .common import Lab, ranges_as_findings, stamp

CLIENT = "java-consumer"
DAMAGE = ["loss", "duplication"]


ASSIGNED = r"^assigned gen=\d+ \[.+\]|^assigned gen=\d+ \[\] now \[.+\]"
"""A member's status once it has partitions (KIP-848 members may first be assigned none)."""


def _member(lab: Lab, name: str, **settings):
    member = lab.consumer(name, **settings).start()
    member.wait_status(ASSIGNED, timeout=60)
    return member


def _topic_config(lab: Lab, config: str) -> None:
    lab.broker.tool(
        "kafka-configs",
        "--bootstrap-server",
        "{bootstrap}",
        "--alter",
        "--entity-type",
        "topics",
        "--entity-name",
        lab.topic,
        "--add-config",
        config,
    )


def _log_start(lab: Lab, partition: int = 0) -> int:
    """The partition's log start offset now (GetOffsetShell `--time -2`)."""
    out = lab.broker.tool("kafka-get-offsets", "--bootstrap-server", "{bootstrap}", "--topic", lab.topic, "--time", "-2")
    match = re.search(rf"^{re.escape(lab.topic)}:{partition}:(\d+)$", out, re.MULTILINE)
    if match is None:
        raise RuntimeError(f"no log start of {lab.topic}-{partition} in {out!r}")
    return int(match.group(1))


def _committed(lab: Lab, partition: int = 0) -> int:
    """What the member processed of `partition`, one past its last record (what it committed)."""
    return max(offset for _, p, offset in lab.processed_keys() if p == partition) + 1


@scenario("phantom_lag", [(CLIENT, "4.4.0")])
def phantom_lag(run_dir, client, version):
    """The group stops consuming (its only member closes after committing what it processed)
    while the producer goes on; retention (3 s, segments rolled every second) deletes the
    segments past the committed offset. The describe dump then shows the committed offset
    below the log start (phantom lag); the member restarts, its fetch is out of range and it
    resets to the log start (earliest): the deleted records it never read are lost."""
    with Lab(run_dir, client, version, partitions=1, log_retention_check_interval_ms=1000) as lab:
        c1 = _member(lab, "c1", commit="sync", reset="earliest", delay_ms=5)
        producer = lab.producer(count=100000, rate=50).start()
        lab.wait_produced(150)
        lab.wait_caught_up()
        c1.stop()
        committed = _committed(lab)
        _topic_config(lab, "retention.ms=3000,segment.ms=1000")
        deadline = time.monotonic() + 90
        while (start := _log_start(lab)) < committed + 50:
            if time.monotonic() > deadline:
                raise TimeoutError(f"retention left the log start at {start}, committed {committed}")
            time.sleep(1)
        producer.command("pause")
        _topic_config(lab, "retention.ms=-1")
        time.sleep(2)  # a retention pass already under way when the config changed
        start = _log_start(lab)
        lab.dump_group()
        lab.dump_end_offsets()
        before = len(c1.statuses())
        c1.start()
        c1.wait_status(r"^assigned gen=\d+ \[.+\]", after=before, timeout=60)
        producer.command("resume")
        lab.wait_produced(lab.produced_count() + 100)
        producer.command("stop")
        producer.proc.wait(timeout=30)
        lab.wait_caught_up(from_offset=start)
        time.sleep(1)
        return lab.finish(
            "phantom_lag",
            forbid_verdicts=["duplication"],
            expect_findings=lambda lost, dup: (
                ranges_as_findings(lost, "phantom_lag", "loss") + ranges_as_findings(lost, "out_of_range_reset", "loss")
            ),
            notes=f"c1 committed {committed} and closed; retention moved the log start to {start} before it restarted",
        )


def _describe_all(lab: Lab) -> str:
    """`--describe --state`, `--members` and the offsets view, one stamped block in
    offsets/consumer-groups.txt, as an operator runs them one after another; the state seen."""
    views = [("--state",), ("--members",), ()]
    outs = [
        lab.broker.tool(
            "kafka-consumer-groups", "--bootstrap-server", "{bootstrap}", "--describe", "--group", lab.group, *view, check=False
        )
        for view in views
    ]
    with open(lab.run_dir / "offsets" / "consumer-groups.txt", "a") as handle:
        handle.write(stamp() + "\n\n".join(out.rstrip("\n") for out in outs) + "\n\n")
    match = re.search(r"^\S+\s+\S+\s+\(\d+\)\s+\S+\s+(\w+)", outs[0], re.MULTILINE)
    return match.group(1) if match else ""


@scenario("describe_mid_rebalance", [(CLIENT, "4.4.0")])
def describe_mid_rebalance(run_dir, client, version):
    """A classic group (eager range) of two members; c1's handler stalls 25 s (max.poll.interval
    30 s, the rebalance timeout) when c3 joins, so the group waits in PreparingRebalance for c1
    to rejoin. The operator's describe dumps taken meanwhile list the members and assignment of
    the previous generation (KAFKA-21648); a dump taken once the group is Stable again is the
    control. commitSync after each batch and on revocation: nothing lost, nothing twice."""
    with Lab(run_dir, client, version, partitions=4) as lab:
        settings = dict(commit="sync", assignor="range", delay_ms=5, max_poll_ms=30000, max_poll_records=20)
        c1 = _member(lab, "c1", **settings)
        c2 = _member(lab, "c2", **settings)
        c1.wait_status(r"now \[orders-\d, orders-\d\]", timeout=60)
        producer = lab.producer(count=100000, rate=40).start()
        lab.wait_produced(100)
        _describe_all(lab)
        c1.command("sleep 25000")
        c1.wait_status(r"^stalling", timeout=30)
        before = {member.name: len(member.statuses()) for member in (c1, c2)}
        c3 = lab.consumer("c3", **settings).start()
        deadline = time.monotonic() + 20
        state = ""
        while state != "PreparingRebalance" and time.monotonic() < deadline:
            state = _describe_all(lab)
        if state != "PreparingRebalance":
            raise RuntimeError(f"the group was never seen rebalancing (last state {state!r})")
        c1.wait_status(r"^stalled", timeout=40)
        for member in (c1, c2, c3):
            member.wait_status(r"^assigned gen=\d+ ", after=before.get(member.name, 0), timeout=60)
        lab.wait_produced(lab.produced_count() + 100)
        _describe_all(lab)
        producer.command("stop")
        producer.proc.wait(timeout=30)
        lab.wait_caught_up()
        time.sleep(1)
        return lab.finish(
            "describe_mid_rebalance",
            forbid_verdicts=DAMAGE,
            expect_findings=[{"detector": "describe_mid_rebalance", "classification": "PreparingRebalance"}],
        )


STALE_EPOCH = "with stale member epoch error"
"""The consumer's ERROR line when an OffsetCommit is answered STALE_MEMBER_EPOCH (3.9+)."""


def _stale_commits(lab: Lab) -> int:
    return sum(
        (lab.run_dir / name / "app.log").read_text(errors="replace").count(STALE_EPOCH)
        for name in ("c1", "c2", "c3")
        if (lab.run_dir / name / "app.log").exists()
    )


@scenario("stale_epoch_commit", [(CLIENT, "3.9.2")])
def stale_epoch_commit(run_dir, client, version):
    """KIP-848 members (group.protocol=consumer, enabled on the 3.9.2 broker, which requires a
    commit's member epoch to equal the member's: no KIP-1251) commit after every small batch
    while c3 leaves and rejoins, each time raising the others' epochs. A commit sent with the
    epoch the member had before the coordinator raised it is rejected with STALE_MEMBER_EPOCH
    (KAFKA-20066) and retried with the new one; the run ends at the first such rejection."""
    protocols = {"group.coordinator.rebalance.protocols": "classic,consumer"}
    with Lab(run_dir, client, version, partitions=6, properties=protocols) as lab:
        settings = dict(commit="sync", protocol="consumer", max_poll_records=5)
        for name in ("c1", "c2"):
            _member(lab, name, **settings)
        producer = lab.producer(count=100000, rate=200).start()
        lab.wait_produced(200)
        c3 = lab.consumer("c3", **settings)
        rounds = 0
        while _stale_commits(lab) == 0 and rounds < 12:
            before = len(c3.statuses())
            c3.start()
            c3.wait_status(ASSIGNED, after=before, timeout=60)
            time.sleep(2)
            c3.stop()
            time.sleep(2)
            rounds += 1
        producer.command("stop")
        producer.proc.wait(timeout=30)
        if _stale_commits(lab) == 0:
            raise RuntimeError(f"no commit was rejected with STALE_MEMBER_EPOCH in {rounds} rounds")
        lab.wait_caught_up()
        time.sleep(1)
        return lab.finish(
            "stale_epoch_commit",
            forbid_verdicts=DAMAGE,
            expect_findings=[{"detector": "stale_epoch_commit"}],
            generations=False,
            notes=f"{rounds} rounds of c3 leaving and rejoining",
        )
