"""One Spark test: generated bundles go through ``forensics.analyze.analyze`` cleanly and the
model sees the rebalances, restores and commits their stories intend."""

from __future__ import annotations

from pathlib import Path

from forensics.analyze import analyze
from forensics.simulate import write_bundle


def test_generated_bundles_parse_and_model_as_intended(spark, tmp_path):
    names = ["skipped_restore", "redundant_restore", "backward_commit", "poll_timeout"]
    for name in names:
        write_bundle(name, tmp_path)
    hosts = sorted(str(p) for name in names for p in (tmp_path / name).iterdir() if p.is_dir() and p.name != "offsets")
    result = analyze(spark, hosts, hosts={h + "/*": Path(h).name for h in hosts})
    accounting = result["accounting"]
    assert accounting["unparsed"] == 0, result["unparsed_samples"]
    assert accounting["unrecognised_kafka"] == 0, result["unrecognised_kafka_samples"]
    assert accounting["records"] > 200

    generations = {(r["group"], r["generation"]) for r in result["rebalances"]}
    assert ("AuditTrailBatch", 323) in generations
    poll_group = next(r["group"] for r in result["rebalances"] if r["trigger"].startswith("member left: poll timeout"))
    assert sum(r["group"] == poll_group for r in result["rebalances"]) == 3

    restores = {(r["host"], r["task"], r["generation"]): r for r in result["restores"] if r["changelog"]}
    skipped = restores[("audit-batch-1", "1_1", 323)]
    assert (skipped["checkpoint_found"], skipped["reset_offset"], skipped["restore_completed"]) == (False, 0, False)
    redundant = next(r for r in result["restores"] if r["host"] == "ledger-balances-1" and r["checkpoint_found"] is False)
    assert redundant["restore_completed"] and redundant["same_instance"] and redundant["gap_ms"] < 2000
    assert redundant["restore_from"] == 0 and redundant["records_restored"] == redundant["restore_to"] > 0

    backward = [
        c for c in result["commits"] if c["kind"] == "commit" and c["previous_offset"] is not None and c["offset"] < c["previous_offset"]
    ]
    assert [(c["host"], c["offset"], c["previous_offset"], c["in_own_interval"]) for c in backward] == [("c1-alpakka-worker", 5, 7, False)]
    failed = [c for c in result["commits"] if c["kind"] == "commit failed" and c["group_id"] == poll_group]
    assert failed and all(c["offset"] is not None for c in failed)
