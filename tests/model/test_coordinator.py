"""The group coordinator's broker log as a witness (tests/data/witnesses/coordinator, Kafka 3.5.1).

Two analyses, one per module fixture: the broker's log with both members' logs (the model), and
the same without member-b's log (the JSON of ``forensics analyze``). See the fixture's README.md
for the story, its true times and member-a's clock, 1.750 s behind the broker's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import functions as F

from forensics.analyze import analyze
from forensics.detect import detect, findings_json
from forensics.events.prefix import split_prefix
from forensics.model.triggers import coordinator_trigger
from tests.helpers import ingest_paths, small_model
from tests.model.conftest import rows

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "witnesses" / "coordinator"
A = "consumer-orders-app-1-2d7f4c1a-95b3-4e8e-a6f0-7c3b9d1e5a24"
B = "consumer-orders-app-1-b81e0f6d-3c2a-47d9-9e54-0a6c8f2d1b73"
C = "consumer-billing-app-1-5e8a2b9c-6d41-4f07-b3e2-9a1c7d5f0e68"
MA, MB = "member-a/consumer-orders-app-1", "member-b/consumer-orders-app-1"
BROKER_LOG = str(FIXTURE / "broker-1" / "server.log")
ADDING = "Adding new member {0} with group instance id None; client reason: need to re-join with the given member-id: {0}"


@pytest.fixture(scope="module")
def full(spark):
    """The model of all three logs."""
    records = ingest_paths(spark, *(FIXTURE / host for host in ("broker-1", "member-a", "member-b"))).records
    model = small_model(spark, records)
    yield model
    model.unpersist()


@pytest.fixture(scope="module")
def without_b(spark) -> dict:
    """``forensics analyze`` of the broker's and member-a's logs: member-b's log is missing."""
    return analyze(spark, [str(FIXTURE / "broker-1"), str(FIXTURE / "member-a")])


def test_broker_prefixes_are_split_off_and_name_the_coordinator_partition(spark):
    messages = [
        ("[GroupCoordinator 1]: Stabilized group g generation 3 (__consumer_offsets-5) with 1 members",),
        ("[GroupMetadataManager brokerId=1] Removed 0 expired offsets in 0 milliseconds.",),
        ("[GroupCoordinator id=1 topic=__consumer_offsets partition=12] Stabilized group g generation 3 with 1 members.",),
    ]
    split = spark.createDataFrame(messages, "m string").select(split_prefix(F.col("m")).alias("p")).collect()
    assert [(r.p.rest.split(" ")[0], r.p.coordinator_topic, r.p.coordinator_partition) for r in split] == [
        ("Stabilized", None, None),
        ("Removed", None, None),
        ("Stabilized", "__consumer_offsets", "12"),
    ]


def test_coordinator_trigger_from_its_reason_else_from_the_members_it_saw_come_and_go(spark):
    cases = [
        (
            "Leader m-1 re-joining group during Stable; client reason: cached metadata has changed",
            [],
            "partition count or subscription change",
        ),
        (
            "Removing member m-2 on LeaveGroup; client reason: consumer poll timeout has expired.",
            [],
            "member left: poll timeout (max.poll.interval.ms)",
        ),
        ("explicit `LeaveGroup` request for (m-2) members.", [], "member left (shutdown or crash)"),
        (
            "Freshly-loaded group is over capacity (3). Rebalancing in order to give a chance for consumers to commit offsets",
            [],
            "group over capacity (group.max.size)",
        ),
        ("a reason of a later Kafka", [], "coordinator: a reason of a later Kafka"),
        (None, ["joined", "failed"], "member left: session timeout (session.timeout.ms)"),
        (None, ["joined"], "member joined (scale-up or restart)"),
        (None, [], None),
    ]
    frame = spark.createDataFrame([(reason, kinds) for reason, kinds, _ in cases], "coordinator_reason string, _kinds array<string>")
    assert [r[0] for r in frame.select(coordinator_trigger()).collect()] == [trigger for _, _, trigger in cases]


