"""The result's contract (``forensics/result.schema.json``): every analysis the suite runs is
checked against it (``contract.CHECK_ENV``, set by conftest); here, that the schema is a valid
JSON Schema, names what the code produces, and refuses what breaks the contract."""

from __future__ import annotations

import json

import jsonschema
import pytest
from click.testing import CliRunner

from forensics import contract
from forensics import schema as s
from forensics.cli import main
from forensics.detect import DETECTORS

STABLE = ("inputs", "accounting", "events_by_type", "rebalances", "ownership", "clock_skew", "findings")
"""The result's fields others rely on (DEVELOPERS' contract): never renamed or dropped."""
FINDING_FIELDS = (
    "detector",
    "severity",
    "verdict",
    "group",
    "topic",
    "partition",
    "offset_from",
    "offset_to",
    "records",
    "host",
    "member",
    "start",
    "end",
    "evidence",
    "explanation",
    "kafka_reference",
    "remedy",
)


def items(key: str) -> dict:
    return contract.result_schema()["properties"][key]["items"]


def test_the_schema_is_valid_and_requires_the_stable_fields():
    schema = contract.result_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert set(STABLE) | {"tool_version", "contract_version"} <= set(schema["required"])
    assert set(FINDING_FIELDS) <= set(items("findings")["required"])


def test_the_detectors_verdicts_and_severities_are_the_codes():
    finding = items("findings")["properties"]
    assert finding["detector"]["enum"] == sorted(DETECTORS)
    assert finding["verdict"]["enum"] == list(s.VERDICTS) and finding["severity"]["enum"] == list(s.SEVERITIES)


@pytest.mark.parametrize(
    "key, table",
    [("findings", s.FINDINGS_SCHEMA), ("clock_skew", s.CLOCK_SKEW_SCHEMA), ("restores", s.RESTORES_SCHEMA), ("commits", s.COMMITS_SCHEMA)],
)
def test_every_field_of_a_table_written_as_it_is_is_in_the_schema(key, table):
    """A field added to one of these model tables reaches the JSON: the schema must name it."""
    names = {contract.json_name(f.name) if key == "findings" else f.name for f in table.fields}
    assert names <= set(items(key)["properties"])


def test_the_samples_analysis_holds_to_the_contract_and_names_its_version(samples_analysis):
    assert samples_analysis["contract_version"] == contract.CONTRACT_VERSION
    validator = jsonschema.Draft202012Validator(contract.result_schema())
    assert not list(validator.iter_errors(json.loads(json.dumps(samples_analysis, default=contract.json_value))))


def test_a_result_that_breaks_the_contract_is_refused_with_where(samples_analysis):
    dropped = {k: v for k, v in samples_analysis.items() if k != "clock_skew"}
    with pytest.raises(contract.ContractViolation, match="clock_skew"):
        contract.checked(dropped)
    renamed = {
        **samples_analysis,
        "findings": contract.Rows(produce=lambda: [{**samples_analysis["findings"][0], "detector": "lost_offsets"}]),
    }
    with pytest.raises(contract.ContractViolation, match=r"findings\[0\]/detector"):
        list(contract.checked(renamed)["findings"])


def test_forensics_schema_prints_the_schema():
    done = CliRunner().invoke(main, ["schema"])
    assert done.exit_code == 0 and json.loads(done.output) == contract.result_schema()
