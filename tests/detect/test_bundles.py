"""The sample incidents under sample_logs/: each bundle's findings equal its EXPECTED.json.

All bundles are analysed together in one run (their groups, hosts and topics are distinct), and
the findings are split by the bundle their evidence lies in; one bundle also goes through the
command line as a user would run it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from forensics.cli import main
from forensics.detect import DETECTORS
from forensics.detect.kafka4 import CLASSES
from forensics.simulate.truth import by_bundle, compare, key

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
BUNDLES = sorted(p.parent.name for p in SAMPLES.glob("*/EXPECTED.json"))
HEALTHY = "healthy_control"


def expected(bundle: str) -> list[dict]:
    return json.loads((SAMPLES / bundle / "EXPECTED.json").read_text())["findings"]


@pytest.fixture(scope="module")
def result(samples_analysis) -> dict:
    return samples_analysis


@pytest.fixture(scope="module")
def found(result) -> dict[str, list[dict]]:
    return by_bundle(result["findings"], str(SAMPLES))


SAMPLED = sorted(set(DETECTORS) - set(CLASSES))
"""The detectors the samples show: the Kafka 4.x classes have fixtures of their own
(tests/detect/test_kafka4_classes.py) and must stay silent here."""


def test_there_is_a_bundle_per_detector_and_a_healthy_control():
    assert set(BUNDLES) >= set(SAMPLED) | {HEALTHY}


@pytest.mark.parametrize("bundle", BUNDLES)
def test_bundle_findings_equal_expected(found, bundle):
    missing, unexpected, evidence = compare(expected(bundle), found.get(bundle, []), str(SAMPLES / bundle))
    assert missing == [], f"{bundle}: not found"
    assert unexpected == [], f"{bundle}: found but not expected"
    assert evidence == []


def test_healthy_control_yields_no_loss_or_duplication(found):
    assert expected(HEALTHY) == []
    assert [f for f in found.get(HEALTHY, []) if f["verdict"] in ("loss", "duplication")] == []


def test_every_line_of_the_samples_is_understood(result):
    assert result["accounting"]["unparsed"] == 0
    assert result["accounting"]["unrecognised_kafka"] == 0
    assert result["offsets"]["accounting"].get("unparsed", 0) == 0


def test_findings_carry_plain_explanations_and_remedies(result):
    for finding in result["findings"]:
        assert finding["explanation"].endswith(".") and finding["remedy"] and finding["kafka_reference"]
        assert finding["evidence"], key(finding)


def test_command_line_lists_a_bundles_expected_findings(spark):
    """``forensics analyze BUNDLE --json -`` in this process (the shared warm session); the
    subprocess form of the command is tested in tests/test_cli.py."""
    bundle = "backward_commit"
    run = CliRunner().invoke(main, ["analyze", str(SAMPLES / bundle), "--json", "-"])
    assert run.exit_code == 0, run.output[-2000:]
    findings = json.loads(run.stdout)["findings"]
    assert sorted(map(key, findings)) == sorted(map(key, expected(bundle)))


def test_every_detector_names_the_sources_of_its_rows():
    assert all(hasattr(detector, "rows_from") for detector in DETECTORS.values())


@pytest.mark.parametrize("name", SAMPLED)
def test_a_detector_finds_nothing_without_the_sources_it_names(samples_model, name):
    """``rows_from`` holds: the detector finds something in the samples, and nothing once the
    events of the types it names and the tables it names are gone (all others as they were);
    ``detect`` then skips it unbuilt."""
    from forensics.detect import detect
    from forensics.spark import known_empty
    from tests.helpers import without_sources

    detector = DETECTORS[name]
    assert detector(samples_model).count() > 0
    emptied = without_sources(samples_model, detector.rows_from)
    assert detector(emptied).count() == 0
    assert known_empty(detect(emptied, [name])) and not known_empty(detect(samples_model, [name]))


@pytest.mark.parametrize("index", range(3))
def test_each_risk_of_risky_config_finds_nothing_without_its_sources(samples_model, index):
    from forensics.detect.config import RISKS, _blocks
    from tests.helpers import without_sources

    risk = RISKS[index]
    assert risk(samples_model, _blocks(samples_model)).count() > 0
    emptied = without_sources(samples_model, risk.rows_from)
    assert risk(emptied, _blocks(emptied)).count() == 0
