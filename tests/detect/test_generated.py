"""Property: over generated incidents with random injected faults, the detectors find every
injected fault with its exact range and evidence, and nothing else.

Each example writes several incidents side by side (distinct groups, hosts and topics) and
analyses them in one Spark run; findings are matched to incidents by their evidence files.
Examples are derandomised so CI is repeatable; ``FORENSICS_FUZZ_EXAMPLES`` raises their count
for a longer local hunt (``benchmarks/detector_accuracy.py`` reports recall over hundreds).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forensics.analyze import analyze
from forensics.simulate import FAULTS, generate_incident
from forensics.simulate.truth import by_bundle, compare

INJECTABLE = sorted(FAULTS)
EXAMPLES = int(os.environ.get("FORENSICS_FUZZ_EXAMPLES", "1"))

incidents = st.lists(
    st.tuples(st.integers(100, 10**6), st.lists(st.sampled_from(INJECTABLE), max_size=3)),
    min_size=10,
    max_size=12,
    unique_by=lambda incident: incident[0],
)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not os.environ.get("FORENSICS_FUZZ_EXAMPLES"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
@given(incidents=incidents)
def test_every_injected_fault_is_found_exactly_and_nothing_else(spark, tmp_path_factory, incidents):
    root = tmp_path_factory.mktemp("generated")
    truth = {f"incident-{i:02d}": generate_incident(root / f"incident-{i:02d}", seed, faults) for i, (seed, faults) in enumerate(incidents)}
    result = analyze(spark, [str(root)])
    found = by_bundle(result["findings"], str(root))
    assert set(found) <= set(truth)
    report = {}
    for name, expected in truth.items():
        missing, unexpected, evidence = compare(expected["findings"], found.get(name, []), str(root / name))
        if missing or unexpected or evidence:
            report[name] = {
                "faults": [f["fault"] for f in expected["faults"]],
                "seed": expected["seed"],
                "missing": missing,
                "unexpected": unexpected,
                "evidence": evidence,
            }
    assert report == {}
    assert result["accounting"]["unparsed"] == 0 and result["accounting"]["unrecognised_kafka"] == 0
