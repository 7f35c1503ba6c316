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

from forensics.analyze import analyze
from forensics.cli import main
from forensics.detect import DETECTORS
from forensics.simulate.truth import by_bundle, compare, key

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
BUNDLES = sorted(p.parent.name for p in SAMPLES.glob("*/EXPECTED.json"))
HEALTHY = "healthy_control"


def expected(bundle: str) -> list[dict]:
    return json.loads((SAMPLES / bundle / "EXPECTED.json").read_text())["findings"]


@pytest.fixture(scope="module")
def result(spark) -> dict:
    return analyze(spark, [str(SAMPLES)])


@pytest.fixture(scope="module")
def found(result) -> dict[str, list[dict]]:
    return by_bundle(result["findings"], str(SAMPLES))


def test_there_is_a_bundle_per_detector_and_a_healthy_control():
    assert set(BUNDLES) >= set(DETECTORS) | {HEALTHY}


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


@pytest.fixture(scope="module")
def samples_model(spark):
    """The model of every sample incident, logs and offset dumps, built as a small incident."""
    from forensics.analyze import SMALL_INCIDENT
    from forensics.events import parse_events
    from forensics.ingest import ingest_files, route_inputs
    from forensics.model import build_model
    from forensics.offsets import read_offsets, sniff_file
    from forensics.spark import materialise, sql_settings

    inputs = route_inputs([str(SAMPLES)], [], sniff_file)
    with sql_settings(spark, SMALL_INCIDENT):
        events = materialise(parse_events(ingest_files(spark, inputs.logs).records))
        return build_model(events, materialise(read_offsets(spark, [d.path for d in inputs.dumps])))


MARKED = sorted(name for name, detector in DETECTORS.items() if hasattr(detector, "found_in"))


def test_the_detectors_that_need_a_table_are_marked():
    assert MARKED == sorted([
        "backward_commit", "out_of_range_reset", "rebalance_storm", "redundant_restore", "reprocessing",
        "reset_to_latest_gap", "skipped_restore",
    ])


@pytest.mark.parametrize("name", MARKED)
def test_a_detector_finds_nothing_without_the_tables_it_is_marked_to_find_in(samples_model, name):
    """``found_in`` holds: the detector finds something in the samples, and nothing once the
    tables it names are empty (all others as they were); ``detect`` then skips it unbuilt."""
    import dataclasses

    from forensics.detect import detect
    from forensics.spark import empty_like, known_empty

    detector = DETECTORS[name]
    assert detector(samples_model).count() > 0
    emptied = dataclasses.replace(samples_model, **{
        table: None if table == "offsets" else empty_like(getattr(samples_model, table)) for table in detector.found_in
    })
    assert detector(emptied).count() == 0
    assert known_empty(detect(emptied, [name])) and not known_empty(detect(samples_model, [name]))