def test_coordinator_lines_are_typed_with_group_generation_members_and_reason(full):
    broker = full.events.where(F.col("host") == "broker-1")
    typed = rows(broker, "line", "event_type", "group_id", "generation", "member_count", "member_id", "leader_id", "coordinator")
    assert sorted(typed) == [
        (2, "coordinator:partition:loaded", None, None, None, None, None, "__consumer_offsets-5"),
        (3, "coordinator:partition:loaded", None, None, None, None, None, "__consumer_offsets-43"),
        (4, "coordinator:group:member_joined", "orders-app", None, None, A, None, None),
        (5, "coordinator:group:preparing_rebalance", "orders-app", 0, None, A, None, "__consumer_offsets-5"),
        (6, "coordinator:group:stabilized", "orders-app", 1, 1, None, None, "__consumer_offsets-5"),
        (7, "coordinator:group:assignment_received", "orders-app", 1, 1, None, A, None),
        (9, "coordinator:group:member_joined", "billing-app", None, None, C, None, None),
        (10, "coordinator:group:preparing_rebalance", "billing-app", 4, None, C, None, "__consumer_offsets-43"),
        (11, "coordinator:group:stabilized", "billing-app", 5, 1, None, None, "__consumer_offsets-43"),
        (12, "coordinator:group:assignment_received", "billing-app", 5, 1, None, C, None),
        (13, "coordinator:group:member_joined", "orders-app", None, None, B, None, None),
        (14, "coordinator:group:preparing_rebalance", "orders-app", 1, None, B, None, "__consumer_offsets-5"),
        (15, "coordinator:group:stabilized", "orders-app", 2, 2, None, None, "__consumer_offsets-5"),
        (16, "coordinator:group:assignment_received", "orders-app", 2, 2, None, A, None),
        (17, "coordinator:group:member_failed", "orders-app", None, None, B, None, None),
        (18, "coordinator:group:preparing_rebalance", "orders-app", 2, None, B, None, "__consumer_offsets-5"),
        (19, "coordinator:group:stabilized", "orders-app", 3, 1, None, None, "__consumer_offsets-5"),
        (20, "coordinator:group:assignment_received", "orders-app", 3, 1, None, A, None),
        (21, "coordinator:offsets:expired", None, None, None, None, None, None),
    ]
    reasons = rows(broker.where("event_type = 'coordinator:group:preparing_rebalance'"), "line", "reason")
    assert sorted(reasons) == [
        (5, ADDING.format(A)),
        (10, ADDING.format(C)),
        (14, ADDING.format(B)),
        (18, f"removing member {B} on heartbeat expiration"),
    ]


def test_member_a_clock_offset_is_estimated_against_the_coordinator(full):
    skew = {r["host"]: r for r in full.clock_skew.collect()}
    a, b = skew["member-a"], skew["member-b"]
    assert {r["reference"] for r in skew.values()} == {"broker-1"}
    # member-a's clock is 1.750 s behind: its lines answering the coordinator's bound the offset
    assert a["offset_min_ms"] <= -1750 <= a["offset_max_ms"] and a["offset_max_ms"] - a["offset_min_ms"] <= 10
    assert abs(a["offset_ms"] + 1750) <= a["uncertainty_ms"] <= 5
    assert (a["samples"], a["corrected"]) == (3, True)
    assert abs(b["offset_ms"]) <= b["uncertainty_ms"] and b["corrected"] is False


def test_member_a_lines_move_onto_the_coordinator_clock(full):
    (joined,) = full.events.where("host = 'member-a' and event_type = 'consumer:group:joined' and generation = 2").collect()
    assert joined["ts_raw"].strftime("%H:%M:%S.%f")[:-3] == "10:05:00.396"  # before the broker's Stabilized, raw
    assert joined["ts"].strftime("%H:%M:%S.%f")[:-3] == "10:05:02.146"  # 3 ms after it (broker line 15)


def test_rebalances_take_their_trigger_and_first_sign_from_the_coordinator(full):
    columns = ("group_id", "generation", "start_ts", "joined_ts", "end_ts", "trigger", "trigger_source", "members", "start_line")
    assert rows(full.rebalances, *columns) == [
        ("billing-app", 5, "10:03:20.118", "10:03:23.141", "10:03:23.160", "member joined (scale-up or restart)", "coordinator", [], 9),
        ("orders-app", 1, "10:00:00.409", "10:00:03.444", "10:00:03.468", "member joined (scale-up or restart)", "coordinator", [MA], 5),
        (
            "orders-app",
            2,
            "10:05:00.211",
            "10:05:02.147",
            "10:05:02.173",
            "member joined (scale-up or restart)",
            "coordinator",
            [MA, MB],
            5,
        ),
        (
            "orders-app",
            3,
            "10:06:56.512",
            "10:06:58.067",
            "10:06:58.090",
            "member left: session timeout (session.timeout.ms)",
            "coordinator",
            [MA],
            17,
        ),
    ]
    (third,) = full.rebalances.where("group_id = 'orders-app' and generation = 3").collect()
    assert third["start_file"] == BROKER_LOG  # member-b's log just stops: only the broker saw it go
    assert (third["members_left"], third["coordinator_left"], third["coordinator_member_ids"]) == ([MB], [B], [A])


def test_coordinator_columns_state_each_generation(full):
    columns = (
        "group_id",
        "generation",
        "coordinator_host",
        "coordinator_partition",
        "coordinator_start_ts",
        "coordinator_stabilized_ts",
        "coordinator_assignment_ts",
        "coordinator_member_count",
        "leader",
        "coordinator_joined",
    )
    assert rows(full.rebalances, *columns) == [
        ("billing-app", 5, "broker-1", "__consumer_offsets-43", "10:03:20.118", "10:03:23.141", "10:03:23.160", 1, C, [C]),
        ("orders-app", 1, "broker-1", "__consumer_offsets-5", "10:00:00.411", "10:00:03.441", "10:00:03.452", 1, MA, [A]),
        ("orders-app", 2, "broker-1", "__consumer_offsets-5", "10:05:00.213", "10:05:02.143", "10:05:02.154", 2, MA, [B]),
        ("orders-app", 3, "broker-1", "__consumer_offsets-5", "10:06:56.512", "10:06:58.064", "10:06:58.074", 1, MA, []),
    ]


