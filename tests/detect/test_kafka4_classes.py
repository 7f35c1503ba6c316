"""The Kafka 4.x incident classes of issue 85 (``forensics.detect.kafka4``): each detector fires on
its hand-written fixture (tests/data/kafka4_classes/<class>/, README.md the story, expected.json
the findings) with exactly the evidence lines expected, and stays silent on the fixtures'
controls, on every sample incident and on the lab's healthy and KIP-848 runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forensics.detect import DETECTORS
from forensics.detect.kafka4 import CLASSES
from forensics.simulate.truth import by_bundle, compare, key, relative
from tests.helpers import analysed_with_model, lab_run_analysed

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "data" / "kafka4_classes"
NOTES = ("README.md", "expected.json")
SILENT_RUNS = (
    "lab/runs/healthy_scale_out/java-consumer-4.4.0",
    "lab/runs/kip848_scale_out/java-consumer-4.4.0",
    "lab/runs/streams_healthy_rolling_restart/kafka-streams-4.4.0-streams-protocol",
    "lab/runs/streams_instance_killed/kafka-streams-4.4.0-streams-protocol",
    "tests/data/witnesses/kafka4/consumer_scale_out",
    "tests/data/witnesses/kafka4/streams_scale_out",
)
"""Real Kafka 4.4 runs of the lab (a healthy scale-out, the KIP-848 scale-out, KIP-1071 streams
groups restarted and killed) and the hand-checked Kafka 4 witnesses: none shows these classes."""
REAL_RUNS = {
    "phantom_lag": ("lab/runs/phantom_lag/java-consumer-4.4.0", {("offsets/consumer-groups.txt", 4), ("offsets/dump-log-topic.txt", 3)}),
    "describe_mid_rebalance": (
        "lab/runs/describe_mid_rebalance/java-consumer-4.4.0",
        {("offsets/consumer-groups.txt", n) for n in (39, 43, 44, 45, 49, 50, 51, 52)},
    ),
    "stale_epoch_commit": ("lab/runs/stale_epoch_commit/java-consumer-3.9.2", {("c2/app.log", 171), ("c2/app.log", 174)}),
}
"""The classes a real broker reproduced (lab/scenarios/kafka4.py): the run, and the evidence of its
one finding: the describe row and the dump's first batch; the rebalancing dump's state line, its
members and offsets rows and none of the Stable dumps' in the same file; the rejected commit and
the member's next state line at the raised epoch."""
REFERENCES = {
    "double_ownership": "KAFKA-16147",
    "epochless_offset_reset": "KAFKA-19902",
    "stale_epoch_commit": "KAFKA-20066",
    "stuck_revocation": "KAFKA-20870",
    "describe_mid_rebalance": "KAFKA-21648",
    "phantom_lag": "log start",
}


def _inputs() -> list[str]:
    """Every log and dump of the fixtures, without their notes."""
    return sorted(str(p) for p in FIXTURES.rglob("*") if p.is_file() and p.name not in NOTES)


def _expected(fixture: str) -> list[dict]:
    return json.loads((FIXTURES / fixture / "expected.json").read_text(encoding="utf-8"))["findings"]


@pytest.fixture(scope="module")
def fixtures_analysed(spark):
    return analysed_with_model(spark, _inputs())


@pytest.fixture(scope="module")
def found(fixtures_analysed) -> dict[str, list[dict]]:
    result, _ = fixtures_analysed
    return by_bundle([f for f in result["findings"] if f["detector"] in CLASSES], str(FIXTURES))


def test_each_class_is_a_registered_detector_with_a_fixture():
    assert set(CLASSES) <= set(DETECTORS)
    assert list(DETECTORS)[-len(CLASSES) :] == list(CLASSES), "added after the existing names, none renamed"
    for detector, fixture in CLASSES.items():
        assert (FIXTURES / fixture / "README.md").is_file() and _expected(fixture), detector
        assert {f["detector"] for f in _expected(fixture)} == {detector}
        assert len(DETECTORS[detector].__doc__ or "") > 120


def test_every_fixture_line_is_understood(fixtures_analysed):
    result, _ = fixtures_analysed
    assert result["accounting"]["unparsed"] == 0 and result["accounting"]["unrecognised_kafka"] == 0
    assert result["offsets"]["accounting"].get("unparsed", 0) == 0


@pytest.mark.parametrize("detector", list(CLASSES))
def test_the_detector_fires_on_its_fixture_with_its_evidence(found, detector):
    fixture = CLASSES[detector]
    root = str(FIXTURES / fixture)
    expected, got = _expected(fixture), found.get(fixture, [])
    missing, unexpected, problems = compare(expected, got, root)
    assert (missing, unexpected, problems) == ([], [], [])
    for item in expected:
        (finding,) = [f for f in got if key(f) == key(item)]
        assert relative(finding["evidence"], root) == {(e["file"], e["line"]) for e in item["evidence"]}
        assert finding["explanation"].endswith(".") and "null" not in finding["explanation"]
        assert REFERENCES[detector] in finding["kafka_reference"] and finding["remedy"]
        if finding["exact"] is False and finding["offset_from"] is None:
            assert finding["missing"]["what"] and finding["missing"]["commands"], "an unmeasured finding says what would measure it"


def test_no_class_fires_outside_its_own_fixture(found):
    assert set(found) <= set(CLASSES.values())


def test_no_class_fires_on_the_samples(samples_analysis):
    assert [key(f) for f in samples_analysis["findings"] if f["detector"] in CLASSES] == []


@pytest.mark.parametrize("run", SILENT_RUNS)
def test_no_class_fires_on_real_kafka_4_runs(spark, run):
    result = lab_run_analysed(spark, ROOT / run)
    assert [key(f) for f in result["findings"] if f["detector"] in CLASSES] == []


@pytest.mark.parametrize("detector", list(REAL_RUNS))
def test_the_class_fires_on_its_real_lab_run_with_its_evidence(spark, detector):
    run, evidence = REAL_RUNS[detector]
    result = lab_run_analysed(spark, ROOT / run)
    (finding,) = [f for f in result["findings"] if f["detector"] in CLASSES]
    assert finding["detector"] == detector
    assert relative(finding["evidence"], str(ROOT / run)) == evidence


@pytest.mark.parametrize("detector", list(CLASSES))
def test_a_class_finds_nothing_without_the_sources_it_names(spark, fixtures_analysed, detector):
    """``rows_from`` holds on the fixtures' model, as test_bundles checks it for the detectors of
    the samples."""
    from forensics.detect import detect
    from forensics.spark import known_empty
    from tests.helpers import without_sources

    _, model = fixtures_analysed
    function = DETECTORS[detector]
    assert function(model).count() > 0
    emptied = without_sources(model, function.rows_from)
    assert function(emptied).count() == 0
    assert known_empty(detect(emptied, [detector]))


def test_phantom_lags_range_is_already_deleted_so_no_reset_is_planned(found):
    """A committed offset below the log start: the dumped log start ends the range, so the records
    are gone and the plan says so, instead of resetting the group to offsets no longer kept."""
    (finding,) = [f for f in found[CLASSES["phantom_lag"]] if f["detector"] == "phantom_lag"]
    plan = finding["recovery"]
    assert plan["retention"]["status"] == "deleted" and plan["kind"] == "unrecoverable"
    assert not plan["reset_rows"]
