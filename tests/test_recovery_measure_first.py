"""A loss whose range is only a bound and whose ``missing`` names what measures it (issue 85): its
recovery plan runs the measuring commands before the reset, not after it. Hand-written finding."""

from __future__ import annotations

from forensics.recovery import attach_recovery

MEASURE = 'kafka-get-offsets.sh --bootstrap-server "$BOOTSTRAP_SERVERS" --topic invoices --partitions 4 --time -2'


def test_a_bounded_loss_with_missing_measures_before_it_resets():
    finding = {
        "detector": "out_of_range_reset",
        "verdict": "loss",
        "group": "billing-events",
        "topic": "invoices",
        "partition": 4,
        "offset_from": 120,
        "offset_to": 180,
        "records": 60,
        "exact": False,
        "start": "2025-02-03T10:15:00.000Z",
        "end": "2025-02-03T10:15:00.000Z",
        "evidence": [{"file": "/i/billing-1/app.log", "line": 7}],
        "explanation": "x.",
        "kafka_reference": "y",
        "remedy": "z",
        "missing": {"what": "the log start of invoices-4 at the reset", "commands": [MEASURE]},
    }
    (with_plan,) = attach_recovery({"findings": [finding]})["findings"]
    steps = with_plan["recovery"]["steps"]
    commands = [s.get("command") or "" for s in steps]
    resets = [i for i, c in enumerate(commands) if "--reset-offsets" in c]
    assert resets, commands
    assert steps[0]["step"] == "measure_1" and commands[0] == MEASURE
    assert commands.index(MEASURE) < resets[0]
