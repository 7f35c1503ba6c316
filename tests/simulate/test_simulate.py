"""The incident generator: determinism, distinct names per seed, catalogue-valid Kafka lines,
linear scale, ground-truth evidence, the checked-in sample bundles (no Spark)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from forensics.simulate import BUNDLES, FAULTS, generate_incident, write_bundle

from .kafka_lines import kafka_records, matching_templates, read_lines, records

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _log_files(bundle: Path) -> list[Path]:
    return sorted(p for p in bundle.rglob("*") if p.is_file() and p.parent.name != "offsets" and ".log" in p.name)


@pytest.fixture(scope="module")
def bundles(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bundles")
    for name in BUNDLES:
        write_bundle(name, root)
    return root


RANDOM_CASES = [
    (101, ["poll_timeout", "backward_commit"]),
    (102, ["skipped_restore"]),
    (103, []),
    (104, ["session_timeout", "rebalance_storm", "out_of_range_reset"]),
    (105, ["fenced", "healthy_control"]),
    (106, ["reset_to_latest_gap", "reprocessing", "risky_config"]),
    (107, ["redundant_restore"]),
]


@pytest.fixture(scope="module")
def incidents(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("incidents")
    for seed, faults in RANDOM_CASES:
        generate_incident(root / f"incident-{seed}", seed, faults)
    return root


def test_same_seed_same_bytes(tmp_path):
    for run in ("a", "b"):
        generate_incident(tmp_path / run, 42, ["rebalance_storm", "poll_timeout"], scale=1, name="same")
    assert _files(tmp_path / "a") == _files(tmp_path / "b")


def _names(bundle: Path) -> dict[str, set[str]]:
    text = "\n".join("\n".join(read_lines(p)) for p in _log_files(bundle))
    return {
        "hosts": {p.name for p in bundle.iterdir() if p.is_dir() and p.name != "offsets"},
        "groups": set(re.findall(r"group\.id = (\S+?)(?:\\n|\"|$|\s)", text, re.M))
        | set(re.findall(r"application\.id = (\S+?)(?:\\n|\"|$|\s)", text, re.M)),
        "topics": set(re.findall(r"Subscribed to topic\(s\): ([^\s\"(\\]+)", text))
        | set(re.findall(r"assigned partitions:? \[?([\w.-]+)-\d+", text)),
    }


def test_different_seeds_disjoint_names(incidents):
    seen: dict[str, dict[str, str]] = {"hosts": {}, "groups": {}, "topics": {}}
    for bundle in sorted(incidents.iterdir()):
        names = _names(bundle)
        assert names["hosts"] and names["groups"] and names["topics"], bundle.name
        for kind, values in names.items():
            for value in values:
                assert value not in seen[kind], f"{kind} {value!r} in {bundle.name} and {seen[kind].get(value)}"
                seen[kind][value] = bundle.name


def _check_catalogue(bundle: Path) -> int:
    expected = json.loads((bundle / "EXPECTED.json").read_text())
    versions = [v.strip() for v in expected["kafka_version"].split(",")]
    checked = 0
    for path in _log_files(bundle):
        for record in kafka_records(path):
            assert any(matching_templates(record, v) for v in versions), (
                f"{path.relative_to(bundle)}:{record['line']} matches no template of Kafka {versions}: {record['message'][:200]!r}"
            )
            checked += 1
    return checked


def test_named_bundles_only_catalogue_wordings(bundles):
    for name in BUNDLES:
        assert _check_catalogue(bundles / name) > 20, name


def test_random_incidents_only_catalogue_wordings(incidents):
    for bundle in sorted(incidents.iterdir()):
        assert _check_catalogue(bundle) > 20, bundle.name


def test_scale_grows_line_counts_linearly(tmp_path):
    counts = []
    for scale in (1, 2, 4):
        generate_incident(tmp_path / f"s{scale}", 7, ["reprocessing"], scale=scale, kafka_version="3.6.1", layout="log4j")
        counts.append(sum(len(read_lines(p)) for p in _log_files(tmp_path / f"s{scale}")))
    one, two, four = counts
    assert two > 1.6 * one and four > 3.2 * one, counts
    assert abs((four - two) - 2 * (two - one)) < 0.25 * (four - two), counts


KEYWORDS = {
    "skipped_restore": ("No checkpoint found", "Resetting offset", "to RUNNING"),
    "redundant_restore": ("partition revocation took", "No checkpoint found", "Restoring partition", "Completed restoring"),
    "reset_to_latest_gap": ("Found no committed offset", "Seeking to", "Resetting offset"),
    "out_of_range_reset": ("out of range", "Resetting offset"),
    "backward_commit": ("Setting offset", "Committed offset", "Committed offset"),
    "reprocessing": ("Offset commit failed", "to the committed offset"),
    "poll_timeout": ("poll timeout",),
    "session_timeout": ("heartbeat",),
    "fenced": ("fenced",),
}


def _check_expected(bundle: Path) -> None:
    expected = json.loads((bundle / "EXPECTED.json").read_text())
    assert set(expected) == {"bundle", "seed", "kafka_version", "layout", "description", "faults", "findings"}
    keys = [
        (
            f["detector"],
            f["group"],
            f["topic"] or "",
            f["partition"] if f["partition"] is not None else -1,
            f["task"] or "",
            f["offset_from"] if f["offset_from"] is not None else -1,
        )
        for f in expected["findings"]
    ]
    assert keys == sorted(keys)
    heads = {}
    for finding in expected["findings"]:
        if finding["offset_from"] is not None:
            assert finding["records"] == finding["offset_to"] - finding["offset_from"] > 0
        assert finding["verdict"] in ("loss", "duplication", "delay", "expected")
        words = list(KEYWORDS.get(finding["detector"], ()))
        for evidence in finding["evidence"]:
            path = bundle / evidence["file"]
            if path not in heads:
                heads[path] = {r["line"]: r for r in records(path)}
            record = heads[path].get(evidence["line"])
            assert record is not None, f"{evidence} is not the first line of a record"
            assert record["logger"].startswith("org.apache.kafka."), evidence
            if words:
                word = words.pop(0)
                assert word in record["message"], (finding["detector"], evidence, record["message"][:200])
        if finding["detector"] in ("reset_to_latest_gap", "out_of_range_reset", "reprocessing", "backward_commit"):
            text = "\n".join(heads[bundle / e["file"]][e["line"]]["message"] for e in finding["evidence"])
            assert str(finding["offset_to"]) in text and (finding["offset_from"] == 0 or str(finding["offset_from"]) in text)


def test_expected_evidence_names_the_right_lines(bundles, incidents):
    for bundle in [*(bundles / n for n in BUNDLES), *sorted(incidents.iterdir())]:
        _check_expected(bundle)


def test_named_bundles_tell_their_fault(bundles):
    for name, spec in BUNDLES.items():
        expected = json.loads((bundles / name / "EXPECTED.json").read_text())
        detectors = {f["detector"] for f in expected["findings"]}
        assert expected["kafka_version"] == spec["kafka_version"]
        if name == "healthy_control":
            assert not expected["findings"]
        else:
            assert name in detectors, name
        hosts = [p for p in (bundles / name).iterdir() if p.is_dir() and p.name != "offsets"]
        assert len(hosts) >= 2, name
    skipped = json.loads((bundles / "skipped_restore" / "EXPECTED.json").read_text())["findings"]
    loss = next(f for f in skipped if f["detector"] == "skipped_restore")
    assert (loss["group"], loss["task"], loss["topic"], loss["partition"]) == (
        "AuditTrailBatch",
        "1_1",
        "AuditTrailBatch-store1-changelog",
        1,
    )
    dump = (bundles / "skipped_restore" / "offsets" / "get-offsets-AuditTrailBatch-store1-changelog.txt").read_text()
    assert f"AuditTrailBatch-store1-changelog:1:{loss['offset_to']}\n" in dump
    gap = next(
        f
        for f in json.loads((bundles / "reset_to_latest_gap" / "EXPECTED.json").read_text())["findings"]
        if f["detector"] == "reset_to_latest_gap"
    )
    assert (gap["topic"], gap["partition"], gap["offset_from"], gap["offset_to"], gap["exact"]) == ("demo-topic", 1, 0, 5, True)
    back = json.loads((bundles / "backward_commit" / "EXPECTED.json").read_text())["findings"][0]
    assert (back["offset_from"], back["offset_to"], back["classification"]) == (4, 7, "zombie")


def test_checked_in_samples_are_regenerated_exactly(bundles):
    for name in BUNDLES:
        if not (SAMPLES / name).exists():
            pytest.skip("sample_logs not generated yet (make samples)")
        assert _files(SAMPLES / name) == _files(bundles / name), f"sample_logs/{name} differs: run make samples"


def test_unknown_fault_is_refused(tmp_path):
    with pytest.raises(ValueError):
        generate_incident(tmp_path, 1, ["no_such_fault"])
    assert "poll_timeout" in FAULTS
