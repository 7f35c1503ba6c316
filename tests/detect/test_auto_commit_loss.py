"""Auto-commit in the KIP-848 consumer of a version with KAFKA-18641 (issue 85): the commit before
a revocation could include records fetched but never returned to the application. The logs name
no offsets of it, so it is a ``risky_config`` finding on the config block and the version banner.
Hand-written excerpts (identifiers are ours), analysed in one run (``analyse_apart``)."""

from __future__ import annotations

from tests.detect.incidents import Incident, analyse_apart


def block(group: str, protocol: str, auto_commit: str, version: str) -> list[str]:
    return [
        "[2025-01-20 08:00:01,410] INFO ConsumerConfig values: ",
        "\tauto.offset.reset = earliest",
        f"\tclient.id = consumer-{group}-1",
        f"\tenable.auto.commit = {auto_commit}",
        f"\tgroup.id = {group}",
        f"\tgroup.protocol = {protocol}",
        " (org.apache.kafka.clients.consumer.ConsumerConfig)",
        f"[2025-01-20 08:00:01,522] INFO Kafka version: {version} (org.apache.kafka.common.utils.AppInfoParser)",
    ]


INCIDENTS = {
    "affected": Incident({"ledger-1": block("ledger-sync", "consumer", "true", "3.8.1")}),
    "classic": Incident({"ledger-2": block("ledger-classic", "classic", "true", "3.8.1")}),
    "manual": Incident({"ledger-3": block("ledger-manual", "consumer", "false", "3.9.0")}),
    "fixed": Incident({"ledger-4": block("ledger-fixed", "consumer", "true", "4.1.0")}),
}


def test_auto_commit_in_the_kip848_consumer_of_an_affected_version_alone_is_a_risk(spark, tmp_path):
    found = analyse_apart(spark, tmp_path, INCIDENTS)
    risks = {
        name: [f for f in findings if f["detector"] == "risky_config" and f["classification"] == "enable.auto.commit"]
        for name, findings in found.items()
    }
    assert {name: len(r) for name, r in risks.items()} == {"affected": 1, "classic": 0, "manual": 0, "fixed": 0}
    (risk,) = risks["affected"]
    assert risk["group"] == "ledger-sync" and risk["host"] == "ledger-1" and risk["verdict"] == "expected"
    assert [e["line"] for e in risk["evidence"]] == [1, 8]
    assert "KAFKA-18641" in risk["kafka_reference"] and "3.8.1" in risk["explanation"]
    assert "enable.auto.commit=false" in risk["remedy"]
