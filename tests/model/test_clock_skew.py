"""Two hosts, host-b's clock 30 s ahead: the offset is estimated from the protocol and
corrected, and the protocol's order is recovered (tests/data/model/clock_skew_3_0)."""

from __future__ import annotations

from tests.model.conftest import rows

SCENARIO = "clock_skew_3_0"


def test_offset_of_host_b_is_estimated_within_its_uncertainty(model):
    (b,) = model.clock_skew.where("host = 'host-b'").collect()
    assert b["reference"] == "host-a" and b["corrected"] is True
    assert abs(b["offset_ms"] - 30_000) <= b["uncertainty_ms"] <= 50
    assert b["samples"] == 1


def test_events_keep_their_raw_time_and_move_to_the_reference_clock(model):
    (joined,) = model.events.where("host = 'host-b' and event_type = 'consumer:group:joined'").collect()
    assert joined["ts_raw"].strftime("%H:%M:%S.%f")[:-3] == "10:01:03.473"
    assert joined["ts"].strftime("%H:%M:%S.%f")[:-3] == "10:00:33.471"


def test_revoke_precedes_new_owners_assignment_after_correction(model):
    intervals = {(r["host"], r["partition"], r["generation"]): r for r in model.ownership.collect()}
    revoked = intervals[("host-a", 3, 5)]["to_ts"]
    taken = intervals[("host-b", 3, 6)]["from_ts"]
    assert revoked < taken
    assert (taken - revoked).total_seconds() < 5


def test_rebalance_is_the_same_as_with_true_clocks(model):
    assert rows(model.rebalances, "generation", "start_ts", "end_ts", "trigger") == [
        (5, "09:58:00.409", "09:58:03.472", "first generation in the logs (earlier history not logged)"),
        (6, "10:00:30.213", "10:00:33.498", "member joined (scale-up or restart)"),
    ]


def test_the_clocks_are_corrected_without_a_join(model):
    """Each host's offset shifts its lines as a literal: a join would sort every event by host."""
    assert "Join" not in model.events._jdf.queryExecution().optimizedPlan().toString()
