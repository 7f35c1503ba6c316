"""Spring for Apache Kafka's listener container as a witness (``catalogue/clients.yaml`` SK entries):
its default rebalance listener's ``<group>: partitions assigned|revoked|lost: [..]`` lines.

Beside the Java client's own lines they add nothing (one callback written twice, the same member);
where a team keeps ``org.apache.kafka`` at WARN they are the only witness, and each container's
consumer thread is a member.
"""

from __future__ import annotations

import re

from forensics.detect import detect, findings_json
from tests.helpers import ingest_paths, small_model

KMLC = "(org.springframework.kafka.listener.KafkaMessageListenerContainer)"
CALLBACKS = {
    r"Adding newly assigned partitions: ?(.*)": "partitions assigned",
    r"Revoke previously assigned partitions (.*)": "partitions revoked",
    r"Lost previously assigned partitions (.*)": "partitions lost",
}
"""The Java client's rebalance callback lines (2.4+) and what Spring's listener writes right after them."""


def with_spring_lines(text: str) -> tuple[str, int]:
    """A log4j consumer log with Spring's line after each callback line of the Java client, as
    the container's listener writes it: same time, the group of the line (and the count added)."""
    out, added = [], 0
    for line in text.splitlines():
        out.append(line)
        head = re.match(r"^(\[[^\]]+\]) INFO \[Consumer clientId=[^,]+, groupId=([^\]]+)\] (.*) \(org\.apache", line)
        for pattern, words in CALLBACKS.items():
            called = head and re.fullmatch(pattern, head.group(3))
            if called:
                partitions = ", ".join(p for p in called.group(1).split(", ") if p)
                out.append(f"{head.group(1)} INFO {head.group(2)}: {words}: [{partitions}] {KMLC}")
                added += 1
    return "\n".join(out) + "\n", added


def analysed(spark, directory):
    model = small_model(spark, ingest_paths(spark, directory).records)
    members = model.members.collect()
    ownership = sorted(
        (r["host"], r["client_id"], r["partition"], r["generation"], str(r["from_ts"]), str(r["to_ts"]), r["ended"])
        for r in model.ownership.collect()
    )
    rebalances = sorted(
        (
            r["generation"],
            r["members"],
            r["members_joined"],
            r["members_left"],
            r["trigger"],
            str(r["start_ts"]),
            str(r["end_ts"]),
            r["moved"],
        )
        for r in model.rebalances.collect()
    )
    found = sorted(
        (f["detector"], f["group"], f["topic"], f["partition"], f["offset_from"], f["offset_to"], f["member"])
        for f in findings_json(detect(model))
    )
    return members, ownership, rebalances, found


def test_beside_the_java_clients_lines_spring_adds_no_rebalance_owner_or_finding(spark, data_dir, tmp_path):
    """The cooperative and the poll-timeout incidents, each callback line followed by Spring's:
    the same rebalances, ownership intervals and findings, every Spring line of its member."""
    for scenario in ("cooperative_3_6", "poll_timeout_2_8"):
        source = data_dir / "model" / scenario
        twin, added = tmp_path / scenario, 0
        for log in sorted(source.glob("*/app.log")):
            text, count = with_spring_lines(log.read_text())
            (twin / log.parent.name).mkdir(parents=True)
            (twin / log.parent.name / "app.log").write_text(text)
            added += count
        members, *analysis = analysed(spark, twin)
        spring = [m for m in members if m["template_id"].startswith("SK")]
        assert len(spring) == added >= 5, scenario
        assert {m["member"] for m in spring} <= {f"host-{h}/consumer-orders-app-1" for h in "abc"}, scenario
        assert analysis == list(analysed(spark, source)[1:]), scenario


SPRING_BOOT = [
    ("14:02:17.305", "0-C-1", "orders-app: partitions assigned: [orders-0, orders-1, orders-2, orders-3]"),
    ("14:02:45.990", "1-C-1", "orders-app: partitions assigned: []"),
    ("14:02:46.101", "0-C-1", "orders-app: partitions revoked: [orders-2, orders-3]"),
    ("14:02:46.180", "1-C-1", "orders-app: partitions assigned: [orders-2, orders-3]"),
    ("14:02:46.190", "0-C-1", "orders-app: partitions assigned: []"),
    ("14:05:02.511", "1-C-1", "orders-app: partitions lost: [orders-2, orders-3]"),
]
"""A Spring Boot 3 service with two listener consumers (``concurrency=2``) under cooperative-sticky, its
``org.apache.kafka`` loggers at WARN: the containers' lines alone, each on its consumer's thread."""


def test_spring_lines_alone_give_each_container_thread_its_ownership(spark, tmp_path):
    path = tmp_path / "orders-svc" / "app.log"
    path.parent.mkdir()
    path.write_text(
        "".join(
            f"2024-03-11T{t}+01:00  INFO 4242 --- [orders-svc] [ntainer#0-{thread}] o.s.k.l.KafkaMessageListenerContainer    : {text}\n"
            for t, thread, text in SPRING_BOOT
        )
    )
    members, ownership, _, _ = analysed(spark, tmp_path)
    assert [(m["line"], m["event_type"], m["member"]) for m in sorted(members, key=lambda m: m["line"])] == [
        (1, "consumer:group:assigned", "orders-svc/ntainer#0-0-C-1"),
        (2, "consumer:group:assigned", "orders-svc/ntainer#0-1-C-1"),
        (3, "consumer:group:revoked", "orders-svc/ntainer#0-0-C-1"),
        (4, "consumer:group:assigned", "orders-svc/ntainer#0-1-C-1"),
        (5, "consumer:group:assigned", "orders-svc/ntainer#0-0-C-1"),
        (6, "consumer:group:lost", "orders-svc/ntainer#0-1-C-1"),
    ]
    assert [
        (client, partition, to_ts[11:19] if to_ts != "None" else None, ended) for _, client, partition, _, _, to_ts, ended in ownership
    ] == [
        ("ntainer#0-0-C-1", 0, None, "end of logs"),
        ("ntainer#0-0-C-1", 1, None, "end of logs"),
        ("ntainer#0-0-C-1", 2, "13:02:46", "revoked"),
        ("ntainer#0-0-C-1", 3, "13:02:46", "revoked"),
        ("ntainer#0-1-C-1", 2, "13:05:02", "lost"),
        ("ntainer#0-1-C-1", 3, "13:05:02", "lost"),
    ]