def test_a_rebalance_only_the_coordinator_logged_names_its_missing_member(full):
    assert rows(full.rebalances, "group_id", "generation", "missing_member_count") == [
        ("billing-app", 5, 1),
        ("orders-app", 1, 0),
        ("orders-app", 2, 0),
        ("orders-app", 3, 0),
    ]
    (billing,) = full.rebalances.where("group_id = 'billing-app'").collect()
    assert [m.asDict() for m in billing["missing_members"]] == [{"member_id": C, "client_id": "consumer-billing-app-1"}]


def test_the_coordinator_states_member_b_session_timeout(full):
    found = findings_json(detect(full, ["session_timeout"]))
    assert [(f["member"], f["host"], f["group"], f["start"], f["evidence"]) for f in found] == [
        (MB, "member-b", "orders-app", "2024-06-03T10:06:56.512Z", [{"file": BROKER_LOG, "line": 17}, {"file": BROKER_LOG, "line": 18}])
    ]


def test_without_member_b_generation_2_is_rebuilt_and_member_b_named_missing(without_b):
    by_generation = {(r["group"], r["generation"]): r for r in without_b["rebalances"]}
    second = by_generation[("orders-app", 2)]
    assert (second["members"], second["members_joined"], second["trigger"], second["trigger_source"]) == (
        [MA],
        [],
        "member joined (scale-up or restart)",
        "coordinator",
    )
    assert second["missing_members"] == [{"member_id": B, "client_id": "consumer-orders-app-1"}]
    assert second["missing_member_count"] == 1
    coordinator = second["coordinator"]
    assert (coordinator["member_count"], coordinator["member_ids"], coordinator["joined"], coordinator["start"]) == (
        2,
        [A, B],
        [B],
        "2024-06-03T10:05:00.213Z",
    )
    assert coordinator["evidence"] == {"file": BROKER_LOG, "line": 13}
    assert (second["start"], second["evidence"]) == ("2024-06-03T10:05:00.213Z", {"file": BROKER_LOG, "line": 13})
    third = by_generation[("orders-app", 3)]
    assert (third["members_left"], third["coordinator"]["left"], third["missing_members"]) == ([], [B], [])
    assert third["trigger"] == "member left: session timeout (session.timeout.ms)"


def test_without_member_b_its_session_timeout_is_found_from_the_broker_lines(without_b):
    found = [f for f in without_b["findings"] if f["detector"] == "session_timeout"]
    assert [(f["member"], f["host"], f["evidence"]) for f in found] == [
        (B, None, [{"file": BROKER_LOG, "line": 17}, {"file": BROKER_LOG, "line": 18}])
    ]


def test_without_member_b_every_line_is_understood_and_the_skew_still_estimated(without_b):
    assert without_b["accounting"]["unparsed"] == 0 and without_b["accounting"]["unrecognised_kafka"] == 0
    assert without_b["accounting"]["irrelevant"] == 5  # two broker lines of other loggers, three application lines
    skew = {r["host"]: r for r in without_b["clock_skew"]}
    assert skew["member-a"]["corrected"] and abs(skew["member-a"]["offset_ms"] + 1750) <= skew["member-a"]["uncertainty_ms"]


def test_an_end_on_another_hosts_clock_before_the_start_gives_no_duration(spark, tmp_path):
    """The broker's ``Assignment received`` ends a generation no member logged its assignment
    of; a millisecond of skew put it before the member's first sign: the rebalance keeps its
    times, and its duration is unknown rather than negative."""
    from tests.model.conftest import generation, line

    (tmp_path / "broker-1").mkdir()
    (tmp_path / "broker-1" / "server.log").write_text(
        f"[2024-06-01 09:00:00,287] INFO [GroupCoordinator 1]: Assignment received from leader {A} for group orders-app "
        "for generation 4. The group has 1 members, 0 of which are static. (kafka.coordinator.group.GroupCoordinator)\n"
    )
    (tmp_path / "member-a").mkdir()
    (tmp_path / "member-a" / "app.log").write_text(
        "\n".join(
            [
                line("00:00,288", "INFO", "consumer-orders-app-1", "(Re-)joining group"),
                line("00:00,289", "INFO", "consumer-orders-app-1", f"Successfully joined group with generation {generation(4, A)}"),
            ]
        )
        + "\n"
    )
    model = small_model(spark, ingest_paths(spark, tmp_path).records)
    (row,) = model.rebalances.where("generation = 4").collect()
    assert row["start_ts"].strftime("%H:%M:%S.%f")[:-3] == "09:00:00.288"
    assert row["end_ts"].strftime("%H:%M:%S.%f")[:-3] == "09:00:00.287"
    assert row["duration_ms"] is None
    model.unpersist()
